"""``reproduce`` of a log's own aggregates: inspect_ai's and lm-eval's numbers recomputed from ``outcomes``.

Real files only: inspect_ai logs written in the session by inspect_ai itself (the
``inspect_eval_dir`` fixture of tests/conftest.py: 4 questions x 3 epochs, so that the standard
error of the case means differs from that of the runs) and the two lm-eval runs of
``tests/data/lm_eval``. A tampered ``reported`` value must come out as a disagreement naming it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.cli import main
from mas_eval.errors import SchemaError
from mas_eval.ingest import ingest_lm_eval
from mas_eval.scoring.reproduction import PERCENT_BASIS, reproduce, reproduce_aggregates
from tests.conftest import INSPECT_EPOCHS, INSPECT_SAMPLES, Logs

LM_EVAL = Path(__file__).parents[1] / "data" / "lm_eval"
TINY = LM_EVAL / "sshleifer__tiny-gpt2"
INSPECT_COMPARED = (
    {
        f"{score}/{stat}"
        for score in ("match", "graded")
        for stat in ("accuracy", "stderr", "scored_samples", "unscored_samples")
    }
    | {
        f"shape/{key}/{stat}"
        for key in ("messages", "short")
        for stat in ("mean", "scored_samples", "unscored_samples")
    }
    | {"total_samples", "completed_samples"}
)


@pytest.fixture(scope="module")
def inspect_dataset(inspect_eval_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mas_eval.ingest import ingest_inspect

    folder = tmp_path_factory.mktemp("inspect_ds") / "ds"
    ingest_inspect(inspect_eval_dir, folder)
    return folder


@pytest.fixture(scope="module")
def lm_eval_dataset() -> Dataset:
    return ingest_lm_eval([TINY, LM_EVAL / "hf-internal-testing__tiny-random-gpt2"]).dataset


def _tampered(ds: Dataset, name: str, system_part: str, factor: float) -> Dataset:
    """``ds`` with the recorded ``name`` of every run of the system named like ``system_part`` times ``factor``."""
    frames = ds.frames()
    runs = frames["runs"].filter(pl.col("system").str.contains(system_part, literal=True)).select("run_id")
    hit = (pl.col("source") == "results") & (pl.col("name") == name) & pl.col("run_id").is_in(runs["run_id"].implode())
    frames["reported"] = frames["reported"].with_columns(
        value=pl.when(hit).then(pl.col("value") * factor).otherwise("value")
    )
    return Dataset.from_frames(**frames)


def _all_reproduced(summary: pl.DataFrame) -> bool:
    return bool((summary["reproduced"] == summary["items"]).all())


def test_every_inspect_aggregate_is_reproduced_log_by_log(inspect_dataset: Path) -> None:
    result = reproduce(Dataset.open(inspect_dataset))
    summary = result.summary
    assert result.preset is None and result.scores is None  # nothing scored: recomputed from outcomes
    assert set(summary["metric"]) == INSPECT_COMPARED
    assert set(summary["basis"]) == {"outcomes"}
    assert set(summary["items"]) == {2}  # one per log: the single agent's and the debate's
    assert _all_reproduced(summary) and result.disagreements.is_empty()
    counts = summary.filter(pl.col("metric").str.ends_with("samples"))
    assert counts["tolerance"].null_count() == counts.height  # counts must be equal
    assert result.not_compared.is_empty()


def test_inspects_stderr_is_of_the_case_means_not_of_the_runs(inspect_dataset: Path) -> None:
    ds = Dataset.open(inspect_dataset)
    runs = ds.collect("runs").join(ds.collect("outcomes").filter(pl.col("name") == "match"), on="run_id")
    per_run = runs.group_by("system").agg(se=pl.col("value").std(ddof=1) / pl.len().sqrt())
    recorded = (
        ds.collect("reported")
        .filter(pl.col("name") == "match/stderr")
        .join(runs.select("run_id", "system"), on="run_id")
        .group_by("system")
        .agg(pl.col("value").first())
    )
    both = per_run.join(recorded, on="system")
    # With 3 epochs a naive stderr over the 12 runs would not be inspect's, and would be a disagreement.
    assert ((both["se"] - both["value"]).abs() > 1e-6).all()
    assert runs.group_by("system").len()["len"].to_list() == [INSPECT_SAMPLES * INSPECT_EPOCHS] * 2


def test_a_tampered_inspect_value_is_a_disagreement_naming_it(inspect_dataset: Path) -> None:
    ds = _tampered(Dataset.open(inspect_dataset), "match/stderr", "debate", 1.001)
    result = reproduce_aggregates(ds)
    off = result.disagreements
    assert off.height == 1
    row = off.row(0, named=True)
    assert row["metric"] == "match/stderr" and row["basis"] == "outcomes"
    assert "debate" in row["item"] and row["item"].endswith("/ yes_no")
    assert float(row["recorded"]) == pytest.approx(float(row["recomputed"]) * 1.001, rel=1e-9)
    stderr = result.summary.filter(pl.col("metric") == "match/stderr").row(0, named=True)
    assert (stderr["reproduced"], stderr["items"]) == (1, 2)
    assert _all_reproduced(result.summary.filter(pl.col("metric") != "match/stderr"))


@pytest.fixture(scope="module")
def reduced_log(inspect_logs: Logs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The debate's log scored again by inspect_ai itself (``inspect_ai.score``) with every reducer
    mas_eval recomputes: one results entry per reducer, each computed by inspect_ai's own code."""
    from inspect_ai import score as rescore
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.scorer import match

    log = read_eval_log(str(inspect_logs.files[1]))
    reducers = ["mean", "median", "mode", "max", "pass_at_2", "pass_k_2", "at_least_2"]
    scored = rescore(log, match(), epochs_reducer=reducers, action="overwrite", display="none")
    file = tmp_path_factory.mktemp("reduced") / "reduced.eval"
    write_eval_log(scored, str(file))
    return file


