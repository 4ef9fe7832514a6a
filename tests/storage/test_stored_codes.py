"""Stored key codes of sharded Datasets (issue 14, item 5): written once, read instead of strings, never stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import DataError, Dataset
from mas_eval.data.schema import LABEL_COLUMNS, LABEL_KINDS, RUN_ID_COLUMNS
from mas_eval.metrics.codes import KeyCodes
from mas_eval.scoring.run import encoded_tables
from mas_eval.storage import stored_codes as stored
from mas_eval.storage.sharding import sharded
from tests.conftest import mixed_dataset

SHARDS = 3


@pytest.fixture(scope="module")
def mixed() -> Dataset:
    """Decision, diagnosis and answer runs: every table keyed by run_id, and every kind of label."""
    return mixed_dataset(600, 30, 12, seed=4)


@pytest.fixture(scope="module")
def folder(mixed: Dataset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mixed.write(tmp_path_factory.mktemp("codes") / "ds", shards=SHARDS)


def copy_of(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / "copy"))


def from_strings(shard: Dataset) -> Dataset:
    """The same shard with its stored codes set aside: scoring encodes the strings."""
    shard.stored_codes = None
    return shard


def scored_both_ways(root: Path, index: int) -> tuple[mas_eval.Scores, mas_eval.Scores]:
    opened = Dataset.open(root)
    return mas_eval.score(opened.shard(index)), mas_eval.score(from_strings(opened.shard(index)))


def assert_same_scores(got: mas_eval.Scores, expected: mas_eval.Scores) -> None:
    assert got.names == expected.names
    for name, frame in expected.items():
        assert_frame_equal(got[name], frame, check_exact=True)


def test_write_stores_the_label_books_and_one_code_file_per_table_and_shard(mixed: Dataset, folder: Path) -> None:
    entry = json.loads((folder / "_dataset.json").read_text(encoding="utf-8"))["codes"]
    assert entry["folder"] == stored.CODES_FOLDER and entry["hash"] == "sha256"
    for kind in LABEL_KINDS:
        labels = pl.concat(
            [
                mixed.scan(name).select(pl.col(column).alias(kind)).collect()
                for name, columns in LABEL_COLUMNS.items()
                if name in mixed
                for column, column_kind in columns.items()
                if column_kind == kind
            ]
        )[kind]
        assert entry["labels"][kind] == labels.drop_nulls().unique().sort().to_list()
    tables = [name for name in mixed.table_names if sharded(name)]
    files = sorted(p.relative_to(folder / stored.CODES_FOLDER).as_posix() for p in folder.glob("_codes/*/*.parquet"))
    assert files == sorted(f"{name}/shard={k}.parquet" for name in tables for k in range(SHARDS))
    opened = Dataset.open(folder)
    assert opened.table_names == mixed.table_names  # the code folder is not a table
    for k in range(SHARDS):
        shard = opened.shard(k)
        assert shard.stored_codes is not None
        assert all(shard.stored_codes.current(name) for name in tables)


def test_stored_codes_decode_to_the_strings_they_replace(folder: Path) -> None:
    """The central property: each coded table, decoded with the code books, is the table read from strings."""
    opened = Dataset.open(folder)
    for k in range(SHARDS):
        shard = opened.shard(k)
        names = [name for name in shard.table_names if sharded(name)]
        codes, tables = encoded_tables(shard, names)
        assert isinstance(codes, KeyCodes)
        assert_frame_equal(codes.runs, shard["runs"].select(RUN_ID_COLUMNS).sort("run_id").collect())
        for name in names:
            kinds = {"run_id": "run_id", **LABEL_COLUMNS.get(name, {})}
            decoded = codes.decode(tables[name], kinds).collect()
            assert_frame_equal(decoded, shard[name].collect(), check_exact=True)


def test_scores_from_stored_codes_equal_scores_from_strings_bit_for_bit(folder: Path) -> None:
    for k in range(SHARDS):
        assert_same_scores(*scored_both_ways(folder, k))


def test_a_shard_file_changed_after_writing_is_scored_from_its_strings(folder: Path, tmp_path: Path) -> None:
    root = copy_of(folder, tmp_path)
    beliefs = root / "beliefs" / "shard=1" / "part-0.parquet"
    frame = pl.read_parquet(beliefs)
    # A label the code book has never seen, and a changed mass: stale codes would hide both.
    first_agent = frame["agent_id"][0]
    changed = frame.with_columns(
        pl.when(pl.col("agent_id") == first_agent).then(pl.lit("zz-new-agent")).otherwise("agent_id").alias("agent_id"),
        (pl.col("mass") * 0.5).alias("mass"),
    )
    changed.sort("run_id", "agent_id", "alternative").write_parquet(beliefs)
    shard = Dataset.open(root).shard(1)
    assert shard.stored_codes is not None and not shard.stored_codes.current("beliefs")
    got, expected = scored_both_ways(root, 1)
    assert_same_scores(got, expected)
    assert "zz-new-agent" in got.agents["agent_id"].to_list()
    untouched, _ = scored_both_ways(folder, 1)
    assert not got.runs.equals(untouched.runs)


def test_a_missing_or_corrupt_code_file_or_codes_entry_falls_back_to_strings(folder: Path, tmp_path: Path) -> None:
    root = copy_of(folder, tmp_path)
    stored.code_file(root, "scores", 2).unlink()
    assert not Dataset.open(root).shard(2).stored_codes.current("scores")
    assert_same_scores(*scored_both_ways(root, 2))
    # Pages overwritten, footer (and so the recorded hash) intact: unreadable, so not used.
    corrupt = stored.code_file(root, "beliefs", 0)
    data = bytearray(corrupt.read_bytes())
    data[64:-2048] = b"\xff" * len(data[64:-2048])
    corrupt.write_bytes(bytes(data))
    shard = Dataset.open(root).shard(0)
    assert shard.stored_codes.current("beliefs") and shard.stored_codes.read(["beliefs"]) is None
    assert_same_scores(*scored_both_ways(root, 0))
    manifest = json.loads((root / "_dataset.json").read_text(encoding="utf-8"))
    manifest["codes"]["labels"].pop("criterion")  # not a codes entry this version wrote
    (root / "_dataset.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert Dataset.open(root).shard(0).stored_codes is None


def test_too_many_labels_of_a_kind_store_no_codes(
    mixed: Dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stored, "MAX_LABELS", 3)  # the simulated runs have 5 agents
    root = mixed.write(tmp_path / "ds", shards=SHARDS)
    assert "codes" not in json.loads((root / "_dataset.json").read_text(encoding="utf-8"))
    assert not (root / stored.CODES_FOLDER).exists()
    shard = Dataset.open(root).shard(0)
    assert shard.stored_codes is None
    assert mas_eval.score(shard).runs.height == shard["runs"].collect().height


def test_repeated_run_ids_store_no_codes_and_scoring_still_reports_them(tmp_path: Path) -> None:
    ds = mas_eval.simulate(40, seed=2)
    runs = ds.collect("runs")
    repeated = Dataset.from_frames(
        **{name: ds.collect(name) for name in ds.table_names if name != "runs"},
        runs=pl.concat([runs, runs.head(1)]),
    )
    root = repeated.write(tmp_path / "ds", shards=2, validate=False)
    assert "codes" not in json.loads((root / "_dataset.json").read_text(encoding="utf-8"))
    with pytest.raises(DataError, match="run_id"):
        mas_eval.score(Dataset.open(root))


def test_rows_of_runs_not_in_runs_are_dropped_as_from_strings(tmp_path: Path) -> None:
    """A dangling run's rows get a null code and are dropped after the code files are joined in:
    no filter may reach one side of the side-by-side frame alone."""
    ds = mas_eval.simulate(60, seed=3)
    agents = ds.collect("agents")
    dangling = agents.head(2).with_columns(pl.lit("no-such-run").alias("run_id"))
    broken = Dataset.from_frames(
        **{name: ds.collect(name) for name in ds.table_names if name != "agents"},
        agents=pl.concat([agents, dangling]),
    )
    root = broken.write(tmp_path / "ds", shards=2, validate=False)
    assert "codes" in json.loads((root / "_dataset.json").read_text(encoding="utf-8"))
    for k in range(2):
        assert_same_scores(*scored_both_ways(root, k))


def test_resharding_writes_fresh_codes(folder: Path, tmp_path: Path) -> None:
    resharded = Dataset.open(folder).write(tmp_path / "two", shards=2)
    for k in range(2):
        shard = Dataset.open(resharded).shard(k)
        assert all(shard.stored_codes.current(name) for name in shard.table_names if sharded(name))
        assert_same_scores(*scored_both_ways(resharded, k))
