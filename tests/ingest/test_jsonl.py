"""Ingest of canonical JSONL run records, and export back: mas_eval.ingest."""

from __future__ import annotations

import gzip
import itertools
import json
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from mas_eval.data.schema import TABLES
from mas_eval.errors import DataError, IngestError, InvalidParameterError, MasEvalError
from mas_eval.ingest import IngestResult, export_jsonl, ingest_jsonl, jsonl, record_dtype
from mas_eval.ingest.jsonl import RECORD_LISTS, USAGE, USAGE_FIELD
from mas_eval.storage.dataset import Dataset

SMALL = Path(__file__).parents[1] / "data" / "run_records_small.jsonl"
SAMPLE = Path(__file__).parents[2] / "data" / "sample.jsonl"
SCHEMA_FILE = Path(__file__).parents[2] / "mas_eval" / "ingest" / "run_record.schema.json"
#: The tables a canonical run record carries (``reported`` is written by log adapters such as Local-DDx's only).
RECORD_TABLES = [name for name in TABLES if name == "runs" or name in {lst.table for lst in RECORD_LISTS}]


def _every_table() -> Dataset:
    """A small Dataset with a row in every table, nulls in optional columns, and runs without children."""
    return Dataset.from_frames(
        runs=pl.DataFrame(
            {
                "run_id": ["r1", "r2", "r3", "r4"],
                "system": ["mas", "single", "mas", "single"],
                "case_id": ["c1", "c1", "c2", "c2"],
                "task": ["flood", "flood", "ddx", None],
                "seed": [1, None, 3, 4],
                "epoch": [1, 1, None, 2],
                "confidence": [0.1, None, 1 / 3, 0.75],
                "iterations": [2, None, 1, None],
                "seconds": [1.25, 0.5, None, 2.0],
                "tokens": [10, 20, None, 40],
                "input_tokens": [6, None, None, 30],
                "output_tokens": [4, None, None, 10],
                "cost_usd": [0.001, None, None, 0.3],
                "tool_calls": [2, None, 0, None],
                "tool_errors": [1, None, 0, None],
                "target": ["x", None, "flu", None],
                "metadata": ['{"level": 2}', None, None, "{}"],
            }
        ),
        agents=pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r3"],
                "agent_id": ["a", "b", "a"],
                "confidence": [0.9, None, 0.5],
                "role": ["medic", None, "chief"],
                "weight": [0.6, 0.4, None],
            }
        ),
        beliefs=pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r1", "r3"],
                "agent_id": ["a", "a", "b", "a"],
                "alternative": ["x", "y", "x", "y"],
                "mass": [0.6, 0.3, 1.0, 0.2],  # agent a of r1 and of r3: incomplete beliefs
            }
        ),
        criteria=pl.DataFrame(
            {
                "run_id": ["r1", "r1"],
                "criterion": ["safety", "cost"],
                "weight": [0.7, None],
                "kind": ["benefit", "cost"],
                "scale": [None, "raw"],
            }
        ),
        scores=pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r1", "r1"],
                "alternative": ["x", "x", "y", "y"],
                "criterion": ["safety", "cost", "safety", "cost"],
                "score": [0.9, 120.0, 0.4, 80.5],
            }
        ),
        alt_scores=pl.DataFrame(
            {"run_id": ["r1", "r1"], "alternative": ["x", "y"], "mcda": [0.8, None], "final": [0.85, 0.1]}
        ),
        ddx=pl.DataFrame(
            {
                "run_id": ["r3", "r3", "r3", "r4"],
                "round": ["1", "1", "final", "final"],
                "agent_id": ["a", "b", "team", "solo"],
                "diagnosis": ["flu", "flu", "flu", "cold"],
                "stance": ["proposed", "excluded", "final", None],
                "rank": [1, None, 1, 2],
                "mentions": [3, 1, None, 0],
                "evidence": [["fever", "cough"], [], None, ["rhinorrhoea"]],
            }
        ),
        ground_truth=pl.DataFrame({"case_id": ["c1", "c2", "c2"], "diagnosis": ["none", "cold", "flu"]}),
        messages=pl.DataFrame(
            {
                "run_id": ["r3", "r3", "r1"],
                "round": ["1", "1", "1"],
                "agent_id": ["a", "b", "a"],
                "turn": [1, 2, 1],
                "text": ["I think flu.", None, 'Quote " and \\ and é'],
                "source": ["generate", None, "input"],
                "role": ["assistant", None, "user"],
                "model": ["m-large", None, None],
                "input_tokens": [12, None, None],
                "output_tokens": [3, None, None],
                "seconds": [0.5, None, None],
            }
        ),
        interventions=pl.DataFrame({"run_id": ["r3", "r3"], "text": ["fluids", "rest"]}),
        answers=pl.DataFrame(
            {
                "run_id": ["r4"],
                "item_id": ["q1"],
                "task": ["qa"],
                "prediction": ["cold"],
                "rationale": [None],
                "reference": ["cold"],
                "reference_rationale": ["runny nose"],
                "reference_diagnosis": ["common cold"],
            }
        ),
        usage=pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r2"],
                "agent_id": ["a", "b", "solo"],
                "model": ["m-large", "m-small", "m-large"],
                "calls": [3, None, 1],
                "input_tokens": [100, 40, None],
                "output_tokens": [20, 5, 7],
                "cost_usd": [0.01, None, 0.002],
                "seconds": [1.5, 0.25, None],
                "evaluator": [None, True, False],
            }
        ),
        tool_calls=pl.DataFrame(
            {
                "run_id": ["r1", "r1"],
                "agent_id": ["a", "b"],
                "turn": [1, 2],
                "tool": ["bash", "python"],
                "arguments": ['{"cmd": "ls"}', None],
                "error": [None, "timeout"],
                "seconds": [0.2, None],
                "message_turn": [1, None],
                "call_id": ["call_1", None],
            }
        ),
        annotations=pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r2"],
                "mode": ["1.1", "2.3", "1.1"],
                "annotator": ["ann1", "ann1", "ann2"],
                "agent_id": [None, "b", None],
                "round": [None, "2", None],
                "category": ["spec", None, "spec"],
                "present": [True, False, True],
            }
        ),
        outcomes=pl.DataFrame(
            {
                "run_id": ["r1", "r2", "r2"],
                "name": ["match", "match", "f1"],
                "value": [1.0, 0.0, 0.4],
                "passed": [True, False, None],
                "answer": ["x", None, None],
                "explanation": [None, "wrong <b>x</b>", None],
            }
        ),
    ).validate()


