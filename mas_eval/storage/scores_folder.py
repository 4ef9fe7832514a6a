"""The Scores folder: where each output table is put, and how it is read back.

:meth:`mas_eval.Scores.write` and :func:`mas_eval.scoring.shards.score_shards` write it;
:meth:`mas_eval.Scores.open` and :meth:`~mas_eval.Scores.scan` read it.

Unsharded, one ``<name>.parquet`` per table beside the manifest ``_scores.json``. Sharded, one file per
table and shard, laid out like a sharded Dataset::

    SCORES/
      _scores.json              {"preset": ..., "params": ..., "families": ..., "tables": [...], "shards": N}
      runs/shard=0/part-0.parquet ... runs/shard=<N-1>/part-0.parquet
      agents/shard=0/part-0.parquet ...

In a sharded folder the run's identifying columns (``system, case_id, task, variant``) are written
once, in ``runs``; the other tables lead with ``run_id`` alone (and any identifying column they carry
themselves, such as an item's ``task``), and the readers here put the others back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from mas_eval.data.schema import RUN_ID_COLUMNS, RUN_KEY
from mas_eval.errors import SchemaError
from mas_eval.storage.inputs import (
    SCORES_MANIFEST,
    describe_path,
    is_scores_folder,
    read_tables,
    scan_parquet,
    table_entries,
    table_schema,
)
from mas_eval.storage.manifests import JSON, Integer, ListOf, Manifest, MapOf, Obj, read_manifest
from mas_eval.storage.sharding import MAX_SHARDS, PART, SHARD_COLUMN

__all__ = [
    "COMPRESSION",
    "MANIFEST",
    "check_rows",
    "in_run_order",
    "missing_run_columns",
    "read_folder",
    "read_layout",
    "scan_table",
    "score_order",
    "scores_folder",
    "shard_file",
    "stored_rows",
    "table_files",
    "with_run_columns",
]

#: ``_scores.json``, as :meth:`mas_eval.Scores.write` and :func:`mas_eval.scoring.shards.score_shards`
#: write it: the preset, the parameters, the families that ran and were skipped (with why), the
#: tables, the run columns each family named from the data (``named``: the outcomes family's score
#: names; absent when none), and for a sharded folder the number of shards and the rows of each table.
MANIFEST = Manifest(
    SCORES_MANIFEST,
    Obj(
        {
            "preset": str,
            "params": MapOf(JSON),
            "families": Obj({"ran": ListOf(str), "skipped": MapOf(str)}, required=("ran", "skipped")),
            "tables": ListOf(str),
            "shards": Integer(1, MAX_SHARDS),
            "rows": MapOf(Integer(0)),
            "named": MapOf(ListOf(str)),
        },
        required=("preset", "params", "families", "tables"),
    ),
    fix="restore it from a copy, or score the Dataset again",
)

#: The compression of a sharded Scores folder's files: none, since the tables' floats barely
#: compress and writing is a third of the time of scoring a shard (docs/performance.md).
COMPRESSION = "uncompressed"


def _tables_in(root: Path, shards: int | None) -> list[str]:
    """List the tables a Scores folder holds in its layout.

    They are ``<name>.parquet`` files, or (sharded) folders of ``shard=<k>`` folders. Other files
    and folders the user keeps there are not tables.
    """
    if shards is None:
        return sorted(p.stem for p in root.glob("*.parquet") if not p.name.startswith(("_", ".")))
    return sorted(
        p.name
        for p in root.iterdir()
        if not p.name.startswith(("_", ".")) and p.is_dir() and any(p.glob(f"{SHARD_COLUMN}=*"))
    )


def read_layout(root: Path) -> tuple[dict, list[str], int | None]:
    """Read a Scores folder's manifest, tables (``runs`` first) and shards (None: one file per table).

    They are checked against the folder.

    Without a manifest, the tables are its ``*.parquet`` files. With one, every table it lists
    must be in the folder and every table in the folder listed, each as one file or, sharded, as
    a folder holding exactly the shards ``shard=0 ... shard=<N-1>`` it records: a shard or
    table the manifest left out would otherwise be left out of every result without a word.

    Raises
    ------
    SchemaError
        The manifest is unreadable or not of :data:`MANIFEST`'s shape, or disagrees with the folder.
    """
    manifest = read_manifest(root, MANIFEST)
    if not manifest:
        names = sorted(p.stem for p in root.glob("*.parquet"))
        return manifest, ["runs", *(n for n in names if n != "runs")], None
    names, shards = manifest["tables"], manifest.get("shards")
    where = MANIFEST.path(root)
    fix = "the folder was changed after scoring: restore it from a copy, or score the Dataset again"
    absent = [name for name in names if not (root / name).exists() and not (root / f"{name}.parquet").exists()]
    unlisted = [name for name in _tables_in(root, shards) if name not in names]
    if "runs" not in names or absent or unlisted:
        problem = (
            "lists no 'runs' table"
            if "runs" not in names
            else f"lists table {absent[0]!r}, which the folder does not hold"
            if absent
            else f"does not list the folder's table {unlisted[0]!r}"
        )
        msg = f"{where}: {problem}; {fix}"
        raise SchemaError(msg)
    expected = {f"{SHARD_COLUMN}={index}" for index in range(shards or 0)}
    for name in names:
        table = root / name if shards is not None else root / f"{name}.parquet"
        if shards is None and not table.is_file():
            msg = f"{table}: not a file, but {where} records no shards; {fix}"
            raise SchemaError(msg)
        if shards is None:
            continue
        held = {p.name for p in table.iterdir() if not p.name.startswith(".")} if table.is_dir() else set()
        if held != expected:
            odd = sorted(held - expected) or sorted(expected - held, key=lambda n: int(n.partition("=")[2]))
            how = "is not one of" if odd[0] in held else "is missing from"
            msg = f"{table}: {odd[0]!r} {how} the {shards} shards that {where} records; {fix}"
            raise SchemaError(msg)
    return manifest, ["runs", *(n for n in names if n != "runs")], shards


def check_rows(root: Path, manifest: dict, heights: dict[str, int]) -> None:
    """Check that the tables counted (name → rows) hold the rows a sharded folder's manifest records.

    The manifest records them as ``"rows"``; a table that holds others is a SchemaError.
    """
    for name, rows in manifest.get("rows", {}).items():
        if name in heights and heights[name] != rows:
            msg = (
                f"{root / name}: {heights[name]:,} rows, where {MANIFEST.path(root)} records {rows:,}; the "
                "folder was changed after scoring: restore it from a copy, or score the Dataset again"
            )
            raise SchemaError(msg)


def stored_rows(root: Path, names: list[str], shards: int | None) -> dict[str, int]:
    """Count the rows of tables ``names`` of a Scores folder from their files' footers (no value is read)."""
    return {name: scan_parquet(table_files(root, [name], shards)).select(pl.len()).collect().item() for name in names}


