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
import struct
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

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
    del where
    return {
        "failing": (failing, ["ended with an error", "the tool server went away", "eval-retry"]),
        "unscored": (unscored, []),
        "truncated": (truncated, ["inspect_ai cannot read it", "EOCD not found", "complete .eval or .json log"]),
        "newer": (newer, ["format version is 99", "upgrade mas_eval"]),
    }


@pytest.mark.parametrize("case", ["failing", "truncated", "newer"])
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
    # The log with an unscored sample is ingested whole (as inspect_ai reads it), the sample said
    # to have no score; the other three logs are skipped whole.
    assert result.runs == SAMPLES * EPOCHS
    assert result.files == (bad["unscored"][0],)
    assert sorted(file.name for file, _ in result.skipped) == sorted(f.name for f in files if f.name != "unscored.json")
    assert [w for w in result.warnings if "1 sample(s) have no score" in w]


def _rezip(source: Path, target: Path, *, method: int = zipfile.ZIP_DEFLATED, drop: tuple[str, ...] = ()) -> Path:
    """``source``'s members (but ``drop``) written again to ``target`` with another compression ``method``."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name not in drop:
                new.writestr(name, old.read(name), compress_type=method)
    return target


def _same_dataset(a: LogIngestResult, b: LogIngestResult) -> None:
    assert a.dataset.table_names == b.dataset.table_names
    for table in a.dataset.table_names:
        assert a.dataset.collect(table).equals(b.dataset.collect(table)), table


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_deflated_or_stored_eval_log_reads_as_the_zstandard_one(logs: Logs, tmp_path: Path, method: int) -> None:
    pytest.importorskip("zipfile_zstd")  # installed with inspect_ai: lets zipfile read its zstandard members
    rezipped = _rezip(logs.files[0], tmp_path / logs.files[0].name, method=method)
    _same_dataset(ingest_inspect(rezipped), ingest_inspect(logs.files[0]))


def _in_two_zstandard_frames(source: Path, target: Path) -> Path:
    """``source`` with each member compressed as two zstandard frames, one after the other.

    zipfile writes one frame per member, so the members are stored and their headers' compression
    method, CRC and size (in the local header and in the central directory) set afterwards.
    """
    import zstandard

    with zipfile.ZipFile(source) as old:
        members = {name: old.read(name) for name in old.namelist()}
    with zipfile.ZipFile(target, "w") as new:
        for name, data in members.items():
            half = len(data) // 2
            new.writestr(name, b"".join(zstandard.ZstdCompressor().compress(p) for p in (data[:half], data[half:])))
    raw = bytearray(target.read_bytes())
    end = raw.rindex(b"PK\x05\x06")
    (count,), (at,) = struct.unpack_from("<H", raw, end + 10), struct.unpack_from("<I", raw, end + 16)
    for _ in range(count):  # each central directory record, and the local header it points to
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", raw, at + 28)
        data = members[raw[at + 46 : at + 46 + name_length].decode()]
        (local,) = struct.unpack_from("<I", raw, at + 42)
        for base, method, crc, size in ((at, 10, 16, 24), (local, 8, 14, 22)):
            struct.pack_into("<H", raw, base + method, 93)
            struct.pack_into("<I", raw, base + crc, zlib.crc32(data))
            struct.pack_into("<I", raw, base + size, len(data))
        at += 46 + name_length + extra_length + comment_length
    target.write_bytes(bytes(raw))
    return target


def test_a_member_of_several_zstandard_frames_is_read_whole(logs: Logs, tmp_path: Path) -> None:
    pytest.importorskip("zipfile_zstd")
    framed = _in_two_zstandard_frames(logs.files[0], tmp_path / logs.files[0].name)
    _same_dataset(ingest_inspect(framed), ingest_inspect(logs.files[0]))


def test_logs_are_read_without_inspect_ai_and_zstandard_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, logs: Logs, tmp_path: Path
) -> None:
    pytest.importorskip("zipfile_zstd")
    deflated = _rezip(logs.files[0], tmp_path / logs.files[0].name)
    expected = ingest_inspect(logs.files[0])
    for name in ("inspect_ai", "inspect_ai.log", "pydantic", "zstandard"):
        monkeypatch.setitem(sys.modules, name, None)
    _same_dataset(ingest_inspect(deflated), expected)
    assert ingest_inspect(sorted(logs.json_dir.glob("*.json"))).runs == 2 * SAMPLES * EPOCHS
    with pytest.raises(IngestError, match=r"needs zstandard.*pip install 'mas_eval\[inspect\]'"):
        ingest_inspect(logs.files[0], skip_invalid=True)


def test_numbered_samples_and_a_member_written_twice_are_read_as_inspect_reads_them(logs: Logs, tmp_path: Path) -> None:
    """A sample written twice (a re-run) counts once, by its last copy, as inspect_ai reads it."""
    from inspect_ai.log import write_eval_log

    pytest.importorskip("zipfile_zstd")
    log = read_eval_log(str(logs.files[0]))
    numbers = {f"q{k:02d}": n for k, n in zip(range(1, SAMPLES + 1), (10, 9, 2, 100), strict=True)}
    for sample in log.samples or []:
        sample.id = numbers[str(sample.id)]
    file = tmp_path / "numbered.eval"
    write_eval_log(log, str(file))
    rerun = json.loads(zipfile.ZipFile(file).read("samples/2_epoch_1.json"))
    flipped = "I" if rerun["scores"]["match"]["value"] == "C" else "C"
    rerun["scores"]["match"]["value"] = flipped
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(file, "a") as archive:
        archive.writestr("samples/2_epoch_1.json", json.dumps(rerun))
    theirs = {_run_id(log, s): s for s in read_eval_log(str(file)).samples or []}
    ours = ingest_inspect(file).dataset
    assert sorted(ours.collect("runs")["run_id"]) == sorted(theirs)
    match = ours.collect("outcomes").filter(pl.col("name") == "match")
    got = dict(zip(match["run_id"], match["value"], strict=True))
    assert got == {run_id: {"C": 1.0, "I": 0.0}[s.scores["match"].value] for run_id, s in theirs.items()}  # type: ignore[index]
    assert got[f"{log.eval.eval_id}/2/1"] == {"C": 1.0, "I": 0.0}[flipped]


def _edited_json(logs: Logs, folder: Path, name: str, edit: Any) -> Path:
    doc = json.loads(sorted(logs.json_dir.glob("*.json"))[0].read_text())
    edit(doc)
    file = folder / name
    file.write_text(json.dumps(doc))
    return file


def test_an_unfinished_an_older_or_a_corrupt_log_is_refused_in_one_line(logs: Logs, tmp_path: Path) -> None:
    pytest.importorskip("zipfile_zstd")
    unfinished = _rezip(logs.files[0], tmp_path / "unfinished.eval", drop=("header.json",))
    corrupt = _rezip(logs.files[0], tmp_path / "corrupt.eval", method=zipfile.ZIP_STORED)
    data = bytearray(corrupt.read_bytes())
    at = data.index(b'"epoch"', data.index(b"samples/"))
    data[at + 1 : at + 6] = b"EPOCH"
    corrupt.write_bytes(bytes(data))

    cases = {
        unfinished: ["status 'started'", "finished evaluation"],
        corrupt: ["inspect_ai cannot read it", "CRC does not match"],
    }
    for file, says in cases.items():
        with pytest.raises(IngestError) as raised:
            ingest_inspect(file)
        message = str(raised.value)
        assert "\n" not in message and message.startswith(f"{file}: "), message
        for text in [*says, "skip_invalid=True"]:
            assert text in message, (text, message)
    result = ingest_inspect([*cases, logs.files[1]], skip_invalid=True)
    assert result.runs == SAMPLES * EPOCHS and len(result.skipped) == 2


def test_older_layouts_are_read_as_inspect_reads_them(logs: Logs, tmp_path: Path) -> None:
    """A sample's ``transcript`` (events and attachments), a single ``score``, results of one
    ``scorer``, and no eval id: inspect_ai's reader migrates them, and so does the ingest."""

    def older(doc: dict[str, Any]) -> None:
        doc["eval"]["eval_id"] = ""
        scores = doc["results"]["scores"]
        doc["results"] = {
            "scorer": {k: v for k, v in scores[0].items() if k != "metrics"},
            "metrics": scores[0]["metrics"],
        }
        for sample in doc["samples"]:
            sample["transcript"] = {"events": sample.pop("events"), "content": sample.pop("attachments", {})}
            sample["score"] = sample.pop("scores")["match"]

    file = _edited_json(logs, tmp_path, "older.json", older)
    theirs = read_eval_log(str(file))
    ours = ingest_inspect(file).dataset
    runs = ours.collect("runs")
    assert sorted(runs["run_id"]) == sorted(_run_id(theirs, s) for s in theirs.samples or [])
    match = ours.collect("outcomes").filter(pl.col("name") == "match")
    assert match.height == SAMPLES * EPOCHS
    assert dict(zip(match["run_id"], match["value"], strict=True)) == {
        _run_id(theirs, s): {"C": 1.0, "I": 0.0}[s.scores["match"].value]  # type: ignore[index]
        for s in theirs.samples or []
    }
    assert ours.collect("usage")["calls"].sum() == sum(
        e.event == "model" for s in theirs.samples or [] for e in s.events
    )


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
    assert_refused(done, says="--system applies to --format inspect or lm-eval or otlp or annotations only")
    unscored, _ = _unscored(logs, tmp_path)
    done = run(capsys, "ingest", "--format", "inspect", unscored, "--system", "s", "-o", tmp_path / "s")
    assert done.code == 0 and "1 sample(s) have no score" in " ".join(done.out.split())
    assert not (tmp_path / "bad").exists()