def test_every_reducer_inspect_computes_is_recomputed(reduced_log: Path) -> None:
    from inspect_ai.log import read_eval_log

    from mas_eval.ingest import ingest_inspect

    result = reproduce_aggregates(ingest_inspect(reduced_log).dataset)
    recorded = {
        (s.reducer, name): m.value
        for s in read_eval_log(str(reduced_log)).results.scores
        for name, m in s.metrics.items()
    }  # type: ignore[union-attr]
    assert len({reducer for reducer, _ in recorded}) == 7
    summary = result.summary
    assert _all_reproduced(summary) and result.disagreements.is_empty() and result.not_compared.is_empty()
    # Each reducer's accuracy and stderr, by inspect_ai's own code, is reproduced: the first as match/...,
    # the others as match [<reducer>]/...
    names = set(summary["metric"])
    for reducer in ("median", "mode", "max", "pass_at_2", "pass_k_2", "at_least_2"):
        assert {f"match [{reducer}]/accuracy", f"match [{reducer}]/stderr"} <= names, reducer
    # The reducers give different numbers here: a wrong one would show.
    assert len({round(v, 9) for (reducer, name), v in recorded.items() if name == "accuracy"}) >= 4


def test_an_accuracy_in_percent_is_named_as_such_and_another_factor_is_not(inspect_dataset: Path) -> None:
    ds = _tampered(Dataset.open(inspect_dataset), "match/accuracy", "single", 100.0)
    result = reproduce_aggregates(ds)
    rows = result.summary.filter(pl.col("metric") == "match/accuracy")
    assert dict(zip(rows["basis"], rows["reproduced"], strict=True)) == {"outcomes": 1, PERCENT_BASIS: 1}
    off = reproduce_aggregates(_tampered(Dataset.open(inspect_dataset), "match/accuracy", "single", 10.0))
    assert off.disagreements["metric"].to_list() == ["match/accuracy"]


def test_every_lm_eval_aggregate_is_reproduced(lm_eval_dataset: Dataset) -> None:
    result = reproduce(lm_eval_dataset)
    summary = result.summary
    assert set(summary["metric"]) == {"acc,none", "acc_stderr,none", "sample_len", "n-samples.effective"}
    assert set(summary["items"]) == {2}  # one per model's results file
    assert _all_reproduced(summary) and result.disagreements.is_empty()
    # Both were `--limit 20` runs of COPA's 100 documents: the 100 is listed, with why it is not recomputed.
    why = "the task's documents before --limit; lm-eval scored 20 of them (n-samples.effective)"
    assert result.not_compared.rows() == [("n-samples.original", 2, why)]


def test_a_tampered_lm_eval_value_is_a_disagreement_naming_it(lm_eval_dataset: Dataset) -> None:
    result = reproduce(_tampered(lm_eval_dataset, "acc,none", "sshleifer", 0.5))
    assert result.disagreements.select("metric", "item", "recorded", "recomputed").to_dicts() == [
        {"metric": "acc,none", "item": "sshleifer/tiny-gpt2 / copa / epoch 1", "recorded": "0.3", "recomputed": "0.6"}
    ]


def test_two_lm_eval_results_files_of_equal_numbers_stay_two_logs(tmp_path: Path) -> None:
    for stamp in ("2026-10-01T23-15-32.942677", "2026-10-02T08-00-00.000001"):
        folder = tmp_path / stamp
        folder.mkdir()
        for file in TINY.iterdir():
            shutil.copyfile(file, folder / (file.name.rsplit("_", 1)[0] + f"_{stamp}" + "".join(file.suffixes[-1:])))
    result = reproduce_aggregates(ingest_lm_eval(tmp_path).dataset)
    # Pooled, the 40 runs would give another stderr than each file's 20.
    assert set(result.summary["items"]) == {2}
    assert _all_reproduced(result.summary)


