"""Writing the chunks' tables into the staging folder, in shards when asked, and the steps that span chunks.

Each chunk is written and validated on a thread of its own while the next is read; ground
truth is deduplicated and run ids checked across chunks at the end, on hash buckets of bounded
size; with shards, each shard is sorted once every chunk is in.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import cast

import polars as pl

from mas_eval.data.schema import RUN_KEY, TABLES
from mas_eval.errors import MasEvalError
from mas_eval.storage.dataset import Dataset, write_dataset_manifest
from mas_eval.storage.inputs import parquet_files, scan_parquet
from mas_eval.storage.sharding import SHARD_COLUMN, shard_folder, shard_of, sharded, write_sorted_shards

__all__ = [
    "FORMAT_NAME",
    "GROUND_TRUTH_SCRATCH",
    "ChunkWriter",
    "deduplicate_ground_truth",
    "run_ids_unique",
    "sort_shards",
    "staged_dataset",
    "table_folder",
]

#: What the manifest's ``formats`` calls the runs' format (:attr:`Dataset.formats <mas_eval.Dataset.formats>`).
FORMAT_NAME = "canonical JSONL"
#: Hidden folders of the staging folder: the chunks' ground truth before it is deduplicated across
#: chunks, and (``shards > 1``) every sharded table's rows, split by shard, before each shard is sorted.
GROUND_TRUTH_SCRATCH = ".ground_truth"
_SHARDS_SCRATCH = ".shards"
#: The compression of the part files that are read back once and removed (the scratch folders'):
#: lz4, as speed matters more than size for files that live a moment (docs/performance.md).
_SCRATCH_COMPRESSION = "lz4"


def table_folder(staging: Path, name: str, shards: int) -> Path:
    """Where the chunks' part files of table ``name`` are staged (ground truth: before it is deduplicated)."""
    if name == "ground_truth":
        return staging / GROUND_TRUTH_SCRATCH
    return staging / _SHARDS_SCRATCH / name if shards > 1 else staging / name


def _store(tables: dict[str, pl.DataFrame], index: int, staging: Path, held: _ShardRows | None) -> bool:
    """Write one chunk's tables as part files ``part-<index>``; whether they pass :meth:`Dataset.validate` alone.

    With shards (``held`` given) a sharded table's rows go to their shard (the hash of
    :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`, :func:`shard_of`) through
    ``held``, so that the sharded layout is made by sorting each shard once
    (:func:`sort_shards`), never by reading and splitting the whole Dataset again.
    """
    part = f"part-{index:05d}.parquet"
    for name, table in tables.items():
        if table.height == 0:
            continue
        if held is not None and sharded(name):
            held.add(name, table)
            continue
        folder = table_folder(staging, name, 1 if held is None else held.shards)
        folder.mkdir(parents=True, exist_ok=True)
        # An unsharded table's parts are the Dataset's own files, in Polars' default compression.
        scratch = name == "ground_truth"
        table.write_parquet(folder / part, **({"compression": _SCRATCH_COMPRESSION} if scratch else {}))
    if held is not None:
        held.write_if_full()
    return _valid(tables)


#: Bytes of rows (Polars' estimate) that :class:`_ShardRows` holds before it writes them out.
_HELD_BYTES = 32 * 2**20


class _ShardRows:
    """The sharded tables' rows of the chunks, by shard, held and written as one part file per table and shard.

    Rows are held until about :data:`_HELD_BYTES`, then written: a file per chunk, table and shard
    would cost more than its rows (docs/performance.md). The rows keep the input's order: a part
    holds its chunks' rows in turn, and parts are numbered in the order they are written.
    """

    def __init__(self, staging: Path, shards: int) -> None:
        self.shards = shards
        self._staging = staging
        self._rows: dict[tuple[str, int], list[pl.DataFrame]] = {}
        self._bytes = 0
        self._parts = 0

    def add(self, name: str, table: pl.DataFrame) -> None:
        homes = table.with_columns(shard_of(table[RUN_KEY], self.shards))
        # A loop over the chunk's shards (at most the number of shards).
        for (home,), rows in homes.partition_by(SHARD_COLUMN, as_dict=True, include_key=False).items():
            self._rows.setdefault((name, cast(int, home)), []).append(rows)
        self._bytes += table.estimated_size()

    def write_if_full(self) -> None:
        if self._bytes >= _HELD_BYTES:
            self.write()

    def write(self) -> None:
        """Write every held row, one part file per table and shard."""
        part = f"part-{self._parts:05d}.parquet"
        for (name, home), frames in self._rows.items():
            destination = shard_folder(table_folder(self._staging, name, self.shards), home)
            destination.mkdir(parents=True, exist_ok=True)
            pl.concat(frames, rechunk=False).write_parquet(destination / part, compression=_SCRATCH_COMPRESSION)
        self._rows, self._bytes = {}, 0
        self._parts += 1


