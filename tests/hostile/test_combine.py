"""``mas-eval combine`` given Datasets that cannot be one: runs of the same id, the same Dataset
twice, an output inside an input, something that is not a Dataset, a single Dataset, scores that
disagree on their kind. Each is one line naming the inputs and the cause; exit 2; nothing written;
the inputs byte for byte the same.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from tests.promises import assert_refused, assert_unchanged, run, tree


def dataset(folder: Path, ids: list[str], *, passed: bool = True) -> Path:
    """A Dataset of ``ids`` (a MAS run and a single-agent run per case) with a score ``correct``."""
    runs = pl.DataFrame({"run_id": ids, "system": ["mas", "single"] * (len(ids) // 2),
                         "case_id": [f"c{i // 2}" for i in range(len(ids))]})  # fmt: skip
    outcomes = pl.DataFrame({"run_id": ids, "name": ["correct"] * len(ids), "value": [1.0, 0.5] * (len(ids) // 2)})
    if passed:
        outcomes = outcomes.with_columns(value=pl.lit(1.0), passed=pl.lit(True))
    Dataset.from_frames(runs=runs, outcomes=outcomes).write(folder)
    return folder


CASES = {
    "run ids two Datasets share": (
        lambda root: [dataset(root / "a", ["r1", "r2", "r3", "r4"]), dataset(root / "b", ["x1", "x2", "r3", "r4"])],
        ["the Datasets 1 ({a}) and 2 ({b}) both hold run_ids 'r3', 'r4'", "give each Dataset's runs distinct ids",
         "PATH=SYSTEM"],
    ),
    "the same Dataset twice": (
        lambda root: [dataset(root / "a", ["r1", "r2"]), root / "a"],
        ["both hold run_ids 'r1', 'r2'", "they hold the same runs (one Dataset given twice?)"],
    ),
    "a score pass/fail in one and a number in the other": (
        lambda root: [dataset(root / "a", ["r1", "r2"]), dataset(root / "b", ["s1", "s2"], passed=False)],
        ["correct"],
    ),
    "one Dataset": (lambda root: [dataset(root / "a", ["r1", "r2"])], ["combine: give two Dataset folders or more"]),
    "a folder that is no Dataset": (
        lambda root: [dataset(root / "a", ["r1", "r2"]), (root / "b").mkdir() or root / "b"],
        ["{b}: holds no runs table", "not a Dataset folder"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_datasets_that_cannot_be_one_are_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, says = CASES[case]
    inputs = make(tmp_path)
    before = tree(tmp_path)
    done = run(capsys, "combine", *inputs, "--out", tmp_path / "out")
    named = {"a": tmp_path / "a", "b": tmp_path / "b"}
    assert_refused(done, says=[text.format(**named) for text in says])
    assert_unchanged(before, tmp_path)


def test_an_output_inside_an_input_or_existing_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = dataset(tmp_path / "a", ["r1", "r2"]), dataset(tmp_path / "b", ["s1", "s2"])
    before = tree(tmp_path)
    assert_refused(run(capsys, "combine", a, b, "--out", a / "inside"), says=[str(a / "inside"), "inside the input"])
    assert_refused(run(capsys, "combine", a, b, "--out", b), says=str(b))
    assert_unchanged(before, tmp_path)
    assert run(capsys, "combine", a, b, "--out", tmp_path / "ab").code == 0
    assert_refused(run(capsys, "combine", a, b, "--out", tmp_path / "ab"), says="--overwrite")
    assert run(capsys, "combine", a, b, "--out", tmp_path / "ab", "--overwrite").code == 0
