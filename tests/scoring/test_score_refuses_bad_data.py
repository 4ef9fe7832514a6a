"""score() refuses data that break the rules its formulas rely on, without a full validate() (issue 9, items 7, 8).

Before, beliefs whose masses summed to 4.5 scored with consensus and entropy exactly 1.0,
and repeated run ids gave more scored runs than rows. Each case below breaks one rule that
``Dataset.validate`` checks too; ``score`` must say the same thing, from the sums it
computes anyway, with the user's labels in the message.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

import mas_eval
from mas_eval import DataError, Dataset
from tests.conftest import run_cli_process, tiny_frames

Frames = dict[str, pl.DataFrame]


def _set(table: str, column: str, row: int, value: object) -> Callable[[Frames], None]:
    def change(frames: Frames) -> None:
        frame = frames[table]
        values = frame[column].to_list()
        values[row] = value
        frames[table] = frame.with_columns(pl.Series(column, values, dtype=frame.schema[column]))

    return change


def _repeat_first_run(frames: Frames) -> None:
    frames["runs"] = pl.concat([frames["runs"], frames["runs"].head(1)])


BROKEN = {
    # The example: an agent's masses sum to 4.5.
    "masses sum to 4.5": (
        lambda f: f.update(beliefs=f["beliefs"].with_columns(mass=pl.col("mass") * 4.5)),
        r"table 'beliefs', column 'mass': \d agent\(s\) have masses summing to more than 1 "
        r".*\(run_id='r1', agent_id='a1'\)",
    ),
    "negative mass": (_set("beliefs", "mass", 0, -0.2), r"'mass': 1 agent\(s\) have negative masses"),
    "NaN mass": (_set("beliefs", "mass", 1, float("nan")), r"'mass': 1 agent\(s\) have NaN or infinite masses"),
    "all-zero masses": (
        lambda f: f.update(
            beliefs=f["beliefs"].with_columns(mass=pl.when(pl.col("run_id") == "r2").then(0.0).otherwise("mass"))
        ),
        r"'mass': 1 agent\(s\) have all masses zero, e.g. at \(run_id='r2', agent_id='a1'\)",
    ),
    "agent confidence above 1": (
        _set("agents", "confidence", 1, 1.7),
        r"table 'agents', column 'confidence': 1 row\(s\) are outside \[0, 1\], e.g. at \(run_id='r1', agent_id='a2'\)",
    ),
    "negative agent weight": (
        _set("agents", "weight", 0, -1.0),
        r"table 'agents', column 'weight': 1 row\(s\) are negative",
    ),
    "run confidence NaN": (
        _set("runs", "confidence", 1, float("nan")),
        r"table 'runs', column 'confidence': 1 row\(s\) hold NaN",
    ),
    "negative iterations": (
        _set("runs", "iterations", 2, -1),
        r"table 'runs', column 'iterations': 1 row\(s\) are negative, e.g. at \(run_id='r3'\)",
    ),
    "satisfaction score above 1": (
        _set("scores", "score", 0, 1.5),
        r"table 'scores', column 'score': 1 alternative\(s\) have satisfaction scores outside \[0, 1\], "
        r"e.g. at \(run_id='r1', alternative='x'\)",
    ),
    "infinite score": (
        _set("scores", "score", 4, float("inf")),
        r"'score': 1 alternative\(s\) have NaN or infinite scores",
    ),
    "negative criterion weight": (
        _set("criteria", "weight", 0, -0.6),
        r"table 'criteria', column 'weight': 1 row\(s\) are negative, e.g. at \(run_id='r1', criterion='safety'\)",
    ),
    # Found by tests/ingest/test_fuzz_inputs.py: a repeated key multiplied rows in a join, and score blamed
    # the metric family with a RuntimeError.
    "repeated alt_scores key": (
        lambda f: f.update(
            alt_scores=pl.DataFrame({"run_id": ["r1", "r1"], "alternative": ["x", "x"], "mcda": [0.5, 0.6]})
        ),
        r"table 'alt_scores', column 'run_id, alternative': 1 key\(s\) occur more than once",
    ),
    "repeated run_id": (
        _repeat_first_run,
        r"table 'runs', column 'run_id': 1 key\(s\) occur more than once, e.g. at \(run_id='r1'\)",
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_score_refuses_what_validate_refuses(case: str) -> None:
    frames = tiny_frames()
    change, message = BROKEN[case]
    change(frames)
    ds = Dataset.from_frames(**frames)
    with pytest.raises(DataError):
        ds.validate()
    with pytest.raises(DataError, match=message):
        mas_eval.score(ds)


def test_raw_scale_scores_may_lie_outside_the_unit_interval() -> None:
    # tiny_frames' criterion "cost" of r1 is on the raw scale with scores 120 and 80: allowed.
    scores = mas_eval.score(Dataset.from_frames(**tiny_frames()))
    assert scores.runs.height == 3


@pytest.mark.subprocess
def test_skip_validation_still_refuses_repeated_run_ids(tmp_path: object) -> None:
    # Issue 9, item 8: `--skip-validation` on runs with duplicate ids reported "scored 206 runs" for 202 rows.
    frames = tiny_frames()
    _repeat_first_run(frames)
    folder = tmp_path / "ds"  # type: ignore[operator]
    folder.mkdir()
    for name, frame in frames.items():
        frame.write_parquet(folder / f"{name}.parquet")
    done = run_cli_process("score", folder, "--out", tmp_path / "scores", "--skip-validation")  # type: ignore[operator]
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: table 'runs', column 'run_id': 1 key(s) occur more than once, e.g. at (run_id='r1'); "
        "the key (run_id) must be unique: drop or merge the duplicates"
    ]
