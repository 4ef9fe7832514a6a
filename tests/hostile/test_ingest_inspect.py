"""``mas-eval ingest --format inspect`` given logs inspect_ai could not have written, or could but badly.

A value no column can hold (an epoch ``"1"``, ``1.5``, ``2**63`` or null; tokens of 12.5 or
``2**64``; a task named by a number; a lone surrogate in a sample id; a JSON integer of 5,000
digits; a number beyond 1e308), a sample twice in one log, or a ``.eval`` member that inflates
beyond its bound (a zip bomb) is refused: exit 2, one line naming the file, the sample and the
true cause, nothing written, the input byte for byte the same. A value no run can have (a negative
working time, as R's vitals writes, or negative tokens) is set to null for that run and said once
per file and field; the rest is ingested.

Every input is a copy of a log inspect_ai 0.3.43 wrote (``tests/data/inspect``) with one thing
changed; the zip bomb is a ``.eval`` log of inspect_ai 0.3.208 with its sample's member replaced.
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from mas_eval import Dataset
from mas_eval.ingest.inspect_logs.archive import Archive
from tests.conftest import checkout_env
from tests.promises import assert_refused, assert_unchanged, run, tree

DATA = Path(__file__).parents[1] / "data" / "inspect"
#: A model-graded log of one sample: events (the solver's call, the judge's in a scorer step), usage, a score.
LOG = DATA / "0.3.43_input-task_model_graded_fact.json"
#: A .eval log of one sample, its members compressed with zstandard.
EVAL = DATA / "0.3.208_zstd_retry-2-then-success_legacy.eval"


class Raw:
    """JSON text written into the log as it is (what ``json.dumps`` would not write)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _log() -> dict[str, Any]:
    return json.loads(LOG.read_text(encoding="utf-8"))


def _first_call(doc: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in doc["samples"][0]["events"] if e["event"] == "model")


