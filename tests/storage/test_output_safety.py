"""Outputs never harm inputs, a failure leaves the file system as it was, an unwritable place is one line.

Issue 9, items 1, 2 and 5: ``ingest good.jsonl --out good.jsonl --overwrite`` replaced its input;
``--overwrite`` onto a plain file and failed writes into new folders left debris behind; a
read-only output location raised ``OSError`` with a traceback.

The commands run in this process (:func:`tests.promises.run`, as ``mas-eval`` runs them): what is
checked is what they write, refuse and print, not the process around them.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval import Dataset, OutputError, OutputExistsError
from mas_eval.ingest import export_jsonl, ingest_jsonl
from mas_eval.stats import write_comparisons
from mas_eval.storage.outputs import atomic_directory, atomic_file, check_target
from tests.promises import run

DATA = Path(__file__).resolve().parents[2] / "data"


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (hidden ones too) with a hash of each file's bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        out[key] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "<dir>"
    return out


@pytest.fixture
def sample_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    path.write_text(
        "".join((DATA / "sample.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8"
    )
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return mas_eval.simulate(60, seed=3).write(tmp_path / "ds")


# -- item 1: an output that is, holds or lies inside an input -----------------------------------


@pytest.mark.parametrize("overwrite", [False, True])
def test_ingest_refuses_to_write_over_its_input(
    capsys: pytest.CaptureFixture[str], sample_jsonl: Path, overwrite: bool
) -> None:
    before = tree(sample_jsonl.parent)
    flags = ["--overwrite"] if overwrite else []
    done = run(capsys, "ingest", sample_jsonl, "--out", sample_jsonl, *flags)
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert "the output is the input" in lines[0] and "choose an output path outside the inputs" in lines[0]
    assert tree(sample_jsonl.parent) == before


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("score", lambda ds: ds),  # is the input
        ("score", lambda ds: ds / "scores"),  # lies inside it
        ("score", lambda ds: ds.parent),  # holds it
    ],
)
def test_score_refuses_an_output_that_is_holds_or_lies_inside_the_dataset(
    capsys: pytest.CaptureFixture[str], dataset: Path, command: str, where: object
) -> None:
    before = tree(dataset.parent)
    out = where(dataset)  # type: ignore[operator]
    done = run(capsys, command, dataset, "--out", out, "--overwrite")
    assert done.code == 2, done.err
    assert "the output" in done.err and "the input" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert tree(dataset.parent) == before


def test_compare_refuses_to_write_into_the_scores_folder(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    scores = mas_eval.score(Dataset.open(dataset)).write(tmp_path / "scores")
    before = tree(scores)
    done = run(capsys, "compare", scores, "--out", scores / "comparisons.parquet")
    assert done.code == 2
    assert "lies inside the input" in done.err
    assert tree(scores) == before


def test_python_writers_refuse_their_inputs_too(dataset: Path, sample_jsonl: Path, tmp_path: Path) -> None:
    ds = Dataset.open(dataset)
    with pytest.raises(OutputError, match="holds the input"):
        ds.write(dataset.parent, overwrite=True)
    with pytest.raises(OutputError, match="lies inside the input"):
        ds.write(dataset / "copy")
    with pytest.raises(OutputError, match="is the input"):
        ingest_jsonl([sample_jsonl], sample_jsonl, overwrite=True)
    with pytest.raises(OutputError, match="lies inside the input"):
        export_jsonl(ds, dataset / "runs.parquet")
    # Rewriting a Dataset onto its own folder stays allowed: it is read to the end first.
    ds.write(dataset, overwrite=True)
    assert Dataset.open(dataset).validate().collect("runs").height == 60


def test_check_target_compares_resolved_paths(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    with pytest.raises(OutputError, match="is the input"):
        check_target(tmp_path / "in" / ".." / "in", overwrite=True, inputs=[tmp_path / "in"])
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "in")
    with pytest.raises(OutputError, match="is the input"):
        check_target(link, overwrite=True, inputs=[tmp_path / "in"])


# -- item 2: after any failure, the file system is as it was -----------------------------------


@pytest.mark.parametrize("command", ["simulate", "score", "ingest"])
def test_overwrite_onto_a_plain_file_leaves_nothing_hidden(
    capsys: pytest.CaptureFixture[str], command: str, dataset: Path, sample_jsonl: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "out"
    target.write_text("an old file\n", encoding="utf-8")
    args = {
        "simulate": ["simulate", "--runs", "40"],
        "score": ["score", dataset],
        "ingest": ["ingest", sample_jsonl],
    }[command]
    done = run(capsys, *args, "--out", target, "--overwrite")
    assert done.code == 0, done.err
    assert target.is_dir()
    assert sorted(p.name for p in work.iterdir()) == ["out"]  # no .out.old-xxxx beside it


def test_failed_ingest_into_new_folders_removes_the_folders_it_made(
    capsys: pytest.CaptureFixture[str], sample_jsonl: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(sample_jsonl.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    before = tree(tmp_path)
    done = run(capsys, "ingest", bad, "--out", tmp_path / "new" / "x" / "ds")
    assert done.code == 2
    assert tree(tmp_path) == before
    assert not (tmp_path / "new").exists()


def test_atomic_writers_remove_created_parents_on_failure(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), atomic_directory(tmp_path / "a" / "b" / "out"):
        raise RuntimeError
    with pytest.raises(RuntimeError), atomic_file(tmp_path / "c" / "d" / "out.csv"):
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_a_parent_that_is_a_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_target(tmp_path / "file" / "out", overwrite=False)


def test_exists_error_names_the_fix_for_each_interface(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(OutputExistsError, match=r"pass overwrite=True to replace it"):
        check_target(tmp_path, overwrite=False)
    mas_eval.simulate(20, seed=1).write(tmp_path / "ds")
    done = run(capsys, "simulate", "--runs", "20", "--out", tmp_path / "ds")
    assert done.code == 2
    assert "pass --overwrite to replace it" in done.err


# -- item 5: a read-only output location -------------------------------------------------------


def test_api_writers_raise_output_error_on_a_read_only_location(read_only: Path, dataset: Path) -> None:
    ds = Dataset.open(dataset)
    scores = mas_eval.score(ds)
    table = mas_eval.compare(scores, "dqs")
    for write in (
        lambda: ds.write(read_only / "ds"),
        lambda: scores.write(read_only / "scores"),
        lambda: write_comparisons(table, read_only / "c.parquet"),
        lambda: export_jsonl(ds, read_only / "runs.jsonl"),
        lambda: ds.write(read_only / "deeper" / "ds"),
    ):
        with pytest.raises(OutputError, match=r"cannot write in .*(read-only file system|permission denied)"):
            write()
    assert list(read_only.iterdir()) == []


@pytest.mark.parametrize("command", ["simulate", "ingest", "score", "compare", "demo"])
def test_cli_answers_a_read_only_location_with_one_line(
    capsys: pytest.CaptureFixture[str], command: str, read_only: Path, dataset: Path, sample_jsonl: Path, tmp_path: Path
) -> None:
    scores = mas_eval.score(Dataset.open(dataset)).write(tmp_path / "scores")
    args = {
        "simulate": ["simulate", "--runs", "40", "--out", read_only / "x"],
        "ingest": ["ingest", sample_jsonl, "--out", read_only / "x"],
        "score": ["score", dataset, "--out", read_only / "x"],
        "compare": ["compare", scores, "--out", read_only / "x.csv"],
        "demo": ["demo", "--data", DATA, "--out", read_only / "demo"],
    }[command]
    done = run(capsys, *args)
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert "Traceback" not in done.err
    assert "cannot write in" in lines[0]
    assert list(read_only.iterdir()) == []


def test_inputs_are_never_modified_by_a_command(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    before = tree(dataset)
    for args in (
        ["validate", dataset],
        ["summary", dataset],
        ["score", dataset, "--out", tmp_path / "scores"],
        ["compare", tmp_path / "scores", "--out", tmp_path / "c.parquet"],
    ):
        assert run(capsys, *args).code == 0
    assert tree(dataset) == before
    shutil.rmtree(tmp_path / "scores")
    assert pl.read_parquet(tmp_path / "c.parquet").height == 2
