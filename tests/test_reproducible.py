"""Every output of ``score`` is bit-for-bit reproducible (issue 14, item 5).

From call to call and with one Polars thread instead of the machine's: each group's sum adds
its own rows one by one in key order (``mas_eval.metrics.segments``, ``mas_eval.metrics.ordered``),
never partial sums merged across threads. Checked on the bundled sample (decision, diagnostic
and answer runs, all three families) and on simulated decision runs of mixed shapes, where sums
run over up to 9 agents and 7 alternatives.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, Scores
from tests.conftest import checkout_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("reproducible")
    mixed = mas_eval.simulate(3000, seed=7, agents=(2, 9), alternatives=(2, 7), criteria=(1, 5))
    return {"sample": ROOT / "data" / "sample", "mixed": mixed.write(folder / "mixed")}


def assert_identical(got: Scores, want: Scores) -> None:
    assert got.names == want.names
    for name in want.names:
        assert_frame_equal(got[name], want[name], check_exact=True)


@pytest.mark.parametrize("name", ["sample", "mixed"])
def test_two_scorings_are_bit_identical(datasets: dict[str, Path], name: str) -> None:
    ds = Dataset.open(datasets[name])
    assert_identical(mas_eval.score(ds, pairwise=True), mas_eval.score(ds, pairwise=True))


@pytest.mark.parametrize("name", ["sample", "mixed"])
def test_one_polars_thread_gives_the_same_bits(datasets: dict[str, Path], name: str, tmp_path: Path) -> None:
    # Polars sizes its thread pool when it is imported: hence a fresh process.
    scoring = "mas_eval.score(mas_eval.Dataset.open(sys.argv[1]), pairwise=True)"
    script = f"import sys, mas_eval; {scoring}.write(sys.argv[2])"
    env = checkout_env(POLARS_MAX_THREADS="1")
    subprocess.run([sys.executable, "-c", script, str(datasets[name]), str(tmp_path / "one")], env=env, check=True)
    assert_identical(Scores.open(tmp_path / "one"), mas_eval.score(Dataset.open(datasets[name]), pairwise=True))
