"""Scoring a sharded Dataset in memory on every core, and validating each shard where it is scored.

``score(ds)`` on a Dataset opened from a sharded folder scores its shards in worker processes and
returns the tables of scoring them one after another in this process, bit for bit. ``score(ds,
validate=True)`` checks every rule of ``Dataset.validate``, each shard's in the process that
scores it; a broken rule is the error ``Dataset.validate`` raises for the whole Dataset, whichever
way the Dataset is scored.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import DataError, Dataset, SchemaError, Scores
from mas_eval.data.schema import TABLES
from mas_eval.metrics import family as families
from mas_eval.presets import PRESETS
from mas_eval.scoring.request import Step
from mas_eval.scoring.shards import MEMORY_WORKERS, default_workers, score_shards
from mas_eval.storage.sharding import shard_folder
from tests.conftest import checkout_env, tiny_frames
from tests.metrics.test_families import TOY, with_messages

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
Frames = dict[str, pl.DataFrame]


def assert_same_scores(got: Scores, want: Scores) -> None:
    assert got.names == want.names
    assert (got.preset, got.params, got.ran, got.skipped, got.named) == (
        want.preset,
        want.params,
        want.ran,
        want.skipped,
        want.named,
    )
    for name in want.names:
        assert_frame_equal(got[name], want[name], check_exact=True)


def test_in_memory_workers_give_the_tables_of_one_process(sharded: Path) -> None:
    ds = Dataset.open(sharded)
    here = mas_eval.score(ds, workers=1)
    # The shards' tables joined in run order are those of scoring the Dataset whole.
    assert_same_scores(here, mas_eval.score(Dataset.open(ROOT / "data" / "sample")))
    steps: list[Step] = []
    assert_same_scores(mas_eval.score(ds, workers=2, progress=steps.append), here)
    # The progress of scoring in workers: before the first shard and after each.
    counts = [(step.done, step.total) for step in steps if step.total is not None]
    assert counts == [(k, 5) for k in range(6)] and len(steps) == 6
    assert_same_scores(mas_eval.score(ds, validate=True), here)


def _removals_done() -> None:
    """Wait for the threads that remove the workers' files (never waited for by ``score``)."""
    for thread in threading.enumerate():
        if thread.name.startswith("mas_eval_remove"):
            thread.join()


def test_the_workers_files_are_removed_after_scoring_and_after_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    frames = tiny_frames()
    good = Dataset.open(Dataset.from_frames(**frames).write(tmp_path / "good", shards=2))
    assert mas_eval.score(good, workers=2).runs.height == frames["runs"].height
    _removals_done()
    assert list(scratch.iterdir()) == []
    BROKEN["negative mass"](frames)
    bad = Dataset.open(Dataset.from_frames(**frames).write(tmp_path / "bad", shards=2, validate=False))
    with pytest.raises(DataError, match="mass"):
        mas_eval.score(bad, workers=2, validate=True)
    _removals_done()
    assert list(scratch.iterdir()) == []


def test_default_workers_are_the_cores_capped() -> None:
    assert default_workers(1) == 1
    assert 1 <= default_workers(3) <= 3
    assert default_workers(10_000) <= MEMORY_WORKERS


@pytest.fixture
def toy() -> Iterator[families.Family]:
    families.register(TOY)
    try:
        yield TOY
    finally:
        families.unregister("run_length")


def test_a_family_registered_at_run_time_is_scored_in_this_process(toy: families.Family, tmp_path: Path) -> None:
    # A spawned worker knows only the families mas_eval registers: scored there, n_turns would be missing.
    folder = with_messages().write(tmp_path / "ds", shards=2)
    steps: list[Step] = []
    scores = mas_eval.score(Dataset.open(folder), workers=2, progress=steps.append)
    assert scores.ran == ["decision", "process", "run_length"] and "n_turns" in scores.runs.columns
    assert all(step.total is None for step in steps)
    out = mas_eval.score(Dataset.open(folder), out=tmp_path / "scores", workers=2)
    assert "n_turns" in out.runs.columns


def test_a_preset_changed_at_run_time_is_scored_in_this_process(sharded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PRESETS["spec"], "decision", {"gt_boost": 0.5})
    scores = mas_eval.score(Dataset.open(sharded), workers=2)
    assert scores.params["gt_boost"] == 0.5
    assert_same_scores(scores, mas_eval.score(Dataset.open(sharded), workers=1))


def test_an_unguarded_script_scores_once_in_workers(sharded: Path, tmp_path: Path) -> None:
    # A spawned worker runs the parent's main script again unless told not to: this script has no
    # `if __name__ == "__main__":`, so each worker would score again and fail to start its own pool.
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import mas_eval\n"
        "print('top level ran', flush=True)\n"
        "steps = []\n"
        f"scores = mas_eval.score(mas_eval.Dataset.open({str(sharded)!r}), workers=2, progress=steps.append)\n"
        "print('runs', scores.runs.height, 'in workers', any(s.total is not None for s in steps))\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=checkout_env(), timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    runs = Dataset.open(sharded)["runs"].select(pl.len()).collect().item()
    assert done.stdout.splitlines() == ["top level ran", f"runs {runs} in workers True"]


# -- validation where each shard is read ------------------------------------------------------


def _set(table: str, column: str, row: int, value: object) -> Callable[[Frames], None]:
    def change(frames: Frames) -> None:
        values = frames[table][column].to_list()
        values[row] = value
        frames[table] = frames[table].with_columns(pl.Series(column, values, dtype=frames[table].schema[column]))

    return change