def test_a_dataset_without_aggregates_is_refused(tiny: Dataset) -> None:
    with pytest.raises(SchemaError, match="reported"):
        reproduce_aggregates(tiny)


def test_the_command_prints_the_summary_and_writes_it(
    inspect_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "reproduction"
    with pytest.raises(SystemExit) as exited:
        main(["reproduce", str(inspect_dataset), "--out", str(out)])
    assert exited.value.code == 0
    printed = capsys.readouterr().out
    assert "recomputed from outcomes" in printed and "match/stderr" in printed
    assert "disagreements:" not in printed and "not recomputed" not in printed
    written = json.loads((out / "reproduction.json").read_text())
    assert written["preset"] is None and {row["metric"] for row in written["summary"]} == INSPECT_COMPARED
    assert written["disagreements"] == [] and "not_compared" not in written


def test_the_command_names_a_tampered_lm_eval_value(
    lm_eval_dataset: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _tampered(lm_eval_dataset, "acc_stderr,none", "hf-internal", 2.0).write(tmp_path / "ds")
    with pytest.raises(SystemExit) as exited:
        main(["reproduce", str(tmp_path / "ds")])
    assert exited.value.code == 0
    printed = capsys.readouterr().out
    assert "first 1 of 1 disagreements:" in printed
    assert "acc_stderr,none · hf-internal-testing/tiny-random-gpt2 / copa / epoch 1" in printed


# -- what the Dataset came from ---------------------------------------------------------------

RUNS = pl.DataFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})


@pytest.mark.parametrize(
    ("formats", "says"),
    [
        (["OTLP"], "its runs were ingested from OTLP, which record no numbers of their own to recompute; reproduce "
                   "checks those of Local-DDx result files, inspect_ai logs or lm-eval results"),
        (["table", "canonical JSONL"], "ingested from table, canonical JSONL, which record no numbers"),
        (["lm-eval"], "though its runs come from lm-eval; ingest those files again with this version (mas-eval "
                      "ingest --format lm-eval keeps what they recorded)"),
        ([], "nothing recorded to compare with; reproduce checks the numbers of Local-DDx result files"),
    ],
)  # fmt: skip
def test_nothing_to_reproduce_says_what_the_datasets_format_records(
    formats: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Dataset.from_frames(runs=RUNS).with_origin(formats=formats).write(tmp_path / "ds")
    assert Dataset.open(tmp_path / "ds").formats == tuple(formats)
    with pytest.raises(SystemExit) as exited:
        main(["reproduce", str(tmp_path / "ds")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert says in err and ("--format lddx)" not in err or not formats)


def test_a_table_ingest_is_not_sent_to_local_ddx(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mas_eval.ingest import ingest_table

    RUNS.with_columns(ok=pl.Series([1, 0])).write_csv(tmp_path / "runs.csv")
    ingest_table(tmp_path / "runs.csv", tmp_path / "ds", columns={"system": "system", "case_id": "case_id"})
    with pytest.raises(SchemaError, match="its runs were ingested from table, which record no numbers of their own"):
        reproduce(Dataset.open(tmp_path / "ds"))


def test_a_reported_source_reproduce_does_not_know_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reported = pl.DataFrame({"run_id": ["r1"], "source": ["judge"], "name": ["x"], "item": [0], "value": [1.0]})
    Dataset.from_frames(runs=RUNS, reported=reported).write(tmp_path / "ds")
    with pytest.raises(SystemExit) as exited:
        main(["reproduce", str(tmp_path / "ds")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{tmp_path / 'ds'}: its 'reported' table holds source(s) 'judge', which reproduce does not read" in err
    # Beside a log's aggregates, the aggregates are compared and the unknown source listed as not read.
    lm = ingest_lm_eval(TINY).dataset.frames()
    extra = lm["reported"].head(1).with_columns(source=pl.lit("judge"))
    result = reproduce(Dataset.from_frames(**{**lm, "reported": pl.concat([lm["reported"], extra])}))
    assert result.disagreements.is_empty()
    assert ("source 'judge'", 0, "a source of the reported table that reproduce does not read") in set(
        result.not_compared.rows()
    )


def test_local_ddx_numbers_without_the_tables_that_recompute_them_are_one_line(tmp_path: Path) -> None:
    reported = pl.DataFrame({"run_id": ["r1"], "source": ["evaluation"], "name": ["tp_count"], "item": [0],
                             "value": [1.0]})  # fmt: skip
    with pytest.raises(SchemaError, match="holds Local-DDx's numbers, but the diagnosis family that recomputes"):
        reproduce(Dataset.from_frames(runs=RUNS, reported=reported))
