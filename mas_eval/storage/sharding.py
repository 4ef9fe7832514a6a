"""Sharded Datasets: every run's rows in one shard of every table, chosen by a stable hash of its id.

A sharded Dataset folder holds each table keyed by ``run_id`` as a hive-partitioned folder,
one Parquet file per shard, sorted by the table's key::

    DATASET/
      _dataset.json                       {"tables": [...], "shards": {"count": 4, "hash": "fnv1a64-fmix64", ...}}
      runs/shard=0/part-0.parquet ... runs/shard=3/part-0.parquet
      agents/shard=0/part-0.parquet ...
      ground_truth.parquet                keyed by case_id: written whole, beside the shards

The shard of a run is :func:`run_hash` of its ``run_id`` modulo the number of shards: FNV-1a
(64 bit) over the UTF-8 bytes of the id, then MurmurHash3's 64-bit finaliser ``fmix64``, whose
mixing makes the low bits (the remainder) depend on every byte. Both are fixed, published
functions of the bytes, so a run's shard is the same on every machine, in every process and
with every Polars version (Polars' own ``hash()`` promises none of this).

>>> import polars as pl
>>> shard_of(pl.Series(["r1", "r2", "r3"]), 4).to_list()
[0, 1, 0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from mas_eval.constraints import Interval, check_parameter
from mas_eval.data.schema import RUN_KEY, TABLES, Table
from mas_eval.errors import DataError, SchemaError
from mas_eval.storage.inputs import parquet_files, scan_parquet
from mas_eval.storage.manifests import Integer, ListOf, Obj

__all__ = [
    "HASH",
    "MAX_SHARDS",
    "SHARDS_ENTRY",
    "SHARD_COLUMN",
    "ShardLayout",
    "check_placement",
    "check_shard_runs",
    "check_shards",
    "run_hash",
    "shard_folder",
    "shard_of",
    "sharded",
    "write_sharded_table",
    "write_sorted_shards",
]

#: The name of the run hash, as ``_dataset.json`` records it.
HASH = "fnv1a64-fmix64"
#: The hive partition column of a sharded table's folders (``shard=3``); not a column of the table.
SHARD_COLUMN = "shard"
#: The most shards a Dataset may have: each is one file per table, and more only multiplies files.
MAX_SHARDS = 10_000
#: The file of a shard of a table, inside its ``shard=k`` folder.
PART = "part-0.parquet"

_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
_FMIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))
_SHIFT = np.uint64(33)


def sharded(name: str) -> bool:
    """Whether table ``name`` is split into shards: those keyed by ``run_id`` (all but ``ground_truth``).

    Examples
    --------
    >>> sharded("agents"), sharded("ground_truth")
    (True, False)
    """
    return RUN_KEY in TABLES[name].key


def check_shards(shards: Any, *, where: str = "write") -> int:
    """Return ``shards`` as a number of shards (``None`` is 1: one unsharded folder per table).

    Raises
    ------
    InvalidParameterError
        ``shards`` is not an integer from 1 to :data:`MAX_SHARDS`.

    Examples
    --------
    >>> check_shards(None), check_shards(8)
    (1, 8)
    """
    if shards is None:
        return 1
    check_parameter("shards", shards, [Interval(int, 1, MAX_SHARDS)], where=where)
    return int(shards)


def run_hash(run_ids: pl.Series) -> np.ndarray:
    """Hash each id to 64 bits: ``fmix64(fnv1a64(utf8(run_id)))``, vectorised (a null hashes as ``""``).

    Notes
    -----
    FNV-1a: ``h = 0xcbf29ce484222325``; for each byte ``b``: ``h = (h ^ b) * 0x100000001b3
    mod 2**64``. ``fmix64``: ``h ^= h >> 33; h *= 0xff51afd7ed558ccd; h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53; h ^= h >> 33``. The loop runs over byte positions (as many as the
    longest id), each step over every id that long, on the Arrow buffers (docs/performance.md).
    FNV-1a is Fowler, Noll and Vo's hash (IETF draft-eastlake-fnv); ``fmix64`` is the finaliser of
    Appleby's MurmurHash3.

    Examples
    --------
    The formula, written out in plain Python, gives the same hash:

    >>> def fnv1a64(data: bytes) -> int:
    ...     h = 0xCBF29CE484222325
    ...     for byte in data:
    ...         h = ((h ^ byte) * 0x100000001B3) % 2**64
    ...     return h
    >>> def fmix64(h: int) -> int:
    ...     for factor in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
    ...         h = ((h ^ (h >> 33)) * factor) % 2**64
    ...     return h ^ (h >> 33)
    >>> hashes = run_hash(pl.Series(["r1", "run-000042", ""]))
    >>> [int(h) for h in hashes] == [fmix64(fnv1a64(b"r1")), fmix64(fnv1a64(b"run-000042")), fmix64(fnv1a64(b""))]
    True
    """
    import pyarrow as pa

    arrow = run_ids.cast(pl.String).rechunk().to_arrow()
    if arrow.type != pa.large_string():
        arrow = arrow.cast(pa.large_string())
    count = len(arrow)
    _, offsets_buffer, data_buffer = arrow.buffers()
    if count == 0:
        return np.zeros(0, dtype=np.uint64)
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64, count=count + 1, offset=arrow.offset * 8)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    # Longest first, so that the ids still running at byte p are a prefix.
    order = np.argsort(-lengths, kind="stable")
    starts, lengths = offsets[:-1][order], lengths[order]
    hashed = np.full(count, _FNV_OFFSET, dtype=np.uint64)
    running = np.searchsorted(-lengths, -np.arange(int(lengths[0])), side="left")
    for position, active in enumerate(running.tolist()):
        head = hashed[:active]
        head ^= data[starts[:active] + position]
        head *= _FNV_PRIME
    for factor in _FMIX:
        hashed ^= hashed >> _SHIFT
        hashed *= factor
    hashed ^= hashed >> _SHIFT
    result = np.empty(count, dtype=np.uint64)
    result[order] = hashed
    return result


def shard_of(run_ids: pl.Series, shards: int) -> pl.Series:
    """Assign each run its shard: ``run_hash(run_id) % shards``, as ``UInt32``.

    A run's rows are usually consecutive, so each stretch of equal ids is hashed once.

    Examples
    --------
    >>> shard_of(pl.Series(["r1", "r1", "r2", "r3"]), 4).to_list()
    [0, 0, 1, 0]
    """
    stretch = run_ids.rle_id().to_numpy()
    first = np.ones(len(stretch), dtype=bool)
    first[1:] = stretch[1:] != stretch[:-1]
    home = (run_hash(run_ids.filter(pl.Series(first))) % np.uint64(shards)).astype(np.uint32)
    return pl.Series(SHARD_COLUMN, home[stretch], dtype=pl.UInt32)


def _shard_expr(shards: int) -> pl.Expr:
    return (
        pl.col(RUN_KEY)
        .map_batches(lambda ids: shard_of(ids, shards), return_dtype=pl.UInt32, is_elementwise=True)
        .alias(SHARD_COLUMN)
    )


def shard_folder(table_folder: Path, index: int) -> Path:
    """Return the folder of shard ``index`` of a table: ``<table>/shard=<index>``.

    Examples
    --------
    >>> shard_folder(Path("ds") / "agents", 3).as_posix()
    'ds/agents/shard=3'
    """
    return table_folder / f"{SHARD_COLUMN}={index}"


def write_sharded_table(frame: pl.LazyFrame, spec: Table, folder: Path, shards: int) -> None:
    """Write ``frame`` (table ``spec``) into ``folder`` in ``shards`` shards, one sorted file each.

    Two passes, so that memory is bounded by a shard rather than the table: the rows are first
    streamed into one scratch folder per shard (``<folder>/.unsorted``), then each shard is
    read back, sorted by the table's key and written to ``<folder>/<table>/shard=<k>/part-0.parquet``.
    Every shard gets its file, an empty one if no run of the table hashes to it.
    """
    schema = frame.collect_schema()
    scratch = folder / ".unsorted" / spec.name
    frame.with_columns(_shard_expr(shards)).sink_parquet(
        pl.PartitionBy(scratch, key=SHARD_COLUMN, include_key=False), mkdir=True
    )
    write_sorted_shards(scratch, spec, folder, shards, schema)
    _remove_tree(folder / ".unsorted")


def write_sorted_shards(scratch: Path, spec: Table, folder: Path, shards: int, schema: pl.Schema) -> None:
    """Sort each shard's unsorted part files by key: the second pass of :func:`write_sharded_table`.

    ``scratch`` holds the table's rows already split by shard, any number of Parquet files
    under ``<scratch>/shard=<k>`` (of columns ``schema``); each shard is read back on its own
    (memory is bounded by a shard), sorted by the table's key and written to
    ``<folder>/<table>/shard=<k>/part-0.parquet``, an empty file when no part holds it. Ingest
    stages its chunks' rows in this form directly.
    """
    key = list(spec.key)
    for index in range(shards):
        target = shard_folder(folder / spec.name, index)
        target.mkdir(parents=True)
        parts = shard_folder(scratch, index)
        if parts.is_dir():
            rows = scan_parquet(parquet_files(parts)).collect()
            # Rows often come in key order already (a Dataset written before, records exported by
            # run): a check of the order is far cheaper than a sort, and gives the same file. One
            # chunk, so that the file's row groups depend on its rows alone, not on how many
            # scratch files they were staged in.
            (rows.rechunk() if _in_order(rows, key) else rows.sort(key)).write_parquet(target / PART)
        else:
            pl.DataFrame(schema=schema).write_parquet(target / PART)


def _in_order(rows: pl.DataFrame, key: list[str]) -> bool:
    """Whether ``rows`` are sorted by ``key`` (ascending, no nulls), so that sorting them would change nothing.

    Each row is compared with the one before on the key's columns in turn (a loop over the
    key's few columns): greater on a column with the columns before it equal. Rows with equal
    keys (only in a Dataset written without validation) keep their order, one of those an
    unstable sort may give. A null in the key sends the rows to the sort (which puts it first).
    """
    later = pl.lit(False)
    same = pl.lit(True)
    for column in key:
        before = pl.col(column).shift(1)
        later = later | (same & (pl.col(column) > before))
        same = same & (pl.col(column) == before)
    ordered = (later | same).slice(1).all() & pl.all_horizontal(pl.col(key).is_not_null()).all()
    return bool(rows.select(ordered).item())


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


#: The ``"shards"`` entry of ``_dataset.json``, as :meth:`ShardLayout.manifest` writes it.
SHARDS_ENTRY = Obj(
    {
        "count": Integer(2, MAX_SHARDS),
        "hash": str,
        "column": str,
        "partition": str,
        "tables_whole": ListOf(str),
    },
    required=("count", "hash"),
)


@dataclass(frozen=True)
class ShardLayout:
    """How a Dataset folder is sharded, as its ``_dataset.json`` records it."""

    count: int
    hash: str = HASH

    def manifest(self) -> dict[str, Any]:
        """Return the ``"shards"`` entry of ``_dataset.json``."""
        return {
            "count": self.count,
            "hash": self.hash,
            "column": RUN_KEY,
            "partition": SHARD_COLUMN,
            "tables_whole": [name for name in TABLES if not sharded(name)],
        }

    @classmethod
    def read(cls, manifest: Mapping[str, Any], where: Path) -> ShardLayout | None:
        """Read the layout a manifest records (None: not sharded); a SchemaError if its hash is unknown.

        The manifest's ``"shards"`` entry is already of the shape :data:`SHARDS_ENTRY`
        (:func:`~mas_eval.storage.manifests.read_manifest`); the hash must be one this version knows.
        """
        entry = manifest.get("shards")
        if entry is None:
            return None
        if entry["hash"] != HASH:
            msg = (
                f"{where}: shards hashed by {entry['hash']!r}, which this version does not know ({HASH!r}); "
                "write the Dataset again (`mas-eval reshard`) with the version of mas-eval that wrote it"
            )
            raise SchemaError(msg)
        return cls(entry["count"])

    def files(self, entry: Path) -> list[list[Path]]:
        """List the Parquet files of a sharded table's folder by shard; a SchemaError names a missing or stray shard."""
        if not entry.is_dir():
            msg = (
                f"{entry}: table {entry.name.removesuffix('.parquet')!r} is one file, but the Dataset is sharded "
                f"({self.count} shards in _dataset.json); reshard the Dataset (`mas-eval reshard`) to add it"
            )
            raise SchemaError(msg)
        expected = {f"{SHARD_COLUMN}={index}" for index in range(self.count)}
        stray = sorted(p.name for p in entry.iterdir() if not p.name.startswith(".") and p.name not in expected)
        if stray:
            msg = (
                f"{entry}: {stray[0]!r} is not one of the {self.count} shards (shard=0 ... shard={self.count - 1}) "
                "that _dataset.json records; remove it, or reshard the Dataset"
            )
            raise SchemaError(msg)
        by_shard = []
        for index in range(self.count):
            folder = shard_folder(entry, index)
            files = parquet_files(folder) if folder.is_dir() else []
            if not files:
                msg = (
                    f"{folder}: missing; table {entry.name!r} should have {self.count} shards "
                    "(_dataset.json), so the Dataset is incomplete: restore it or write it again"
                )
                raise SchemaError(msg)
            by_shard.append(files)
        return by_shard