def test_an_assistant_turn_that_only_calls_tools_reads_as_its_calls(logs: Logs, tmp_path: Path) -> None:
    """A call asked for by an assistant message and answered by a tool message with an error: one
    ``tool_calls`` row naming both turns and the error; the message's text is the call."""

    def tools(doc: dict[str, Any]) -> None:
        messages = doc["samples"][0]["messages"]
        asking = next(m for m in messages if m["role"] == "assistant")
        asking["content"] = ""
        asking["tool_calls"] = [{"id": "c1", "function": "bash", "arguments": {"cmd": "ls", "timeout": 5}}]
        at = messages.index(asking)
        answer = {"role": "tool", "content": "", "tool_call_id": "c1", "function": "bash"}
        answer["error"] = {"type": "timeout", "message": "no answer in 5 s"}
        messages.insert(at + 1, answer)

    file = _edited_json(logs, tmp_path, "tools.json", tools)
    doc = json.loads(file.read_text())
    sample = doc["samples"][0]
    run_id = f"{doc['eval']['eval_id']}/{sample['id']}/{sample['epoch']}"
    ds = ingest_inspect(file).dataset
    calls = ds.collect("tool_calls")
    assert calls.height == 1
    call = calls.row(0, named=True)
    messages = ds.collect("messages").filter(pl.col("run_id") == run_id).sort("turn")
    asked = messages.filter(pl.col("text").str.starts_with("[tool call]")).row(0, named=True)
    assert asked["text"] == '[tool call] bash(cmd="ls", timeout=5)' and asked["role"] == "assistant"
    assert (call["run_id"], call["turn"], call["tool"], call["call_id"]) == (run_id, 1, "bash", "c1")
    assert json.loads(call["arguments"]) == {"cmd": "ls", "timeout": 5}
    assert call["error"] == "timeout: no answer in 5 s" and call["message_turn"] == asked["turn"]
    assert call["agent_id"] == asked["agent_id"]
    runs = ds.collect("runs").filter(pl.col("run_id") == run_id)
    assert runs.select("tool_calls", "tool_errors").row(0) == (1, 1)
    assert ds.collect("runs").filter(pl.col("run_id") != run_id)["tool_calls"].unique().to_list() == [0]
    # The target and the sample's metadata are kept as the log has them.
    assert runs["target"].to_list() == [sample["target"]]
