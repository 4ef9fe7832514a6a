"""Ingest says what it drops and how to fix it, in the user's interface (issue 9, items 8, 11, 12)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mas_eval import IngestError
from mas_eval.ingest import ingest_jsonl
from tests.promises import run

DATA = Path(__file__).resolve().parents[2] / "data"
RECORD = json.loads((DATA / "sample.jsonl").read_text(encoding="utf-8").splitlines()[0])


def write_records(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def renamed(record: dict, where: list[str | int], new: str) -> dict:
    """``record`` with the key at path ``where`` renamed to ``new``."""
    copy = json.loads(json.dumps(record))
    parent = copy
    for step in where[:-1]:
        parent = parent[step]
    parent[new] = parent.pop(where[-1])
    return copy


@pytest.mark.parametrize(
    ("where", "typo", "shown"),
    [
        (["usage", "tokens"], "tokns", "usage.tokns"),
        (["confidence"], "confidnce", "confidnce"),
        (["agents", 1, "confidence"], "confidense", "agents[1].confidense"),
        (["alternatives", 0, "scores", 1, "score"], "scroe", "alternatives[0].scores[1].scroe"),
    ],
)
def test_a_misspelt_field_is_named_with_the_field_it_resembles(
    tmp_path: Path, where: list[str | int], typo: str, shown: str
) -> None:
    # Issue 9, item 8: `usage.tokns` and a top-level `confidnce` were dropped without a word.
    path = write_records(tmp_path / "runs.jsonl", RECORD, renamed(RECORD, where, typo))
    intended = shown.rsplit(".", 1)[0] + "." + str(where[-1]) if "." in shown else str(where[-1])
    with pytest.raises(IngestError) as info:
        ingest_jsonl([path], tmp_path / "ds")
    assert str(info.value).startswith(
        f"{path}:2: field '{shown}' is not in the run record and '{intended}' is missing: a misspelling? rename it"
    )
    assert not (tmp_path / "ds").exists()


def test_unknown_fields_that_resemble_nothing_missing_are_still_ignored(tmp_path: Path) -> None:
    extra = {**RECORD, "notes": "mine", "confidnce": 0.4, "usage": {**RECORD["usage"], "region": "eu"}}
    # `confidnce` resembles `confidence`, but the record has `confidence` (null): a field of the user's.
    path = write_records(tmp_path / "runs.jsonl", extra)
    assert ingest_jsonl([path], tmp_path / "ds").runs == 1


def test_misspelt_lines_go_to_the_rejects_file_with_skip_invalid(tmp_path: Path) -> None:
    path = write_records(tmp_path / "runs.jsonl", RECORD, renamed(RECORD, ["usage", "tokens"], "tokns"))
    result = ingest_jsonl([path], tmp_path / "ds", skip_invalid=True)
    assert (result.runs, result.rejected) == (1, 1)
    rejected = pl.read_ndjson(result.rejects)
    assert rejected["line"].to_list() == [2]
    assert "'usage.tokns'" in rejected["error"][0]


def test_fractional_integers_are_malformed(tmp_path: Path) -> None:
    record = json.loads(json.dumps(RECORD))
    record["usage"]["tokens"] = 30053.5
    path = write_records(tmp_path / "runs.jsonl", record)
    with pytest.raises(IngestError, match=r":1: field 'usage\.tokens': expected an integer, got '30053\.5'"):
        ingest_jsonl([path], tmp_path / "ds")


def test_the_cli_names_its_own_flag_and_python_its_parameter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Issue 9, item 12: the command line said "pass skip_invalid=True".
    path = write_records(tmp_path / "runs.jsonl", RECORD, {"run_id": "r2"})
    with pytest.raises(IngestError, match=r"pass skip_invalid=True to set malformed lines aside"):
        ingest_jsonl([path], tmp_path / "ds")
    done = run(capsys, "ingest", path, "--out", tmp_path / "ds")
    assert done.code == 2
    assert "pass --skip-invalid to set malformed lines aside" in done.err
    assert "skip_invalid=True" not in done.err


def test_a_dataset_folder_given_to_ingest_is_recognised(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Issue 9, item 11: say what the path is and what was expected.
    done = run(capsys, "ingest", DATA / "sample", "--out", tmp_path / "ds")
    assert done.code == 2
    assert "is a Dataset folder, not a JSONL file; it is ingested already" in done.err


def test_a_bad_chunk_size_names_the_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    done = run(capsys, "ingest", DATA / "sample.jsonl", "--out", tmp_path / "ds", "--chunk-mb", "0")
    assert done.code == 2
    assert done.err.strip() == "error: ingest: --chunk-mb=0.0 is invalid; --chunk-mb must be a number in (0, 1024]"
