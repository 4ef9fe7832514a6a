"""A truncated or corrupt Parquet file is named, with the reason, in one line (issue 9, item 4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import mas_eval
from mas_eval import Dataset, UnreadableFileError
from mas_eval.scoring.scores import Scores
from tests.conftest import run_cli_process


def truncate(path: Path) -> None:
    """``truncate -s 50% path``."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def scramble_pages(path: Path) -> None:
    """Keep the markers and footer, overwrite the data pages with garbage."""
    data = bytearray(path.read_bytes())
    footer_length = int.from_bytes(data[-8:-4], "little")
    for i in range(4, len(data) - footer_length - 8):
        data[i] = (data[i] * 7 + 13) % 256
    path.write_bytes(bytes(data))


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return mas_eval.simulate(200, seed=4).write(tmp_path / "ds")


CALLS: dict[str, Callable[[Path], object]] = {
    "open": Dataset.open,
    "validate": lambda p: Dataset.open(p).validate(),
    "summary": lambda p: Dataset.open(p).summary(),
    "score": lambda p: mas_eval.score(Dataset.open(p)),
    "collect": lambda p: Dataset.open(p).collect("agents"),
}


@pytest.mark.parametrize("call", CALLS)
def test_a_truncated_table_is_named_by_every_api(dataset: Path, call: str) -> None:
    truncate(dataset / "agents.parquet")
    with pytest.raises(UnreadableFileError) as info:
        CALLS[call](dataset)
    message = str(info.value)
    assert message.startswith(f"{dataset / 'agents.parquet'}: unreadable Parquet file (")
    assert "truncated" in message
    assert message.endswith("restore it from a copy or re-create it")


@pytest.mark.parametrize("call", ["validate", "summary", "score"])
def test_corrupt_pages_behind_an_intact_footer_are_named(dataset: Path, call: str) -> None:
    scramble_pages(dataset / "beliefs.parquet")
    with pytest.raises(UnreadableFileError, match=r"beliefs\.parquet: unreadable Parquet file"):
        CALLS[call](dataset)


@pytest.mark.parametrize("command", ["validate", "summary", "score"])
@pytest.mark.subprocess
def test_the_cli_prints_one_line_and_exits_2(dataset: Path, tmp_path: Path, command: str) -> None:
    truncate(dataset / "agents.parquet")
    args = ["--out", tmp_path / "scores"] if command == "score" else []
    done = run_cli_process(command, dataset, *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {dataset / 'agents.parquet'}: unreadable Parquet file")
    assert not (tmp_path / "scores").exists()


def test_a_table_file_in_a_hive_folder_is_named(dataset: Path) -> None:
    runs = Dataset.open(dataset).collect("beliefs")
    folder = dataset / "beliefs"
    (dataset / "beliefs.parquet").unlink()
    folder.mkdir()
    runs.head(100).write_parquet(folder / "part-0.parquet")
    runs.slice(100).write_parquet(folder / "part-1.parquet")
    truncate(folder / "part-1.parquet")
    with pytest.raises(UnreadableFileError, match=r"part-1\.parquet: unreadable"):
        Dataset.open(dataset)


@pytest.mark.subprocess
def test_scores_tables_that_cannot_be_read_are_named(dataset: Path, tmp_path: Path) -> None:
    out = mas_eval.score(Dataset.open(dataset)).write(tmp_path / "scores")
    truncate(out / "alternatives.parquet")
    with pytest.raises(UnreadableFileError, match=r"alternatives\.parquet: unreadable"):
        Scores.open(out)
    # compare reads only the runs table, so it does not care (issue 9, item 16)
    done = run_cli_process("compare", out, "-m", "dqs")
    assert done.returncode == 0, done.stderr
    truncate(out / "runs.parquet")
    done = run_cli_process("compare", out, "-m", "dqs")
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"error: {out / 'runs.parquet'}: unreadable Parquet file")


def test_a_file_that_is_not_parquet_at_all(dataset: Path) -> None:
    (dataset / "agents.parquet").write_text("run_id,agent_id\nr1,a1\n", encoding="utf-8")
    with pytest.raises(UnreadableFileError, match="not a Parquet file"):
        Dataset.open(dataset)
