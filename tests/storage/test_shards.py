"""Sharded Datasets (issue 14, item 1): layout, stable hash, transparent reading, scoring, resharding."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import DataError, Dataset, InvalidParameterError, SchemaError, UnreadableFileError
from mas_eval.cli import main
from mas_eval.data.schema import TABLES
from mas_eval.ingest import export_jsonl, ingest_jsonl, ingest_lddx
from mas_eval.storage.sharding import MAX_SHARDS, run_hash, shard_of
from tests.conftest import LDDX, mixed_dataset, needs_lddx

SHARDS = 4
_MASK = (1 << 64) - 1


def reference_hash(run_id: str) -> int:
    """FNV-1a 64 over the UTF-8 bytes, then MurmurHash3's fmix64: the documented run hash, in plain Python."""
    h = 0xCBF29CE484222325
    for byte in run_id.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & _MASK
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK
    return h ^ (h >> 33)


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def mixed() -> Dataset:
    """Decision, diagnosis and answer runs in one Dataset: every table, ground truth included."""
    return mixed_dataset(2000, 60, 20, seed=1)


@pytest.fixture(scope="module")
def folders(mixed: Dataset, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shards")
    return mixed.write(root / "plain"), mixed.write(root / "sharded", shards=SHARDS)


def assert_same_tables(got: Dataset, expected: Dataset) -> None:
    assert got.table_names == expected.table_names
    for name in expected.table_names:
        assert_frame_equal(got.collect(name), expected.collect(name), check_exact=True)


# -- layout and hash --------------------------------------------------------------------------


def test_the_hash_is_fnv1a64_fmix64_of_the_utf8_bytes() -> None:
    ids = ["r1", "run-000001", "", "é", "a longer id — with 🎉 and spaces", "x" * 300]
    assert run_hash(pl.Series(ids)).tolist() == [reference_hash(i) for i in ids]
    assert shard_of(pl.Series(ids), 7).to_list() == [reference_hash(i) % 7 for i in ids]
    # Pinned, so that a change of the function (which would move every run) cannot pass unseen.
    assert reference_hash("r1") == int(run_hash(pl.Series(["r1"]))[0]) == 0xCAA9B88643B8AB18
    assert shard_of(pl.Series(["r1", "r2", "r3"]), 4).to_list() == [0, 1, 0]


def test_sharded_round_trip_equals_the_unsharded(mixed: Dataset, folders: tuple[Path, Path]) -> None:
    plain, sharded = (Dataset.open(f) for f in folders)
    assert (plain.shards, sharded.shards) == (1, SHARDS)
    assert_same_tables(sharded, plain)
    assert_same_tables(sharded, mixed)
    # The partition column is not a column of any table.
    for name in sharded.table_names:
        assert sharded.scan(name).collect_schema().names() == plain.scan(name).collect_schema().names()


def test_each_run_sits_whole_in_its_hashed_shard_of_every_table(folders: tuple[Path, Path]) -> None:
    _, root = folders
    manifest = json.loads((root / "_dataset.json").read_text(encoding="utf-8"))
    assert manifest["shards"] == {
        "count": SHARDS,
        "hash": "fnv1a64-fmix64",
        "column": "run_id",
        "partition": "shard",
        "tables_whole": ["ground_truth"],
    }
    assert (root / "ground_truth.parquet").is_file()
    home: dict[str, int] = {}
    for name in manifest["tables"]:
        if name == "ground_truth":
            continue
        key = list(TABLES[name].key)
        assert sorted(p.name for p in (root / name).iterdir()) == [f"shard={k}" for k in range(SHARDS)]
        seen: dict[str, int] = {}
        for index in range(SHARDS):
            (file,) = (root / name / f"shard={index}").iterdir()
            frame = pl.read_parquet(file)
            assert "shard" not in frame.columns
            assert frame.equals(frame.sort(key)), f"{file} is not sorted by {key}"
            for run_id in frame["run_id"].unique().to_list():
                assert run_id not in seen, f"run {run_id!r} of {name!r} in two shards"
                seen[run_id] = index
                assert index == reference_hash(run_id) % SHARDS
        for run_id, index in seen.items():
            assert home.setdefault(run_id, index) == index  # the same shard in every table


def test_a_shard_is_a_dataset_of_whole_runs(folders: tuple[Path, Path]) -> None:
    plain, sharded = (Dataset.open(f) for f in folders)
    parts = [sharded.shard(i) for i in range(SHARDS)]
    runs = pl.concat([p.collect("runs") for p in parts]).sort("run_id")
    assert_frame_equal(runs, plain.collect("runs"))
    for part in parts:
        assert part.shards == 1
        cases = set(part.collect("runs")["case_id"])
        assert set(part.collect("ground_truth")["case_id"]) <= cases
        assert_frame_equal(
            part.collect("ground_truth"),
            plain.collect("ground_truth").filter(pl.col("case_id").is_in(sorted(cases))),
        )
    assert plain.shard(0) is plain
    # The type and sign are checked with every public parameter; the upper bound by the Dataset, which knows it.
    for bad, allowed in ((-1, ">= 0"), (1.0, ">= 0"), (True, ">= 0"), (SHARDS, r"in \[0, 3\]")):
        with pytest.raises(
            InvalidParameterError, match=rf"^Dataset.shard: index=.* is invalid; index must be an integer {allowed}$"
        ):
            sharded.shard(bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_scoring_sharded_equals_unsharded(folders: tuple[Path, Path]) -> None:
    plain, sharded = (Dataset.open(f) for f in folders)
    expected = mas_eval.score(plain)
    got = mas_eval.score(sharded)
    assert got.names == expected.names
    # Bit for bit (score()'s Notes).
    for name, frame in expected.items():
        assert_frame_equal(got[name], frame, check_exact=True)
    # Shard by shard, concatenated: the same rows (what streaming scoring will rely on).
    per_shard = [mas_eval.score(sharded.shard(i)) for i in range(SHARDS)]
    runs = pl.concat([s.runs for s in per_shard], how="diagonal_relaxed").sort("run_id")
    assert_frame_equal(runs.select(expected.runs.columns), expected.runs, check_exact=True)


@pytest.mark.parametrize("layout", ["one file a table", "shard by shard"])
@pytest.mark.slow
def test_scores_open_reads_the_tables_asked_for_as_whole_opens_them(
    folders: tuple[Path, Path], tmp_path: Path, layout: str
) -> None:
    source = Dataset.open(folders[1])
    if layout == "shard by shard":
        out = mas_eval.score(source, out=tmp_path / "scores").source
    else:
        out = mas_eval.score(source).write(tmp_path / "scores")
    whole = mas_eval.Scores.open(out)
    # A sharded folder's agents take their run columns from runs, which is not asked for here.
    some = mas_eval.Scores.open(out, tables=["agents", "no such table"])
    assert some.names == ["agents"]
    assert_frame_equal(some["agents"], whole["agents"], check_exact=True)
    assert (some.preset, some.params, some.ran) == (whole.preset, whole.params, whole.ran)


def test_validate_and_summary_work_on_a_sharded_dataset(
    folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    plain, sharded = folders
    assert Dataset.open(sharded).validate().shards == SHARDS
    assert_frame_equal(Dataset.open(sharded).summary(), Dataset.open(plain).summary())
    assert run_cli("validate", sharded) == 0
    assert "valid" in capsys.readouterr().out
    assert run_cli("summary", sharded, "--json") == 0
    assert '"ground_truth"' in capsys.readouterr().out


# -- damaged layouts --------------------------------------------------------------------------


def _copy(folder: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(folder, tmp_path / "copy"))


def test_a_run_moved_to_another_shard_fails_validation(folders: tuple[Path, Path], tmp_path: Path) -> None:
    root = _copy(folders[1], tmp_path)
    zero, one = (root / "agents" / f"shard={k}" / "part-0.parquet" for k in (0, 1))
    moved = pl.concat([pl.read_parquet(one), pl.read_parquet(zero).head(1)])
    moved.write_parquet(one)
    pl.read_parquet(zero).slice(1).write_parquet(zero)
    with pytest.raises(DataError, match=r"table 'agents': rows lie in the wrong shard \(run '.*' in shard 1, not 0"):
        Dataset.open(root).validate()


def test_a_corrupt_shard_file_is_named(folders: tuple[Path, Path], tmp_path: Path) -> None:
    root = _copy(folders[1], tmp_path)
    bad = root / "beliefs" / "shard=2" / "part-0.parquet"
    bad.write_bytes(bad.read_bytes()[:-20])
    with pytest.raises(UnreadableFileError, match=rf"{bad}: unreadable Parquet file"):
        Dataset.open(root)


def test_a_missing_or_stray_shard_is_a_schema_error(folders: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    root = _copy(folders[1], tmp_path)
    shutil.move(root / "ddx" / "shard=3", root / "ddx" / "shard=7")
    with pytest.raises(SchemaError, match=r"ddx: 'shard=7' is not one of the 4 shards"):
        Dataset.open(root)
    shutil.rmtree(root / "ddx" / "shard=7")
    with pytest.raises(SchemaError, match=r"shard=3: missing; table 'ddx' should have 4 shards"):
        Dataset.open(root)
    (root / "_dataset.json").write_text(
        '{"tables": ["runs"], "shards": {"count": 4, "hash": "xxh3"}}', encoding="utf-8"
    )
    with pytest.raises(SchemaError, match="shards hashed by 'xxh3', which this version does not know"):
        Dataset.open(root)


# -- writing and resharding -------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -2, MAX_SHARDS + 1, 2.0, True, "4"])
def test_bad_shard_counts_are_refused_before_writing(mixed: Dataset, tmp_path: Path, bad: object) -> None:
    with pytest.raises(InvalidParameterError, match=r"shards=.* is invalid; shards must be an integer in \[1, 10000\]"):
        mixed.write(tmp_path / "out", shards=bad)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_more_shards_than_runs_leaves_empty_shards(tmp_path: Path) -> None:
    small = mas_eval.simulate(6, seed=4)
    back = Dataset.open(small.write(tmp_path / "ds", shards=16))
    assert back.shards == 16
    assert_same_tables(back.validate(), small)
    assert sum(back.shard(i).collect("runs").height == 0 for i in range(16)) >= 10


def test_reshard_4_to_2_to_unsharded_gives_the_original(
    mixed: Dataset, folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two, back = tmp_path / "two", tmp_path / "back"
    assert run_cli("reshard", folders[1], "--shards", 2, "--out", two) == 0
    assert "in 2 shards" in capsys.readouterr().out
    assert Dataset.open(two).shards == 2
    direct = Dataset.open(mixed.write(tmp_path / "direct", shards=2))
    for name in ("runs", "messages"):
        for k in range(2):
            file = f"{name}/shard={k}/part-0.parquet"
            assert pl.read_parquet(two / file).equals(pl.read_parquet(tmp_path / "direct" / file))
    assert run_cli("reshard", two, "--shards", 1, "--out", back) == 0
    unsharded = Dataset.open(back)
    assert unsharded.shards == 1
    assert (back / "runs.parquet").is_file()
    assert "shards" not in json.loads((back / "_dataset.json").read_text(encoding="utf-8"))
    assert_same_tables(unsharded, mixed)
    assert_same_tables(direct, mixed)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--shards", "0"], "error: reshard: shards=0 is invalid; shards must be an integer in [1, 10000]"),
        (["--shards", "-3"], "error: reshard: shards=-3 is invalid"),
        (["--shards", "10001"], "error: reshard: shards=10001 is invalid"),
        (["--shards", "two"], "error: mas-eval reshard: Invalid value for '--shards'"),
    ],
)
def test_reshard_refuses_bad_counts(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], error: str
) -> None:
    assert run_cli("reshard", folders[1], *args, "--out", tmp_path / "out") == 2
    assert one_error_line(capsys).startswith(error)
    assert list(tmp_path.iterdir()) == []


def test_reshard_output_safety(folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(folders[1], tmp_path)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    for out, error in (
        (root, "the output is the input"),
        (root / "inner", "the output lies inside the input"),
        (tmp_path, "the output holds the input"),
    ):
        assert run_cli("reshard", root, "--shards", 2, "--out", out, "--overwrite") == 2
        assert error in one_error_line(capsys)
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    existing = tmp_path / "existing"
    existing.mkdir()
    assert run_cli("reshard", root, "--shards", 2, "--out", existing) == 2
    assert "already exists; pass --overwrite" in one_error_line(capsys)
    assert list(existing.iterdir()) == []
    assert run_cli("reshard", root, "--shards", 2, "--out", existing, "--overwrite") == 0
    assert Dataset.open(existing).shards == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "existing"]  # no staging left


# -- simulate and ingest ----------------------------------------------------------------------


def test_simulate_writes_shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sim"
    assert run_cli("simulate", "--runs", 200, "--seed", 5, "--shards", 3, "--out", out) == 0
    assert "in 3 shards" in capsys.readouterr().out
    ds = Dataset.open(out).validate()
    assert ds.shards == 3
    assert_same_tables(ds, mas_eval.simulate(200, seed=5))
    for bad in ("0", "-1", "1.5"):
        assert run_cli("simulate", "--runs", 200, "--shards", bad, "--out", tmp_path / "bad") == 2
        assert "shards" in one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim"]


def test_ingest_writes_shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "runs.jsonl"
    export_jsonl(mas_eval.simulate(300, seed=6), records)
    out = tmp_path / "ds"
    # Small chunks: the runs arrive in several part files before they are sharded.
    assert run_cli("ingest", records, "--out", out, "--shards", 3, "--chunk-mb", 0.05) == 0
    assert "ingested 300 runs" in capsys.readouterr().out
    ds = Dataset.open(out).validate()
    assert ds.shards == 3
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    plain = ingest_jsonl([records], tmp_path / "plain").out
    assert_same_tables(ds, Dataset.open(plain))
    for bad in ("0", "20000"):
        assert run_cli("ingest", records, "--out", tmp_path / "bad", "--shards", bad) == 2
        assert "error: ingest: shards=" in one_error_line(capsys)
    assert run_cli("ingest", records, "--format", "medaisure", "--out", tmp_path / "r.json", "--shards", 2) == 2
    assert "makes no Dataset; write it as .json, .md or .html with: mas-eval benchmark-report" in one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "plain", "runs.jsonl"]


@needs_lddx
def test_lddx_ingest_writes_shards(tmp_path: Path) -> None:
    files = sorted(LDDX.glob("ddx_results_*.json"))[:4]
    sharded = ingest_lddx(files, tmp_path / "ds", shards=2)
    plain = ingest_lddx(files)
    assert sharded.dataset.shards == 2
    assert_same_tables(sharded.dataset.validate(), plain.dataset)
