"""inspect_ai logs into a Dataset: checked against inspect_ai's own reading of the same logs.

The logs are written once per session by inspect_ai itself, offline, with its mock model
(:mod:`tests.inspect_logs`; the ``inspect_logs`` fixture of tests/conftest.py): a single agent
and a two-role debate on the same four questions, three epochs each, as ``.eval`` logs and the
same logs converted to ``.json``.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import polars as pl
import pytest

from mas_eval.errors import IngestError, InvalidParameterError
from mas_eval.ingest import LogIngestResult, ingest_inspect
from tests.promises import assert_refused, run

pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log

from tests.conftest import INSPECT_EPOCHS, INSPECT_SAMPLES, Logs
from tests.inspect_logs import ROLES

SAMPLES, EPOCHS = INSPECT_SAMPLES, INSPECT_EPOCHS


@pytest.fixture(scope="session")
def logs(inspect_logs: Logs) -> Logs:
    """The session's logs (tests/conftest.py writes them once for every module that reads them)."""
    return inspect_logs


@pytest.fixture(scope="session")
def ingested(logs: Logs) -> LogIngestResult:
    return ingest_inspect(logs.eval_dir)


def _run_id(log: object, sample: object) -> str:
    return f"{log.eval.eval_id}/{sample.id}/{sample.epoch}"  # type: ignore[attr-defined]


def test_every_run_epoch_score_and_token_count_is_inspects(logs: Logs, ingested: LogIngestResult) -> None:
    ds = ingested.dataset
    runs = {row["run_id"]: row for row in ds.collect("runs").to_dicts()}
    outcomes = {(r["run_id"], r["name"]): r for r in ds.collect("outcomes").to_dicts()}
    usage = ds.collect("usage")
    messages = ds.collect("messages")
    assert ingested.runs == len(runs) == 2 * SAMPLES * EPOCHS
    assert ingested.skipped == () and ingested.warnings == ()
    for file in logs.files:
        log = read_eval_log(str(file))
        assert log.samples is not None and len(log.samples) == SAMPLES * EPOCHS
        for sample in log.samples:
            run = runs[_run_id(log, sample)]
            assert (run["case_id"], run["epoch"], run["task"]) == (sample.id, sample.epoch, log.eval.task)
            assert run["tokens"] == sum(u.total_tokens for u in sample.model_usage.values())
            assert run["input_tokens"] == sum(u.input_tokens for u in sample.model_usage.values())
            assert run["output_tokens"] == sum(u.output_tokens for u in sample.model_usage.values())
            assert run["seconds"] == sample.total_time
            costs = [u.total_cost for u in sample.model_usage.values() if u.total_cost is not None]
            assert run["cost_usd"] == (pytest.approx(sum(costs), rel=1e-12) if costs else None)
            assert sample.scores is not None
            match = outcomes[(run["run_id"], "match")]
            assert (match["value"], match["passed"]) == (
                (1.0, True) if sample.scores["match"].value == "C" else (0.0, False)
            )
            graded = outcomes[(run["run_id"], "graded")]
            assert (graded["value"], graded["passed"]) == (
                {"C": 1.0, "P": 0.5, "I": 0.0}[sample.scores["graded"].value],
                None,
            )
            shape = sample.scores["shape"].value
            assert outcomes[(run["run_id"], "shape/messages")]["value"] == shape["messages"]
            assert outcomes[(run["run_id"], "shape/short")]["passed"] is shape["short"]
            mine = usage.filter(pl.col("run_id") == run["run_id"])
            assert mine["calls"].sum() == run["api_calls"] == sum(e.event == "model" for e in sample.events)
            assert mine["input_tokens"].sum() + mine["output_tokens"].sum() == run["tokens"]
            said = messages.filter(pl.col("run_id") == run["run_id"]).sort("turn")
            assert said["text"].to_list() == [m.text for m in sample.messages]
            assert said["source"].to_list() == [m.source for m in sample.messages]


def test_runs_agree_with_inspects_samples_df(logs: Logs, ingested: LogIngestResult) -> None:
    from inspect_ai.analysis import samples_df

    theirs = pl.from_pandas(
        samples_df([str(f) for f in logs.files], quiet=True)[["eval_id", "id", "epoch", "total_tokens", "score_match"]]
    ).select(
        run_id=pl.format("{}/{}/{}", "eval_id", "id", "epoch"),
        tokens=pl.col("total_tokens").cast(pl.Int64),
        value=(pl.col("score_match") == "C").cast(pl.Float64),
    )
    ours = (
        ingested.dataset.collect("runs")
        .join(ingested.dataset.collect("outcomes").filter(pl.col("name") == "match"), on="run_id")
        .select("run_id", "tokens", "value")
    )
    assert ours.sort("run_id").equals(theirs.sort("run_id"))