def _assert_same(left: Dataset, right: Dataset) -> None:
    a, b = left.frames(), right.frames()
    assert list(a) == list(b)
    for name in a:
        assert_frame_equal(a[name], b[name])


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _record(run_id: str, **fields: object) -> str:
    return json.dumps({"run_id": run_id, "system": "mas", "case_id": "c1", **fields})


# -- the record's shape ---------------------------------------------------------------------


def test_record_dtype_matches_the_json_schema_and_the_tables() -> None:
    contract = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))

    def fields(dtype: pl.Struct) -> set[str]:
        return {f.name for f in dtype.fields}

    dtype = record_dtype()
    assert fields(dtype) == set(contract["properties"])
    assert (
        fields(dtype.to_schema()[USAGE_FIELD]) == set(contract["properties"][USAGE_FIELD]["properties"]) == set(USAGE)
    )
    items = {"runs": (dtype, contract)}
    for lst in RECORD_LISTS:
        # An item inherits its parent's key (ground truth: the run's case), so export can nest it back.
        assert lst.inherit == (TABLES[lst.parent].key if lst.parent != "runs" else (lst.inherit[0],))
        assert set(lst.inherit) <= set(TABLES[lst.parent].names)
        parent_dtype, parent_json = items[lst.parent]
        inner = parent_dtype.to_schema()[lst.field].inner
        item_json = parent_json["properties"][lst.field]["items"]
        if lst.scalar:
            assert inner == TABLES[lst.table].column_map[lst.own[0]].dtype
            assert item_json["type"] == "string"
            continue
        assert set(lst.own) <= fields(inner) == set(item_json["properties"])
        assert set(item_json["required"]) == {c for c in TABLES[lst.table].required if c in lst.own}
        items[lst.table] = (inner, item_json)
    assert set(contract["required"]) == set(TABLES["runs"].required)


def test_permissive_dtype_reads_numbers_as_text() -> None:
    schema = record_dtype(permissive=True).to_schema()
    assert schema["confidence"] == pl.String
    assert schema["agents"].inner.to_schema()["beliefs"].inner.to_schema()["mass"] == pl.String


# -- round trip -----------------------------------------------------------------------------


