"""inspect_ai logs other people published (tests/data/inspect, README there), against inspect_ai's own reader.

Every log inspect_ai 0.3.285 reads is read: each run's id, epoch and scores are what
``read_eval_log`` gives (a missing eval id derived as it derives it; older layouts migrated as it
migrates them); the tokens are ``samples_df``'s with a judge's set apart; the tool calls are its
tool events; and each recorded aggregate is reproduced by ``reproduce`` or listed with its reason.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from mas_eval.errors import IngestError
from mas_eval.ingest import LogIngestResult, ingest_inspect
from mas_eval.scoring.reproduction import PERCENT_BASIS, reproduce_aggregates

pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log
from inspect_ai.scorer import value_to_float

DATA = Path(__file__).parents[1] / "data" / "inspect"
#: The logs with samples, each with the recorded aggregates ``reproduce`` finds different (recorded,
#: recomputed), and those it does not recompute (with why).
READ = {
    "0.3.41_log_formats.eval": {},
    "0.3.42_log_streaming_2epochs.eval": {},
    "0.3.43_input-task_model_graded_fact.json": {},
    # Trimmed by inspect_ai's maintainers to one of its four samples, its scores removed.
    "0.3.58_log_tool_call_error.json": {
        "total_samples": ("4.0", "1.0"),
        "completed_samples": ("4.0", "1.0"),
        "includes/accuracy": "no outcome or statistic recomputes it",
        "includes/stderr": "no outcome or statistic recomputes it",
    },
    "0.3.95_security-guide_model_graded_fact.json": {},
    "0.3.135_v3_message_deduplication_tools.eval": {},
    "0.3.208_zstd_retry-2-then-success_legacy.eval": {},
    "vitals_2025-05-02_simple-addition_model_graded_qa.json": {},
}
#: The model-graded logs: the scorer whose judge made calls, and its samples.
GRADED = {
    "0.3.43_input-task_model_graded_fact.json": ("model_graded_fact", 1),
    "0.3.95_security-guide_model_graded_fact.json": ("model_graded_fact", 3),
    # vitals names the scorer's step "model_graded_qa", its score "model_graded_qa() (claude-3-7-sonnet-latest)".
    "vitals_2025-05-02_simple-addition_model_graded_qa.json": ("model_graded_qa", 2),
}


@pytest.fixture(scope="module")
def ingested() -> dict[str, LogIngestResult]:
    return {name: ingest_inspect(DATA / name) for name in READ}


@pytest.fixture(scope="module")
def theirs() -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: read_eval_log(str(DATA / name)) for name in READ}


def _samples_df(file: Path, folder: Path) -> pl.DataFrame:
    """inspect_ai's ``samples_df`` of ``file`` (a ``.json`` log is listed only under a name starting with a time)."""
    from inspect_ai.analysis import samples_df

    copy = folder / (file.name if file.suffix == ".eval" else f"2025-01-01T00-00-00+00-00_{file.name}")
    shutil.copyfile(file, copy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pl.from_pandas(samples_df(str(copy), quiet=True))


def test_every_log_inspect_reads_is_read_with_its_run_ids_and_scores(
    ingested: dict[str, LogIngestResult], theirs: dict[str, Any]
) -> None:
    for name, result in ingested.items():
        log = theirs[name]
        ds = result.dataset
        runs = {row["run_id"]: row for row in ds.collect("runs").iter_rows(named=True)}
        outcomes = ds.collect("outcomes") if "outcomes" in ds else pl.DataFrame(schema={"run_id": pl.String})
        mine = {(r["run_id"], r["name"]): r["value"] for r in outcomes.iter_rows(named=True)}
        expected: dict[tuple[str, str], float] = {}
        assert log.samples, name
        for sample in log.samples:
            # The eval id is inspect's, derived as it derives it when the log has none.
            run_id = f"{log.eval.eval_id}/{sample.id}/{sample.epoch}"
            assert run_id in runs, (name, run_id, sorted(runs))
            assert (runs[run_id]["case_id"], runs[run_id]["epoch"]) == (str(sample.id), sample.epoch)
            for scorer, score in (sample.scores or {}).items():
                values = score.value.items() if isinstance(score.value, dict) else [(None, score.value)]
                for key, value in values:
                    expected[(run_id, scorer if key is None else f"{scorer}/{key}")] = value_to_float()(value)
        assert len(runs) == len(log.samples), name
        assert mine == pytest.approx(expected, rel=1e-12), name


def test_the_eval_ids_a_log_lacks_are_the_ones_inspect_derives(theirs: dict[str, Any]) -> None:
    import json
    import zipfile

    lacking = []
    for name, log in theirs.items():
        file = DATA / name
        header = (
            json.loads(zipfile.ZipFile(file).read("header.json"))
            if file.suffix == ".eval"
            else json.loads(file.read_text())
        )
        if not header["eval"].get("eval_id"):
            lacking.append(name)
            run_ids = ingest_inspect(file).dataset.collect("runs")["run_id"]
            assert run_ids.str.starts_with(f"{log.eval.eval_id}/").all(), name
    assert len(lacking) >= 5  # the logs of 0.3.41 to 0.3.58, and vitals'


def test_the_judge_is_apart_and_the_system_is_samples_df_less_the_grader(
    ingested: dict[str, LogIngestResult], tmp_path: Path
) -> None:
    for name, (scorer, samples) in GRADED.items():
        ds = ingested[name].dataset
        usage = ds.collect("usage")
        judge = usage.filter(pl.col("evaluator"))
        assert judge["agent_id"].unique().to_list() == [scorer], name
        assert judge.height == samples and set(judge["calls"]) == {1}, name
        system = usage.filter(pl.col("evaluator").is_null())
        assert system.height == samples and system["agent_id"].n_unique() == 1, name
        runs = ds.collect("runs")
        # Both appear in usage; the run's totals are the system's alone.
        spent = system.group_by("run_id").agg(pl.col("input_tokens").sum(), pl.col("output_tokens").sum())
        both = runs.join(spent, on="run_id", suffix="_usage")
        assert (both["input_tokens"] == both["input_tokens_usage"]).all(), name
        assert (both["api_calls"] == 1).all(), name
        if name.startswith("vitals"):
            continue  # vitals' model_usage leaves its judge out already (checked below)
        frame = _samples_df(DATA / name, tmp_path)
        total = frame.select(
            run_id=pl.format("{}/{}/{}", "eval_id", "id", "epoch"), total=pl.col("total_tokens").cast(pl.Int64)
        )
        graded = judge.group_by("run_id").agg(grader=(pl.col("input_tokens") + pl.col("output_tokens")).sum())
        checked = runs.join(total, on="run_id").join(graded, on="run_id")
        assert checked.height == samples, name
        assert (checked["tokens"] == checked["total"] - checked["grader"]).all(), name


def test_vitals_model_usage_is_the_system_s_alone(theirs: dict[str, Any], ingested: dict[str, LogIngestResult]) -> None:
    name = "vitals_2025-05-02_simple-addition_model_graded_qa.json"
    runs = ingested[name].dataset.collect("runs")
    log = theirs[name]
    for sample in log.samples:
        run = runs.filter(pl.col("run_id") == f"{log.eval.eval_id}/{sample.id}/{sample.epoch}").row(0, named=True)
        assert run["tokens"] == sum(u.total_tokens for u in sample.model_usage.values())


def test_counting_the_evaluator_puts_the_judge_back_in_the_run(
    ingested: dict[str, LogIngestResult], tmp_path: Path
) -> None:
    name = "0.3.95_security-guide_model_graded_fact.json"
    counted = ingest_inspect(DATA / name, count_evaluator=True)
    apart = ingested[name].dataset
    runs = apart.collect("runs").join(counted.dataset.collect("runs"), on="run_id", suffix="_counted")
    judge = apart.collect("usage").filter(pl.col("evaluator")).select("run_id", j=pl.col("input_tokens"))
    runs = runs.join(judge, on="run_id")
    assert (runs["input_tokens_counted"] == runs["input_tokens"] + runs["j"]).all()
    assert (runs["api_calls_counted"] == 2).all()
    flags = counted.dataset.collect("usage").filter(pl.col("agent_id") == "model_graded_fact")["evaluator"]
    assert flags.to_list() == [False] * 3
    assert any("counted in the runs' tokens" in w for w in counted.warnings)
    written = ingest_inspect(DATA / name, tmp_path / "ds").dataset
    assert any("left out of the runs' tokens" in note for note in written.notes)


def test_tool_calls_are_inspect_s_tool_events_and_errors(
    ingested: dict[str, LogIngestResult], theirs: dict[str, Any]
) -> None:
    name = "0.3.135_v3_message_deduplication_tools.eval"
    ds = ingested[name].dataset
    calls = ds.collect("tool_calls").sort("turn")
    events = [e for s in theirs[name].samples for e in s.events if e.event == "tool"]
    assert calls.height == len(events) == 5
    assert calls["call_id"].to_list() == [e.id for e in events]
    assert calls["tool"].to_list() == [e.function for e in events]
    assert calls["seconds"].to_list() == pytest.approx([e.working_time for e in events])
    import json

    assert [json.loads(a) for a in calls["arguments"]] == [e.arguments for e in events]
    runs = ds.collect("runs")
    assert runs["tool_calls"].to_list() == [5] and runs["tool_errors"].to_list() == [0]
    # Each call is asked for by an assistant message, the agent's.
    messages = ds.collect("messages").sort("turn")
    asking = messages.filter(pl.col("turn").is_in(calls["message_turn"].implode()))
    assert asking.height == 5 and (asking["role"] == "assistant").all()
    assert asking["agent_id"].to_list() == calls["agent_id"].to_list() == ["hardcoded/hardcoded"] * 5
    # The maintainers' fixture of tool errors: eleven tool messages, each answering a call with an error.
    errors = ingested["0.3.58_log_tool_call_error.json"].dataset
    tools = errors.collect("tool_calls")
    messages = [m for s in theirs["0.3.58_log_tool_call_error.json"].samples for m in s.messages if m.role == "tool"]
    assert tools.height == len(messages) == 11
    assert tools["error"].to_list() == [f"{m.error.type}: {m.error.message}" for m in messages]
    assert errors.collect("runs")["tool_errors"].to_list() == [11]


def test_messages_carry_the_tokens_and_time_of_the_call_that_wrote_them(
    ingested: dict[str, LogIngestResult], theirs: dict[str, Any]
) -> None:
    name = "0.3.95_security-guide_model_graded_fact.json"
    messages = ingested[name].dataset.collect("messages")
    log = theirs[name]
    for sample in log.samples:
        run_id = f"{log.eval.eval_id}/{sample.id}/{sample.epoch}"
        said = messages.filter(pl.col("run_id") == run_id).sort("turn")
        assert said["role"].to_list() == [m.role for m in sample.messages]
        call = next(e for e in sample.events if e.event == "model")  # the system's, before scoring
        answer = said.filter(pl.col("role") == "assistant").row(0, named=True)
        assert answer["input_tokens"] == call.output.usage.input_tokens + (
            call.output.usage.input_tokens_cache_read or 0
        )
        assert answer["output_tokens"] == call.output.usage.output_tokens
        assert answer["seconds"] == pytest.approx(call.working_time)
        assert answer["model"] == call.model


def test_target_metadata_answer_and_explanation_are_kept(
    ingested: dict[str, LogIngestResult], theirs: dict[str, Any]
) -> None:
    name = "vitals_2025-05-02_simple-addition_model_graded_qa.json"
    ds = ingested[name].dataset
    log = theirs[name]
    runs = {r["case_id"]: r for r in ds.collect("runs").iter_rows(named=True)}
    outcomes = {r["run_id"]: r for r in ds.collect("outcomes").iter_rows(named=True)}
    for sample in log.samples:
        run = runs[str(sample.id)]
        assert run["target"] == sample.target
        score = next(iter(sample.scores.values()))
        assert (outcomes[run["run_id"]]["answer"], outcomes[run["run_id"]]["explanation"]) == (
            score.answer,
            score.explanation,
        )


def test_every_recorded_aggregate_is_reproduced_or_listed_with_its_reason(
    ingested: dict[str, LogIngestResult],
) -> None:
    for name, off in READ.items():
        result = reproduce_aggregates(ingested[name].dataset)
        found: dict[str, Any] = {
            r["metric"]: (r["recorded"], r["recomputed"]) for r in result.disagreements.iter_rows(named=True)
        }
        found |= dict(result.not_compared.select("metric", "reason").iter_rows())
        assert found == off, name
        assert (result.summary["items"] == 1).all(), name
    vitals = reproduce_aggregates(ingested["vitals_2025-05-02_simple-addition_model_graded_qa.json"].dataset)
    accuracy = vitals.summary.filter(pl.col("metric").str.ends_with("/accuracy")).row(0, named=True)
    assert accuracy["basis"] == PERCENT_BASIS and accuracy["reproduced"] == 1


def test_a_log_without_samples_is_said_to_hold_none(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"holds no samples \(a header-only log"):
        ingest_inspect(DATA / "v2_nopkg_2024-08-29_popularity_header-only_success.json")
    with pytest.raises(IngestError, match="status 'cancelled', not 'success' and holds no samples"):
        ingest_inspect(DATA / "0.3.95_no-samples_cancelled.json")


def test_the_version_3_layout_and_zstandard_members_read_as_inspect_reads_them(
    ingested: dict[str, LogIngestResult], tmp_path: Path
) -> None:
    for name in ("0.3.135_v3_message_deduplication_tools.eval", "0.3.208_zstd_retry-2-then-success_legacy.eval"):
        frame = _samples_df(DATA / name, tmp_path)
        runs = ingested[name].dataset.collect("runs")
        assert sorted(runs["run_id"]) == sorted(
            f"{r['eval_id']}/{r['id']}/{r['epoch']}" for r in frame.iter_rows(named=True)
        )
    retried = ingested["0.3.208_zstd_retry-2-then-success_legacy.eval"]
    assert retried.dataset.collect("runs")["api_calls"].to_list() == [3]  # two failed attempts and the answer
    assert any("have no score" in w for w in retried.warnings)