def shard_file(root: Path, table: str, index: int) -> Path:
    """Where shard ``index`` of output ``table`` lives in a sharded Scores folder."""
    return root / table / f"{SHARD_COLUMN}={index}" / PART


def table_files(root: Path, names: list[str], shards: int | None) -> list[Path]:
    """List the files of tables ``names`` of a Scores folder: one each, or one per shard (``scoring/shards.py``)."""
    if shards is None:
        return [root / f"{name}.parquet" for name in names]
    return [shard_file(root, name, index) for name in names for index in range(shards)]


def read_folder(path: str | Path, tables: Sequence[str] | None = None) -> tuple[Path, dict, dict[str, pl.DataFrame]]:
    """Read a Scores folder whole: its path, its manifest and its tables (``runs`` first), checked against it.

    ``tables``: read only these (by default all); the others are still counted from their files'
    footers, so that a folder changed after scoring is refused whichever tables are asked for. A
    sharded table's shards are put in run order, as :func:`score` sorts it, and the run's
    identifying columns it does not hold are taken from ``runs`` (:func:`scan_table`).

    Raises
    ------
    SchemaError
        ``path`` is not a Scores folder, or the folder disagrees with its manifest.
    UnreadableFileError
        A table's file is truncated or corrupt (it is named).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import mas_eval
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = mas_eval.score(mas_eval.simulate(20, seed=1)).write(Path(tmp) / "scores")
    ...     root, manifest, read = read_folder(folder, ["runs"])
    >>> root.name, manifest["tables"], {name: frame.height for name, frame in read.items()}
    ('scores', ['runs', 'agents', 'alternatives', 'conflicts'], {'runs': 20})
    """
    root = scores_folder(path)
    manifest, every, shards = read_layout(root)
    names = every if tables is None else [name for name in every if name in tables]
    unread = [name for name in every if name not in names] if manifest.get("rows") else []
    # A sharded table is led by the run's columns from runs: read it too, if not asked for.
    leads = shards is not None and any(name != "runs" for name in names) and "runs" not in names
    files = {name: table_files(root, [name], shards) for name in (["runs", *names] if leads else names)}
    read, counts = read_tables(files, counted={name: table_files(root, [name], shards) for name in unread})
    if shards is not None:
        read = _in_score_order(root, read)
    got = {name: read[name] for name in names}
    check_rows(root, manifest, {name: frame.height for name, frame in got.items()} | counts)
    return root, manifest, got