def test_the_roles_are_the_agents_and_their_usage(logs: Logs, ingested: LogIngestResult) -> None:
    ds = ingested.dataset
    runs = ds.collect("runs")
    team = runs.filter(pl.col("system").str.contains("debate"))["run_id"]
    usage = ds.collect("usage").filter(pl.col("run_id").is_in(team.implode()))
    assert sorted(usage["agent_id"].unique()) == sorted(ROLES)
    assert set(usage["calls"]) == {2}  # two rounds, one answer each
    assert set(usage["model"]) == {f"mockllm/{role}" for role in ROLES}
    for file in logs.files:
        log = read_eval_log(str(file))
        for sample in log.samples or []:
            mine = ds.collect("usage").filter(pl.col("run_id") == _run_id(log, sample))
            by_agent = dict(zip(mine["agent_id"], mine["output_tokens"], strict=True))
            if sample.role_usage:
                assert by_agent == {role: u.output_tokens for role, u in sample.role_usage.items()}
            else:
                assert by_agent == {model: u.output_tokens for model, u in sample.model_usage.items()}
    spoken = ds.collect("messages").filter(pl.col("run_id") == team[0], pl.col("source") == "generate").sort("turn")
    assert spoken["agent_id"].to_list() == [*ROLES, *ROLES]
    agents = ds.collect("agents").filter(pl.col("run_id") == team[0])
    assert sorted(zip(agents["agent_id"], agents["role"], strict=True)) == sorted(zip(ROLES, ROLES, strict=True))
    single = runs.filter(~pl.col("system").str.contains("debate"))["system"].unique().to_list()
    assert single == ["mockllm/single generate"]


def test_our_accuracy_and_stderr_are_the_logs_own(ingested: LogIngestResult) -> None:
    """inspect_ai reduces each sample's epochs to their mean, then takes the mean and the standard
    error (ddof 1) of the sample means: with every sample run the same number of times, that mean is
    the mean over runs, and the standard error that of the case means (runs clustered by case)."""
    ds = ingested.dataset
    runs = ds.collect("runs").join(ds.collect("outcomes").filter(pl.col("name") == "match"), on="run_id")
    recorded = ds.collect("reported").filter(pl.col("source") == "results")
    for (system,), group in runs.group_by("system"):
        ids = group["run_id"]
        theirs = recorded.filter(pl.col("run_id").is_in(ids.implode())).unique(["name", "value"])
        assert theirs["name"].is_unique().all(), "a log's results are the same for each of its runs"
        value = dict(zip(theirs["name"], theirs["value"], strict=True))
        assert group["value"].mean() == pytest.approx(value["match/accuracy"], rel=1e-12), system
        means = group.group_by("case_id").agg(pl.col("value").mean())["value"]
        stderr = means.std(ddof=1) / math.sqrt(means.len())
        assert stderr == pytest.approx(value["match/stderr"], rel=1e-12, abs=1e-15), system
        assert value["total_samples"] == SAMPLES * EPOCHS


def test_eval_and_json_logs_give_the_same_dataset(logs: Logs, ingested: LogIngestResult) -> None:
    from_json = ingest_inspect(sorted(logs.json_dir.glob("*.json"))).dataset
    for table in ingested.dataset.table_names:
        ours = ingested.dataset.collect(table)
        assert from_json.collect(table).sort(ours.columns).equals(ours.sort(ours.columns)), table


def test_system_names_every_run_and_is_written(logs: Logs, tmp_path: Path) -> None:
    result = ingest_inspect(logs.files[0], tmp_path / "ds", system="single")
    assert result.out == tmp_path / "ds"
    assert result.dataset.collect("runs")["system"].unique().to_list() == ["single"]
    with pytest.raises(InvalidParameterError, match="system"):
        ingest_inspect(logs.files[0], system=" ")


# -- bad input ----------------------------------------------------------------------------------


