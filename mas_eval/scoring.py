"""``score``: run every metric family whose tables are present, and the ``Scores`` it returns.

Orchestration only (the formulas live in :mod:`mas_eval.metrics`): encode the keys of every
table the families read once, run each family whose required tables are present, decode the
outputs, and record which families ran and which were skipped, and why.

>>> import mas_eval
>>> scores = mas_eval.score(mas_eval.simulate(200, seed=1))
>>> scores.names, scores.ran, scores.runs.height
(['runs', 'agents', 'alternatives'], ['decision'], 200)
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np
import polars as pl

from mas_eval.dataset import Dataset
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.files import SCORES_MANIFEST, describe_path, is_scores_folder, reading
from mas_eval.metrics import registry
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.family import Family, families, resolve_params
from mas_eval.output import atomic_directory, check_compression, check_target, read_manifest, write_manifest
from mas_eval.schema import RUN_ID_COLUMNS, RUN_KEY, TABLES
from mas_eval.sharding import sharded
from mas_eval.stored_codes import ShardCodes
from mas_eval.validation import check_run_keys, check_unique_keys

__all__ = ["MANIFEST", "RUN_ID_COLUMNS", "Scores", "score"]

MANIFEST = SCORES_MANIFEST


@dataclass
class Scores(Mapping[str, pl.DataFrame]):
    """The named output tables of :func:`score`: ``scores["runs"]`` and ``scores.runs`` alike.

    Attributes
    ----------
    tables
        Output table name → frame: ``runs`` (one row per run, every family's run columns) and
        each family's own tables (``agents``, ``alternatives``, ``pairwise``, ``items``, ...). Every row
        is led by the run's identifying columns (``run_id, system, case_id, task, variant``),
        then its key, and the rows are sorted by that key.
    preset
        The preset the parameters started from.
    params
        The resolved parameters of every family, by name.
    ran
        The families that ran.
    skipped
        The families that did not, each with the reason (the tables it lacked).
    source
        The folder :meth:`open` read them from (``None`` for scores computed in memory): a
        report hashes its files into its provenance.
    """

    tables: dict[str, pl.DataFrame]
    preset: str = "spec"
    params: dict[str, Any] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    source: Path | None = field(default=None, compare=False)

    def __getitem__(self, name: str) -> pl.DataFrame:
        try:
            return self.tables[name]
        except KeyError:
            msg = f"these Scores have no table {name!r}; they have: {', '.join(self.tables)}"
            raise KeyError(msg) from None

    def __getattr__(self, name: str) -> pl.DataFrame:
        # Only reached when normal lookup fails: table names read as attributes.
        tables = self.__dict__.get("tables")
        if tables is not None and name in tables:
            return tables[name]
        msg = f"{type(self).__name__!r} object has no attribute or table {name!r}"
        raise AttributeError(msg)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    @property
    def items(self) -> Any:  # type: ignore[override]
        """The ``items`` table (answers family: one row per answer) when there is one; callable either way.

        ``scores.items`` is a table name and, as for every :class:`~collections.abc.Mapping`, a
        method: with an ``items`` table it is that table (so ``compare(scores.items, ...)``
        works), and calling it, ``scores.items()``, still gives the (name, table) pairs.
        """
        frame = self.__dict__.get("tables", {}).get("items")
        if frame is None:
            return Mapping.items.__get__(self, type(self))
        table = _ItemsTable._from_pydf(frame._df)
        table._scores = self
        return table

    @property
    def names(self) -> list[str]:
        """The table names, ``runs`` first."""
        return list(self.tables)

    def write(self, path: str | Path, *, overwrite: bool = False, compression: str = "zstd") -> Path:
        """Write each table to ``<path>/<name>.parquet`` atomically, with a manifest: version, preset,
        parameters, the families that ran and were skipped, and the tables. ``compression`` is
        the files' Parquet compression (:data:`~mas_eval.output.COMPRESSIONS`)."""
        compression = check_compression(compression)
        target = Path(path)
        with atomic_directory(target, overwrite=overwrite) as staging:
            for name, frame in self.tables.items():
                frame.write_parquet(staging / f"{name}.parquet", compression=compression)  # type: ignore[arg-type]
            manifest = {
                "preset": self.preset,
                "params": self.params,
                "families": {"ran": self.ran, "skipped": self.skipped},
                "tables": self.names,
            }
            write_manifest(staging, MANIFEST, manifest)
        return target

    @classmethod
    def open(cls, path: str | Path) -> Scores:
        """Read what :meth:`write` wrote: the tables its manifest lists (every ``*.parquet`` without one)."""
        root = _scores_folder(path)
        manifest = read_manifest(root, MANIFEST)
        names = manifest.get("tables") or ["runs", *sorted(p.stem for p in root.glob("*.parquet") if p.stem != "runs")]
        families = manifest.get("families", {})
        shards = manifest.get("shards")
        with reading(_table_files(root, names, shards)):
            tables: dict[str, pl.DataFrame] = {}
            for name in names:
                tables[name] = _read_table(root, name, shards, tables.get("runs"))
        return cls(
            tables=tables,
            preset=manifest.get("preset", "spec"),
            params=manifest.get("params") or {},
            ran=families.get("ran", []),
            skipped=families.get("skipped", {}),
            source=root,
        )

    @staticmethod
    def manifest(path: str | Path) -> dict[str, Any]:
        """The manifest of a Scores folder (``_scores.json``): preset, parameters, families, tables, and
        for a sharded folder (:mod:`mas_eval.shard_scoring`) ``shards`` and ``rows`` per table."""
        return read_manifest(_scores_folder(path), MANIFEST)

    @staticmethod
    def table_files(path: str | Path, name: str = "runs") -> list[Path]:
        """The Parquet files of table ``name`` of a Scores folder: one, or one per shard."""
        root = _scores_folder(path)
        return _table_files(root, [name], read_manifest(root, MANIFEST).get("shards"))

    @staticmethod
    def scan(path: str | Path, name: str = "runs") -> pl.LazyFrame:
        """One table of a Scores folder, lazily: a query reads only the columns it uses.

        What ``mas-eval compare`` reads, so that comparing two metrics of a million runs does
        not load every table and column. The schema is read here (a truncated file is named at
        once); a corrupt page surfaces when the query runs, named if it runs inside
        :func:`mas_eval.files.reading` (:class:`~mas_eval.errors.UnreadableFileError`).
        """
        root = _scores_folder(path)
        manifest = read_manifest(root, MANIFEST)
        shards = manifest.get("shards")
        have = manifest.get("tables") or sorted(p.stem for p in root.glob("*.parquet"))
        if name not in have or (shards is None and not (root / f"{name}.parquet").is_file()):
            msg = f"{root}: these Scores have no {name!r} table; they have: {', '.join(have)}"
            raise SchemaError(msg)
        files = _table_files(root, [name], shards)
        with reading(files):
            frame = _scan_table(root, name, shards)
            frame.collect_schema()
        return frame


def _table_files(root: Path, names: list[str], shards: int | None) -> list[Path]:
    """The files of tables ``names`` of a Scores folder: one each, or one per shard (:mod:`mas_eval.shard_scoring`)."""
    if shards is None:
        return [root / f"{name}.parquet" for name in names]
    from mas_eval.shard_scoring import shard_file

    return [shard_file(root, name, index) for name in names for index in range(shards)]


def _read_table(root: Path, name: str, shards: int | None, runs: pl.DataFrame | None = None) -> pl.DataFrame:
    """Table ``name`` of a Scores folder; a sharded one's shards in run order, as :func:`score` sorts it,
    with the run's identifying columns it does not hold taken from ``runs`` (:func:`_scan_table`)."""
    if shards is None:
        return pl.read_parquet(root / f"{name}.parquet")
    table = _in_run_order(pl.read_parquet(_table_files(root, [name], shards), hive_partitioning=False))
    missing = _missing_run_columns(table.columns)
    if name == "runs" or not missing:
        return table
    if runs is None:
        runs = _read_table(root, "runs", shards)
    with_columns = _with_run_columns(table, runs, missing)
    if with_columns is None:
        msg = (
            f"{root}: table {name!r} holds runs that its 'runs' table does not, so the folder was changed "
            "after scoring; score the Dataset again"
        )
        raise SchemaError(msg)
    return with_columns


def _with_run_columns(table: pl.DataFrame, runs: pl.DataFrame, missing: list[str]) -> pl.DataFrame | None:
    """``table`` (sorted by ``run_id``) led by every run-identifying column again, the ``missing``
    ones taken from ``runs`` (sorted by ``run_id``, one row per run); None if a run is not in ``runs``.

    Each stretch of a run's rows is looked up once, by a binary search of the sorted ids: at 1M
    runs, 0.2 s for the 4M rows of ``alternatives``, where a join took 0.6-2.7 s.
    """
    stretches = table[RUN_KEY].rle()
    ids, lengths = stretches.struct.field("value"), stretches.struct.field("len").to_numpy()
    at = runs[RUN_KEY].search_sorted(ids).clip(0, max(runs.height - 1, 0))
    if len(ids) and (runs.height == 0 or not runs[RUN_KEY].gather(at).equals(ids, check_names=False)):
        return None
    lead = runs.select(missing)[np.repeat(at.to_numpy(), lengths)]
    return pl.concat([table, lead], how="horizontal").select(_score_order(table.columns))


def _scan_table(root: Path, name: str, shards: int | None) -> pl.LazyFrame:
    """Table ``name`` of a Scores folder, lazily, with every column :func:`score` gives it.

    In a sharded folder (:mod:`mas_eval.shard_scoring`) a table other than ``runs`` holds only
    those of the run's identifying columns that it carries itself: the others are joined from
    ``runs``, one row per run, and the columns put back in :func:`score`'s order.
    """
    frame = pl.scan_parquet(_table_files(root, [name], shards), hive_partitioning=False)
    names = frame.collect_schema().names()
    missing = _missing_run_columns(names)
    if shards is None or name == "runs" or not missing:
        return frame
    runs = pl.scan_parquet(_table_files(root, ["runs"], shards), hive_partitioning=False).select(RUN_KEY, *missing)
    joined = frame.join(runs, on=RUN_KEY, how="left", maintain_order="left")
    return joined.select(_score_order(names))


def _missing_run_columns(columns: list[str]) -> list[str]:
    """The run's identifying columns a table of a sharded Scores folder does not hold itself."""
    return [column for column in RUN_ID_COLUMNS if column not in columns]


def _score_order(columns: list[str]) -> list[str]:
    """A table's ``columns`` in :func:`score`'s order once the run's identifying columns are back: those first."""
    return [*RUN_ID_COLUMNS, *(column for column in columns if column not in RUN_ID_COLUMNS)]


def _in_run_order(shards: pl.DataFrame) -> pl.DataFrame:
    """A table's shards, one after another, in :func:`score`'s order.

    Each shard's rows are sorted by the table's key and hold every row of their runs, so a
    stable sort by ``run_id`` alone orders the whole by key.
    """
    return shards.sort(RUN_KEY, maintain_order=True)


class _ItemsTable(pl.DataFrame):
    """The ``items`` table as ``Scores.items`` gives it: a DataFrame that, called, is ``Mapping.items``."""

    _scores: Scores | None = None

    def __call__(self) -> ItemsView[str, pl.DataFrame]:
        if self._scores is None:  # a frame derived from it (``scores.items.head()``) is a plain table
            msg = "this is a frame of the items table, not Scores.items; call .items() on the Scores"
            raise TypeError(msg)
        return ItemsView(self._scores)


def _scores_folder(path: str | Path) -> Path:
    """``path`` if it is a Scores folder; else a :class:`SchemaError` saying what it is and what to pass."""
    root = Path(path)
    if is_scores_folder(root):
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


def _encoded_tables(ds: Dataset, names: list[str]) -> tuple[KeyCodes, dict[str, pl.LazyFrame]]:
    """Tables ``names`` keyed by integer codes (:mod:`mas_eval.metrics.codes`), encoded once.

    A shard of a Dataset written with stored codes (:mod:`mas_eval.stored_codes`) reads them, when
    they still describe its files; other tables are encoded from their strings. An absent table is
    an empty one of the schema's columns: it flows through the families' transforms and leaves
    their metrics null, with no special case.
    """
    stored = ds.stored_codes
    coded = None if stored is None else stored.read([name for name in names if name in ds and sharded(name)])
    if stored is not None and coded is not None:
        return _from_stored_codes(ds, names, stored, coded)
    tables = {name: ds[name] if name in ds else pl.LazyFrame(schema=TABLES[name].polars_schema) for name in names}
    codes = KeyCodes.of(tables, RUN_ID_COLUMNS)
    # Before encoding: the run code book must hold each run id once.
    check_run_keys(codes.runs[RUN_KEY])
    return codes, {name: codes.encode(name, frame) for name, frame in tables.items()}


def _from_stored_codes(
    ds: Dataset, names: list[str], stored: ShardCodes, coded: dict[str, pl.DataFrame]
) -> tuple[KeyCodes, dict[str, pl.LazyFrame]]:
    """:func:`_encoded_tables` from a shard's stored codes (``coded``, read by :meth:`ShardCodes.read`):
    the same codes, without reading a key string.

    The shard's ``runs`` file is sorted by ``run_id`` and its ids are distinct (codes are stored
    only then), so its rows in file order are the run code book.
    """
    codes = KeyCodes(runs=ds["runs"].select(RUN_ID_COLUMNS).collect(), labels=stored.books())
    tables = {}
    for name in names:
        if name in coded:
            tables[name] = stored.coded(name, ds[name], coded[name])
        else:  # absent (empty), or keyed by case (ground truth): only its labels, if any, are coded
            frame = ds[name] if name in ds else pl.LazyFrame(schema=TABLES[name].polars_schema)
            tables[name] = codes.encode(name, frame)
    return codes, tables


def _run_table(codes: KeyCodes, frames: dict[str, pl.LazyFrame | pl.DataFrame]) -> pl.DataFrame:
    """Every family's run columns side by side on one row per run, decoded and led by the run's ids.

    Each family's ``runs`` frame has one row per run, in run order (:class:`~mas_eval.metrics.family.Family`):
    the frames are placed side by side in one query (a join on the run key instead cost 0.41 s at
    1M runs), and the run codes each one carried are checked afterwards, so that a frame breaking
    the contract is an error naming its family, never a silent misalignment.
    """
    expected = pl.int_range(codes.runs.height, dtype=pl.UInt32, eager=True).alias(RUN_KEY)
    carried = {name: f"_{RUN_KEY}_{name}" for name in frames}
    parts = [frame.lazy().rename({RUN_KEY: carried[name]}) for name, frame in frames.items()]
    side_by_side = pl.concat([expected.to_frame().lazy(), *parts], how="horizontal").with_columns(
        pl.col(RUN_KEY).set_sorted()
    )
    try:
        table = _decoded(codes, "runs", side_by_side, extra=[*carried.values()])
    except pl.exceptions.ShapeError:
        # Some frame has another height than runs. Error path only: count each one's rows to say which.
        broken = [
            name for name, frame in frames.items() if frame.lazy().select(pl.len()).collect().item() != len(expected)
        ]
    else:
        broken = [name for name, column in carried.items() if not table[column].equals(expected, check_names=False)]
    if broken:
        raise _NotOneRowPerRunError(broken)
    return table.drop(carried.values())


class _NotOneRowPerRunError(Exception):
    """A family's runs frame is not one row per run: repeated keys in the data, or a bug in the family."""

    def __init__(self, families: list[str]) -> None:
        super().__init__(families)
        self.families = families


def _decoded(
    codes: KeyCodes, table: str, frame: pl.LazyFrame, *, extra: list[str] | None = None, run_columns: bool = True
) -> pl.DataFrame:
    """Output table ``table`` with labels for codes, led by the run's identifying columns (and ``extra``).

    A family's frame may carry a run-identifying column of its own (the ``items`` of the answers
    family carry each answer's ``task``): where it is not null it takes precedence over the run's value.
    With ``run_columns=False`` a table is led by ``run_id`` and only those identifying columns it
    carries itself: a sharded Scores folder keeps the others once, in ``runs`` (:func:`_scan_table`).
    """
    spec = registry.OUTPUT_TABLES[table]
    kinds = {column: kind for column, kind in spec.key if kind} | {
        m.name: m.codes for m in registry.METRICS if m.table == table and m.codes
    }
    schema = frame.collect_schema()
    columns = [name for name in registry.columns(table) if name in schema]
    lead = [
        pl.coalesce(pl.col(name).cast(pl.String), run_value).alias(name)
        if name != RUN_KEY and name in schema
        else run_value
        for name, run_value in zip(RUN_ID_COLUMNS, codes.run_columns(RUN_ID_COLUMNS), strict=True)
        if run_columns or name == RUN_KEY or name in schema
    ]
    return codes.decode(frame, kinds).select(*lead, *spec.key_columns, *columns, *(extra or [])).collect()


def _merged(table: str, frames: list[pl.LazyFrame | pl.DataFrame]) -> pl.LazyFrame:
    """One output table from the frames several families gave it (``agents``: decision and
    diagnosis columns of the same agents), side by side on its key; a key only one family
    has leaves the others' columns null."""
    key = [RUN_KEY, *registry.OUTPUT_TABLES[table].key_columns]
    merged = frames[0].lazy()
    for frame in frames[1:]:
        merged = merged.join(frame.lazy(), on=key, how="full", coalesce=True)
    return merged.sort(key) if len(frames) > 1 else merged


def _by_shard(ds: Dataset, preset: str, progress: Callable[[str], object] | None, overrides: dict[str, Any]) -> Scores:
    """A sharded Dataset scored in memory one shard at a time, its tables concatenated in run order.

    The tables of scoring it whole, bit for bit (a run's rows are all in one shard, and its sums
    add only its own rows), for the memory of one shard's inputs: scored whole, the shards'
    rows would first be gathered and sorted by run.
    """
    parts = [score(ds.shard(index), preset, progress=progress, **overrides) for index in range(ds.shards)]
    first = parts[0]
    names = list(dict.fromkeys(name for part in parts for name in part.names))
    tables = {}
    for name in names:
        # Taken out of the parts as they are joined (without a copy), so that a table is held
        # twice at most.
        frames = [part.tables.pop(name) for part in parts if name in part.tables]
        tables[name] = _in_run_order(pl.concat(frames, rechunk=False))
        del frames
    return Scores(tables=tables, preset=first.preset, params=first.params, ran=first.ran, skipped=first.skipped)


def _plan(ds: Dataset) -> tuple[list[Family], dict[str, str]]:
    """The families whose needed tables ``ds`` has, and why each other one is skipped."""
    ran, skipped = [], {}
    for family in families():
        missing = family.missing(ds.table_names)
        if missing:
            skipped[family.name] = f"the Dataset has no {' and no '.join(missing)} table"
        else:
            ran.append(family)
    return ran, skipped


@overload
def score(
    ds: Dataset,
    preset: str = ...,
    *,
    progress: Callable[[str], object] | None = ...,
    out: None = ...,
    workers: int = ...,
    engine: str = ...,
    client: Any = ...,
    scheduler: str | None = ...,
    overwrite: bool = ...,
    compression: str | None = ...,
    **overrides: Any,
) -> Scores: ...


@overload
def score(
    ds: Dataset,
    preset: str = ...,
    *,
    progress: Callable[[str], object] | None = ...,
    out: str | Path,
    workers: int = ...,
    engine: str = ...,
    client: Any = ...,
    scheduler: str | None = ...,
    overwrite: bool = ...,
    compression: str | None = ...,
    **overrides: Any,
) -> Path: ...


def score(
    ds: Dataset,
    preset: str = "spec",
    *,
    progress: Callable[[str], object] | None = None,
    out: str | Path | None = None,
    workers: int = 1,
    engine: str = "processes",
    client: Any = None,
    scheduler: str | None = None,
    overwrite: bool = False,
    compression: str | None = None,
    **overrides: Any,
) -> Scores | Path:
    """Score every run of ``ds`` with every metric family whose tables it has.

    Parameters
    ----------
    ds
        The Dataset. ``runs`` is required; each family states the tables it needs and reads
        (:mod:`mas_eval.metrics.family`). The decision family (seed 004) needs only ``runs``:
        its belief metrics read ``beliefs`` (and ``agents`` for confidences and ER weights), its
        criteria metrics ``scores`` (and ``criteria``).
    preset
        ``"spec"`` (the seed documents' formulas, default) or a reference system's preset,
        e.g. ``"crisis-mas-poc"`` (:mod:`mas_eval.presets`).
    progress : callable, optional
        Called with the name of each step as it starts: ``"encoding keys"``, then
        ``"family <name>"`` for each family that runs, then ``"assembling tables"``; meant
        for a progress display (the CLI shows each step with its elapsed time).
    out : str or Path, optional
        Write the Scores folder here instead of returning the tables, and return its path. A
        sharded Dataset (``write(shards=N)``) is then scored shard by shard, each shard's tables
        written as it finishes, so memory is set by a shard, not by the Dataset
        (:func:`~mas_eval.shard_scoring.score_shards`); :meth:`Scores.open` reads the folder.
    workers : int, default 1
        With ``out`` and a sharded Dataset: processes scoring shards side by side.
    engine, client, scheduler
        With ``out``: ``engine="dask"`` maps the shards over a Dask distributed cluster, the
        ``client`` given, or one of ``scheduler`` (an address), or a ``LocalCluster`` of
        ``workers`` processes on loopback (:func:`~mas_eval.shard_scoring.score_shards`).
    overwrite : bool, default False
        With ``out``: replace an existing folder (never the Dataset's own).
    compression : str, optional
        With ``out``: the Parquet compression of the files, one of ``uncompressed, lz4,
        snappy, zstd, gzip, brotli``. By default ``zstd`` for one file per table, and none for
        a sharded folder (:data:`~mas_eval.shard_scoring.COMPRESSION`: written shard by shard,
        the scores barely compress and writing them is a third of the work).
    **overrides
        Any family's parameter, e.g. ``gt_boost=None`` or ``pairwise=True``
        (:class:`~mas_eval.metrics.decision.params.DecisionParams`).

    Returns
    -------
    Scores
        The named tables (``runs``, and per family ``agents``, ``alternatives``, ...), each row
        led by ``run_id, system, case_id, task, variant`` and sorted by its key; the parameters;
        the families that ran and those skipped, with the reason. With ``out``: the folder's path.

    Raises
    ------
    InvalidParameterError
        An unknown preset or parameter, or a parameter value out of its range.
    DataError
        Data that break a rule the formulas rely on, found from sums the scoring passes
        compute anyway (so it costs little): a null or repeated ``run_id``; an agent whose
        masses are negative, NaN, sum to more than 1 or are all zero; a confidence outside
        [0, 1], a negative or non-finite usage value or agent or criterion weight; a NaN score
        or a satisfaction-scale score outside [0, 1]. :meth:`Dataset.validate` checks every rule
        (types, duplicate keys in every table, dangling references, unknown kinds too); the
        CLI runs it before scoring.
    UnreadableFileError
        A file of the Dataset is truncated or corrupt (the message names it).

    Notes
    -----
    Every output is bit-for-bit reproducible: two calls on the same data give identical
    tables, whatever ``POLARS_MAX_THREADS``, and scoring a sharded Dataset shard by shard
    gives the tables of scoring it whole. Each group's sum adds its own rows, one by one, in
    key order (:mod:`mas_eval.metrics.segments`, :mod:`mas_eval.metrics.ordered`), where a
    hash aggregation would merge partial sums across threads in no fixed order. Ranks still
    treat values within ``1e-12 * max(1, |value|)`` as ties: two alternatives that the formula
    ranks equal may be computed by different sums.
    """
    from mas_eval.shard_scoring import COMPRESSION, check_workers, score_shards

    workers = check_workers(workers)
    if out is not None:
        if ds.shards > 1 or workers != 1 or engine != "processes":
            return score_shards(
                ds,
                out,
                preset,
                workers=workers,
                engine=engine,  # type: ignore[arg-type]
                client=client,
                scheduler=scheduler,
                overwrite=overwrite,
                compression=COMPRESSION if compression is None else compression,
                **overrides,
            )
        chosen = check_compression("zstd" if compression is None else compression)
        inputs = [ds.source] if ds.source is not None else []
        check_target(out, overwrite=overwrite, inputs=inputs)  # before the work, not after it
        scores = score(ds, preset, progress=progress, **overrides)
        return scores.write(out, overwrite=overwrite, compression=chosen)
    if workers != 1 or engine != "processes" or client is not None or scheduler is not None or compression is not None:
        msg = (
            "score: workers, engine, client, scheduler and compression need out=PATH: "
            "shards' tables are written as they finish"
        )
        raise InvalidParameterError(msg)
    if ds.shards > 1:
        return _by_shard(ds, preset, progress, overrides)
    return _scored(ds, preset, progress, overrides)


def _scored(
    ds: Dataset,
    preset: str,
    progress: Callable[[str], object] | None,
    overrides: dict[str, Any],
    *,
    run_columns: bool = True,
) -> Scores:
    """:func:`score` of one Dataset in memory (a shard, or an unsharded Dataset); ``run_columns``
    as for :func:`_decoded`, in every table but ``runs``."""
    params = resolve_params(preset, overrides)
    step = progress if progress is not None else (lambda _name: None)
    ran, skipped = _plan(ds)
    read = list(dict.fromkeys(name for family in ran for name in family.tables()))
    with ds.reading():
        step("encoding keys")
        codes, tables = _encoded_tables(ds, read)

        run_frames: dict[str, pl.LazyFrame | pl.DataFrame] = {}
        own_tables: dict[str, list[pl.LazyFrame | pl.DataFrame]] = {}
        for family in ran:
            step(f"family {family.name}")
            for name, frame in family.compute(tables, params[family.name], codes).items():
                if name == "runs":
                    run_frames[family.name] = frame
                else:
                    own_tables.setdefault(name, []).append(frame)
        step("assembling tables")
        # Collected one after another: they share no work, and on 2 cores running them side by
        # side (collect_all) made them contend (measured at 1M runs: 7.3-8.8 s against 6.1-6.5 s).
        try:
            decoded = {"runs": _run_table(codes, run_frames)}
        except _NotOneRowPerRunError as exc:
            # Error path only: a key repeated in a table the families read multiplies rows in their
            # joins (without validation); that is the user's to fix. Otherwise the family is wrong.
            check_unique_keys({name: ds.scan(name) for name in read if name in ds})
            msg = (
                f"metric family {' or '.join(map(repr, exc.families))} returned a runs frame that is not one row "
                "per run in run order; its compute must left-join its rows onto tables['runs'] and sort by run_id"
            )
            raise RuntimeError(msg) from None
        decoded |= {
            name: _decoded(codes, name, _merged(name, frames), run_columns=run_columns)
            for name, frames in own_tables.items()
        }
    return Scores(
        tables=decoded,
        preset=preset,
        params={name: value for p in params.values() for name, value in p.as_dict().items()},
        ran=[family.name for family in ran],
        skipped=skipped,
    )