def test_round_trip_of_every_table(tmp_path: Path) -> None:
    ds = _every_table()
    assert ds.table_names == RECORD_TABLES
    path = tmp_path / "runs.jsonl"
    assert export_jsonl(ds, path) == 4
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["run_id"] for r in records] == ["r1", "r2", "r3", "r4"]
    assert records[1]["agents"] is None and records[0]["usage"]["iterations"] == 2
    assert records[2]["ground_truth"] == ["cold", "flu"]
    assert not list(tmp_path.glob(".*"))  # no temporary file left

    result = ingest_jsonl([path], tmp_path / "ds")
    assert result == IngestResult(tmp_path / "ds", 4, 0, None)
    _assert_same(ds, Dataset.open(result.out))


def test_export_omits_absent_tables_and_gzip_round_trips(tmp_path: Path) -> None:
    runs = pl.DataFrame({"run_id": ["b", "a"], "system": ["mas", "single"], "case_id": ["c", "c"]})
    ds = Dataset.from_frames(runs=runs)
    path = tmp_path / "runs.jsonl.gz"
    assert export_jsonl(ds, path) == 2
    records = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    assert [r["run_id"] for r in records] == ["a", "b"]
    assert set(records[0]) == {*(c for c in TABLES["runs"].names if c not in USAGE), USAGE_FIELD}
    result = ingest_jsonl([path], tmp_path / "ds")
    assert sorted(p.name for p in result.out.iterdir()) == ["_dataset.json", "runs"]
    _assert_same(ds, Dataset.open(result.out))


def test_export_lists_children_whose_parent_row_is_missing(tmp_path: Path) -> None:
    runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c"]})
    beliefs = pl.DataFrame({"run_id": ["r1"], "agent_id": ["a"], "alternative": ["x"], "mass": [0.5]})
    path = tmp_path / "runs.jsonl"
    export_jsonl(Dataset.from_frames(runs=runs, beliefs=beliefs), path)
    (record,) = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert record["agents"] == [
        {
            "agent_id": "a",
            "confidence": None,
            "role": None,
            "weight": None,
            "beliefs": [{"alternative": "x", "mass": 0.5}],
        }
    ]
    back = Dataset.open(ingest_jsonl([path], tmp_path / "ds").out)
    assert_frame_equal(back.collect("beliefs"), Dataset.from_frames(runs=runs, beliefs=beliefs).collect("beliefs"))
    assert back.collect("agents").select("run_id", "agent_id").rows() == [("r1", "a")]


# -- ingest of a hand-written file ----------------------------------------------------------


