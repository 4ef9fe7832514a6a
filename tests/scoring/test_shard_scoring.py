"""Scoring a sharded Dataset shard by shard (issue 14, item 2): the same tables as scoring it whole.

Each shard is scored on its own and its tables written at once; ``Scores.open`` reads the
sharded Scores folder back with every table in the order ``score`` gives. Compared here on the
bundled sample, which holds decision, diagnostic and answer runs, in this process and in two
worker processes.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, InvalidParameterError, SchemaError, Scores, UnreadableFileError
from mas_eval.cli import main
from mas_eval.data.schema import RUN_ID_COLUMNS
from mas_eval.errors import OutputExistsError
from mas_eval.metrics import registry
from mas_eval.scoring.request import Step
from mas_eval.scoring.shards import score_shards
from mas_eval.storage.scores_folder import shard_file
from tests.conftest import run_cli_process

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


@pytest.fixture(scope="module")
def whole() -> Scores:
    return mas_eval.score(Dataset.open(ROOT / "data" / "sample"))


def assert_same_scores(got: Scores, want: Scores) -> None:
    assert got.names == want.names
    assert (got.preset, got.params, got.ran, got.skipped) == (want.preset, want.params, want.ran, want.skipped)
    for name in want.names:
        # Bit for bit: a run's sums add its own rows in a fixed order (score()'s Notes).
        assert_frame_equal(got[name], want[name], check_exact=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_scoring_shard_by_shard_gives_the_tables_of_scoring_the_whole(
    sharded: Path, whole: Scores, tmp_path: Path, workers: int
) -> None:
    ticks: list[Step] = []
    out = score_shards(Dataset.open(sharded), tmp_path / "scores", workers=workers, progress=ticks.append)
    # Before the first shard and after each, as mas_eval.score reports them.
    assert sorted((step.done, step.total) for step in ticks) == [(k, 5) for k in range(6)]
    assert ticks[-1] == "scored 5 of 5 shards"
    assert_same_scores(Scores.open(out), whole)
    manifest = Scores.manifest(out)
    assert manifest["shards"] == 5
    assert manifest["rows"] == {name: frame.height for name, frame in whole.tables.items()}
    # Every table has a file in every shard, and compare reads the folder lazily as it reads any.
    assert all(shard_file(out, name, k).is_file() for name in whole.names for k in range(5))
    assert Scores.scan(out, "items").select(pl.len()).collect().item() == whole["items"].height


def test_tables_but_runs_hold_the_run_columns_once_and_read_back_whole(
    sharded: Path, whole: Scores, tmp_path: Path
) -> None:
    out = score_shards(Dataset.open(sharded), tmp_path / "scores")
    for name in whole.names:
        held = pl.read_parquet_schema(shard_file(out, name, 0)).names()
        if name == "runs":
            assert held[: len(RUN_ID_COLUMNS)] == RUN_ID_COLUMNS
        else:  # run_id, and only the identifying columns the table carries itself (an item's task)
            assert held[0] == "run_id"
            assert [c for c in RUN_ID_COLUMNS[1:] if c in held] == (["task"] if name == "items" else [])
    for name, frame in whole.items():
        key = ["run_id", *registry.OUTPUT_TABLES[name].key_columns]
        assert_frame_equal(Scores.scan(out, name).collect().sort(key), frame, check_exact=True)
    # A table holding a run its runs table lacks: the folder was changed after scoring.
    runs = shard_file(out, "runs", 1)
    pl.read_parquet(runs).slice(1).write_parquet(runs)
    with pytest.raises(SchemaError, match=r"table 'agents' holds runs that its 'runs' table does not"):
        Scores.open(out)


def test_shards_without_runs_and_parameters(tmp_path: Path) -> None:
    # 12 runs in 16 shards: some shards hold no run at all, and still get every table's file.
    ds = Dataset.open(mas_eval.simulate(12, seed=3).write(tmp_path / "ds", shards=16))
    out = score_shards(ds, tmp_path / "scores", preset="crisis-mas-poc", gt_boost=None)
    back, want = Scores.open(out), mas_eval.score(ds, "crisis-mas-poc", gt_boost=None)
    assert_same_scores(back, want)
    assert back.params["gt_boost"] is None


def test_bad_arguments_fail_before_any_work(sharded: Path, tmp_path: Path) -> None:
    ds = Dataset.open(sharded)
    allowed = r"score: workers=.* is invalid; workers must be an integer in \[1, 256\]"
    for workers in (0, -1, 1.5, True):
        with pytest.raises(InvalidParameterError, match=allowed):
            score_shards(ds, tmp_path / "a", workers=workers)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="gt_boost"):
        score_shards(ds, tmp_path / "a", gt_boost="high")
    with pytest.raises(InvalidParameterError, match="need a Dataset opened from a folder"):
        score_shards(Dataset.from_frames(**ds.frames()), tmp_path / "a", workers=2)
    compressions = r"score: compression=.* is invalid; compression must be one of 'uncompressed', 'lz4'"
    for bad in ("lzz", None, 3):
        with pytest.raises(InvalidParameterError, match=compressions):
            mas_eval.score(ds, out=tmp_path / "a", compression=bad if bad is not None else "")
    with pytest.raises(InvalidParameterError, match="compression need out=PATH"):
        mas_eval.score(ds, compression="lz4")
    assert list(tmp_path.iterdir()) == []
    assert run_cli("score", sharded, "--out", tmp_path / "a", "--compression", "lzz") == 2
    assert list(tmp_path.iterdir()) == []


def test_files_are_written_with_the_compression_asked(sharded: Path, whole: Scores, tmp_path: Path) -> None:
    def compression(file: Path) -> str:
        import pyarrow.parquet as pq

        return pq.ParquetFile(file).metadata.row_group(0).column(0).compression

    default = mas_eval.score(Dataset.open(sharded), out=tmp_path / "default").source
    lz4 = mas_eval.score(Dataset.open(sharded), out=tmp_path / "lz4", compression="lz4").source
    assert compression(shard_file(default, "runs", 0)) == "UNCOMPRESSED"
    assert compression(shard_file(lz4, "agents", 3)) == "LZ4"
    assert_same_scores(Scores.open(lz4), whole)
    plain = mas_eval.score(Dataset.open(ROOT / "data" / "sample"), out=tmp_path / "plain").source
    assert compression(plain / "runs.parquet") == "ZSTD"
    snappy = mas_eval.score(Dataset.open(ROOT / "data" / "sample"), out=tmp_path / "snappy", compression="snappy")
    assert compression(snappy.source / "items.parquet") == "SNAPPY"


def test_a_corrupt_shard_is_named_and_nothing_is_written(sharded: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ds"
    Dataset.open(sharded).write(copy, shards=5)
    broken = copy / "agents" / "shard=3" / "part-0.parquet"
    broken.write_bytes(broken.read_bytes()[:100])
    with pytest.raises(UnreadableFileError, match="shard=3"):
        score_shards(Dataset.open(copy), tmp_path / "scores")
    assert not (tmp_path / "scores").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_compare_names_a_corrupt_shard_of_the_scores(
    sharded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = score_shards(Dataset.open(sharded), tmp_path / "scores")
    broken = shard_file(out, "runs", 2)
    data = bytearray(broken.read_bytes())
    data[100:-3000] = b"\xff" * len(data[100:-3000])  # pages overwritten, the footer kept
    broken.write_bytes(bytes(data))
    assert run_cli("compare", out, "-m", "dqs") == 2
    assert f"{broken}: unreadable Parquet file" in capsys.readouterr().err


def test_the_command_line_scores_a_sharded_dataset_with_workers(sharded: Path, whole: Scores, tmp_path: Path) -> None:
    done = run_cli_process("score", sharded, "--out", tmp_path / "scores", "--workers", "2", "--skip-validation")
    assert done.returncode == 0, done.stderr
    assert "scored 4,440 runs in 5 shards (2 worker(s), processes)" in done.stdout
    assert_same_scores(Scores.open(tmp_path / "scores"), whole)
    assert run_cli("compare", tmp_path / "scores", "-m", "dqs", "--by", "task") == 0


def test_workers_on_an_unsharded_dataset_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = mas_eval.simulate(20, seed=1).write(tmp_path / "plain")
    assert run_cli("score", plain, "--out", tmp_path / "scores", "--workers", "2") == 2
    err = capsys.readouterr().err
    assert "--workers 2 needs a sharded Dataset" in err and "mas-eval reshard" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "scores").exists()


def test_score_with_out_writes_the_folder_and_returns_it_opened(sharded: Path, whole: Scores, tmp_path: Path) -> None:
    # A sharded Dataset: shard by shard. An unsharded one: scored whole and written as Scores.write writes.
    scores = mas_eval.score(Dataset.open(sharded), out=tmp_path / "sharded")
    assert isinstance(scores, Scores) and scores.source is not None
    assert scores.source.samefile(tmp_path / "sharded") and Scores.manifest(scores.source)["shards"] == 5
    assert_same_scores(scores, whole)
    assert_same_scores(Scores.open(scores.source), whole)
    plain = mas_eval.score(Dataset.open(ROOT / "data" / "sample"), out=tmp_path / "plain")
    assert isinstance(plain, Scores) and plain.source is not None
    assert (plain.source / "runs.parquet").is_file() and "shards" not in Scores.manifest(plain.source)
    assert_same_scores(plain, whole)
    with pytest.raises(InvalidParameterError, match="workers must be an integer"):
        mas_eval.score(Dataset.open(sharded), workers=True)
    with pytest.raises(OutputExistsError, match="already exists; pass overwrite=True"):
        mas_eval.score(Dataset.open(ROOT / "data" / "sample"), out=tmp_path / "plain")


def test_a_dask_local_cluster_scores_the_shards_identically(sharded: Path, whole: Scores, tmp_path: Path) -> None:
    # Two worker processes on loopback, no dashboard: what `make test` can always run.
    distributed = pytest.importorskip("dask.distributed", reason="make test installs mas_eval[distributed]")
    ticks: list[Step] = []
    out = mas_eval.score(Dataset.open(sharded), out=tmp_path / "own", engine="dask", workers=2)
    assert_same_scores(out, whole)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        given = score_shards(
            Dataset.open(sharded), tmp_path / "given", engine="dask", client=client, progress=ticks.append
        )
        assert len(client.scheduler_info()["workers"]) == 2
        # A cluster started apart from mas_eval, reached by its scheduler's address, as a lab's would be.
        code = run_cli("score", sharded, "--out", tmp_path / "addressed", "--engine", "dask",
                       "--scheduler", cluster.scheduler_address)  # fmt: skip
        assert code == 0
    assert_same_scores(Scores.open(given), whole)
    assert_same_scores(Scores.open(tmp_path / "addressed"), whole)
    assert sorted((step.done, step.total) for step in ticks) == [(k, 5) for k in range(6)]


def test_dask_options_are_checked(sharded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = Dataset.open(sharded)
    with pytest.raises(InvalidParameterError, match="engine must be one of 'processes', 'dask'"):
        score_shards(ds, tmp_path / "a", engine="spark")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="an option of engine='dask'"):
        score_shards(ds, tmp_path / "a", scheduler="tcp://127.0.0.1:1")
    with pytest.raises(InvalidParameterError, match="need out=PATH"):
        mas_eval.score(ds, engine="dask")
    assert run_cli("score", sharded, "--out", tmp_path / "a", "--scheduler", "tcp://127.0.0.1:1") == 2
    assert "--scheduler tcp://127.0.0.1:1 is an option of --engine dask" in capsys.readouterr().err
    assert run_cli("score", sharded, "--out", tmp_path / "a", "--engine", "spark") == 2
    assert "score: engine='spark' is invalid; engine must be one of 'processes', 'dask'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("spec", {"stability_draws": 25, "stability_perturbation": 0.6, "stability_seed": 11}),
        ("crisis-mas-poc", {"stability_draws": 9, "stability_criterion": "c2", "stability_sweep_high": 0.8}),
    ],
)
def test_conflicts_and_ranking_stability_do_not_depend_on_the_shard_layout_or_workers(
    tmp_path: Path, preset: str, overrides: dict
) -> None:
    # A run's perturbations are drawn from its run_id and the seed alone, never from its place in a shard.
    ds = Dataset.open(ROOT / "data" / "sample")
    whole = mas_eval.score(ds, preset=preset, **overrides)
    stability = whole.runs["ranking_stability"]
    assert stability.null_count() < len(stability) and stability.min() < 1.0
    assert whole["conflicts"].height > 0
    for shards, workers in [(3, 1), (7, 2)]:
        folder = ds.write(tmp_path / f"ds{shards}", shards=shards)
        out = score_shards(Dataset.open(folder), tmp_path / f"s{shards}", preset, workers=workers, **overrides)
        back = Scores.open(out)
        columns = ["run_id", "consensus_reached", "num_conflicts", "ranking_stability"]
        assert_frame_equal(back.runs.select(columns), whole.runs.select(columns), check_exact=True)
        assert_frame_equal(back["conflicts"], whole["conflicts"], check_exact=True)
