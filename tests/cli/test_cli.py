"""The command line: sub-commands listed, errors as one line with exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from mas_eval import Dataset
from mas_eval.cli import main
from tests.conftest import run_cli_process


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("--help") == 0
    out = capsys.readouterr().out
    for command in ("ingest", "simulate", "validate", "summary"):
        assert command in out


def test_validate_accepts_a_valid_dataset(tiny: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tiny.write(tmp_path / "ds")
    assert run_cli("validate", out) == 0
    assert "valid" in capsys.readouterr().out


def test_summary_prints_every_table(tiny: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tiny.write(tmp_path / "ds")
    assert run_cli("summary", out, "--json") == 0
    printed = capsys.readouterr().out
    for name in tiny.table_names:
        assert f'"{name}"' in printed


def _broken_dataset(tiny: Dataset, root: Path) -> Path:
    out = tiny.write(root / "ds")
    beliefs = tiny.collect("beliefs")
    beliefs.with_columns(mass=-beliefs["mass"]).write_parquet(out / "beliefs.parquet")
    return out


@pytest.mark.subprocess
def test_validate_on_a_broken_dataset_prints_one_line_and_exits_2(tiny: Dataset, tmp_path: Path) -> None:
    out = _broken_dataset(tiny, tmp_path)
    done = run_cli_process("validate", str(out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: table 'beliefs', column 'mass'")
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_missing_dataset_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("validate", tmp_path / "missing") == 2
    assert "no such Dataset folder" in capsys.readouterr().err