def test_ingest_small_file(tmp_path: Path) -> None:
    result = ingest_jsonl([SMALL], tmp_path / "ds")
    assert (result.runs, result.rejected, result.rejects) == (4, 0, None)
    ds = Dataset.open(result.out)
    assert json.loads((result.out / "_dataset.json").read_text(encoding="utf-8"))["tables"] == RECORD_TABLES
    rows = {name: frame.height for name, frame in ds.frames().items()}
    assert rows == {
        "runs": 4,
        "agents": 3,
        "beliefs": 4,
        "criteria": 2,
        "scores": 4,
        "alt_scores": 2,
        "ddx": 4,
        "ground_truth": 2,
        "messages": 3,
        "interventions": 3,
        "answers": 1,
        "usage": 2,
        "outcomes": 2,
        "tool_calls": 1,
        "annotations": 2,
    }
    runs = ds.collect("runs")
    assert runs.row(0, named=True) == {
        "run_id": "r1",
        "system": "mas",
        "case_id": "c1",
        "task": "flood",
        "variant": "v1",
        "seed": 7,
        "epoch": 1,
        "cluster": "k1",
        "recommended": "evacuate",
        "correct": "evacuate",
        "confidence": 0.8,
        "iterations": 3,
        "api_calls": 12,
        "seconds": 4.5,
        "tokens": 1500,
        "input_tokens": 1200,
        "output_tokens": 300,
        "cost_usd": 0.02,
        "tool_calls": None,
        "tool_errors": None,
        "target": None,
        "metadata": None,
    }
    r2 = runs.row(1, named=True)
    assert r2["variant"] is None and r2["seed"] is None and r2["iterations"] is None and r2["tokens"] is None
    assert runs["tokens"].to_list() == [1500, None, None, 300]

    agents = ds.collect("agents")
    assert agents.select("run_id", "agent_id", "role").rows() == [
        ("r1", "logistics", "logistics"),
        ("r1", "medic", "medical"),
        ("r2", "solo", None),
    ]
    masses = ds.collect("beliefs").group_by("agent_id").agg(pl.col("mass").sum()).sort("agent_id")
    assert masses.rows() == [("logistics", 1.0), ("medic", pytest.approx(0.9))]  # medic: incomplete
    assert ds.collect("criteria").select("criterion", "kind", "scale").rows() == [
        ("cost", "cost", "raw"),
        ("safety", "benefit", "satisfaction"),
    ]
    assert ds.collect("scores").filter(criterion="cost")["score"].to_list() == [100.0, 80.0]
    assert ds.collect("alt_scores").select("alternative", "mcda", "final").rows() == [
        ("evacuate", 0.8, 0.85),
        ("shelter", 0.6, None),
    ]
    ddx = ds.collect("ddx")
    assert ddx.filter(run_id="r3").select("round", "stance", "rank", "mentions", "evidence").rows() == [
        ("debate", "excluded", None, None, None),
        ("final", "final", 1, None, []),
        ("independent", "proposed", 1, 2, ["fever", "cough"]),
    ]
    # Ground truth is keyed by case: c2's two runs give the union, without duplicates.
    assert ds.collect("ground_truth").rows() == [("c2", "pneumonia"), ("c2", "sepsis")]
    assert ds.collect("messages").select("run_id", "turn", "text").rows() == [
        ("r1", 2, None),
        ("r1", 1, "Evacuate now."),
        ("r3", 1, "I disagree: the evidence points to pneumonia."),
    ]
    assert ds.collect("interventions").rows() == [("r1", "sandbags"), ("r3", "antibiotics"), ("r3", "oxygen")]
    answer = ds.collect("answers").row(0, named=True)
    assert answer["reference_rationale"] is None and answer["reference_diagnosis"] == "pneumonia"
    assert ds.collect("usage").select("agent_id", "calls", "input_tokens", "cost_usd").rows() == [
        ("logistics", 5, 500, 0.008),
        ("medic", 7, 700, 0.012),
    ]
    assert ds.collect("outcomes").select("run_id", "name", "value", "passed").rows() == [
        ("r1", "f1", 0.75, None),
        ("r1", "match", 1.0, True),
    ]
    assert ds.collect("tool_calls").select("run_id", "agent_id", "turn", "tool", "arguments", "error").rows() == [
        ("r4", "solo", 1, "lookup", '{"term": "cold"}', None)
    ]
    assert ds.collect("annotations").select("annotator", "present", "category").rows() == [
        ("rater_a", False, None),
        ("rater_b", True, "specification"),
    ]
    assert ds.collect("runs").filter(run_id="r4").select("target", "tool_calls").row(0) == ("common cold", 1)


def test_tables_without_rows_are_not_written(tmp_path: Path) -> None:
    path = _write(tmp_path / "in.jsonl", [_record("r1", agents=[]), _record("r2", agents=None, ground_truth=[])])
    result = ingest_jsonl([path], tmp_path / "ds")
    assert sorted(p.name for p in result.out.iterdir()) == ["_dataset.json", "runs"]


def _chunk_ends(sizes: list[int], chunk_bytes: int) -> list[int]:
    """Where chunks end, in bytes: a chunk ends with the line that takes it past ``chunk_bytes``, a
    line counting its bytes and ``LINE_OVERHEAD``."""
    ends, size = [], 0
    for offset, line in zip(itertools.accumulate(sizes), sizes, strict=True):
        size += line + jsonl.LINE_OVERHEAD
        if size > chunk_bytes:
            ends.append(offset)
            size = 0
    return ends if ends and ends[-1] == sum(sizes) else [*ends, sum(sizes)]


def test_chunking_gives_the_same_result(tmp_path: Path) -> None:
    sizes = [len(line) for line in SMALL.read_bytes().splitlines(keepends=True)]
    assert sizes[:3] == [1732, 1, 223]  # line 2 is blank
    assert jsonl.LINE_OVERHEAD == 64
    whole = Dataset.open(ingest_jsonl([SMALL], tmp_path / "whole").out)
    # chunk_bytes=1: the blank line is a chunk of its own (writing no part file).
    for chunk_bytes, ends, parts in [
        (1, [1732, 1733, 1956, 2651, 3524], 4),
        (225, [1732, 1956, 2651, 3524], 4),
        (4000, [3524], 1),
    ]:
        calls: list[int] = []
        out = tmp_path / f"chunks{chunk_bytes}"
        chunked = ingest_jsonl([SMALL], out, chunk_bytes=chunk_bytes, progress=calls.append)
        assert calls == ends == _chunk_ends(sizes, chunk_bytes)  # bytes read so far, after each chunk
        assert len(list((chunked.out / "runs").glob("*.parquet"))) == parts
        _assert_same(whole, Dataset.open(chunked.out))


