"""`mas-eval compare`: a thin shell over mas_eval.stats.compare."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def test_compare_tests_non_inferiority_at_the_margin_given(
    scores_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ni.parquet"
    done = run(capsys, "compare", scores_dir, "--metrics", "dqs,decision_confidence", "--pair-on", "case_id",
               "--margin", "dqs=0.05,decision_confidence=0.1", "--hypothesis", "noninferior", "--out", out)  # fmt: skip
    assert done.code == 0, done.err
    expected = mas_eval.stats.compare(
        mas_eval.Scores.open(scores_dir), ["dqs", "decision_confidence"], pair_on="case_id",
        margin={"dqs": 0.05, "decision_confidence": 0.1}, hypothesis="noninferior",
    )  # fmt: skip
    assert_frame_equal(pl.read_parquet(out), expected, check_exact=False, rel_tol=1e-12)
    assert "verdict" in done.out and "noninferior at margin" in done.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--margin", "five"], "compare: --margin 'five' is not a number (0.05) nor metric=number pairs"),
        (["--margin", "0", "--hypothesis", "equivalent"], "compare: margin=0.0 is invalid; margin must be a positive"),
        (["--hypothesis", "noninferior"], "compare: hypothesis='noninferior' is tested against a margin"),
        (["--hypothesis", "better"], "compare: hypothesis='better' is invalid; hypothesis must be one of 'superior'"),
    ],
)
def test_bad_margins_are_one_line(
    capsys: pytest.CaptureFixture[str], scores_dir: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    done = run(capsys, "compare", scores_dir, "-m", "dqs", "--out", tmp_path / "c.parquet", *args)
    lines = done.err.strip().splitlines()
    assert done.code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {message}"), done.err
    assert not (tmp_path / "c.parquet").exists()


def test_cost_effectiveness_prints_the_verdict_and_writes_the_table(
    scores_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "icer.csv"
    done = run(capsys, "cost-effectiveness", scores_dir, "-m", "gt_match", "--cost", "cost_usd", "--by", "task",
               "--n-boot", "300", "--seed", "4", "--out", out)  # fmt: skip
    assert done.code == 0, done.err
    expected = mas_eval.cost_effectiveness(
        mas_eval.Scores.open(scores_dir), "gt_match", cost="cost_usd", by="task", n_boot=300, seed=4
    )
    written = pl.read_csv(out, infer_schema_length=None)
    assert written["verdict"].to_list() == expected["verdict"].to_list()
    np.testing.assert_allclose(written["icer"].to_numpy(), expected["icer"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        written["bootstrap_low"].cast(pl.Float64).to_numpy(), expected["bootstrap_low"].cast(pl.Float64).to_numpy(),
        rtol=1e-12,
    )  # fmt: skip
    for text in ("verdict", "ICER", "Fieller", "bootstrap", f"wrote {expected.height} row(s)"):
        assert text in done.out
    unpaired = run(capsys, "cost-effectiveness", scores_dir, "-m", "gt_match", "--cost", "cost_usd", "--pair-on",
                   "none", "--n-boot", "0")  # fmt: skip
    assert unpaired.code == 0, unpaired.err


def test_cost_effectiveness_errors_are_one_line(scores_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "cost-effectiveness", scores_dir, "-m", "gt_match", "--cost", "nope")
    lines = done.err.strip().splitlines()
    assert done.code == 2 and len(lines) == 1 and "cost_effectiveness: cost: no column 'nope'" in lines[0]
