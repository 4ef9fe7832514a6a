"""The fast path of JSONL ingest (a chunk read by Arrow's JSON reader) against the general path.

The fast path may refuse a chunk (None: the general path reads it), but what it accepts it must
read exactly as the general path does, and it must refuse every chunk the general path finds a
problem in.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError
from mas_eval.ingest import export_jsonl, ingest_jsonl, jsonl, record_dtype
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.sharding import write_sorted_shards

SMALL = Path(__file__).parents[1] / "data" / "run_records_small.jsonl"


def _chunk(lines: list[str | bytes]) -> jsonl.lines.Chunk:
    encoded = [line.encode() if isinstance(line, str) else line for line in lines]
    return jsonl.lines.Chunk(first=1, lines=encoded, long={}, position=0)


def _general(chunk: jsonl.lines.Chunk) -> dict[str, pl.DataFrame]:
    """The general path's tables of ``chunk``; IngestError on its first malformed line."""
    counts = {"runs": 0, "rejected": 0, "chunks": 0}
    dtype = record_dtype(permissive=True)
    return jsonl.decoding.chunk_tables(Path("in.jsonl"), chunk, dtype, counts, None, jsonl.MAX_LINE_BYTES)


def _assert_same_tables(fast: dict[str, pl.DataFrame], general: dict[str, pl.DataFrame]) -> None:
    assert list(fast) == list(general)
    for name, table in general.items():
        if name == "ground_truth":  # deduplicated without an order (sorted when written)
            table, other = table.sort(table.columns), fast[name].sort(table.columns)
        else:
            other = fast[name]
        assert_frame_equal(other, table, check_exact=True)


# -- records written as JSON text, numbers as the text drawn ----------------------------------

#: A JSON number as text (the grammar's every part), from short to 25 digits and large exponents.
_NUMBER = st.from_regex(r"\A-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,2})?\Z")
_INTEGER = st.from_regex(r"\A-?(0|[1-9][0-9]{0,18})\Z")
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)


class _Raw(str):
    """Text written into the JSON line as it is (a number's literal, or a deliberately odd value)."""


