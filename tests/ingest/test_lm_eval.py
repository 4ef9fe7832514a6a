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

DATA = Path(__file__).parents[1] / "data" / "lm_eval"
TINY = DATA / "sshleifer__tiny-gpt2"
RANDOM = DATA / "hf-internal-testing__tiny-random-gpt2"
#: The two COPA runs (``versions/`` beside them holds other lm-eval versions' output).
COPA = [TINY, RANDOM]
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
    return ingest_lm_eval(COPA)


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
        ingest_lm_eval(COPA, system="")


# -- the command line -------------------------------------------------------------------------


def test_cli_ingests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "ingest", "--format", "lm-eval", *COPA, "--out", tmp_path / "ds")
    assert done.code == 0, done.err
    assert "ingested 40 runs from 4 lm-eval file(s)" in done.out and "outcomes 40" in done.out
    assert Dataset.open(tmp_path / "ds").collect("runs").height == 40


def test_cli_refuses_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _broken(tmp_path / "in", 3, None)
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds")
    assert_refused(done, says=[f"{samples}, line 3", "no doc_id", "--skip-invalid"])
    assert_unchanged(before, tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", *COPA, "--out", tmp_path / "ds", "--chunk-mb", "2")
    assert_refused(done, says="--chunk-mb applies to --format jsonl only")
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds", "--skip-invalid")
    assert done.code == 0 and "skipped" in done.out and "line 3" in done.out
    assert math.isclose(Dataset.open(tmp_path / "ds").collect("outcomes")["value"].mean(), 11 / 19)


# -- output of other lm-eval versions (tests/data/lm_eval/versions) ---------------------------

VERSIONS = DATA / "versions"


def _accounted(result: LogIngestResult) -> tuple[set[str], set[str], set[str]]:
    """The recorded numbers of the tasks read (lm-eval's ``<metric>,<filter>`` names, ``sample_len`` and
    ``n-samples.*``), those ``reproduce`` compared and those it listed with a reason."""
    from mas_eval.scoring.reproduction import reproduce

    reported = result.dataset.collect("reported")
    results = reported.filter((pl.col("source") == "results") & (pl.col("name").str.contains(",") | (
        pl.col("name") == "sample_len")))  # fmt: skip
    counts = reported.filter((pl.col("source") == "task") & pl.col("name").str.starts_with("n-samples."))
    recorded = set(results["name"]) | set(counts["name"])
    done = reproduce(result.dataset)
    assert done.not_compared["reason"].is_not_null().all() and (done.not_compared["reason"] != "").all()
    return recorded, set(done.summary["metric"]), set(done.not_compared["metric"])


@pytest.mark.parametrize(
    ("folder", "reproduced", "listed", "disagree"),
    [
        # 2024-08 (no `metrics` on a line): `--limit 50` of 2,305 documents.
        ("asdiv_llama3-8b", {"acc,none", "acc_stderr,none", "n-samples.effective"}, {"n-samples.original"}, set()),
        # 0.4.9.2: 10 lines for the 5,000 documents scored: the count disagrees, the means are over others.
        (
            "evaleval_math_perturbed",
            set(),
            {"exact_match,none", "exact_match_stderr,none", "n-samples.original"},
            {"n-samples.effective"},
        ),
        # 0.4.8: integer values, `--limit 10`.
        (
            "flor760m_eqbench",
            {"eqbench,none", "eqbench_stderr,none", "percent_parseable,none", "percent_parseable_stderr,none",
             "n-samples.effective"},
            {"n-samples.original"},
            set(),
        ),
        # 0.4.13: the task's own F1 aggregations and their "N/A" standard errors are listed.
        (
            "negotiationtom_qwen3-8b",
            {"exact_match,none", "exact_match_stderr,none", "sample_len", "n-samples.effective"},
            {"micro_f1,none", "micro_f1_stderr,none", "macro_f1,none", "macro_f1_stderr,none", "n-samples.original"},
            set(),
        ),
    ],
)  # fmt: skip
def test_every_recorded_number_is_reproduced_or_listed_with_its_reason(
    folder: str, reproduced: set[str], listed: set[str], disagree: set[str]
) -> None:
    from mas_eval.scoring.reproduction import reproduce

    result = ingest_lm_eval(VERSIONS / folder)
    recorded, compared, not_compared = _accounted(result)
    assert recorded == compared | not_compared  # nothing recorded is left unsaid
    assert compared == reproduced | disagree and not_compared == listed
    done = reproduce(result.dataset)
    summary = {row["metric"]: (row["reproduced"], row["items"]) for row in done.summary.iter_rows(named=True)}
    assert all(summary[name][0] == summary[name][1] for name in reproduced)
    assert all(summary[name][0] == 0 for name in disagree)


def test_a_limit_run_and_a_file_cut_short_are_told_apart() -> None:
    limited = ingest_lm_eval(VERSIONS / "asdiv_llama3-8b")
    assert [w for w in limited.warnings if "documents" in w] == [
        f"{VERSIONS / 'asdiv_llama3-8b' / 'samples_asdiv_2024-08-21T03-44-09.494230.jsonl'}: lm-eval scored 50 of "
        "the task's 2,305 documents (a --limit run: n-samples of 'asdiv' in results_2024-08-21T03-44-09.494230.json); "
        "the runs, and the numbers lm-eval recorded, are of those 50 only"
    ]
    cut = ingest_lm_eval(VERSIONS / "evaleval_math_perturbed")
    said = [w for w in cut.warnings if "documents" in w]
    assert len(said) == 1
    assert "holds 10 of the 5,000 documents lm-eval scored: the file was cut short after lm-eval wrote it" in said[0]
    assert "reproduce lists them apart" in said[0]
    assert any("task 'math_rephrased_full' has no samples_" in w for w in cut.warnings)
    disagreement = ingest_and_reproduce_disagreement(cut)
    assert disagreement == ("n-samples.effective", "5000.0", "10.0")


def ingest_and_reproduce_disagreement(result: LogIngestResult) -> tuple[str, str, str]:
    from mas_eval.scoring.reproduction import reproduce

    rows = reproduce(result.dataset).disagreements.select("metric", "recorded", "recomputed").rows()
    assert len(rows) == 1
    return rows[0]


def test_lines_set_aside_are_said_as_the_reason_the_file_holds_fewer_documents(tmp_path: Path) -> None:
    _broken(tmp_path / "in", 3, None)
    result = ingest_lm_eval(tmp_path / "in", skip_invalid=True)
    said = [w for w in result.warnings if "documents lm-eval scored" in w]
    assert len(said) == 1 and "holds 19 of the 20 documents lm-eval scored: 1 line(s) were set aside" in said[0]


def test_each_metrics_aggregation_and_the_bootstrap_resamples_are_kept() -> None:
    result = ingest_lm_eval(VERSIONS / "negotiationtom_qwen3-8b")
    task = result.dataset.collect("reported").filter(pl.col("source") == "task")
    texts = dict(task.filter(pl.col("text").is_not_null()).select("name", "text").unique().rows())
    values = dict(task.filter(pl.col("value").is_not_null()).select("name", "value").unique().rows())
    # The config's metric_list: the task's own functions by name, exact_match by lm-eval's mean.
    assert texts["aggregation.micro_f1"] == "micro_f1_agg" and texts["aggregation.macro_f1"] == "macro_f1_agg"
    assert texts["aggregation.exact_match"] == "mean"
    assert values["bootstrap_iters"] == 100000 and values["limit"] == 20
    assert any("group 'negotiationtom' aggregates its tasks' numbers" in w for w in result.warnings)
    # Without a configuration, a built-in metric's registered aggregation (lm_eval/api/metrics.py).
    old = ingest_lm_eval(VERSIONS / "asdiv_llama3-8b").dataset.collect("reported")
    assert old.filter(pl.col("name") == "aggregation.acc")["text"].unique().to_list() == ["mean"]


def test_a_metric_lm_eval_could_only_write_as_text_is_read_as_the_number_it_is(tmp_path: Path) -> None:
    # lm-eval's handle_non_serializable writes a NumPy float it cannot put in JSON as its str().
    folder = _copy(tmp_path / "in")
    samples = folder / f"samples_copa_{STAMP}.jsonl"
    rows = [{**row, "acc": str(row["acc"]), "doc_id": str(row["doc_id"])} for row in _lines(samples)]
    _write_lines(samples, rows)
    result = ingest_lm_eval(folder)
    ours = ingest_lm_eval(TINY)
    assert result.dataset.collect("outcomes").equals(ours.dataset.collect("outcomes"))
    assert result.dataset.collect("runs")["run_id"].to_list() == ours.dataset.collect("runs")["run_id"].to_list()


def test_a_model_named_nowhere_says_how_to_name_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(tmp_path / "in")
    results = folder / f"results_{STAMP}.json"
    doc = json.loads(results.read_text(encoding="utf-8"))
    del doc["model_name"]
    doc["config"] = {"model": None, "model_args": None}
    results.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(IngestError, match=r"\$\.model_name: missing, and \$\.config names no model; name it: pass "
                                          r"paths=\{.*: 'NAME'\} or system='NAME'"):  # fmt: skip
        ingest_lm_eval(folder)
    done = run(capsys, "ingest", "--format", "lm-eval", folder, "--out", tmp_path / "ds")
    assert_refused(done, says=f"name it: pass {results}=NAME or --system NAME")


def test_a_run_read_twice_names_both_files_and_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = _copy(tmp_path / "in" / "a"), _copy(tmp_path / "in" / "b")
    a, b = first / f"results_{STAMP}.json", second / f"results_{STAMP}.json"
    with pytest.raises(IngestError) as raised:
        ingest_lm_eval(tmp_path / "in")
    message = str(raised.value)
    assert message.startswith(f"{a} and {b}: both hold the runs of model 'sshleifer/tiny-gpt2' on the same documents")
    assert message.endswith(f"name the second's system apart: paths={{{str(b)!r}: 'OTHER'}}")
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds")
    line = assert_refused(done, says=[str(a), str(b), f"{b}=OTHER"])
    assert "system=" not in line
    # The fix it gives works.
    done = run(capsys, "ingest", "--format", "lm-eval", first, f"{b}=OTHER", "--out", tmp_path / "ds")
    assert done.code == 0, done.err
    assert set(Dataset.open(tmp_path / "ds").collect("runs")["system"]) == {"sshleifer/tiny-gpt2", "OTHER"}


def test_the_longest_line_is_a_parameter(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="max_line_bytes=0 is invalid"):
        ingest_lm_eval(TINY, max_line_bytes=0)
    samples = _broken(tmp_path / "in", 2, json.dumps(_lines(TINY_SAMPLES)[1]) + "\n")
    longest = max(len(line.encode()) for line in samples.read_text(encoding="utf-8").splitlines())
    with pytest.raises(IngestError, match=r"line \d+: [\d,]+ bytes long, longer than the longest line read "
                                          r"\(max_line_bytes=1000\)"):  # fmt: skip
        ingest_lm_eval(tmp_path / "in", max_line_bytes=1000)
    assert ingest_lm_eval(tmp_path / "in", max_line_bytes=longest).runs == 20


def test_corpus_level_metrics_and_their_bootstrap_stderrs_are_listed_with_why(tmp_path: Path) -> None:
    from mas_eval.scoring.reproduction import reproduce

    folder = _generative(tmp_path / "gen")
    results = folder / f"results_{STAMP}.json"
    doc = json.loads(results.read_text(encoding="utf-8"))
    # As lm-eval records a generative task with bleu (aggregated by sacrebleu over the corpus) and a
    # mean: bleu's stderr is a bootstrap of `bootstrap_iters` (100,000 in this run's config) resamples.
    doc["results"]["copa"] |= {"bleu,maj@8": 12.5, "bleu_stderr,maj@8": 0.7, "exact_match,maj@8": 0.35,
                               "exact_match_stderr,maj@8": 0.1094243309804831}  # fmt: skip
    doc["configs"] = {"copa": {"metric_list": [{"metric": "exact_match", "aggregation": "mean"}, {"metric": "bleu"}]}}
    results.write_text(json.dumps(doc), encoding="utf-8")
    done = reproduce(ingest_lm_eval(folder).dataset)
    reasons = dict(done.not_compared.select("metric", "reason").rows())
    assert reasons["bleu,maj@8"] == (
        "not the mean of per-document values: a corpus-level BLEU (sacrebleu.corpus_bleu) over every document's "
        "pair; not recomputed"
    )
    assert reasons["bleu_stderr,maj@8"] == (
        "a bootstrap standard error (lm-eval's bootstrap_stderr, 100000 resamples) of bleu; not recomputed"
    )
    assert reasons["exact_match_stderr,score-first"].startswith("recorded as 'N/A': lm-eval computed no standard")
    summary = {row["metric"]: (row["reproduced"], row["items"]) for row in done.summary.iter_rows(named=True)}
    # exact_match of maj@8: 7 of 20 documents (doc_id % 3 == 0), its stderr lm-eval's mean_stderr of them.
    assert summary["exact_match,maj@8"] == (1, 1) and summary["exact_match_stderr,maj@8"] == (1, 1)
    assert summary["exact_match,score-first"] == (1, 1)