def _written(folder: Path, doc: dict[str, Any], raws: dict[str, Raw] | None = None) -> Path:
    """``doc`` written as a ``.json`` log in ``folder``, each ``"@@key@@"`` string replaced by its raw text."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc)
    for key, raw in (raws or {}).items():
        text = text.replace(f'"@@{key}@@"', raw.text)
    file = folder / LOG.name
    file.write_text(text, encoding="utf-8")
    return file


def _edit(path: tuple[Any, ...], value: Any) -> Any:
    """An edit setting ``path`` (keys from the log's root; ``"call"``: the first model call) to ``value``."""

    def edit(doc: dict[str, Any]) -> dict[str, Raw]:
        at: Any = _first_call(doc) if path[0] == "call" else doc
        for key in path[1 if path[0] == "call" else 0 : -1]:
            at = at[key]
        if isinstance(value, Raw):
            at[path[-1]] = f"@@{path[-1]}@@"
            return {path[-1]: value}
        at[path[-1]] = value
        return {}

    return edit


def _twice(doc: dict[str, Any]) -> dict[str, Raw]:
    doc["samples"].append(json.loads(json.dumps(doc["samples"][0])))
    return {}


#: Each refused log: the edit, and what the one line says (its true cause).
REFUSED = {
    "an epoch as text": (
        _edit(("samples", 0, "epoch"), "1"),
        ["epoch '1'", "field 'epoch' is '1', not a whole number"],
    ),
    "a fractional epoch": (_edit(("samples", 0, "epoch"), 1.5), ["field 'epoch' is 1.5, not a whole number"]),
    "an epoch of 2**63": (
        _edit(("samples", 0, "epoch"), Raw(str(2**63))),
        ["field 'epoch' is 9223372036854775808, beyond the largest integer a column holds"],
    ),
    "a null epoch": (_edit(("samples", 0, "epoch"), None), ["epoch None", "field 'epoch' is missing (null)"]),
    "fractional tokens": (
        _edit(("call", "output", "usage", "output_tokens"), 12.5),
        ["field 'output_tokens' is 12.5, not a whole number"],
    ),
    "tokens of 2**64": (
        _edit(("call", "output", "usage", "input_tokens"), Raw(str(2**64))),
        ["field 'input_tokens' is 18446744073709551616, beyond the largest integer a column holds"],
    ),
    "a numeric task name": (_edit(("eval", "task"), 42), ["field 'eval.task' is 42, not text"]),
    "a lone surrogate in a sample id": (
        _edit(("samples", 0, "id"), Raw('"\\ud800"')),
        ["field 'sample id' is '\\ud800', not valid Unicode text (a lone surrogate)"],
    ),
    "a sample twice": (_twice, ["sample 1, epoch 1: is in this log twice", "keep one copy"]),
    "an integer of 5,000 digits": (
        _edit(("call", "output", "usage", "output_tokens"), Raw("9" * 5000)),
        ["holds a JSON integer of more than 4,300 digits"],
    ),
    "a time beyond 1e308": (
        _edit(("samples", 0, "total_time"), Raw("1e999")),
        ["field 'total_time' is inf, not a finite number"],
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_value_no_column_can_hold_is_refused_in_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, says = REFUSED[case]
    doc = _log()
    file = _written(tmp_path / "in", doc, edit(doc))
    before = tree(tmp_path / "in")
    done = run(capsys, "ingest", "--format", "inspect", file, "--out", tmp_path / "out")
    line = assert_refused(done, says=[str(file), *says, "--skip-invalid"])
    assert "Traceback" not in line
    assert not (tmp_path / "out").exists()
    assert_unchanged(before, tmp_path / "in")


def test_a_sample_refused_is_set_aside_with_skip_invalid_and_the_rest_kept(tmp_path: Path) -> None:
    from mas_eval.ingest import ingest_inspect

    doc = _log()
    doc["samples"].append(json.loads(json.dumps(doc["samples"][0])))
    doc["samples"][1]["id"] = 2
    doc["samples"][0]["epoch"] = 1.5
    result = ingest_inspect(_written(tmp_path, doc), skip_invalid=True)
    assert result.runs == 1 and result.dataset.collect("runs")["case_id"].to_list() == ["2"]
    assert [reason for _, reason in result.skipped] == ["sample 1, epoch 1.5: field 'epoch' is 1.5, not a whole number"]
    # Nothing of the sample set aside is left behind: one run's messages, usage and outcome only.
    assert set(result.dataset.collect("usage")["run_id"]) == set(result.dataset.collect("runs")["run_id"])


def test_an_impossible_value_is_null_for_its_run_and_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _log()
    doc["samples"].append(json.loads(json.dumps(doc["samples"][0])))
    doc["samples"][1]["id"] = 2
    doc["samples"][0]["working_time"] = -3.5  # as R's vitals writes it
    doc["samples"][0]["total_time"] = -4.0
    _first_call(doc)["output"]["usage"]["output_tokens"] = -46
    file = _written(tmp_path / "in", doc)
    before = tree(tmp_path / "in")
    done = run(capsys, "ingest", "--format", "inspect", file, "--out", tmp_path / "ds")
    assert done.code == 0, done.err
    said = " ".join(done.out.split())
    for field in ("working_time", "total_time", "output_tokens"):
        assert f"field '{field}' was negative in 1 record(s) (sample 1, epoch 1:" in said, field
    ds = Dataset.open(tmp_path / "ds")
    runs = {r["case_id"]: r for r in ds.collect("runs").iter_rows(named=True)}
    assert runs["1"]["seconds"] is None and runs["1"]["output_tokens"] is None
    # The same sample without the impossible values keeps its own; the other counts of the run stay.
    assert runs["2"]["output_tokens"] == 46 and runs["2"]["input_tokens"] == 53
    assert (runs["1"]["input_tokens"], runs["1"]["tokens"]) == (53, 99)
    assert sum("was negative" in note for note in ds.notes) == 3
    assert_unchanged(before, tmp_path / "in")


def _zstd_bomb(target: Path, inflated: int) -> Path:
    """:data:`EVAL` with its sample's member replaced by zstandard frames of ``inflated`` zero bytes.

    The member is one frame of 1 MiB of zeros, repeated (a member may hold several frames); it is
    written as a stored member, then its headers (local and central) are given zstandard's method
    93, the CRC and the size of what it inflates to.
    """
    import zstandard

    chunk = b"\0" * 2**20
    frames = inflated // len(chunk)
    bomb = zstandard.ZstdCompressor(level=19).compress(chunk) * frames
    crc = 0
    for _ in range(frames):
        crc = zlib.crc32(chunk, crc)
    with Archive(EVAL, limit=2**20) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.members:
            if name.startswith("samples/"):
                new.writestr(name, bomb, compress_type=zipfile.ZIP_STORED)
            else:
                new.writestr(name, old.read(name), compress_type=zipfile.ZIP_DEFLATED)
    raw = bytearray(target.read_bytes())
    end = raw.rindex(b"PK\x05\x06")
    (count,), (at,) = struct.unpack_from("<H", raw, end + 10), struct.unpack_from("<I", raw, end + 16)
    for _ in range(count):
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", raw, at + 28)
        name = raw[at + 46 : at + 46 + name_length].decode()
        if name.startswith("samples/"):
            (local,) = struct.unpack_from("<I", raw, at + 42)
            for base, method, crc_at, size in ((at, 10, 16, 24), (local, 8, 14, 22)):
                struct.pack_into("<H", raw, base + method, 93)
                struct.pack_into("<I", raw, base + crc_at, crc)
                struct.pack_into("<I", raw, base + size, inflated)
        at += 46 + name_length + extra_length + comment_length
    target.write_bytes(bytes(raw))
    return target


#: A child that runs the command line under a 2 GiB address-space limit and prints its exit code,
#: stderr and peak RSS (its resident high-water mark, from the kernel's accounting of the child).
_MEASURED = """
import json, resource, subprocess, sys
limit = 2 * 2**30
done = subprocess.run(
    [sys.executable, "-m", "mas_eval.cli", *sys.argv[1:]],
    capture_output=True, text=True,
    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"code": done.returncode, "err": done.stderr, "peak_mb": peak}))
"""


@pytest.mark.subprocess
def test_a_zip_bomb_is_refused_within_bounded_memory(tmp_path: Path) -> None:
    import subprocess

    pytest.importorskip("zstandard")
    (tmp_path / "in").mkdir()
    bomb = _zstd_bomb(tmp_path / "in" / "bomb.eval", 1100 * 2**20)
    assert bomb.stat().st_size < 2**20  # well under a megabyte, inflating to 1.1 GiB
    before = tree(tmp_path / "in")
    measured = subprocess.run(
        [sys.executable, "-c", _MEASURED, "ingest", "--format", "inspect", str(bomb), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=checkout_env({"PYTHONUTF8": "1", "COLUMNS": "200"}),
        check=True,
    )
    outcome = json.loads(measured.stdout)
    lines = outcome["err"].strip().splitlines()
    assert outcome["code"] == 2 and len(lines) == 1, outcome["err"]
    assert "samples/1_epoch_1.json inflates to more than 128 MiB" in lines[0]
    assert "--max-member-mb 256" in lines[0] and "zip bomb" in lines[0]
    assert outcome["peak_mb"] < 400, outcome["peak_mb"]
    assert not (tmp_path / "out").exists()
    assert_unchanged(before, tmp_path / "in")


def test_a_member_larger_than_the_bound_is_read_when_the_bound_is_raised(tmp_path: Path) -> None:
    from mas_eval.errors import IngestError
    from mas_eval.ingest import ingest_inspect

    copy = tmp_path / EVAL.name
    shutil.copyfile(EVAL, copy)
    with pytest.raises(IngestError, match=r"inflates to more than 0\.00390625 MiB"):
        ingest_inspect(copy, max_member_bytes=4096)
    assert ingest_inspect(copy, max_member_bytes=2**20).runs == 1
