"""Every output of ``score`` is bit-for-bit reproducible (issue 14, item 5).

From call to call, and with one Polars thread against four and the machine's: each group's sum adds
its own rows one by one in key order (``mas_eval.metrics.segments``, ``mas_eval.metrics.ordered``),
never partial sums merged across threads. Checked on the bundled sample (decision, diagnostic
and answer runs, all three families) and on simulated decision runs of mixed shapes, where sums
run over up to 9 agents and 7 alternatives.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, Scores
from tests.conftest import run_python

ROOT = Path(__file__).resolve().parents[2]


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
@pytest.mark.subprocess
def test_one_polars_thread_gives_the_bits_of_four(datasets: dict[str, Path], name: str, tmp_path: Path) -> None:
    # Polars sizes its thread pool when it is imported: hence fresh processes, each told its thread
    # count. Against this process alone, one core (or POLARS_MAX_THREADS=1 in the caller's
    # environment) would compare one thread with one.
    scoring = "mas_eval.score(mas_eval.Dataset.open(sys.argv[1]), pairwise=True)"
    script = f"import sys, polars, mas_eval; print(polars.thread_pool_size()); {scoring}.write(sys.argv[2])"
    for threads in (1, 4):
        out = tmp_path / f"threads-{threads}"
        done = run_python(
            "-c", script, str(datasets[name]), str(out), env={**os.environ, "POLARS_MAX_THREADS": str(threads)}
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(threads)  # the pool has the size asked, whatever the cores
    one = Scores.open(tmp_path / "threads-1")
    assert_identical(one, Scores.open(tmp_path / "threads-4"))
    assert_identical(one, mas_eval.score(Dataset.open(datasets[name]), pairwise=True))