@pytest.mark.parametrize(("lines", "chunk_bytes"), [(30, 1), (30, 100), (300, 50_000)])
@pytest.mark.slow
def test_small_chunks_give_the_same_dataset_as_one_chunk(tmp_path: Path, lines: int, chunk_bytes: int) -> None:
    path = tmp_path / "sample.jsonl"
    path.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:lines]))
    one = Dataset.open(ingest_jsonl([path], tmp_path / "one", chunk_bytes=path.stat().st_size).out)
    chunked = Dataset.open(ingest_jsonl([path], tmp_path / "chunked", chunk_bytes=chunk_bytes).out)
    parts = len(list((chunked.source / "runs").glob("*.parquet")))
    assert parts == lines if chunk_bytes <= 100 else 1 < parts < lines  # every line is over 100 bytes
    _assert_same(one, chunked)
    assert all(chunked.scan(name).collect_schema() == one.scan(name).collect_schema() for name in one.table_names)


def _mixed_lines() -> list[str]:
    """The small file's records, renamed three times over (each copy an epoch), blank and malformed lines between."""
    records = [line for line in SMALL.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = ["{oops", _record("m", agents={"a": 1}), "", _record("t", confidence="high"), "[1]", "  "]
    lines = []
    for copy, (record, junk) in itertools.product(range(3), zip(records, bad, strict=False)):
        lines += [
            record.replace('"run_id": "r', f'"run_id": "c{copy}r').replace('"epoch": 1', f'"epoch": {copy + 1}'),
            junk,
        ]
    return lines


@pytest.fixture(scope="module")
def mixed_whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IngestResult]:
    """A file of the mixed lines (:func:`_mixed_lines`), and it ingested in one chunk with the
    malformed lines set aside (both read only)."""
    tmp = tmp_path_factory.mktemp("whole")
    path = _write(tmp / "runs.jsonl", _mixed_lines())
    return path, ingest_jsonl([path], tmp / "whole", skip_invalid=True)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk_bytes=st.integers(1, 3_000))
def test_any_chunk_size_gives_the_same_dataset_and_rejects(
    tmp_path_factory: pytest.TempPathFactory, mixed_whole: tuple[Path, IngestResult], chunk_bytes: int
) -> None:
    tmp = tmp_path_factory.mktemp("chunks")
    path, whole = mixed_whole
    chunked = ingest_jsonl([path], tmp / "chunked", skip_invalid=True, chunk_bytes=chunk_bytes)
    assert (chunked.runs, chunked.rejected) == (whole.runs, whole.rejected) == (12, 9)
    assert chunked.rejects.read_text(encoding="utf-8") == whole.rejects.read_text(
        encoding="utf-8"
    )  # true line numbers across chunks
    _assert_same(Dataset.open(whole.out), Dataset.open(chunked.out))


@pytest.mark.parametrize("decode_bytes", [1, 700])
def test_decoding_in_slices_gives_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decode_bytes: int
) -> None:
    path = _write(tmp_path / "runs.jsonl", _mixed_lines())
    whole = ingest_jsonl([path], tmp_path / "whole", skip_invalid=True)
    monkeypatch.setattr(jsonl.decoding, "_DECODE_BYTES", decode_bytes)  # a chunk is decoded in several slices
    sliced = ingest_jsonl([path], tmp_path / "sliced", skip_invalid=True)
    assert sliced.rejects.read_text(encoding="utf-8") == whole.rejects.read_text(encoding="utf-8")
    _assert_same(Dataset.open(whole.out), Dataset.open(sliced.out))
    with pytest.raises(IngestError, match=r"runs\.jsonl:2: not valid JSON"):
        ingest_jsonl([path], tmp_path / "ds")