def _unscored(logs: Logs, folder: Path) -> tuple[Path, str]:
    source = sorted(logs.json_dir.glob("*.json"))[0]
    doc = json.loads(source.read_text())
    doc["samples"][0]["scores"] = None
    bad = folder / "unscored.json"
    bad.write_text(json.dumps(doc))
    return bad, f"sample {doc['samples'][0]['id']!r}, epoch {doc['samples'][0]['epoch']}"


def _bad_inputs(logs: Logs, folder: Path) -> dict[str, tuple[Path, list[str]]]:
    folder.mkdir(parents=True, exist_ok=True)
    failing = folder / "failing.eval"
    shutil.copy(logs.failing, failing)
    unscored, where = _unscored(logs, folder)
    truncated = folder / "truncated.eval"
    data = logs.files[1].read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    newer = folder / "newer.json"
    doc = json.loads(sorted(logs.json_dir.glob("*.json"))[1].read_text())
    doc["version"] = 99
    newer.write_text(json.dumps(doc))
    return {
        "failing": (failing, ["ended with an error", "the tool server went away", "eval-retry"]),
        "unscored": (unscored, [where, "has no score", "inspect score"]),
        "truncated": (truncated, ["inspect_ai cannot read it", "complete .eval or .json log"]),
        "newer": (newer, ["format version", "upgrade inspect_ai"]),
    }


@pytest.mark.parametrize("case", ["failing", "unscored", "truncated", "newer"])
def test_a_bad_log_is_one_line_naming_file_sample_and_fix(logs: Logs, tmp_path: Path, case: str) -> None:
    file, says = _bad_inputs(logs, tmp_path / "in")[case]
    with pytest.raises(IngestError) as raised:
        ingest_inspect(file, tmp_path / "out")
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{file}: ")
    for text in [*says, "skip_invalid=True"]:
        assert text in message
    assert not (tmp_path / "out").exists()


def test_an_empty_folder_a_missing_path_and_a_copy_are_refused(logs: Logs, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match=r"no \.eval or \.json logs directly in this folder"):
        ingest_inspect(tmp_path / "empty")
    with pytest.raises(IngestError, match="no such file"):
        ingest_inspect(tmp_path / "missing.eval")
    copy = next(logs.json_dir.glob("*.json"))
    twin = next(f for f in logs.files if f.stem == copy.stem)
    with pytest.raises(IngestError, match="also one of"):
        ingest_inspect([twin, copy])


def test_skip_invalid_ingests_the_rest_and_lists_the_rejects(logs: Logs, tmp_path: Path) -> None:
    bad = _bad_inputs(logs, tmp_path / "in")
    files = [path for path, _ in bad.values()]
    result = ingest_inspect(files, skip_invalid=True)
    # The unscored log's other samples are ingested; the other three logs are skipped whole.
    assert result.runs == SAMPLES * EPOCHS - 1
    assert result.files == (bad["unscored"][0],)
    assert sorted(file.name for file, _ in result.skipped) == sorted(file.name for file in files)
    reasons = dict((file.name, reason) for file, reason in result.skipped)
    assert "has no score" in reasons["unscored.json"]


def test_without_inspect_ai_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch, logs: Logs) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(IngestError, match=r"pip install 'mas_eval\[inspect\]'"):
        ingest_inspect(logs.files[0])


# -- the command line ---------------------------------------------------------------------------


def test_cli_ingests_the_logs_and_refuses_bad_ones(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(capsys, "ingest", "--format", "inspect", logs.eval_dir, "--out", tmp_path / "ds")
    assert done.code == 0, done.err
    assert f"ingested {2 * SAMPLES * EPOCHS} runs from 2 inspect_ai file(s)" in " ".join(done.out.split())
    done = run(capsys, "ingest", "--format", "inspect", logs.failing, "--out", tmp_path / "bad")
    assert_refused(done, says=["ended with an error", "--skip-invalid"])
    done = run(capsys, "ingest", "--format", "lddx", logs.failing, "--system", "x", "--out", tmp_path / "bad")
    assert_refused(done, says="--system applies to --format inspect or lm-eval or otlp only")
    unscored, _ = _unscored(logs, tmp_path)
    done = run(
        capsys, "ingest", "--format", "inspect", unscored, "--skip-invalid", "--system", "s", "-o", tmp_path / "s"
    )
    assert done.code == 0 and "has no score" in " ".join(done.out.split())
    assert not (tmp_path / "bad").exists()
