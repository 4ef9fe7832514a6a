"""Scoring and reporting what a hostile user hands over.

``score --engine dask`` with one bad shard printed nine lines (the workers' logs of the failed
task and of the tasks cancelled after it) before the error; the workers are quiet now and the
error is the one line. ``report`` of Scores whose runs lack the ``system`` column ended in a
Polars traceback; it is one line naming the column.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mas_eval
from tests.promises import assert_refused, assert_unchanged, run, tree


@pytest.mark.subprocess
def test_a_bad_shard_scored_on_dask_is_one_line(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ds"
    mas_eval.simulate(60, seed=5).write(folder, shards=2, validate=False)
    shard = next((folder / "runs").glob("shard=1/*.parquet"))
    pl.read_parquet(shard).with_columns(pl.lit(-5.0).alias("confidence")).write_parquet(shard)
    before = tree(tmp_path)
    # capfd: the workers are processes of their own, whose logs reach the terminal, not sys.stderr.
    done = run(capfd, "score", folder, "--out", tmp_path / "scores", "--engine", "dask", "--workers", "1")
    assert_refused(done, says="table 'runs', column 'confidence'")
    assert_unchanged(before, tmp_path)


def test_report_of_runs_without_a_system_column_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scores = mas_eval.score(mas_eval.simulate(30, seed=1))
    tables = dict(scores.tables)
    tables["runs"] = tables["runs"].drop("system")
    mas_eval.Scores(tables, preset=scores.preset, params=scores.params, ran=scores.ran).write(tmp_path / "scores")
    before = tree(tmp_path)
    done = run(capsys, "report", tmp_path / "scores", "--out", tmp_path / "report.html")
    assert_refused(done, says=["report: the scores' runs: no column 'system'", "report the Scores that mas_eval.score"])
    assert_unchanged(before, tmp_path)