def test_several_files_are_concatenated(tmp_path: Path) -> None:
    lines = SMALL.read_text(encoding="utf-8").splitlines()
    first = _write(tmp_path / "a.jsonl", lines[:2])
    second = _write(tmp_path / "b.jsonl", lines[2:])
    calls: list[int] = []
    result = ingest_jsonl([first, str(second)], tmp_path / "ds", chunk_bytes=500, progress=calls.append)
    assert result.runs == 4
    assert calls[-1] == first.stat().st_size + second.stat().st_size
    assert calls == sorted(calls) and first.stat().st_size in calls  # the first file, then the second
    _assert_same(Dataset.open(ingest_jsonl([SMALL], tmp_path / "one").out), Dataset.open(result.out))


def test_progress_of_gzip_files_counts_compressed_bytes(tmp_path: Path) -> None:
    packed = tmp_path / "runs.jsonl.gz"
    packed.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    calls: list[int] = []
    result = ingest_jsonl([packed, SMALL], tmp_path / "ds", chunk_bytes=100_000, progress=calls.append)
    assert result.runs == 304
    assert calls == sorted(calls)
    assert packed.stat().st_size in calls
    assert calls[-1] == packed.stat().st_size + SMALL.stat().st_size


def test_truncated_gzip_file_is_an_ingest_error(tmp_path: Path) -> None:
    packed = tmp_path / "runs.jsonl.gz"
    packed.write_bytes(gzip.compress(SAMPLE.read_bytes())[:5_000])
    with pytest.raises(IngestError, match=r"runs\.jsonl\.gz: cannot be read"):
        ingest_jsonl([packed], tmp_path / "ds")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.jsonl.gz"]


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "16MiB", None, 2**30 + 1])
def test_chunk_bytes_must_be_a_positive_integer(tmp_path: Path, value: object) -> None:
    with pytest.raises(
        InvalidParameterError,
        match=rf"^ingest_jsonl: chunk_bytes={value!r} is invalid; .* an integer in \(0, 1073741824\]$",
    ):
        ingest_jsonl([SMALL], tmp_path / "ds", chunk_bytes=value)  # type: ignore[arg-type]
    assert not (tmp_path / "ds").exists()


def test_lenient_values_are_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "in.jsonl",
        ["\ufeff" + _record("r1", confidence="0.5", seed=3.0, ground_truth="flu") + "\r", "   ", _record(17)],
    )
    runs = Dataset.open(ingest_jsonl([path], tmp_path / "ds").out)
    assert runs.collect("runs").select("run_id", "confidence", "seed").rows() == [("17", None, None), ("r1", 0.5, 3)]
    assert runs.collect("ground_truth").rows() == [("c1", "flu")]


# -- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"run_id": "r2", "system": "mas", ', "not valid JSON"),
        ('["r2", "mas", "c1"]', "expected a JSON object, got an array"),
        ("null", "expected a JSON object, got null"),
        ('{"run_id": "r2", "case_id": "c1"}', "required field 'system' is missing"),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "confidence": "high"}',
            "field 'confidence': expected a finite number, got 'high'",
        ),
        ('{"run_id": "r2", "system": "mas", "case_id": "c1", "confidence": NaN}', "NaN is not valid JSON"),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "usage": {"tokens": 1.5}}',
            "field 'usage.tokens': expected an integer, got '1.5'",
        ),
        ('{"run_id": "r2", "system": "mas", "case_id": "c1", "seed": true}', "field 'seed': expected an integer"),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "agents": {"a": 1}}',
            "field 'agents': expected an array, got an object",
        ),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "agents": [{"agent_id": "a", "beliefs": '
            '[{"alternative": "x", "mass": "lots"}]}]}',
            "field 'agents[].beliefs[].mass': expected a finite number",
        ),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "agents": [{"role": "x"}]}',
            "required field 'agents[].agent_id' is missing",
        ),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "ground_truth": [null]}',
            "field 'ground_truth': an item is null",
        ),
        (
            '{"run_id": "r2", "system": "mas", "case_id": "c1", "ddx": [{"round": "1", "agent_id": "a", '
            '"diagnosis": "d", "evidence": {"e": 1}}]}',
            "field 'ddx[0].evidence': expected an array, got an object",
        ),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = _write(tmp_path / "runs.jsonl", [_record("r1"), "", line, _record("r4")])
    with pytest.raises(IngestError, match="skip_invalid") as caught:
        ingest_jsonl([path], tmp_path / "ds")
    assert f"{path}:3: " in str(caught.value)
    assert problem in str(caught.value)
    assert not (tmp_path / "ds").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.jsonl"]


