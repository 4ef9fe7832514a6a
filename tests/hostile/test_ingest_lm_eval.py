"""``mas-eval ingest --format lm-eval`` given output lm-eval could not have written, or could but badly.

A value that cannot be read (a lone surrogate in a ``doc_id``, a model's name or a metric's name,
an integer of 5,000 digits, a number beyond 1e308, a line of 1 GiB) is refused: one line naming
the file, the line and the true cause; exit 2; nothing written; the inputs unchanged. A run at the
bottom of 1,100 nested folders is found; the same run given twice names both files and the
command line's ``PATH=SYSTEM`` fix.

Every input is a copy of a real lm-eval 0.4.13 run (``tests/data/lm_eval``) with one thing changed.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from mas_eval import Dataset
from mas_eval.ingest import ingest_lm_eval
from tests.conftest import run_python
from tests.promises import assert_refused, assert_unchanged, run, tree

DATA = Path(__file__).parents[1] / "data" / "lm_eval" / "sshleifer__tiny-gpt2"
STAMP = "2026-10-01T23-15-32.942677"
RESULTS = f"results_{STAMP}.json"
SAMPLES = f"samples_copa_{STAMP}.jsonl"


def copy(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for file in DATA.iterdir():
        shutil.copyfile(file, folder / file.name)
    return folder


def samples_with(folder: Path, line: int, text: str) -> Path:
    """The run in ``folder`` with samples line ``line`` (1-based) replaced by ``text``."""
    samples = folder / SAMPLES
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[line - 1] = text if text.endswith("\n") else text + "\n"
    samples.write_text("".join(lines), encoding="utf-8")
    return samples


def first_line() -> dict[str, Any]:
    return json.loads((DATA / SAMPLES).read_text(encoding="utf-8").splitlines()[0])


def edited(**changes: Any) -> str:
    """The first samples line as JSON text with ``changes``; a value of type ``Raw`` is written as it is."""
    row = first_line()
    raws = {}
    for key, value in changes.items():
        if isinstance(value, Raw):
            row[key] = f"@@{key}@@"
            raws[f'"@@{key}@@"'] = value.text
        else:
            row[key] = value
    text = json.dumps(row)
    for placeholder, raw in raws.items():
        text = text.replace(placeholder, raw)
    return text


class Raw:
    """JSON text written into a line as it is (an escape ``json.dumps`` would not write)."""

    def __init__(self, text: str) -> None:
        self.text = text


# -- a samples line ---------------------------------------------------------------------------

LINES = {
    "a lone surrogate in a doc_id": (edited(doc_id=Raw('"\\ud800"')), "field 'doc_id' is '\\ud800', not valid Unicode"),
    "a lone surrogate in a metric's name": (
        edited(metrics=Raw('["acc", "\\udc00"]')),
        "field 'metrics' is '\\udc00', not valid Unicode",
    ),
    "a lone surrogate in a filtered response": (
        edited(filtered_resps=Raw('["\\ud83d"]')),
        "field 'filtered_resps' is",
    ),
    "a doc_id of 5,000 digits": (edited(doc_id=Raw("9" * 5000)), "cannot be decoded: an integer of 5000 digits"),
    "a metric of 5,000 digits": (edited(acc=Raw("1" * 5000)), "cannot be decoded: an integer of 5000 digits"),
    "a metric beyond 1e308": (edited(acc=Raw("1e400")), "field 'acc' is inf, not a finite number"),
    "an integer metric beyond 1e308": (edited(acc=Raw("1" + "0" * 400)), "field 'acc' is 1000"),
    "a blank doc_id": (edited(doc_id=" "), "field 'doc_id' is ' ', blank, not an identifier"),
    "a doc_id that is a list": (edited(doc_id=[1]), "doc_id is an array, expected an integer"),
}


@pytest.mark.parametrize("case", list(LINES))
def test_a_value_no_column_can_hold_refuses_the_line_in_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, says = LINES[case]
    samples = samples_with(copy(tmp_path / "in"), 1, text)
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds")
    assert_refused(done, says=[f"{samples}, line 1: ", says, "--skip-invalid"])
    assert_unchanged(before, tmp_path)
    # Set aside, the rest is read: 19 of the 20 documents, and the gap is said.
    result = ingest_lm_eval(tmp_path / "in", skip_invalid=True)
    assert result.runs == 19 and len(result.skipped) == 1 and result.skipped[0][1].startswith("line 1: ")
    assert any("holds 19 of the 20 documents" in warning for warning in result.warnings)


# -- the results file -------------------------------------------------------------------------

RESULTS_CHANGES = {
    "a model named with a lone surrogate": (('"model_name": "sshleifer/tiny-gpt2"', '"model_name": "m\\udfff"'),
                                            "field 'model_name' is 'm\\udfff', not valid Unicode"),
    "a recorded number of 5,000 digits": (('"acc,none": 0.6', '"acc,none": ' + "7" * 5000),
                                          "cannot be decoded: an integer of 5000 digits"),
    "a recorded number beyond 1e308": (('"acc,none": 0.6', '"acc,none": 1e999'),
                                       "field 'results.copa.acc,none' is inf, not a finite number"),
    "a seed beyond 1e308": (('"random_seed": 0', '"random_seed": 1e999'),
                            "field 'config.random_seed' is inf, not a whole number"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(RESULTS_CHANGES))
def test_a_results_file_with_a_value_no_column_can_hold_is_named(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (old, new), says = RESULTS_CHANGES[case]
    folder = copy(tmp_path / "in")
    results = folder / RESULTS
    text = results.read_text(encoding="utf-8")
    assert old in text
    results.write_text(text.replace(old, new), encoding="utf-8")
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", folder, "--out", tmp_path / "ds")
    assert_refused(done, says=[str(results), says])
    assert_unchanged(before, tmp_path)


# -- paths ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_under_1100_nested_folders_is_found(tmp_path: Path) -> None:
    # Made and removed a level at a time: pathlib's and shutil's own walks recurse, and would not get there.
    levels = [tmp_path / "out"]
    for _ in range(1100):
        levels.append(levels[-1] / "d")
    for level in levels:
        level.mkdir()
    copy(levels[-1])
    try:
        assert sys.getrecursionlimit() < len(levels)  # deeper than a recursive walk could go
        result = ingest_lm_eval(tmp_path / "out")
        assert result.runs == 20 and result.files[0] == levels[-1] / RESULTS
    finally:
        for file in levels[-1].iterdir():
            file.unlink()
        for level in reversed(levels):
            level.rmdir()


def test_the_same_run_twice_names_both_files_and_the_command_lines_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = copy(tmp_path / "in" / "a") / RESULTS, copy(tmp_path / "in" / "b") / RESULTS
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds")
    line = assert_refused(done, says=[f"{a} and {b}: both hold the runs of model 'sshleifer/tiny-gpt2'", f"{b}=OTHER"])
    assert "system=" not in line and "paths=" not in line  # the command line's fix, not Python's
    assert_unchanged(before, tmp_path)


# -- a line of a gigabyte ---------------------------------------------------------------------

#: Peak memory of the child that reads past a 1 GiB line, measured there: under this.
PEAK_BYTES = 400 * 2**20
#: The child's address space: a line held whole (1 GiB of bytes, then as much text) cannot fit.
ADDRESS_SPACE = 2 * 2**30
#: The command in a child limited to ``ADDRESS_SPACE``, writing its exit code and peak resident memory
#: (``VmHWM``: of its own memory map; ``ru_maxrss`` would count the parent's too, as it was when forked).
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from mas_eval.cli import main
try:
    main(sys.argv[2:])
except SystemExit as exited:
    code = exited.code
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
with open(sys.argv[1], "w") as out:
    out.write(f"{{code}} {{peak}}")
sys.exit(code)
"""


