"""Dataset construction, lazy opening, atomic writing and summaries."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from mas_eval import DataError, Dataset, InvalidParameterError, MasEvalError, SchemaError
from mas_eval.data.schema import TABLES


def test_from_frames_conforms_to_schema(tiny: Dataset) -> None:
    runs = tiny["runs"].collect()
    assert runs.columns == TABLES["runs"].names
    assert runs.schema == TABLES["runs"].polars_schema
    assert runs["api_calls"].null_count() == 3  # absent optional column arrives as nulls


def test_from_frames_accepts_pandas(frames: dict[str, pl.DataFrame]) -> None:
    ds = Dataset.from_frames(**{name: f.to_pandas() for name, f in frames.items()})
    assert_frame_equal(ds.collect("beliefs"), Dataset.from_frames(**frames).collect("beliefs"))


def test_write_open_round_trip(tiny: Dataset, tmp_path: Path) -> None:
    out = tiny.write(tmp_path / "ds")
    back = Dataset.open(out).validate()
    assert back.table_names == tiny.table_names
    for name, frame in tiny.frames().items():
        assert_frame_equal(back.collect(name), frame)


def test_open_reads_hive_partitioned_folders(tiny: Dataset, tmp_path: Path) -> None:
    root = tmp_path / "hive"
    runs = tiny.collect("runs")
    for system, part in runs.group_by("system"):
        folder = root / "runs" / f"system={system[0]}"
        folder.mkdir(parents=True)
        part.drop("system").write_parquet(folder / "part-0.parquet")
    back = Dataset.open(root)
    assert_frame_equal(back.collect("runs"), runs)


def test_write_refuses_to_overwrite_unless_told(tiny: Dataset, tmp_path: Path) -> None:
    out = tiny.write(tmp_path / "ds")
    with pytest.raises(MasEvalError, match="already exists; pass overwrite=True"):
        tiny.write(out)
    smaller = Dataset.from_frames(runs=tiny.collect("runs"))
    smaller.write(out, overwrite=True)
    assert Dataset.open(out).table_names == ["runs"]


def test_rewriting_onto_the_source_folder_keeps_the_data(tiny: Dataset, tmp_path: Path) -> None:
    out = tiny.write(tmp_path / "ds")
    Dataset.open(out).write(out, overwrite=True)
    assert_frame_equal(Dataset.open(out).collect("beliefs"), tiny.collect("beliefs"))


BROKEN_AGENTS = {
    "runs": pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]}),
    "agents": pl.DataFrame({"run_id": ["r1"], "agent_id": ["a"], "confidence": ["very"]}),
}


def test_invalid_dataset_is_not_written(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="table 'agents', column 'confidence'"):
        Dataset.from_frames(**BROKEN_AGENTS).write(tmp_path / "ds")
    assert os.listdir(tmp_path) == []


def test_failure_midway_through_a_write_leaves_nothing_behind(tmp_path: Path) -> None:
    # Unvalidated, `runs` is written first, then the cast of agents.confidence fails: the failed
    # cast is named like validate() names it (table, column, rows).
    with pytest.raises(SchemaError, match=r"table 'agents', column 'confidence': 1 row.* not Float64"):
        Dataset.from_frames(**BROKEN_AGENTS).write(tmp_path / "ds", validate=False)
    assert os.listdir(tmp_path) == []


def test_failed_overwrite_keeps_the_old_dataset(tiny: Dataset, tmp_path: Path) -> None:
    out = tiny.write(tmp_path / "ds")
    broken = Dataset.from_frames(runs=pl.DataFrame({"run_id": [None], "system": ["mas"], "case_id": ["c"]}))
    with pytest.raises(MasEvalError):
        broken.write(out, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["ds"]
    assert_frame_equal(Dataset.open(out).collect("runs"), tiny.collect("runs"))


def test_inputs_are_not_modified(frames: dict[str, pl.DataFrame], tmp_path: Path) -> None:
    before = {name: f.clone() for name, f in frames.items()}
    Dataset.from_frames(**frames).validate().write(tmp_path / "ds")
    for name, frame in frames.items():
        assert_frame_equal(frame, before[name])


def test_summary_counts_rows_and_coverage(tiny: Dataset) -> None:
    summary = tiny.summary()
    assert summary.columns == ["table", "rows", "runs", "systems", "cases", "tasks"]
    rows = {r["table"]: r for r in summary.to_dicts()}
    assert rows["runs"] == {"table": "runs", "rows": 3, "runs": 3, "systems": 2, "cases": 2, "tasks": 2}
    assert rows["criteria"] == {
        "table": "criteria",
        "rows": 3,
        "runs": 2,
        "systems": 2,
        "cases": 1,
        "tasks": 1,
    }
    assert rows["ground_truth"]["cases"] == 1


def test_unknown_table_is_named_with_a_suggestion(frames: dict[str, pl.DataFrame]) -> None:
    with pytest.raises(SchemaError, match=r"unknown table.*'belief' \(did you mean 'beliefs'\?\)"):
        Dataset.from_frames(runs=frames["runs"], belief=frames["beliefs"])


def test_runs_table_is_required(frames: dict[str, pl.DataFrame]) -> None:
    with pytest.raises(SchemaError, match="no 'runs' table"):
        Dataset.from_frames(agents=frames["agents"])


def test_open_rejects_a_stray_table_file(tiny: Dataset, tmp_path: Path) -> None:
    out = tiny.write(tmp_path / "ds")
    (out / "agent.parquet").write_bytes(b"")
    with pytest.raises(SchemaError, match="'agent' is not a Dataset table \\(did you mean 'agents'\\?\\)"):
        Dataset.open(out)


def test_open_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="no such Dataset folder"):
        Dataset.open(tmp_path / "nope")


def test_a_file_written_late_into_a_failed_write_is_removed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A failing Polars sink can create its file just after it raised: the first removal of the
    # staging folder then races it and leaves the folder behind (seen in CI).
    real_rmtree = shutil.rmtree
    calls: list[Path] = []

    def raced(path: Path, ignore_errors: bool = False) -> None:
        calls.append(Path(path))
        real_rmtree(path, ignore_errors=ignore_errors)
        if len(calls) == 1:
            Path(path).mkdir()
            (Path(path) / "agents.parquet").write_bytes(b"late")

    monkeypatch.setattr("mas_eval.storage.outputs.shutil.rmtree", raced)
    with pytest.raises(SchemaError, match="table 'agents', column 'confidence'"):
        Dataset.from_frames(**BROKEN_AGENTS).write(tmp_path / "ds", validate=False)
    assert os.listdir(tmp_path) == []
    assert len(calls) == 2


def test_concat_stacks_datasets_and_refuses_shared_run_ids() -> None:
    from mas_eval import simulate
    from mas_eval.simulation.sample import with_id_prefix

    a, b = simulate(20, seed=1), simulate(10, seed=2)
    shared = r"the Datasets 1 \(in memory\) and 2 \(in memory\) both hold run_ids .*\(and 7 more\); give each"
    with pytest.raises(DataError, match=shared + r" Dataset's runs distinct ids \(a prefix"):
        Dataset.concat([a, b])
    both = Dataset.concat([a, with_id_prefix(b, "b-")])
    assert both.collect("runs").height == 30
    for name in a.table_names:
        assert both.collect(name).height == a.collect(name).height + b.collect(name).height
    assert both.collect("runs").filter(pl.col("run_id").str.starts_with("b-"))["case_id"].str.starts_with("b-").all()
    both.validate()
    with pytest.raises(InvalidParameterError, match="at least one"):
        Dataset.concat([])


@pytest.mark.parametrize("path", ["some/folder", Path("some/folder")])
def test_a_path_given_to_the_constructor_points_to_open(path: str | Path) -> None:
    # Iterating a string as table names gave one "unknown table" per character.
    hint = r"takes tables, not a path; open a folder with Dataset\.open\('some/folder'\)"
    with pytest.raises(SchemaError, match=hint):
        Dataset(path)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(
    runs=st.integers(1, 12),
    picks=st.lists(st.integers(0, 14), max_size=40),
    shuffle=st.randoms(use_true_random=False),
)
def test_summary_counts_equal_a_plain_count_in_any_row_order(
    runs: int, picks: list[int], shuffle: random.Random
) -> None:
    # Agent rows for a drawn multiset of runs, some of them not in `runs` (ids 12 to 14), in any
    # order: the summary's shortcut for rows grouped by run must not change what it counts.
    run_rows = [(f"r{i:02d}", f"s{i % 3}", f"c{i % 5}", f"t{i % 2}") for i in range(runs)]
    shuffle.shuffle(picks)
    agents = pl.DataFrame(
        {"run_id": [f"r{i:02d}" for i in picks], "agent_id": [f"a{k}" for k in range(len(picks))]},
        schema={"run_id": pl.String, "agent_id": pl.String},
    )
    ds = Dataset.from_frames(
        runs=pl.DataFrame(run_rows, schema=["run_id", "system", "case_id", "task"], orient="row"), agents=agents
    )
    known = {row[0]: row for row in run_rows}
    covered = [known[f"r{i:02d}"] for i in set(picks) if f"r{i:02d}" in known]
    expected = {
        "table": "agents",
        "rows": len(picks),
        "runs": len(covered),
        "systems": len({row[1] for row in covered}),
        "cases": len({row[2] for row in covered}),
        "tasks": len({row[3] for row in covered}),
    }
    assert ds.summary().row(1, named=True) == expected