def test_malformed_line_in_a_later_chunk_and_file(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.jsonl", [_record("r1")])
    bad = _write(tmp_path / "bad.jsonl", [_record(f"s{i}") for i in range(5)] + ["{oops"])
    with pytest.raises(IngestError, match=r"bad\.jsonl:6: not valid JSON"):
        ingest_jsonl([good, bad], tmp_path / "ds", chunk_bytes=2 * len(_record("s0")))


@pytest.mark.parametrize("line", ["{oops", _record("r9", confidence="high")])
def test_malformed_line_in_the_third_chunk_has_its_true_line_number(tmp_path: Path, line: str) -> None:
    records = [_record(f"r{i}") for i in range(6)]
    path = _write(tmp_path / "runs.jsonl", [*records[:4], "", records[4], line, records[5]])
    calls: list[int] = []
    size = len(records[0]) + 1  # every record has the same length, with its newline
    cost = size + jsonl.LINE_OVERHEAD  # what a record counts in a chunk
    with pytest.raises(IngestError, match=r"runs\.jsonl:7: "):
        ingest_jsonl([path], tmp_path / "ds", chunk_bytes=2 * cost - 1, progress=calls.append)
    # Chunks: lines 1-2, 3-4, then 5-7 (line 5 is blank): the error is in the third.
    assert calls == [2 * size, 4 * size]


@pytest.mark.parametrize("order", [("missing", "invalid"), ("invalid", "missing")])
def test_the_first_malformed_line_is_reported(tmp_path: Path, order: tuple[str, str]) -> None:
    bad = {"missing": '{"run_id": "x", "case_id": "c1"}', "invalid": '{"run_id": "y",'}
    lines = [_record("r1"), bad[order[0]], _record("r3"), bad[order[1]]]
    with pytest.raises(IngestError, match=f"runs.jsonl:2: {'required' if order[0] == 'missing' else 'not valid'}"):
        ingest_jsonl([_write(tmp_path / "runs.jsonl", lines)], tmp_path / "ds")


def test_many_malformed_lines_are_all_found(tmp_path: Path) -> None:
    kinds = ["{oops", _record("m", agents={"a": 1}), _record("t", confidence="high"), "[1]"]
    lines = [
        kinds[(i // 3) % 4] if i % 3 == 1 else _record(f"r{i}", ground_truth="flu")  # a lone string: one-item list
        for i in range(300)
    ]
    result = ingest_jsonl([_write(tmp_path / "runs.jsonl", lines)], tmp_path / "ds", skip_invalid=True)
    assert (result.runs, result.rejected) == (200, 100)
    rejects = [json.loads(line) for line in result.rejects.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in rejects] == list(range(2, 301, 3))
    assert Dataset.open(result.out).collect("ground_truth").rows() == [("c1", "flu")]


def test_invalid_utf8_is_a_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(_record("r1").encode() + b'\n{"run_id": "r2", "system": "mas", "case_id": "c1", "task": "\xff"}\n')
    with pytest.raises(IngestError, match=r"runs\.jsonl:2: not valid UTF-8"):
        ingest_jsonl([path], tmp_path / "ds")


def test_skip_invalid_writes_rejects_and_keeps_good_runs(tmp_path: Path) -> None:
    lines = [
        _record("r1", agents=[{"agent_id": "a", "beliefs": [{"alternative": "x", "mass": 0.5}]}]),
        "not json",
        _record("r3", agents=[{"agent_id": "a", "beliefs": [{"alternative": "x", "mass": "lots"}]}]),
        "",
        _record("r5", ground_truth=["flu"]),
        _record("r6", confidence="high", ground_truth=["cold"]),
    ]
    path = _write(tmp_path / "runs.jsonl", lines)
    result = ingest_jsonl([path], tmp_path / "ds", skip_invalid=True, chunk_bytes=len(lines[0]) + len(lines[1]) + 2)
    assert (result.runs, result.rejected, result.rejects) == (2, 3, tmp_path / "ds.rejects.jsonl")
    rejects = [json.loads(line) for line in result.rejects.read_text(encoding="utf-8").splitlines()]
    assert [(r["file"], r["line"], r["text"]) for r in rejects] == [
        (str(path), 2, lines[1]),
        (str(path), 3, lines[2]),
        (str(path), 6, lines[5]),
    ]
    assert "not valid JSON" in rejects[0]["error"] and "'high'" in rejects[2]["error"]
    ds = Dataset.open(result.out)
    assert ds.collect("runs")["run_id"].to_list() == ["r1", "r5"]
    assert ds.collect("beliefs")["run_id"].to_list() == ["r1"]  # r3's good rows go with its line
    assert ds.collect("ground_truth").rows() == [("c1", "flu")]

    clean = ingest_jsonl([SMALL], tmp_path / "clean", skip_invalid=True, rejects=tmp_path / "r" / "bad.jsonl")
    assert (clean.rejected, clean.rejects) == (0, tmp_path / "r" / "bad.jsonl")
    assert clean.rejects.read_text(encoding="utf-8") == ""


# -- failures leave nothing -----------------------------------------------------------------


def test_invalid_data_fails_validation_and_writes_nothing(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.jsonl", [_record("r1")])
    second = _write(tmp_path / "b.jsonl", [_record("r1")])
    with pytest.raises(DataError, match="occur more than once"):
        ingest_jsonl([first, second], tmp_path / "ds", skip_invalid=True)
    negative = _write(tmp_path / "c.jsonl", [_record("r1", agents=[{"agent_id": "a", "weight": -1}])])
    with pytest.raises(DataError, match="weight"):
        ingest_jsonl([negative], tmp_path / "ds")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl", "c.jsonl"]


def test_validation_errors_cover_every_chunk(tmp_path: Path) -> None:
    # Rules are checked chunk by chunk, but the error counts and names the keys of the whole input.
    lines = [_record(f"r{i}", agents=[{"agent_id": "a", "weight": -1 if i % 2 else 1}]) for i in range(6)]
    path = _write(tmp_path / "runs.jsonl", lines)
    keys = ", ".join(f"(run_id='r{i}', agent_id='a')" for i in (1, 3, 5))
    message = f"table 'agents', column 'weight': 3 row(s) are negative, e.g. at {keys}"
    for chunk_bytes in (1, 10_000):
        with pytest.raises(DataError, match=rf"^{re.escape(message)}; weight must be >= 0$"):
            ingest_jsonl([path], tmp_path / "ds", chunk_bytes=chunk_bytes)
    # A run_id repeated in another chunk (or file) breaks a rule no chunk breaks alone.
    again = _write(tmp_path / "again.jsonl", [_record("r0"), _record("r4")])
    with pytest.raises(DataError, match=r"^table 'runs', column 'run_id': 2 key\(s\) occur more than once"):
        ingest_jsonl([_write(tmp_path / "ok.jsonl", [_record(f"r{i}") for i in range(6)]), again], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


@pytest.mark.slow
def test_steps_across_chunks_in_several_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [_record(f"r{i}", case_id=f"c{i % 7}", ground_truth=[f"d{i % 3}", "flu"]) for i in range(40)]
    path = _write(tmp_path / "runs.jsonl", lines)
    one_pass = Dataset.open(ingest_jsonl([path], tmp_path / "one", chunk_bytes=300).out)
    monkeypatch.setattr(jsonl.writing, "_ROWS_PER_PASS", 5)
    passes = ingest_jsonl([path], tmp_path / "passes", chunk_bytes=300)
    assert len(list((passes.out / "ground_truth").glob("*.parquet"))) > 1
    _assert_same(one_pass, Dataset.open(passes.out))
    assert one_pass.collect("ground_truth").height == 7 * 4  # each case: d0, d1, d2 and flu
    with pytest.raises(DataError, match="occur more than once"):
        ingest_jsonl([path, _write(tmp_path / "again.jsonl", [lines[-1]])], tmp_path / "ds", chunk_bytes=300)


def test_missing_file_and_empty_input(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"nope\.jsonl: no such file"):
        ingest_jsonl([SMALL, tmp_path / "nope.jsonl"], tmp_path / "ds")
    with pytest.raises(IngestError, match="no input files"):
        ingest_jsonl([], tmp_path / "ds")
    empty = _write(tmp_path / "empty.jsonl", ["", "  "])
    with pytest.raises(IngestError, match="no run records"):
        ingest_jsonl([empty], tmp_path / "ds")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.jsonl"]


def test_existing_output_needs_overwrite(tmp_path: Path) -> None:
    out = ingest_jsonl(str(SMALL), tmp_path / "ds").out
    with pytest.raises(MasEvalError, match="overwrite=True"):
        ingest_jsonl([SMALL], out)
    path = _write(tmp_path / "one.jsonl", [_record("r1")])
    ingest_jsonl([path], out, overwrite=True)
    assert Dataset.open(out).table_names == ["runs"]
