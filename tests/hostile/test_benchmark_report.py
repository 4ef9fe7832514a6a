"""MedAISure report files a hostile user passes to ``benchmark-report`` and ``combined-score``.

A 1 GiB line ran Python out of memory (``MemoryError`` under a 2 GiB address space): a report is
now refused before it is read when it is larger than any MedAISure writes
(:data:`~mas_eval.report.benchmark.MAX_REPORT_BYTES`), in one line; a number no float holds is
one line naming the file and line, not a ``ValueError`` traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mas_eval.report.benchmark import MAX_REPORT_BYTES
from tests.conftest import run_python
from tests.promises import assert_refused, assert_unchanged, run, tree

#: The address space of the process that reads the 1 GiB report, and the most it may use.
ADDRESS_SPACE = 2 * 2**30
PEAK_LIMIT_MB = 400

_UNDER_A_CAP = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
from mas_eval.cli import main
try:
    main(["benchmark-report", sys.argv[1], "--out", sys.argv[1] + ".md"])
except SystemExit as exited:
    code = exited.code
# VmHWM: this program's peak resident memory (getrusage's ru_maxrss keeps the forking parent's across exec).
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "peak_mb": peak / 1024}))
"""


@pytest.mark.subprocess
def test_a_one_gib_line_is_refused_before_it_is_read_within_a_2_gib_address_space(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with report.open("wb") as handle:  # one line: an object whose string runs on for a GiB (a sparse file)
        handle.write(b'{"model_id": "m", "metadata": {"x": "')
        handle.truncate(2**30)
    before = tree(tmp_path)
    done = run_python("-c", _UNDER_A_CAP, str(report), str(ADDRESS_SPACE))
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["code"] == 2 and measured["peak_mb"] < PEAK_LIMIT_MB, measured
    line = done.stderr.strip()
    assert line.count("\n") == 0 and f"{2**30:,} bytes, more than such a file can be ({MAX_REPORT_BYTES:,})" in line
    assert_unchanged(before, tmp_path)


@pytest.mark.parametrize(
    ("score", "says"),
    [
        ("1" + "0" * 4400, "an integer of 4,401 digits"),
        ("2" * 310, "an integer of 310 digits"),
        ("1e400", "the number 1e400, beyond the largest float"),
    ],
)
@pytest.mark.parametrize("command", ["benchmark-report", "combined-score"])
def test_a_number_no_float_holds_is_one_line_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, score: str, says: str
) -> None:
    report = tmp_path / "report.json"
    report.write_text('{\n"model_id": "m",\n"task_scores": {"t": {"accuracy": ' + score + "}}\n}\n")
    before = tree(tmp_path)
    extra = ["--weights", "diagnostics=1"] if command == "combined-score" else []
    done = run(capsys, command, report, *extra, "--out", tmp_path / "out.md")
    assert_refused(done, says=[f"{report}:3:", says])
    assert_unchanged(before, tmp_path)
