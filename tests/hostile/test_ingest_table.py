"""``mas-eval ingest --format table`` given tables no run can come from, or values no run can have.

A value that would be changed to fit its column (100.7 tokens truncated to 100, epoch 1.6 to 1 and
then a misleading "run id twice"), a blank system or case, a table with a header only and a CSV
line of 1 GiB (a Rust abort in Polars' reader) are refused: one line naming the file, the row and
the column, and the true cause; exit 2; nothing written; the inputs unchanged. A column whose name
looks like a format template (``sys{}``) or like the reader's own bookkeeping (``row``) is only a
name. A count no run can have (negative tokens) is set to null for that run and said.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

from mas_eval.errors import IngestError
from mas_eval.ingest import ingest_table
from tests.conftest import run_python
from tests.promises import Outcome, assert_refused, assert_unchanged, run, tree

MAP = "system=model,case_id=question"


def table(**columns: list[object]) -> pl.DataFrame:
    base: dict[str, list[object]] = {"model": ["mas", "single", "mas"], "question": ["q1", "q1", "q2"]}
    return pl.DataFrame({**base, **columns}, strict=False)


def ingest(capsys: pytest.CaptureFixture[str], path: Path, out: Path, *more: str | Path) -> Outcome:
    return run(capsys, "ingest", "--format", "table", path, "--map", MAP, "--out", out, *more)


REFUSED = {
    "100.7 tokens in a CSV": ("csv", table(tokens=[100, 100.7, 3]), "row 2: 'tokens' (runs.tokens) holds 100.7, "
                              "not a whole number"),
    "10.5 tokens in Parquet": ("parquet", table(tokens=[1.0, 2.0, 10.5]), "row 3: 'tokens' (runs.tokens) holds "
                               "10.5, not a whole number"),
    "epoch 1.6 in a CSV": ("csv", table(epoch=[1, 1.6, 1]), "row 2: 'epoch' (runs.epoch) holds 1.6, not a whole "
                           "number"),
    "2**63 tokens in Parquet": ("parquet", table(tokens=pl.Series([1, 2**63, 2], dtype=pl.UInt64).to_list()),
                                "row 2: 'tokens' (runs.tokens) holds 9223372036854775808, beyond the largest integer"),
    "infinite seconds": ("parquet", table(seconds=[1.0, float("inf"), 2.0]), "row 2: 'seconds' (runs.seconds) holds "
                         "inf, not a finite number"),
    "a system that is a space": ("csv", table(model=["mas", " ", "mas"]), "row 2: 'model' (runs.system) is blank"),
    "a case that is a space": ("parquet", table(question=["q1", "q1", " "]), "row 3: 'question' (runs.case_id) is "
                               "blank"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_value_that_would_be_changed_to_fit_refuses_its_row(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix, frame, says = REFUSED[case]
    path = tmp_path / "in" / f"runs.{suffix}"
    path.parent.mkdir()
    frame.write_csv(path) if suffix == "csv" else frame.write_parquet(path)
    before = tree(tmp_path)
    line = assert_refused(ingest(capsys, path, tmp_path / "ds"), says=[f"{path}: {says}", "--skip-invalid"])
    assert "twice" not in line  # epoch 1.6 is not a run id given twice
    assert_unchanged(before, tmp_path)
    # Set aside, the other rows are runs, with their values as they were.
    result = ingest_table(path, columns={"system": "model", "case_id": "question"}, skip_invalid=True)
    assert result.runs == 2 and len(result.skipped) == 1


def ingest_mapped(capsys: pytest.CaptureFixture[str], path: Path, out: Path) -> Outcome:
    return run(capsys, "ingest", "--format", "table", path, "--map", "system=sys{},case_id=q{0}", "--out", out)


def test_a_column_named_like_a_template_is_only_a_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in" / "runs.csv"
    path.parent.mkdir()
    pl.DataFrame({"sys{}": ["mas", "single"], "q{0}": ["q1", "q1"], "tokens": ["12", "many"]}).write_csv(path)
    done = run(
        capsys, "ingest", "--format", "table", path, "--map", "system=sys{},case_id=q{0}", "--out", tmp_path / "x"
    )
    assert_refused(done, says=f"{path}: row 2: 'tokens' (runs.tokens) holds many, not a whole number")
    pl.DataFrame({"sys{}": ["mas", " "], "q{0}": ["q1", "q1"], "{}%s": [1.5, 2.5]}).write_csv(path)
    done = run(
        capsys, "ingest", "--format", "table", path, "--map", "system=sys{},case_id=q{0}", "--out", tmp_path / "x"
    )
    assert_refused(done, says=f"{path}: row 2: 'sys{{}}' (runs.system) is blank")
    pl.DataFrame({"sys{}": ["mas", "single"], "q{0}": ["q1", "q1"], "{}%s": [1.5, 2.5]}).write_csv(path)
    result = ingest_table(path, columns={"system": "sys{}", "case_id": "q{0}"})
    assert result.dataset.collect("outcomes")["name"].unique().to_list() == ["{}%s"]


def test_columns_named_like_the_readers_bookkeeping_are_read(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    table(row=[7, 8, 9], file=["a", "b", "c"], slot=["x", "y", "z"], correct=[True, False, True]).write_csv(path)
    result = ingest_table(path, columns={"system": "model", "case_id": "question"}, scores=["correct"])
    runs = result.dataset.collect("runs").sort("run_id")
    assert runs.select("row", "file", "slot").rows() == [(7, "a", "x"), (9, "c", "z"), (8, "b", "y")]


def test_a_table_with_a_header_only_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, write in [("runs.csv", pl.DataFrame.write_csv), ("runs.parquet", pl.DataFrame.write_parquet)]:
        path = tmp_path / "in" / name
        path.parent.mkdir(exist_ok=True)
        write(table().clear(), path)
        before = tree(tmp_path)
        says = f"{path}: holds no rows: only a header (model, question); pass a table with a row per run"
        assert_refused(ingest(capsys, path, tmp_path / "ds"), says=says)
        assert_unchanged(before, tmp_path)
        path.unlink()


def test_a_negative_count_is_set_to_null_for_its_run_and_said(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    table(tokens=[10, -5, 7], cost_usd=[0.1, 0.2, -0.3]).write_csv(path)
    result = ingest_table(path, columns={"system": "model", "case_id": "question"})
    runs = result.dataset.collect("runs").sort("run_id")
    expected = [("mas/q1/1", 10, 0.1), ("mas/q2/1", 7, None), ("single/q1/1", None, 0.2)]
    assert runs.select("run_id", "tokens", "cost_usd").rows() == expected
    assert result.warnings == (
        f"{path}: 'tokens' (runs.tokens) was negative in 1 row(s), which no run can have; set to null there",
        f"{path}: 'cost_usd' (runs.cost_usd) was negative in 1 row(s), which no run can have; set to null there",
    )


# -- a line of a gigabyte ---------------------------------------------------------------------

PEAK_BYTES = 400 * 2**20
ADDRESS_SPACE = 2 * 2**30
#: As in test_ingest_lm_eval: the command under a 2 GiB address space, its exit code and peak memory written.
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


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and a sparse file, as Linux has them")
@pytest.mark.subprocess
def test_a_csv_line_of_a_gigabyte_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "in" / "runs.csv"
    path.parent.mkdir()
    with path.open("wb") as out:
        out.write(b"model,question,correct\nmas,q1,1\nsingle,q1,")
        out.seek(2**30, 1)  # a hole: a gigabyte of zero bytes in one line, no disk used
        out.write(b"0\nmas,q2,1\n")
    before = path.stat()
    measured = tmp_path / "peak"
    args = ["ingest", "--format", "table", path, "--map", MAP, "--out", tmp_path / "ds"]
    done = run_python("-c", CHILD.format(limit=ADDRESS_SPACE), measured, *map(str, args))
    assert_refused(done, says=f"{path}: line 3 is longer than the longest line read (--max-line-mb 16)")
    code, peak = measured.read_text().split()
    assert code == "2" and int(peak) < PEAK_BYTES, f"peak {int(peak) / 2**20:.0f} MiB"
    assert not (tmp_path / "ds").exists()
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_the_longest_csv_line_is_a_parameter(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    table(note=["x" * 100, "y", "z"]).write_csv(path)
    with pytest.raises(IngestError, match=r"line 2 is longer than the longest line read \(max_line_bytes=50\)"):
        ingest_table(path, columns={"system": "model", "case_id": "question"}, max_line_bytes=50)
    assert ingest_table(path, columns={"system": "model", "case_id": "question"}, max_line_bytes=120).runs == 3
