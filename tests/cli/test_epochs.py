"""`mas-eval pass-at-k` and `mas-eval variance`: the tables the statistics give, printed; errors one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval import cli
from mas_eval.stats import pass_at_k_intervals, plan, variance_components


@pytest.fixture(scope="module")
def scores_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("epochs_cli") / "scores"
    mas_eval.score(mas_eval.simulate_outcomes(600, seed=3)).write(path)
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    out = capsys.readouterr()
    return exit_info.value.code or 0, out.out, out.err


def test_pass_at_k_prints_the_intervals(scores_dir: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _ = _run(["pass-at-k", str(scores_dir), "-m", "match", "-k", "1,3", "--treatment", "mas",
                         "--control", "single", "--n-boot", "200"], capsys)  # fmt: skip
    assert code == 0
    table = pass_at_k_intervals(mas_eval.Scores.open(scores_dir).runs, "match", k=[1, 3], treatment="mas",
                                control="single", n_boot=200)  # fmt: skip
    assert "pass@k and pass^k of match" in out
    assert f"{table['estimate'][0]:.3g}"[:4] in out


def test_variance_prints_the_components_and_the_plan(scores_dir: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _ = _run(["variance", str(scores_dir), "-m", "match", "--paired", "mas,single", "--mde", "0.1",
                         "--max-epochs", "4", "--cost-per-case", "3"], capsys)  # fmt: skip
    assert code == 0
    runs = mas_eval.Scores.open(scores_dir).runs
    components = variance_components(runs, "match", paired=("mas", "single"))
    designs = plan(components, mde=0.1, max_epochs=4, cost_per_case=3.0)
    assert "variance components of match (anova)" in out and "designs reaching power 0.8" in out
    chosen = designs.filter(pl.col("chosen")).row(0, named=True)
    assert f"{chosen['cases']:,}" in out or str(chosen["cases"]) in out


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["pass-at-k", "{scores}", "-m", "match", "-k", "1,x"], "--k '1,x' is not a comma-separated list"),
        (["pass-at-k", "{scores}", "-m", "match", "-k", "9"], "k=9 is more than the most epochs"),
        (["variance", "{scores}", "-m", "match", "--paired", "mas"], "--paired 'mas' must be two systems"),
        (["variance", "{scores}", "-m", "match", "--method", "ml"], "method='ml'"),
        (["variance", "{scores}", "-m", "match", "--mde", "0"], "mde=0.0 is invalid"),
        (["variance", "{scores}", "-m", "match"], "more than one score of the same case_id, epoch"),
    ],
)
def test_errors_are_one_line_and_exit_2(
    scores_dir: Path, capsys: pytest.CaptureFixture, argv: list[str], text: str
) -> None:
    code, _, err = _run([a.replace("{scores}", str(scores_dir)) for a in argv], capsys)
    assert code == 2
    assert text in err and err.strip().count("\n") == 0
