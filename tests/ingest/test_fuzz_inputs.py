"""Fuzzing the ingest and validation paths: whatever the input, a MasEvalError or success (issue 9).

Hypothesis mutates valid run records into malformed JSONL lines (wrong types, missing or
misspelt keys, broken JSON, bytes that are not UTF-8, numbers out of range) and corrupts the
tables of a valid Dataset (flipped or truncated bytes, wrong values, missing columns). For each:

* the call either succeeds or raises a :class:`~mas_eval.errors.MasEvalError` subclass, never
  another exception (a Polars error, an OSError, a KeyError ...);
* on failure nothing is written: the output does not exist and the working folder holds what it
  held before;
* the input's bytes are unchanged.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval import Dataset, MasEvalError
from mas_eval.ingest import ingest_jsonl
from tests.conftest import run_cli_process

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [json.loads(line) for line in (ROOT / "data" / "sample.jsonl").read_text(encoding="utf-8").splitlines()[:6]]
#: ``FUZZ_EXAMPLES=2000 pytest tests/ingest/test_fuzz_inputs.py`` for a longer hunt than the suite's.
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
        for p in sorted(folder.rglob("*"))
    }


# -- malformed JSONL ------------------------------------------------------------------------------

_ODD_VALUES = st.sampled_from(
    [None, "", "high", "0.5", -1, -0.5, 1.5, 10**30, 1e308, True, [], {}, [1, 2], {"a": 1}, "NaN", "Infinity", 3.5]
)
_KEY_TYPOS = {"tokens": "tokns", "confidence": "confidnce", "agent_id": "agentid", "mass": "mas", "system": "sytem"}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            out += _paths(inner, (*prefix, index))
    return out


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


@st.composite
def mutated_line(draw: st.DrawFn) -> bytes:
    record = copy.deepcopy(draw(st.sampled_from(RECORDS)))
    kind = draw(st.sampled_from(["value", "drop", "typo", "text", "truncate", "bytes", "valid"]))
    if kind in ("value", "drop"):
        path = draw(st.sampled_from(_paths(record)))
        parent = _parent(record, path)
        if kind == "value":
            parent[path[-1]] = draw(_ODD_VALUES)
        elif isinstance(parent, dict):
            del parent[path[-1]]
    elif kind == "typo":
        paths = [p for p in _paths(record) if isinstance(p[-1], str) and p[-1] in _KEY_TYPOS]
        path = draw(st.sampled_from(paths))
        parent = _parent(record, path)
        parent[_KEY_TYPOS[path[-1]]] = parent.pop(path[-1])
    line = json.dumps(record).encode()
    if kind == "text":
        return draw(st.sampled_from([b"not json", b"[1, 2]", b"null", b"42", b'"a string"', b"{", b"{}"]))
    if kind == "truncate":
        return line[: draw(st.integers(1, max(1, len(line) - 1)))]
    if kind == "bytes":
        at = draw(st.integers(0, len(line) - 1))
        return line[:at] + draw(st.sampled_from([b"\xff", b"\x00", b"\xc3", b'"', b"}", b"\\"])) + line[at + 1 :]
    return line


@FUZZ
@given(lines=st.lists(mutated_line(), min_size=1, max_size=6), skip_invalid=st.booleans())
def test_ingest_of_malformed_jsonl_fails_cleanly(lines: list[bytes], skip_invalid: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = folder / "runs.jsonl"
        source.write_bytes(b"\n".join(lines) + b"\n")
        before = snapshot(folder)
        out = folder / "ds"
        try:
            result = ingest_jsonl([source], out, skip_invalid=skip_invalid)
        except MasEvalError:
            assert snapshot(folder) == before  # nothing written, nothing left behind
        else:
            assert Dataset.open(result.out).validate().collect("runs").height == result.runs
        assert source.read_bytes() == b"\n".join(lines) + b"\n"


# -- corrupted tables -----------------------------------------------------------------------------

_DATASET: dict[str, Path] = {}


def _valid_dataset() -> Path:
    if "path" not in _DATASET:
        _DATASET["path"] = mas_eval.simulate(120, seed=9).write(Path(tempfile.mkdtemp()) / "ds")
    return _DATASET["path"]


def _flip_footer_bytes(path: Path, data: st.DataObject) -> None:
    """Flip bytes among the markers and the footer (the schema, row groups and page offsets)."""
    raw = bytearray(path.read_bytes())
    footer = int.from_bytes(raw[-8:-4], "little") + 8
    places = st.one_of(st.integers(0, 3), st.integers(max(0, len(raw) - footer), len(raw) - 1))
    for _ in range(data.draw(st.integers(1, 8))):
        raw[data.draw(places)] = data.draw(st.integers(0, 255))
    path.write_bytes(bytes(raw))


def _truncate(path: Path, data: st.DataObject) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: data.draw(st.integers(0, len(raw) - 1))])


def _rewrite(path: Path, data: st.DataObject) -> None:
    frame = pl.read_parquet(path)
    column = data.draw(st.sampled_from(frame.columns))
    change = data.draw(st.sampled_from(["null", "nan", "negative", "big", "drop", "duplicate", "text", "rename"]))
    dtype = frame.schema[column]
    if change == "drop":
        frame = frame.drop(column)
    elif change == "rename":
        frame = frame.rename({column: column[:-1] or "x"})
    elif change == "duplicate":
        frame = pl.concat([frame, frame.head(1)])
    elif change == "text":
        frame = frame.with_columns(pl.lit("oops").alias(column))
    else:
        value = {"null": None, "nan": float("nan"), "negative": -1.5, "big": 1e300}[change]
        row = data.draw(st.integers(0, frame.height - 1))
        if value is not None and not dtype.is_numeric():
            value = str(value)
        elif value is not None and dtype.is_integer():
            value = -1 if change == "negative" else 2**62
        values = frame[column].to_list()
        values[row] = value
        frame = frame.with_columns(pl.Series(column, values, dtype=dtype, strict=False))
    frame.write_parquet(path)


#: Byte flips inside the data pages are left to test_flipped_pages_in_a_fresh_process: one Polars
#: process that met many corrupt pages was seen to hang, then to abort (not one corrupt file).
CORRUPTIONS: dict[str, Callable[[Path, st.DataObject], None]] = {
    "flip footer bytes": _flip_footer_bytes,
    "truncate": _truncate,
    "rewrite values": _rewrite,
}


@FUZZ
@given(data=st.data())
def test_validation_and_scoring_of_corrupted_tables_fail_cleanly(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "ds"
        shutil.copytree(_valid_dataset(), folder)
        table = data.draw(st.sampled_from(sorted(p.name for p in folder.glob("*.parquet"))))
        CORRUPTIONS[data.draw(st.sampled_from(list(CORRUPTIONS)))](folder / table, data)
        before = snapshot(folder)
        out = Path(scratch) / "scores"
        for step in (
            lambda: Dataset.open(folder).validate(),
            lambda: Dataset.open(folder).summary(),
            lambda: mas_eval.score(Dataset.open(folder)).write(out),
        ):
            try:
                step()
            except MasEvalError:
                assert not out.exists()
        assert snapshot(folder) == before
        assert sorted(p.name for p in Path(scratch).iterdir()) in (["ds"], ["ds", "scores"])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.subprocess
def test_flipped_pages_in_a_fresh_process(seed: int, tmp_path: Path) -> None:
    # A user's corrupt file meets one `mas-eval` process: either the data read (a flip that still
    # decodes) or one error line naming the file. (Polars may print its own panic text first.)
    folder = tmp_path / "ds"
    shutil.copytree(_valid_dataset(), folder)
    rng = random.Random(seed)
    path = folder / rng.choice(sorted(p.name for p in folder.glob("*.parquet")))
    raw = bytearray(path.read_bytes())
    for _ in range(rng.randint(1, 20)):
        raw[rng.randrange(4, len(raw) - 8)] = rng.randrange(256)
    path.write_bytes(bytes(raw))
    before = snapshot(folder)
    for args in (["validate", folder], ["score", folder, "--out", tmp_path / "scores"]):
        done = run_cli_process(*args)
        assert done.returncode in (0, 2), done.stderr
        assert "Traceback" not in done.stderr
        if done.returncode == 2:
            assert done.stderr.strip().splitlines()[-1].startswith("error: ")
            assert not (tmp_path / "scores").exists()
    assert snapshot(folder) == before