def _append(table: str, row: dict[str, object]) -> Callable[[Frames], None]:
    def change(frames: Frames) -> None:
        frames[table] = pl.concat([frames[table], pl.DataFrame([row], schema=frames[table].schema)])

    return change


def _outcomes(frames: Frames) -> None:
    # One score name pass/fail in run r1 and not in r2 (which lie in different shards below).
    frames["outcomes"] = pl.DataFrame(
        {"run_id": ["r1", "r2"], "name": ["exact", "exact"], "value": [1.0, 0.5], "passed": [True, None]}
    )


def _epochs(frames: Frames) -> None:
    # Two runs of one system, case, task and variant share epoch 1.
    runs = frames["runs"]
    frames["runs"] = runs.with_columns(
        system=pl.lit(runs["system"][0]), case_id=pl.lit(runs["case_id"][0]), epoch=pl.lit(1, dtype=pl.Int64)
    )


def _ground_truth(frames: Frames) -> None:
    frames["ground_truth"] = pl.DataFrame({"case_id": ["c1", "c1"], "diagnosis": ["flu", "flu"]})


BROKEN: dict[str, Callable[[Frames], None]] = {
    "masses sum to 4.5": lambda f: f.update(beliefs=f["beliefs"].with_columns(mass=pl.col("mass") * 4.5)),
    "negative mass": _set("beliefs", "mass", 0, -0.2),
    "all-zero masses": lambda f: f.update(
        beliefs=f["beliefs"].with_columns(mass=pl.when(pl.col("run_id") == "r2").then(0.0).otherwise("mass"))
    ),
    "agent confidence above 1": _set("agents", "confidence", 1, 1.7),
    "satisfaction score above 1": _set("scores", "score", 0, 1.5),
    "unknown criterion kind": _set("criteria", "kind", 0, "costly"),
    "repeated belief key": lambda f: f.update(beliefs=pl.concat([f["beliefs"], f["beliefs"].head(2)])),
    "repeated run": lambda f: f.update(runs=pl.concat([f["runs"], f["runs"].head(1)])),
    "null agent": _set("agents", "agent_id", 0, None),
    "dangling belief run": _append("beliefs", {"run_id": "r9", "agent_id": "a1", "alternative": "x", "mass": 0.1}),
    "pass/fail in some runs only": _outcomes,
    "repeated epoch": _epochs,
    "repeated ground truth": _ground_truth,
}


def _frames(change: Callable[[Frames], None], *, shuffled: bool) -> Frames:
    frames = tiny_frames()
    change(frames)
    if shuffled:  # rows out of key order: the checks that compare neighbours must not be relied on
        frames = {name: frame.sample(fraction=1.0, shuffle=True, seed=3) for name, frame in frames.items()}
    return frames


def _error(call: Callable[[], object]) -> tuple[type, str]:
    with pytest.raises((DataError, SchemaError)) as raised:
        call()
    return type(raised.value), str(raised.value)


@pytest.mark.parametrize("shuffled", [False, True], ids=["in key order", "shuffled"])
@pytest.mark.parametrize("case", BROKEN)
def test_validation_in_the_shards_raises_what_validate_raises(case: str, shuffled: bool, tmp_path: Path) -> None:
    frames = _frames(BROKEN[case], shuffled=shuffled)
    whole = Dataset.from_frames(**frames)
    expected = _error(whole.validate)
    assert _error(lambda: mas_eval.score(whole, validate=True)) == expected
    folder = whole.write(tmp_path / "ds", shards=2, validate=False)
    if shuffled:  # Dataset.write sorts each shard: put its rows out of order again (the codes go stale)
        for name in frames:
            if (shard := shard_folder(folder / name, 0) / "part-0.parquet").is_file():
                pl.read_parquet(shard).reverse().write_parquet(shard)
    ds = Dataset.open(folder)
    assert _error(ds.validate) == expected
    # Worker processes hand an error back one way for every kind: tried once per kind (shuffled),
    # as starting them is most of the test's time.
    for workers in (1, 2) if shuffled else (1,):
        assert _error(lambda w=workers: mas_eval.score(ds, validate=True, workers=w)) == expected
        assert _error(lambda w=workers: score_shards(ds, tmp_path / "out", workers=w, validate=True)) == expected
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("shuffled", [False, True], ids=["in key order", "shuffled"])
def test_valid_shards_pass_in_any_order(shuffled: bool, tmp_path: Path) -> None:
    frames = _frames(lambda f: None, shuffled=shuffled)
    folder = Dataset.from_frames(**frames).write(tmp_path / "ds", shards=2)
    ds = Dataset.open(folder)
    facts = [ds.shard(index).validate_shard() for index in range(ds.shards)]
    ds.validate_across(facts)
    assert_same_scores(mas_eval.score(ds, validate=True, workers=2), mas_eval.score(ds, workers=1))


def test_a_shard_is_validated_on_its_own_rows(tmp_path: Path) -> None:
    # A repeated key inside one shard is found by that shard's check, and counted there alone.
    frames = tiny_frames()
    frames["beliefs"] = pl.concat([frames["beliefs"], frames["beliefs"].head(1)])
    folder = Dataset.from_frames(**frames).write(tmp_path / "ds", shards=2, validate=False)
    ds = Dataset.open(folder)
    found = []
    for index in range(ds.shards):
        try:
            ds.shard(index).validate_shard()
        except DataError as exc:
            found.append(str(exc))
    assert len(found) == 1 and "table 'beliefs'" in found[0] and "1 key(s) occur more than once" in found[0]
    assert set(TABLES["beliefs"].key) <= set(frames["beliefs"].columns)