def _misplaced(ids: pl.Series, index: int, shards: int) -> list[tuple[int, str, int]]:
    """Those of ``ids`` (read from shard ``index``) whose home is another shard: ``(index, run_id, home)``, first 5."""
    # Sorted by run (as every shard's files are), shard_of hashes each run once.
    wrong = pl.DataFrame([ids, shard_of(ids, shards)]).filter(pl.col(SHARD_COLUMN) != index).unique(maintain_order=True)
    return [(index, run_id, int(home)) for run_id, home in wrong.head(5).iter_rows()]


def _misplaced_error(name: str, misplaced: list[tuple[int, str, int]]) -> DataError:
    shown = "; ".join(f"run {run!r} in shard {at}, not {home}" for at, run, home in misplaced)
    msg = (
        f"table {name!r}: rows lie in the wrong shard ({shown}), so per-shard results would split runs, or "
        "score a run twice if it is in its own shard too; the folder was changed after it was written: "
        "reshard it (`mas-eval reshard`)"
    )
    return DataError(msg)


def check_placement(name: str, files: list[list[Path]], shards: int) -> None:
    """Every run of table ``name`` (its ``files``, by shard) lies in the shard its id hashes to.

    Raises
    ------
    DataError
        Naming the first few runs in another shard than their own.
    """
    found: list[tuple[int, str, int]] = []
    for index, paths in enumerate(files):
        found += _misplaced(scan_parquet(paths).select(RUN_KEY).collect()[RUN_KEY], index, shards)
        if len(found) >= 5:
            break
    if found:
        raise _misplaced_error(name, found[:5])


def check_shard_runs(run_ids: pl.Series, index: int, shards: int) -> None:
    """Check that the ``runs`` of shard ``index`` (their ids, sorted) all hash to it, as scoring does of each shard.

    A run id in two shards is in the wrong one in at least one of them, so this is what stops a
    shard-by-shard scoring from scoring it twice when nothing validated the Dataset; it costs
    little beside scoring them (docs/performance.md).

    Raises
    ------
    DataError
        Naming the first few runs in another shard than their own, and the fix.
    """
    found = _misplaced(run_ids, index, shards)
    if found:
        raise _misplaced_error(name="runs", misplaced=found)