def _in_score_order(root: Path, read: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """Put the tables read from a sharded Scores folder in run order, each led by the run's identifying columns."""
    ordered = {name: in_run_order(frame) for name, frame in read.items()}
    for name, table in ordered.items():
        missing = missing_run_columns(table.columns)
        if name == "runs" or not missing:
            continue
        with_columns = with_run_columns(table, ordered["runs"], missing)
        if with_columns is None:
            msg = (
                f"{root}: table {name!r} holds runs that its 'runs' table does not, so the folder was changed "
                "after scoring; score the Dataset again"
            )
            raise SchemaError(msg)
        ordered[name] = with_columns
    return ordered


def with_run_columns(table: pl.DataFrame, runs: pl.DataFrame, missing: list[str]) -> pl.DataFrame | None:
    """Lead ``table`` (sorted by ``run_id``) by every run-identifying column again; None if a run is not in ``runs``.

    The ``missing`` columns are taken from ``runs`` (sorted by ``run_id``, one row per run).

    Each stretch of a run's rows is looked up once, by a binary search of the sorted ids, faster
    than a join (docs/performance.md).
    """
    stretches = table[RUN_KEY].rle()
    ids, lengths = stretches.struct.field("value"), stretches.struct.field("len").to_numpy()
    if ids.equals(runs[RUN_KEY], check_names=False):
        # Every run has rows here (agents, alternatives): no search needed (docs/performance.md).
        at = np.arange(runs.height)
    else:
        found = runs[RUN_KEY].search_sorted(ids).clip(0, max(runs.height - 1, 0))
        if len(ids) and (runs.height == 0 or not runs[RUN_KEY].gather(found).equals(ids, check_names=False)):
            return None
        at = found.to_numpy()
    lead = runs.select(missing)[np.repeat(at, lengths)]
    return pl.concat([table, lead], how="horizontal").select(score_order(table.columns))


def scan_table(root: Path, name: str, shards: int | None) -> pl.LazyFrame:
    """Table ``name`` of a Scores folder, lazily, with every column :func:`score` gives it.

    In a sharded folder (:mod:`mas_eval.scoring.shards`) a table other than ``runs`` holds only
    those of the run's identifying columns that it carries itself: the others are joined from
    ``runs``, one row per run, and the columns put back in :func:`score`'s order.
    """
    files = table_files(root, [name], shards)
    frame = scan_parquet(files, schema=table_schema(name, files))
    names = frame.collect_schema().names()
    missing = missing_run_columns(names)
    if shards is None or name == "runs" or not missing:
        return frame
    run_files = table_files(root, ["runs"], shards)
    runs = scan_parquet(run_files, schema=table_schema("runs", run_files)).select(RUN_KEY, *missing)
    joined = frame.join(runs, on=RUN_KEY, how="left", maintain_order="left")
    return joined.select(score_order(names))


def missing_run_columns(columns: list[str]) -> list[str]:
    """Return the run's identifying columns a table of a sharded Scores folder does not hold itself.

    Examples
    --------
    >>> missing_run_columns(["run_id", "dqs"])
    ['system', 'case_id', 'task', 'variant']
    """
    return [column for column in RUN_ID_COLUMNS if column not in columns]


def score_order(columns: list[str]) -> list[str]:
    """Order a table's ``columns`` as :func:`score` does once the run's identifying columns are back: those first.

    Examples
    --------
    >>> score_order(["dqs", "run_id"])
    ['run_id', 'system', 'case_id', 'task', 'variant', 'dqs']
    """
    return [*RUN_ID_COLUMNS, *(column for column in columns if column not in RUN_ID_COLUMNS)]


def in_run_order(shards: pl.DataFrame) -> pl.DataFrame:
    """Put a table's shards, one after another, in :func:`score`'s order.

    Each shard's rows are sorted by the table's key and hold every row of their runs, so a
    stable sort by ``run_id`` alone orders the whole by key.
    """
    return shards.sort(RUN_KEY, maintain_order=True)


def scores_folder(path: str | Path) -> Path:
    """``path`` if it is a Scores folder; else a :class:`SchemaError` saying what it is and what to pass."""
    root = Path(path)
    if is_scores_folder(root):
        table_entries(root)  # a table there both as a file and as a folder is refused
        return root
    what = describe_path(root)
    if what == "is a Dataset folder":
        fix = f"score it first (`mas-eval score {root} --out SCORES`, or mas_eval.score) and pass the Scores folder"
    elif root.is_file() and root.name.endswith(".parquet"):
        fix = f"pass the Scores folder that holds it ({root.parent})"
    else:
        fix = "create one with `mas-eval score DATASET --out SCORES` (or Scores.write)"
    msg = f"{root} {what}, not a Scores folder; {fix}"
    raise SchemaError(msg)