def _dump(value: object) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _maybe(strategy: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(st.none(), strategy)


_FLOAT = _maybe(st.one_of(_NUMBER.map(_Raw), st.floats(allow_nan=False, allow_infinity=False).map(repr).map(_Raw)))
_INT = _maybe(_INTEGER.map(_Raw))
#: Values the general path reads leniently, refuses, or reads otherwise than Arrow would: the fast
#: path must leave each of them to it.
_ODD = st.sampled_from(
    ["NaN", "Infinity", "-0", "-0.0", "1e400", "1e-400", "1.797693134862315807e308", '"0.5"', "true", "17", '"x"']
).map(_Raw)


@st.composite
def _record(draw: st.DrawFn, index: int) -> dict[str, object]:
    agents = [
        {
            "agent_id": draw(_TEXT),
            "confidence": draw(_FLOAT),
            "beliefs": [{"alternative": draw(_TEXT), "mass": draw(_FLOAT)} for _ in range(draw(st.integers(0, 2)))],
        }
        for _ in range(draw(st.integers(0, 2)))
    ]
    record: dict[str, object] = {
        "run_id": f"r{index}" + draw(_TEXT),
        "system": draw(st.sampled_from(["mas", "single"])),
        "case_id": draw(_TEXT),
        "seed": draw(_INT),
        "confidence": draw(_FLOAT),
        "usage": draw(_maybe(st.fixed_dictionaries({"tokens": _INT, "cost_usd": _FLOAT}))),
        "agents": agents,
        "ground_truth": draw(_maybe(st.lists(_TEXT, max_size=2))),
        "ddx": [
            {"round": "1", "agent_id": "a", "diagnosis": draw(_TEXT), "evidence": draw(_maybe(st.lists(_TEXT)))},
        ],
        "outcomes": [{"name": "match", "value": draw(_FLOAT), "passed": draw(_maybe(st.booleans()))}],
    }
    # A field out of place: one of the odd values, an unknown or misspelt field, a null item.
    # (Most records are left as they are, so that many chunks are clean.)
    where = draw(st.sampled_from(["none"] * 20 + ["confidence", "seed", "case_id", "extra", "misspelt", "null_item"]))
    if where in ("confidence", "seed", "case_id"):
        record[where] = draw(_ODD)
    elif where == "extra":
        record["note"] = draw(st.sampled_from([_Raw("NaN"), _Raw("[[[1]]]"), "free text"]))
    elif where == "misspelt":
        record["confidnce"] = 0.5
    elif where == "null_item":
        record["ground_truth"] = [None]
    return record


@st.composite
def _lines(draw: st.DrawFn) -> list[str | bytes]:
    lines: list[str | bytes] = [_dump(draw(_record(i))) for i in range(draw(st.integers(1, 4)))]
    # How a line may be laid out in the file (CRLF, a byte-order mark, blank lines, two records
    # on a line, invalid UTF-8 in a string).
    layout = draw(st.sampled_from(["plain"] * 6 + ["crlf"] * 3 + ["bom", "blank", "two", "space", "utf8"]))
    if layout == "crlf":
        lines = [f"{line}\r" for line in lines]
    elif layout == "bom":
        lines[0] = "\ufeff" + str(lines[0])
    elif layout == "blank":
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", " ", "\r"])))
    elif layout == "two":
        lines[0] = f"{lines[0]} {lines[-1]}"
    elif layout == "space":
        lines[-1] = f" {lines[-1]} "
    elif layout == "utf8":
        lines[0] = str(lines[0]).replace('"system":"', '"system":"\udcff', 1).encode("utf-8", "surrogateescape")
    return lines


@settings(max_examples=int(os.environ.get("ARROW_EXAMPLES", "150")), deadline=None)
@given(_lines())
def test_the_fast_path_reads_a_chunk_as_the_general_path_or_leaves_it(lines: list[str | bytes]) -> None:
    chunk = _chunk(lines)
    fast = jsonl.arrow.arrow_tables(chunk)
    event("left to the general path" if fast is None else "read by Arrow")
    if fast is None:
        return
    general = _general(chunk)  # raises if the general path finds a malformed line the fast path let through
    _assert_same_tables(fast, general)


def test_exported_records_take_the_fast_path(tmp_path: Path) -> None:
    # Every table a record holds (the small file has unknown fields and a blank line: the general path reads it).
    records = tmp_path / "runs.jsonl"
    export_jsonl(Dataset.open(ingest_jsonl([SMALL], tmp_path / "ds").out), records)
    lines = records.read_bytes().splitlines()
    fast = jsonl.arrow.arrow_tables(_chunk(lines))
    assert fast is not None
    assert all(fast[name].height for name in TABLES if name != "reported")
    _assert_same_tables(fast, _general(_chunk(lines)))


@pytest.mark.parametrize(
    "odd",
    [
        '"confidence": "0.5"',  # a number as a string: read leniently
        '"case_id": 17',  # a number for a string field: read leniently
        '"ground_truth": "flu"',  # a lone string for an array of strings: read leniently
        '"confidence": -0',  # the general path reads +0.0, Arrow -0.0
        '"confidence": NaN',  # not JSON
        '"note": NaN',  # not JSON, in a field Arrow would skip
        '"confidnce": 0.5',  # a misspelt field
        '"agents": [null]',  # a null item
    ],
)
def test_what_the_general_path_must_read_is_left_to_it(odd: str) -> None:
    line = '{"run_id": "r1", "system": "mas", "case_id": "c1", ' + odd + "}"
    assert jsonl.arrow.arrow_tables(_chunk([line])) is None


@pytest.mark.parametrize(
    "lines",
    [
        ['{"run_id": "r1", "system": "mas", "case_id": "c1"}', ""],  # a blank line
        ['\ufeff{"run_id": "r1", "system": "mas", "case_id": "c1"}'],  # a byte-order mark
        ['{"run_id": "r1", "system": "mas", "case_id": "c1"} {"run_id": "r2", "system": "mas", "case_id": "c1"}'],
        ['{"run_id": "r1", "system": "mas", "case_id": "c1", "ddx": [', '{"round": "1"}]}'],  # a record on two lines
    ],
)
def test_lines_that_are_not_one_object_each_are_left_to_the_general_path(lines: list[str]) -> None:
    assert jsonl.arrow.arrow_tables(_chunk(lines)) is None


def _without_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl.ingest, "arrow_tables", lambda chunk: None)


def _same_files(left: Path, right: Path) -> list[Path]:
    """The files under ``left``, relative to it, asserted to be the files under ``right``."""
    files = sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(right) for p in right.rglob("*") if p.is_file())
    return files


@pytest.mark.parametrize("shards", [None, 3])
def test_ingest_gives_the_same_folder_with_and_without_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shards: int | None
) -> None:
    records = tmp_path / "runs.jsonl"
    export_jsonl(mas_eval.simulate(120, seed=11), records)
    fast = ingest_jsonl([records, SMALL], tmp_path / "fast", chunk_bytes=40_000, shards=shards).out
    _without_fast_path(monkeypatch)
    general = ingest_jsonl([records, SMALL], tmp_path / "general", chunk_bytes=40_000, shards=shards).out
    for file in _same_files(fast, general):
        if file.suffix == ".parquet":
            assert_frame_equal(pl.read_parquet(fast / file), pl.read_parquet(general / file), check_exact=True)
        else:
            assert (fast / file).read_text(encoding="utf-8") == (general / file).read_text(encoding="utf-8")


