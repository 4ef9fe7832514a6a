"""`mas-eval combine`: Datasets ingested apart (each system's logs, each format) put together into one.

The Datasets are real ingests: the two COPA runs of ``tests/data/lm_eval`` (each with a note of its
``--limit``) and a table of runs with an attribute of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.ingest import ingest_lm_eval, ingest_table
from mas_eval.scoring.reproduction import reproduce
from tests.promises import run, tree

LM_EVAL = Path(__file__).parents[1] / "data" / "lm_eval"


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    made = {}
    for name in ("sshleifer__tiny-gpt2", "hf-internal-testing__tiny-random-gpt2"):
        made[name] = ingest_lm_eval(LM_EVAL / name, tmp_path / name).out
    table = tmp_path / "runs.csv"
    pl.DataFrame({"model": ["mas", "single"], "question": ["q1", "q1"], "num_rounds": [3, 1], "ok": [1, 0]}).write_csv(
        table
    )
    made["table"] = ingest_table(table, tmp_path / "table", columns={"system": "model", "case_id": "question"},
                                 scores=["ok"]).out  # fmt: skip
    return {name: path for name, path in made.items() if path is not None}


def test_two_ingests_become_one_dataset_with_their_notes_and_formats(
    inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = inputs["sshleifer__tiny-gpt2"], inputs["hf-internal-testing__tiny-random-gpt2"]
    before = {name: tree(path) for name, path in inputs.items()}
    done = run(capsys, "combine", a, b, "--out", tmp_path / "both")
    assert done.code == 0, done.err
    assert done.out.startswith(f"combined 2 Datasets (40 runs) into {tmp_path / 'both'}; 2 note(s)")
    both = Dataset.open(tmp_path / "both").validate()
    assert both.collect("runs").height == 40 and both.table_names == ["runs", "outcomes", "reported"]
    assert both.notes == (*Dataset.open(a).notes, *Dataset.open(b).notes) and len(both.notes) == 2
    assert both.formats == ("lm-eval",)
    # What each ingest recorded is still reproduced, log by log.
    result = reproduce(both)
    assert result.disagreements.is_empty() and set(result.summary["items"]) == {2}
    assert {name: tree(path) for name, path in inputs.items()} == before


def test_datasets_of_two_formats_and_other_columns_combine(inputs: dict[str, Path], tmp_path: Path) -> None:
    combined = Dataset.concat([Dataset.open(inputs["table"]), Dataset.open(inputs["sshleifer__tiny-gpt2"])])
    assert combined.formats == ("table", "lm-eval")
    runs = combined.collect("runs")
    assert runs.height == 22 and runs["num_rounds"].null_count() == 20  # the table's own column, null elsewhere
    combined.write(tmp_path / "mixed", shards=2)
    again = Dataset.open(tmp_path / "mixed")
    assert again.formats == ("table", "lm-eval") and again.shards == 2 and len(again.notes) == 1
    manifest = json.loads((tmp_path / "mixed" / "_dataset.json").read_text(encoding="utf-8"))
    assert manifest["formats"] == ["table", "lm-eval"]


def test_the_command_writes_shards(inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = list(inputs.values())
    done = run(capsys, "combine", *names, "--out", tmp_path / "all", "--shards", "3")
    assert done.code == 0, done.err
    combined = Dataset.open(tmp_path / "all").validate()
    assert combined.shards == 3 and combined.collect("runs").height == 42
    assert set(combined.formats) == {"lm-eval", "table"}