def gigabyte_line(folder: Path) -> Path:
    """The run in ``folder`` with its second samples line 1 GiB long: a hole in a sparse file, no disk used."""
    samples = folder / SAMPLES
    lines = (DATA / SAMPLES).read_bytes().splitlines(keepends=True)
    with samples.open("wb") as out:
        out.write(lines[0])
        out.write(b'{"doc_id": 1, "pad": "')
        out.seek(2**30, 1)
        out.write(b'"}\n')
        out.writelines(lines[2:])
    return samples


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and a sparse file, as Linux has them")
@pytest.mark.subprocess
def test_a_line_of_a_gigabyte_is_one_line_in_bounded_memory(tmp_path: Path) -> None:
    samples = gigabyte_line(copy(tmp_path / "in"))
    before = samples.stat()  # not tree(): it would read the gigabyte into this process
    measured = tmp_path / "peak"
    args = ["ingest", "--format", "lm-eval", tmp_path / "in", "--out", tmp_path / "ds"]
    done = run_python("-c", CHILD.format(limit=ADDRESS_SPACE), measured, *map(str, args))
    assert_refused(done, says=[f"{samples}, line 2: 1,073,741,848 bytes long", "--max-line-mb 16", "--skip-invalid"])
    code, peak = measured.read_text().split()
    assert code == "2" and int(peak) < PEAK_BYTES, f"peak {int(peak) / 2**20:.0f} MiB"
    after = samples.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert not (tmp_path / "ds").exists()
    # Set aside, the other 19 documents are read.
    again = run_python("-c", CHILD.format(limit=ADDRESS_SPACE), measured, *map(str, args), "--skip-invalid")
    assert again.returncode == 0, again.stderr
    assert measured.read_text().split()[0] == "0"
    assert Dataset.open(tmp_path / "ds").collect("runs").height == 19