def test_sharded_ingest_writes_the_files_of_dataset_write(tmp_path: Path) -> None:
    records = tmp_path / "runs.jsonl"
    export_jsonl(mas_eval.simulate(150, seed=12), records)
    lines = records.read_text(encoding="utf-8").splitlines()
    records.write_text("".join(f"{line}\n" for line in reversed(lines)), encoding="utf-8")  # not in key order
    sharded = ingest_jsonl([records, SMALL], tmp_path / "sharded", chunk_bytes=30_000, shards=4).out
    plain = Dataset.open(ingest_jsonl([records, SMALL], tmp_path / "plain").out)
    written = plain.write(tmp_path / "written", shards=4)
    for file in _same_files(written, sharded):
        if file.suffix == ".parquet":
            assert_frame_equal(pl.read_parquet(sharded / file), pl.read_parquet(written / file), check_exact=True)
        else:
            assert json.loads((sharded / file).read_text()) == json.loads((written / file).read_text())


@pytest.mark.slow
def test_sharded_rows_held_or_written_at_every_chunk_give_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rows held to the end (one scratch part per table and shard) or written out at every chunk
    # (a part per chunk): the same files, byte for byte.
    records = tmp_path / "runs.jsonl"
    export_jsonl(mas_eval.simulate(200, seed=13), records)
    held = ingest_jsonl([records, SMALL], tmp_path / "held", chunk_bytes=30_000, shards=3).out
    monkeypatch.setattr(jsonl.writing, "_HELD_BYTES", 1)
    every = ingest_jsonl([records, SMALL], tmp_path / "every", chunk_bytes=7_000, shards=3).out
    files = _same_files(held, every)
    assert [(held / f).read_bytes() == (every / f).read_bytes() for f in files] == [True] * len(files)


def test_a_write_that_fails_on_the_writer_thread_is_raised_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object) -> bool:
        msg = "no space left on device"
        raise OSError(msg)

    monkeypatch.setattr(jsonl.writing, "_store", fail)
    with pytest.raises(OSError, match="no space left"):
        ingest_jsonl([SMALL], tmp_path / "ds")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_write_failure_comes_before_a_later_malformed_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(SMALL.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")

    def fail(*args: object) -> bool:
        msg = "no space left on device"
        raise OSError(msg)

    monkeypatch.setattr(jsonl.writing, "_store", fail)
    with pytest.raises(OSError, match="no space left") as caught:
        ingest_jsonl([path], tmp_path / "ds", chunk_bytes=SMALL.stat().st_size)
    assert isinstance(caught.value.__cause__, IngestError)


@st.composite
def _keyed_rows(draw: st.DrawFn) -> pl.DataFrame:
    keys = draw(st.lists(st.tuples(st.sampled_from(["r1", "r2", "r10"]), st.text("ab", max_size=2)), unique=True))
    return pl.DataFrame(
        {
            "run_id": [k[0] for k in keys],
            "agent_id": [k[1] for k in keys],
            "weight": [float(i) for i in range(len(keys))],
        },
        schema={"run_id": pl.String, "agent_id": pl.String, "weight": pl.Float64},
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=_keyed_rows(), sort_first=st.booleans(), parts=st.integers(1, 3))
def test_sorted_shards_are_the_rows_sorted_by_key(
    tmp_path_factory: pytest.TempPathFactory, rows: pl.DataFrame, sort_first: bool, parts: int
) -> None:
    # Rows in key order are written as they are, others sorted: the same file either way.
    spec = TABLES["agents"]
    rows = rows.sort(list(spec.key)) if sort_first else rows
    tmp = tmp_path_factory.mktemp("shards")
    scratch = tmp / "scratch"
    folder = scratch / "shard=0"
    folder.mkdir(parents=True)
    size = -(-rows.height // parts) if rows.height else 1
    for index in range(parts):
        rows.slice(index * size, size).write_parquet(folder / f"part-{index:05d}.parquet")
    schema = pl.Schema(dict(rows.schema))
    write_sorted_shards(scratch, spec, tmp, 2, schema)
    written = pl.read_parquet(tmp / "agents" / "shard=0" / "part-0.parquet")
    assert_frame_equal(written, rows.sort(list(spec.key)), check_exact=True)
    assert pl.read_parquet(tmp / "agents" / "shard=1" / "part-0.parquet").schema == schema  # no rows: empty file
