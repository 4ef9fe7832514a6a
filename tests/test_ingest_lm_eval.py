"""Ingest of lm-evaluation-harness ``--log_samples`` output: ingest_lm_eval and `mas-eval ingest --format lm-eval`.

``tests/data/lm_eval`` holds two real lm-eval 0.4.13 runs (two tiny models, the same 20 COPA
questions; antonsoo/errorbars, MIT), whole: the per-task numbers lm-eval wrote in each
results file are checked against the samples beside it. Broken inputs are made in a temporary
folder from copies of them; the data files are only read.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.errors import IngestError, InvalidParameterError
from mas_eval.ingest import LogIngestResult, ingest_lm_eval
from tests.promises import assert_refused, assert_unchanged, run, tree

DATA = Path(__file__).parent / "data" / "lm_eval"
TINY = DATA / "sshleifer__tiny-gpt2"
RANDOM = DATA / "hf-internal-testing__tiny-random-gpt2"
STAMP = "2026-10-01T23-15-32.942677"
TINY_RESULTS = TINY / f"results_{STAMP}.json"
TINY_SAMPLES = TINY / f"samples_copa_{STAMP}.jsonl"


def _lines(file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]


def _write_lines(file: Path, rows: list[dict[str, Any]]) -> None:
    file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _copy(folder: Path, source: Path = TINY, stamp: str = STAMP) -> Path:
    """A copy of the run in ``source`` in ``folder``, its files renamed to the timestamp ``stamp``."""
    folder.mkdir(parents=True, exist_ok=True)
    for file in source.iterdir():
        shutil.copyfile(file, folder / file.name.replace(file.name[file.name.rfind("_") + 1 :].split(".j")[0], stamp))
    return folder


@pytest.fixture(scope="module")
def ingested() -> LogIngestResult:
    return ingest_lm_eval(DATA)


def _by_system(result: LogIngestResult, table: str) -> pl.DataFrame:
    runs = result.dataset.collect("runs").select("run_id", "system", "task")
    return result.dataset.collect(table).join(runs, on="run_id")


# -- the real runs ----------------------------------------------------------------------------


def test_each_document_of_each_model_is_one_run_paired_by_case(ingested: LogIngestResult) -> None:
    runs = ingested.dataset.collect("runs")
    assert ingested.runs == runs.height == 40
    assert ingested.skipped == ()
    # Both runs were `--limit 20` of COPA's 100 documents (n-samples): each samples file says so once.
    assert len(ingested.warnings) == 2
    assert all("lm-eval scored 20 of the task's 100 documents (a --limit run" in w for w in ingested.warnings)
    assert sorted(runs["system"].unique()) == ["hf-internal-testing/tiny-random-gpt2", "sshleifer/tiny-gpt2"]
    cases = runs.group_by("system").agg(pl.col("case_id").sort())["case_id"].to_list()
    assert cases[0] == cases[1] and len(cases[0]) == 20  # the two models' runs pair up on every case
    assert set(runs["task"]) == {"copa"} and "copa:0" in set(runs["case_id"])
    assert set(runs["epoch"]) == {1} and set(runs["seed"]) == {0}
    assert runs["run_id"].is_unique().all()
    assert "sshleifer/tiny-gpt2/copa/7@2026-10-01T23-15-32.942677" in set(runs["run_id"])
    assert len(ingested.files) == 4  # two results files and their samples


def test_our_task_means_and_stderrs_are_the_ones_lm_eval_recorded(ingested: LogIngestResult) -> None:
    outcomes = _by_system(ingested, "outcomes")
    assert set(outcomes["name"]) == {"acc,none"}
    ours = outcomes.group_by("system").agg(
        mean=pl.col("value").mean(), stderr=pl.col("value").std(ddof=1) / pl.len().sqrt(), n=pl.len()
    )
    reported = _by_system(ingested, "reported").filter(pl.col("source") == "results")
    theirs = reported.group_by("system", "name").agg(pl.col("value").unique()).explode("value")
    theirs = theirs.pivot("name", index="system", values="value")
    both = ours.join(theirs, on="system").sort("system")
    assert both["n"].to_list() == [20, 20]
    assert both["mean"].to_list() == both["acc,none"].to_list() == [0.8, 0.6]  # 16 and 12 of 20
    # lm-eval's stderr of a mean: the sample standard deviation over sqrt(n).
    assert both["stderr"].to_list() == pytest.approx(both["acc_stderr,none"].to_list(), rel=1e-12)
    assert both["acc_stderr,none"].to_list() == pytest.approx([0.0917662935482247, 0.11239029738980327], rel=1e-12)


def test_a_binary_metric_is_pass_fail(ingested: LogIngestResult) -> None:
    outcomes = ingested.dataset.collect("outcomes")
    assert outcomes["passed"].null_count() == 0
    assert (outcomes["passed"] == (outcomes["value"] == 1.0)).all()


def test_what_lm_eval_recorded_of_each_sample_is_kept(ingested: LogIngestResult) -> None:
    reported = ingested.dataset.collect("reported")
    first = _lines(TINY_SAMPLES)[0]
    run_id = f"sshleifer/tiny-gpt2/copa/0@{STAMP}"
    mine = {row["name"]: row for row in reported.filter(pl.col("run_id") == run_id).to_dicts()}
    for key in ("target", "doc_hash", "prompt_hash", "target_hash"):
        assert mine[key]["source"] == "sample" and mine[key]["text"] == first[key]
    assert mine["repeats"]["value"] == 1.0  # a loglikelihood request has one response
    assert json.loads(mine["filtered_resps,none"]["text"]) == first["filtered_resps"]
    assert mine["n-samples.effective"]["value"] == 20.0 and mine["n-samples.original"]["value"] == 100.0
    assert mine["alias"]["text"] == "copa"
    assert set(reported["item"]) == {0}


def test_written_to_a_folder_and_the_inputs_untouched(tmp_path: Path) -> None:
    inputs = _copy(tmp_path / "in")
    before = tree(inputs)
    result = ingest_lm_eval([inputs / f"results_{STAMP}.json"], tmp_path / "ds", shards=2)
    assert result.out == tmp_path / "ds"
    assert Dataset.open(tmp_path / "ds").collect("runs").height == 20
    assert_unchanged(before, inputs)


def test_system_names_the_model_and_repeated_runs_are_epochs(tmp_path: Path) -> None:
    _copy(tmp_path / "a")
    _copy(tmp_path / "b", stamp="2026-10-02T08-00-00.000001")
    result = ingest_lm_eval(tmp_path, system="tiny")
    runs = result.dataset.collect("runs")
    assert set(runs["system"]) == {"tiny"} and runs.height == 40
    epochs = runs.group_by("case_id").agg(pl.col("epoch").sort())["epoch"].to_list()
    assert all(e == [1, 2] for e in epochs)  # numbered by the results files' timestamps
    later = runs.filter(pl.col("epoch") == 2)["run_id"]
    assert all(r.endswith("@2026-10-02T08-00-00.000001") for r in later)


# -- filters, repeats, metrics that are not pass/fail -----------------------------------------


def _generative(folder: Path) -> Path:
    """The COPA run rewritten as a generative task with 8 repeats and two filters, as gsm8k-cot-self-consistency logs
    them: each document twice, once per filter, each line with the metrics of its filter."""
    folder = _copy(folder)
    samples, results = folder / f"samples_copa_{STAMP}.jsonl", folder / f"results_{STAMP}.json"
    rows = []
    for row in _lines(samples):
        doc = int(row["doc_id"])
        base = {**row, "resps": [["an answer"] * 8], "metrics": ["exact_match", "f1", "bleu"]}
        rows.append(
            {
                **base,
                "filter": "score-first",
                "filtered_resps": ["a"],
                "exact_match": float(doc % 2),
                "f1": doc / 20,
                "bleu": [["ref"], ["pred"]],
            }
        )
        rows.append({**base, "filter": "maj@8", "filtered_resps": ["b"], "exact_match": float(doc % 3 == 0),
                     "f1": 1.0, "bleu": [["ref"], ["pred"]]})  # fmt: skip
    _write_lines(samples, rows)
    doc = json.loads(results.read_text(encoding="utf-8"))
    doc["results"]["copa"] = {"alias": "copa", "exact_match,score-first": 0.5, "exact_match_stderr,score-first": "N/A"}
    results.write_text(json.dumps(doc), encoding="utf-8")
    return folder


def test_filters_name_the_outcomes_and_repeats_are_recorded(tmp_path: Path) -> None:
    result = ingest_lm_eval(_generative(tmp_path / "gen"))
    runs, outcomes = result.dataset.collect("runs"), result.dataset.collect("outcomes")
    assert runs.height == 20  # one run per document, whatever the filters
    assert sorted(outcomes["name"].unique()) == ["exact_match,maj@8", "exact_match,score-first", "f1,maj@8",
                                                 "f1,score-first"]  # fmt: skip
    kinds = outcomes.group_by("name").agg(pass_fail=pl.col("passed").is_not_null().all())
    assert dict(kinds.iter_rows()) == {
        "exact_match,maj@8": True,
        "exact_match,score-first": True,
        "f1,score-first": False,  # takes values other than 0 and 1
        "f1,maj@8": True,  # every value 1.0 in these files: read as pass/fail (documented)
    }
    first = outcomes.filter(pl.col("name") == "exact_match,score-first").sort("run_id")
    assert first["value"].mean() == 0.5
    reported = result.dataset.collect("reported")
    assert set(reported.filter(pl.col("name") == "repeats")["value"]) == {8.0}
    bleu = reported.filter(pl.col("name") == "bleu,maj@8")
    assert bleu.height == 20 and json.loads(bleu["text"][0]) == [["ref"], ["pred"]]
    assert reported.filter(pl.col("name") == "exact_match_stderr,score-first")["text"].unique().to_list() == ["N/A"]
    assert len(result.warnings) == 2 and "'bleu'" in result.warnings[0] and "--limit run" in result.warnings[1]


# -- bad input --------------------------------------------------------------------------------


def _broken(folder: Path, line: int, text: str | None) -> Path:
    """The COPA run with its samples line ``line`` (1-based) replaced by ``text`` (None: the line's doc_id removed)."""
    folder = _copy(folder)
    samples = folder / f"samples_copa_{STAMP}.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    if text is None:
        row = json.loads(lines[line - 1])
        del row["doc_id"]
        text = json.dumps(row) + "\n"
    lines[line - 1] = text
    samples.write_text("".join(lines), encoding="utf-8")
    return samples


@pytest.mark.parametrize(
    ("line", "text", "says"),
    [
        (3, None, "no doc_id"),
        (5, '{"doc_id": 4, "doc": {"premise": \n', "not valid JSON"),
        (20, '{"doc_id": 19, "doc": {"premise": "The woman', "truncated"),
        (4, "[1, 2]\n", "an array, not a sample object"),
        (6, json.dumps({**_lines(TINY_SAMPLES)[1]}) + "\n", "doc_id 1 under filter 'none' is also on line 2"),
    ],
)
def test_a_bad_line_is_one_error_naming_file_and_line_or_is_set_aside(
    tmp_path: Path, line: int, text: str | None, says: str
) -> None:
    samples = _broken(tmp_path / "in", line, text)
    with pytest.raises(IngestError) as raised:
        ingest_lm_eval(tmp_path / "in")
    message = str(raised.value)
    assert message.startswith(f"{samples}, line {line}: ") and says in message
    assert "skip_invalid=True" in message and "\n" not in message
    result = ingest_lm_eval(tmp_path / "in", skip_invalid=True)
    assert result.runs == 19
    assert len(result.skipped) == 1 and result.skipped[0][0] == samples
    assert result.skipped[0][1].startswith(f"line {line}: ")


def test_a_results_file_without_its_samples(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "in" / "tiny")
    (folder / f"samples_copa_{STAMP}.jsonl").unlink()
    _copy(tmp_path / "in" / "random", RANDOM, "2026-10-01T23-15-52.736695")
    with pytest.raises(IngestError, match=r"results_.*\.json: no samples_<task>_2026-10-01T23-15-32.942677\.jsonl "
                                          r"beside it; run lm-eval with --log_samples"):  # fmt: skip
        ingest_lm_eval(tmp_path / "in")
    result = ingest_lm_eval(tmp_path / "in", skip_invalid=True)
    assert result.runs == 20 and set(result.dataset.collect("runs")["system"]) == {
        "hf-internal-testing/tiny-random-gpt2"
    }
    assert result.skipped[0][0] == folder / f"results_{STAMP}.json"


def test_a_samples_file_whose_task_is_not_in_the_results(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "in")
    stray = folder / f"samples_boolq_{STAMP}.jsonl"
    shutil.copyfile(TINY_SAMPLES, stray)
    with pytest.raises(IngestError) as raised:
        ingest_lm_eval(folder)
    assert str(raised.value).startswith(f"{stray}: task 'boolq' is not in the results beside it")
    result = ingest_lm_eval(folder, skip_invalid=True)
    assert result.runs == 20 and result.skipped[0][0] == stray


def test_a_results_file_of_another_tool_and_a_broken_one(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "in")
    results = folder / f"results_{STAMP}.json"
    results.write_text('{"accuracy": 0.5}', encoding="utf-8")
    with pytest.raises(IngestError, match=r"not an lm-eval results file \(no \$\.results object\)"):
        ingest_lm_eval(folder)
    results.write_text('{"results": {"copa": ', encoding="utf-8")
    with pytest.raises(IngestError, match="not valid JSON"):
        ingest_lm_eval(folder)
    with pytest.raises(IngestError, match=r"no lm-eval sample could be ingested \(1 item\(s\) skipped"):
        ingest_lm_eval(folder, skip_invalid=True)


def test_paths_that_hold_no_results(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="a samples file, which does not name its model"):
        ingest_lm_eval(TINY_SAMPLES)
    with pytest.raises(IngestError, match="no such file"):
        ingest_lm_eval(tmp_path / "missing.json")
    with pytest.raises(IngestError, match=r"no results_\*\.json file in this folder"):
        ingest_lm_eval(tmp_path)
    with pytest.raises(IngestError, match="no input given"):
        ingest_lm_eval([])
    with pytest.raises(InvalidParameterError, match="system=''"):
        ingest_lm_eval(DATA, system="")


# -- the command line -------------------------------------------------------------------------


def test_cli_ingests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "ingest", "--format", "lm-eval", DATA, "--out", tmp_path / "ds")
    assert done.code == 0, done.err
    assert "ingested 40 runs from 4 lm-eval file(s)" in done.out and "outcomes 40" in done.out
    assert Dataset.open(tmp_path / "ds").collect("runs").height == 40


def test_cli_refuses_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _broken(tmp_path / "in", 3, None)
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds")
    assert_refused(done, says=[f"{samples}, line 3", "no doc_id", "--skip-invalid"])
    assert_unchanged(before, tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", DATA, "--out", tmp_path / "ds", "--chunk-mb", "2")
    assert_refused(done, says="--chunk-mb applies to --format jsonl only")
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds", "--skip-invalid")
    assert done.code == 0 and "skipped" in done.out and "line 3" in done.out
    assert math.isclose(Dataset.open(tmp_path / "ds").collect("outcomes")["value"].mean(), 11 / 19)
