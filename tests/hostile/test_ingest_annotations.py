"""``mas-eval ingest --format annotations`` given annotations it must refuse: one line, exit 2, nothing written.

Each case is a file a user could well have: an annotation of a run the Dataset does not hold, a
label that is not a boolean, a mode outside the taxonomy named, a run, mode and annotator given
twice. The refusal names the file, the row or record, the cause and the fix; the Dataset joined
onto and every input stay as they were, and no output (nor a staging folder) appears.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from tests.promises import assert_refused, assert_unchanged, run, tree


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    runs = pl.DataFrame({"run_id": ["m1", "s1"], "system": ["mas", "single"], "case_id": ["q1", "q1"]})
    folder = tmp_path / "ds"
    Dataset.from_frames(runs=runs).write(folder)
    return folder


CASES = {
    "unknown run": (
        "run_id,annotator,mode,present\nm1,a,1.1,1\nm9,a,1.1,0\n",
        (),
        [
            "row 2",
            "an annotation of run m9, which the Dataset does not hold",
            "fix the run id, or ingest that run into the Dataset first",
        ],
    ),
    "present not a boolean": (
        "run_id,annotator,mode,present\nm1,a,1.1,1\ns1,a,1.1,sometimes\n",
        (),
        ["row 2", "field 'present' is 'sometimes', not a boolean (true/false, 1/0)"],
    ),
    "unknown mode": (
        "run_id,annotator,mode,present\nm1,a,1.1,1\ns1,a,4.2 Lack of result verification,0\n",
        ("--taxonomy", "mast"),
        ["row 2", "mode '4.2 Lack of result verification' is not a mode of the 'mast' taxonomy", "--taxonomy"],
    ),
    "duplicate annotation": (
        "run_id,annotator,mode,present\nm1,a,1.1,1\ns1,a,1.1,0\nm1,a,1.1,0\n",
        (),
        ["row 3", "run m1, mode 1.1, annotator a is annotated twice (first at", "row 1)"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_annotation_is_one_line_and_nothing_is_written(
    case: str, dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, options, says = CASES[case]
    table = tmp_path / "labels.csv"
    table.write_text(text, encoding="utf-8")
    before = tree(tmp_path)
    done = run(
        capsys, "ingest", "--format", "annotations", table, "--into", dataset, *options, "--out", tmp_path / "out"
    )
    line = assert_refused(done, says=[str(table), *says])
    assert "--skip-invalid" in line
    assert_unchanged(before, tmp_path)


def test_options_of_the_annotations_format_are_refused_with_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "runs.csv"
    table.write_text("system,case_id\nmas,q1\n", encoding="utf-8")
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "table", table, "--taxonomy", "mast", "--out", tmp_path / "out")
    assert_refused(done, says="--taxonomy applies to --format annotations only")
    done = run(capsys, "ingest", "--format", "annotations", table, "--taxonomy", "trail", "--out", tmp_path / "out")
    assert_refused(done, says="--taxonomy='trail' is invalid")
    assert_unchanged(before, tmp_path)


def test_the_output_may_not_be_the_dataset_joined_onto(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "labels.csv"
    table.write_text("run_id,annotator,mode,present\nm1,a,1.1,1\n", encoding="utf-8")
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "annotations", table, "--into", dataset, "--out", dataset, "--overwrite")
    assert_refused(done, says="the output is the input")
    assert_unchanged(before, tmp_path)