class ChunkWriter:
    """Writes and checks each chunk (:func:`_store`) on a thread of its own while the next chunk is read.

    Arrow's reader and Polars release the GIL, so on two cores the reading of a chunk and the
    writing of the one before overlap. At most one chunk is in flight (memory stays bounded by
    two chunks and the rows :class:`_ShardRows` holds); :meth:`put` waits for it first, so that a
    failure to write it is raised before anything later, as it would be without the thread.
    """

    def __init__(self, staging: Path, shards: int) -> None:
        self._staging = staging
        self._held = _ShardRows(staging, shards) if shards > 1 else None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writer")
        self._pending: Future[bool] | None = None
        self._valid = True

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._valid = pending.result() and self._valid

    def put(self, tables: dict[str, pl.DataFrame], index: int) -> None:
        """Write and check ``tables`` as part ``index``, once the chunk before is written."""
        self._wait()
        self._pending = self._pool.submit(_store, tables, index, self._staging, self._held)

    def finish(self) -> bool:
        """Wait for the last chunk and write the rows still held; return whether every chunk was valid.

        Each chunk is checked by :meth:`Dataset.validate` on its own.
        """
        self._wait()
        if self._held is not None:
            self._held.write()
        return self._valid

    def __enter__(self) -> ChunkWriter:
        """Return the writer."""
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        """Wait for the chunk in flight and stop the pool; if the block failed, raise that chunk's own failure first."""
        # The chunk in flight is waited for in any case, so that nothing writes into the staging
        # folder once it is removed; it came first, so its failure is the one raised.
        pending, self._pending = self._pending, None
        self._pool.shutdown(wait=True)
        failure = pending.exception() if error is not None and pending is not None else None
        if failure is not None:
            raise failure from error


def staged_dataset(staging: Path, shards: int) -> Dataset:
    """Return the staged tables as a Dataset, before ``_dataset.json`` is written (ground truth deduplicated)."""
    if shards == 1:
        return Dataset.open(staging)
    # Ground truth is deduplicated by now, into the folder of an unsharded Dataset's table.
    folders = {name: table_folder(staging, name, shards) for name in TABLES if name != "ground_truth"}
    folders["ground_truth"] = staging / "ground_truth"
    return Dataset({name: scan_parquet(parquet_files(folder)) for name, folder in folders.items() if folder.is_dir()})


def sort_shards(staging: Path, names: list[str], shards: int) -> None:
    """Make the sharded layout from the staged shards.

    Each shard is sorted by key, ground truth is one sorted file, then ``_dataset.json`` and the
    stored codes are written (as :meth:`Dataset.write_tables` writes them).
    """
    for name in names:
        spec = TABLES[name]
        if sharded(name):
            write_sorted_shards(table_folder(staging, name, shards), spec, staging, shards, spec.polars_schema)
        else:
            folder = staging / name
            scan_parquet(parquet_files(folder)).sort(list(spec.key)).sink_parquet(staging / f"{name}.parquet")
            shutil.rmtree(folder)
    shutil.rmtree(staging / _SHARDS_SCRATCH)
    write_dataset_manifest(staging, names, shards, formats=[FORMAT_NAME])


def _valid(tables: dict[str, pl.DataFrame]) -> bool:
    """Return whether one chunk's tables pass :meth:`Dataset.validate` on their own."""
    try:
        Dataset.from_frames(**tables).validate()
    except MasEvalError:
        return False
    return True


#: Rows handled per pass by the steps that span chunks: a larger table is split into passes over
#: hash buckets of its rows, so that their memory (about 150 bytes a row) stays bounded too.
_ROWS_PER_PASS = 2_000_000


def _buckets(frame: pl.LazyFrame, columns: list[str]) -> Iterator[pl.LazyFrame]:
    """Split ``frame`` by a hash of ``columns`` into parts of about ``_ROWS_PER_PASS`` rows (equal keys together)."""
    passes = -(-frame.select(pl.len()).collect().item() // _ROWS_PER_PASS)
    if passes <= 1:
        yield frame
        return
    bucket = pl.struct(columns).hash() % passes
    for index in range(passes):
        yield frame.filter(bucket == index)


def deduplicate_ground_truth(scratch: Path, folder: Path) -> None:
    """Write the distinct ground truth rows of the chunks (a case's runs may sit in several), each part sorted."""
    key = list(TABLES["ground_truth"].key)
    folder.mkdir()
    for index, part in enumerate(_buckets(scan_parquet(parquet_files(scratch)), key)):
        truth = part.unique().sort(key).collect()
        if truth.height:
            truth.write_parquet(folder / f"part-{index:05d}.parquet")


def run_ids_unique(files: list[Path]) -> bool:
    """Return whether no run_id occurs twice among the staged runs (the one rule that spans chunks)."""
    runs = scan_parquet(files).select("run_id")
    return all(
        part.select(pl.col("run_id").n_unique() == pl.len()).collect().item() for part in _buckets(runs, ["run_id"])
    )
