"""`mas-eval compare`: a thin shell over mas_eval.stats.compare."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import cli
from tests.promises import run


@pytest.fixture(scope="module")
def scores_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stats_cli") / "scores"
    mas_eval.score(mas_eval.simulate(300, seed=5)).write(path)
    return path


def test_compare_writes_the_table_and_prints_it(
    scores_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "comparisons.parquet"
    argv = ["compare", str(scores_dir), "--metrics", "dqs,decision_confidence", "--by", "task", "--pair-on",
            "case_id", "--test", "auto", "--correction", "holm", "--out", str(out)]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code in (0, None)
    table = pl.read_parquet(out)
    expected = mas_eval.stats.compare(
        mas_eval.Scores.open(scores_dir), ["dqs", "decision_confidence"], by="task", pair_on="case_id", test="auto"
    )
    assert_frame_equal(table, expected, check_exact=False, rel_tol=1e-12)
    assert "wrote 6 comparisons" in capsys.readouterr().out


def test_compare_errors_are_one_line_and_exit_2(scores_dir: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["compare", str(scores_dir), "--metrics", "nope"])
    assert exit_info.value.code == 2
    assert "no column 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--test", "ttest"], "compare: test='ttest' is invalid; test must be one of 'welch', 'student'"),
        (["--boot-ci", "basic"], "compare: boot_ci='basic' is invalid; boot_ci must be one of 'bca', 'percentile'"),
        (["--cluster", "case_id", "--n-boot", "100"], "compare: cluster and n_boot cannot be combined"),
        (["--alpha", "1.5"], "compare: alpha=1.5 is invalid; alpha must be a number in (0, 1)"),
    ],
)
def test_bad_options_are_one_line_naming_the_option(
    capsys: pytest.CaptureFixture[str], scores_dir: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    done = run(capsys, "compare", str(scores_dir), "--out", str(tmp_path / "c.parquet"), *args)
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), done.err
    assert not (tmp_path / "c.parquet").exists()
