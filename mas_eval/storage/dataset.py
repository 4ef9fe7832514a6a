"""The Dataset: a folder of Parquet tables, opened lazily, validated, written atomically.

>>> import polars as pl
>>> import mas_eval
>>> ds = mas_eval.Dataset.from_frames(
...     runs=pl.DataFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]}),
...     agents=pl.DataFrame({"run_id": ["r1", "r1", "r2"], "agent_id": ["a", "b", "a"]}),
... )
>>> ds.validate().table_names
['runs', 'agents']
>>> ds.summary().select("table", "rows", "runs", "systems").rows()
[('runs', 2, 2, 2), ('agents', 3, 2, 2)]
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import (
    MAPPING,
    NONE,
    PATH,
    TEXT,
    TEXTS,
    Boolean,
    Interval,
    Predicate,
    check_parameter,
    sequence_of,
    validate_params,
)
from mas_eval.data.schema import RUN_KEY, TABLES, Table, required_tables
from mas_eval.data.validation import validate
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, option
from mas_eval.formatting import summary_html, summary_text
from mas_eval.storage.inputs import (
    DATASET_MANIFEST,
    describe_path,
    is_scores_folder,
    parquet_files,
    reading,
    scan_parquet,
    scan_table_folder,
    table_entries,
    table_schema,
)
from mas_eval.storage.manifests import ListOf, Manifest, Obj, read_manifest, write_manifest
from mas_eval.storage.outputs import atomic_directory, same_path, write_failure
from mas_eval.storage.sharding import (
    MAX_SHARDS,
    SHARDS_ENTRY,
    ShardLayout,
    check_placement,
    check_shard_runs,
    check_shards,
    sharded,
    write_sharded_table,
)
from mas_eval.storage.stored_codes import CODES_ENTRY, ShardCodes, StoredLabels, write_codes

__all__ = ["MANIFEST", "Dataset", "write_dataset_manifest"]

#: The columns of :meth:`Dataset.summary`.
_SUMMARY_SCHEMA = {
    name: pl.String if name == "table" else pl.Int64 for name in ("table", "rows", "runs", "systems", "cases", "tasks")
}
#: ``_dataset.json``: the tables written, and for a sharded Dataset its layout (:meth:`Dataset.write`)
#: and stored codes. Written by :meth:`Dataset.write_tables` and the ingest commands, read by :meth:`Dataset.open`.
MANIFEST = Manifest(
    DATASET_MANIFEST,
    Obj(
        {
            "tables": ListOf(str),
            "shards": SHARDS_ENTRY,
            "codes": CODES_ENTRY,
            "notes": ListOf(str),
            "formats": ListOf(str),
        },
        required=("tables",),
    ),
    fix="restore it from a copy of the Dataset, or remove it if the Dataset is not sharded",
)

FrameLike = pl.DataFrame | pl.LazyFrame | Any  # Any: a pandas DataFrame, converted on entry

#: What :class:`Dataset` takes: a mapping of table names to frames (a path is refused in its body, pointing to
#: :meth:`Dataset.open`).
_TABLES = Predicate(
    lambda value: isinstance(value, Mapping | str | Path), "a mapping of table names to Polars LazyFrames"
)
_DATASETS = Predicate(
    lambda value: isinstance(value, Sequence) and all(isinstance(ds, Dataset) for ds in value), "a list of Datasets"
)


def _to_lazy(name: str, frame: FrameLike) -> pl.LazyFrame:
    if isinstance(frame, pl.LazyFrame):
        return frame
    if isinstance(frame, pl.DataFrame):
        return frame.lazy()
    if type(frame).__module__.startswith("pandas"):
        return pl.from_pandas(frame).lazy()
    msg = (
        f"table {name!r}: expected a Polars or pandas DataFrame, got {type(frame).__name__}; "
        "convert it with pl.DataFrame(...) first"
    )
    raise SchemaError(msg)


def _check_columns(spec: Table, names: list[str]) -> None:
    """Check that the required columns are present; an unknown column that looks like a missing known one is a typo."""
    missing = [c for c in spec.required if c not in names]
    unknown = [c for c in names if c not in spec.column_map]
    if spec.key[0] == "case_id" and "case_id" in missing and "run_id" in names:
        msg = (
            f"table {spec.name!r}, column 'case_id': missing; ground truth is keyed by case_id "
            "(one row per case and diagnosis), not by run_id: map each run to its case_id"
        )
        raise SchemaError(msg)
    if missing:
        renames = {
            name: close[0] for name in missing if (close := difflib.get_close_matches(name, unknown, n=1, cutoff=0.8))
        }
        fix = "; ".join(f"rename {found!r} to {name!r} (a misspelling?)" for name, found in renames.items())
        msg = (
            f"table {spec.name!r}: missing required column(s) {', '.join(map(repr, missing))}; "
            f"it has {', '.join(map(repr, names)) or 'no columns'}; {fix or 'add or rename them'}"
        )
        raise SchemaError(msg)
    absent = [c for c in spec.names if c not in names]
    for extra in unknown:
        close = difflib.get_close_matches(extra, absent, n=1, cutoff=0.8)
        if close:
            msg = (
                f"table {spec.name!r}: column {extra!r} is not in the schema and {close[0]!r} is missing; "
                f"rename {extra!r} to {close[0]!r}"
            )
            raise SchemaError(msg)


def _conform(spec: Table, frame: pl.LazyFrame) -> pl.LazyFrame:
    """Cast to the schema's dtypes (strictly) and add absent optional columns as nulls.

    Extra columns are kept after the schema's columns, so users can carry their own metadata.
    """
    names = frame.collect_schema().names()
    exprs = [
        pl.col(c.name).cast(c.dtype) if c.name in names else pl.lit(None, dtype=c.dtype).alias(c.name)
        for c in spec.columns
    ]
    extras = [pl.col(c) for c in names if c not in spec.column_map]
    return frame.select(*exprs, *extras)


class Dataset:
    """The Dataset's tables (runs, agents, beliefs, …; :mod:`mas_eval.data.schema`) as lazy Polars frames.

    Build one with :meth:`open` (a folder of Parquet tables) or :meth:`from_frames`
    (frames in a notebook). Tables are held as given and conformed to the schema (cast,
    absent optional columns added as nulls) when read through :meth:`scan` or ``ds[name]``.
    Only ``runs`` is required.

    A Dataset opened from a sharded folder (:meth:`write` with ``shards=N``) reads as any
    other: each table is one LazyFrame over all its shards, without the partition column.
    :attr:`shards` says how many shards it has and :meth:`shard` gives one as a Dataset.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"run_id": ["r2", "r1"], "system": ["single", "mas"], "case_id": ["c1", "c1"]})
    >>> ds = Dataset({"runs": runs.lazy()})
    >>> ds.table_names, "runs" in ds, "agents" in ds, ds.shards
    (['runs'], True, False, 1)
    >>> ds["runs"].select("run_id", "system", "tokens").collect().rows()
    [('r2', 'single', None), ('r1', 'mas', None)]
    """

    @validate_params(
        {
            "tables": [_TABLES],
            "source": [PATH, NONE],
            "files": [MAPPING, NONE],
            "shard_files": [MAPPING, NONE],
        }
    )
    def __init__(
        self,
        tables: Mapping[str, pl.LazyFrame],
        *,
        source: Path | None = None,
        files: Mapping[str, list[Path]] | None = None,
        shard_files: Mapping[str, list[list[Path]]] | None = None,
    ) -> None:
        if isinstance(tables, str | Path):
            msg = f"Dataset({str(tables)!r}) takes tables, not a path; open a folder with Dataset.open({str(tables)!r})"
            raise SchemaError(msg)
        unknown = [name for name in tables if name not in TABLES]
        if unknown:
            hints = [difflib.get_close_matches(n, TABLES, n=1) for n in unknown]
            detail = "; ".join(
                f"{n!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for n, h in zip(unknown, hints, strict=True)
            )
            msg = f"unknown table(s) {detail}; the Dataset's tables are: {', '.join(TABLES)}"
            raise SchemaError(msg)
        for name in required_tables():
            if name not in tables:
                spec = TABLES[name]
                msg = (
                    f"the Dataset has no {name!r} table; it is required ({spec.doc[0].lower()}{spec.doc[1:-1]}: "
                    f"{', '.join(spec.required)})"
                )
                raise SchemaError(msg)
        self._files = {name: list(paths) for name, paths in (files or {}).items()}
        #: The files of each sharded table, by shard (empty for an unsharded Dataset).
        self._shard_files = {name: [list(p) for p in by_shard] for name, by_shard in (shard_files or {}).items()}
        self.source = source
        #: The schema of each sharded table's files, read once by :meth:`open` (for :meth:`shard`).
        self._schemas: dict[str, pl.Schema] = {}
        #: Whether ``_dataset.json`` of a sharded folder has a ``"codes"`` entry, and the label lists
        #: it records (None if it records none this version reads).
        self._codes_recorded = False
        self._labels: StoredLabels | None = None
        self._notes: tuple[str, ...] = ()
        #: The tables whose casts to the schema's dtypes are known to change no value (:meth:`scan`).
        self._exact: set[str] = set()
        self._formats: tuple[str, ...] = ()
        #: The stored integer codes of this shard's keys (:mod:`mas_eval.storage.stored_codes`), for a
        #: Dataset that :meth:`shard` gave; scoring reads them instead of encoding strings.
        self.stored_codes: ShardCodes | None = None
        #: ``(index, shards)`` for a Dataset that :meth:`shard` gave: every run of it must hash to
        #: ``index`` (:func:`~mas_eval.storage.sharding.check_shard_runs`; scoring checks it).
        self.shard_position: tuple[int, int] | None = None
        with self.reading():
            for name, frame in tables.items():
                validate({name: frame}, "storable")
                _check_columns(TABLES[name], frame.collect_schema().names())
        # Keep the schema's table order whatever order the caller used.
        self._raw = {name: tables[name] for name in TABLES if name in tables}

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_frames(cls, **frames: FrameLike) -> Dataset:
        """Make a Dataset of Polars (or pandas) frames, one keyword per table.

        Parameters
        ----------
        **frames
            ``runs=...`` (required), and any of ``agents``, ``beliefs``, ``criteria``,
            ``scores``, ``alt_scores``, ``ddx``, ``ground_truth``, ``messages``,
            ``interventions``, ``answers``. ``None`` values are ignored.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})
        >>> agents = pl.DataFrame({"run_id": ["r1", "r1", "r2"], "agent_id": ["a1", "a2", "a1"]})
        >>> ds = Dataset.from_frames(runs=runs, agents=agents, beliefs=None)
        >>> ds.table_names
        ['runs', 'agents']
        >>> ds.collect("runs").columns[:5]
        ['run_id', 'system', 'case_id', 'task', 'variant']
        """
        return cls({name: _to_lazy(name, f) for name, f in frames.items() if f is not None})

    @classmethod
    @validate_params({"datasets": [_DATASETS]})
    def concat(cls, datasets: Sequence[Dataset]) -> Dataset:
        """One Dataset of the runs of several (experiments logged apart, a sample of two kinds).

        Every table is the tables of the same name stacked (each conformed to the schema first);
        a table one Dataset lacks contributes nothing, and a column of its own (a run attribute
        such as ``num_rounds``) is null in the runs of the Datasets without it. Run ids must be
        unique across the Datasets; ``ground_truth`` rows that two of them share are kept once.
        The result keeps every Dataset's :attr:`notes` and :attr:`formats`, in order.

        Raises
        ------
        InvalidParameterError
            No Dataset given.
        DataError
            A ``run_id`` found in more than one of them: the message names the first two Datasets
            that share ids (their folders, or their places in ``datasets``), the first ids, and the fix.

        Examples
        --------
        >>> import polars as pl
        >>> a = Dataset.from_frames(runs=pl.DataFrame({"run_id": ["a1"], "system": ["mas"], "case_id": ["c"]}))
        >>> b = Dataset.from_frames(runs=pl.DataFrame({"run_id": ["b1"], "system": ["single"], "case_id": ["c"]}))
        >>> Dataset.concat([a, b]).collect("runs")["run_id"].to_list()
        ['a1', 'b1']
        >>> Dataset.concat([a, a])
        Traceback (most recent call last):
        ...
        mas_eval.errors.DataError: the Datasets 1 (in memory) and 2 (in memory) both hold run_id 'a1'; they hold the same runs (one Dataset given twice?): drop one, or give each Dataset's runs distinct ids (a prefix per Dataset, or ingest one again under another system name: paths={'PATH': 'SYSTEM'})
        """  # noqa: E501
        if not datasets:
            msg = "Dataset.concat needs at least one Dataset"
            raise InvalidParameterError(msg)
        ids = pl.concat(
            [ds.scan("runs").select(RUN_KEY).with_columns(part=pl.lit(i, pl.UInt32)) for i, ds in enumerate(datasets)]
        ).collect()
        repeated = ids.filter(pl.col(RUN_KEY).is_duplicated())
        if repeated.height:
            raise DataError(_clash(datasets, ids, repeated))
        names = [name for name in TABLES if any(name in ds for ds in datasets)]
        tables = {name: pl.concat([ds.scan(name) for ds in datasets if name in ds], how="diagonal_relaxed")
                  for name in names}  # fmt: skip
        if "ground_truth" in tables:
            tables["ground_truth"] = tables["ground_truth"].unique(maintain_order=True)
        combined = cls(tables)
        combined._notes = tuple(note for ds in datasets for note in ds.notes)
        combined._formats = tuple(dict.fromkeys(name for ds in datasets for name in ds.formats))
        return combined

    @classmethod
    @validate_params({"path": [PATH]})
    def open(cls, path: str | Path) -> Dataset:
        """Open a Dataset folder lazily.

        Each table is ``<path>/<table>.parquet`` or a folder ``<path>/<table>/`` of Parquet
        files, hive-partitioned (``system=mas/part-0.parquet``) or not. ``path`` is that
        folder, never a glob pattern, whatever its characters. Only the files' footers are
        read here (for their schemas); the data is read when a query is collected.

        Raises
        ------
        SchemaError
            ``path`` is not a Dataset folder; an entry is not a Dataset table; a table is there
            both as ``<table>.parquet`` and as ``<table>/``; the files of a table differ in
            their columns or types; a file's column disagrees with its partition folder
            (``system=single/`` holding ``system = 'mas'``); a sharded folder's shards are
            not those ``_dataset.json`` records.
        UnreadableFileError
            A file is not Parquet or is truncated (it is named).

        Notes
        -----
        A sharded folder (its ``_dataset.json`` records ``"shards"``, see :meth:`write`) is
        read the same way: each table keyed by ``run_id`` is ``<table>/shard=<k>/*.parquet``
        for every shard ``k``, scanned as one LazyFrame in shard order, without a ``shard``
        column (the schema, validation and scoring see the same columns as unsharded);
        ``ground_truth`` is one file beside them. A shard folder missing from a table, or a
        folder that is not one of the recorded shards, is a :class:`SchemaError`.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     folder = mas_eval.simulate(20, seed=1).write(Path(tmp) / "ds")
        ...     ds = Dataset.open(folder)
        ...     print(ds.table_names, ds.collect("runs").height)
        ['runs', 'agents', 'beliefs', 'criteria', 'scores', 'alt_scores'] 20
        >>> Dataset.open("no/such/folder")
        Traceback (most recent call last):
        ...
        mas_eval.errors.SchemaError: no/such/folder: no such Dataset folder; create one with `mas-eval simulate`, ...
        """
        root = Path(path)
        if not root.is_dir() or is_scores_folder(root):
            raise SchemaError(_not_a_dataset(root))
        manifest = read_manifest(root, MANIFEST)
        layout = ShardLayout.read(manifest, MANIFEST.path(root))
        tables: dict[str, pl.LazyFrame] = {}
        files: dict[str, list[Path]] = {}
        shard_files: dict[str, list[list[Path]]] = {}
        schemas: dict[str, pl.Schema] = {}
        for name, entry in table_entries(root).items():
            if name not in TABLES:
                hint = difflib.get_close_matches(name, TABLES, n=1)
                msg = (
                    f"{entry}: {name!r} is not a Dataset table"
                    + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    + f"; the tables are: {', '.join(TABLES)}; rename or remove it"
                )
                raise SchemaError(msg)
            if layout is not None and sharded(name):
                shard_files[name] = layout.files(entry)
                files[name] = [file for by_shard in shard_files[name] for file in by_shard]
                schemas[name] = table_schema(name, files[name])
                tables[name] = scan_parquet(files[name], schema=schemas[name])
                continue
            files[name] = parquet_files(entry)
            if not files[name]:
                msg = f"{entry}: table folder {name!r} holds no Parquet files; remove it or write the table again"
                raise SchemaError(msg)
            with reading(files[name]):
                tables[name] = scan_table_folder(name, entry, files[name])
        _check_listed(root, manifest, tables)
        if "runs" not in tables:
            msg = (
                f"{root}: holds no runs table (runs.parquet or runs/), so it is not a Dataset folder; pass the folder "
                "`mas-eval ingest` or `mas-eval simulate` wrote"
            )
            raise SchemaError(msg)
        opened = cls(tables, source=root, files=files, shard_files=shard_files)
        opened._schemas = schemas
        opened._notes = tuple(manifest.get("notes", ()))
        opened._formats = tuple(manifest.get("formats", ()))
        if layout is not None and "codes" in manifest:
            opened._codes_recorded = True
            opened._labels = StoredLabels.of(manifest["codes"])
        return opened

    # -- access -------------------------------------------------------------------------------

    @property
    def notes(self) -> tuple[str, ...]:
        """What the ingest that wrote the folder said its tables leave out (its manifest's notes).

        A value no run can have (a negative number of tokens or seconds) is set to null for its run
        and said here, one line per file and field; an empty tuple for a Dataset made in memory.

        Examples
        --------
        >>> import polars as pl
        >>> from mas_eval import Dataset
        >>> Dataset.from_frames(runs=pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})).notes
        ()
        """
        return self._notes

    @property
    def formats(self) -> tuple[str, ...]:
        """The formats the runs were ingested from (its manifest's ``formats``): ``("lm-eval",)``, ``("OTLP",)``.

        Several for Datasets put together (:meth:`concat`).

        Empty when it is not known: a Dataset made in memory, or a folder written before the
        manifest recorded it. ``mas-eval reproduce`` reads it to say what the runs' logs recorded.

        Examples
        --------
        >>> import polars as pl
        >>> from mas_eval import Dataset
        >>> Dataset.from_frames(runs=pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})).formats
        ()
        """
        return self._formats

    @validate_params({"formats": [TEXTS], "notes": [TEXTS]})
    def with_origin(self, *, formats: Sequence[str] = (), notes: Sequence[str] = ()) -> Dataset:
        """Record that the runs came from ``formats`` and that the tables leave out ``notes``; return ``self``.

        :attr:`formats` and :attr:`notes` then say so, as an ingest that keeps the Dataset in memory
        records them.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})
        >>> Dataset.from_frames(runs=runs).with_origin(formats=["table"]).formats
        ('table',)
        """
        self._formats = tuple(dict.fromkeys([*self._formats, *formats]))
        self._notes = (*self._notes, *notes)
        return self

    @property
    def table_names(self) -> list[str]:
        """Names of the tables present, in the schema's order."""
        return list(self._raw)

    def __contains__(self, name: object) -> bool:
        """Whether the Dataset has the table ``name``."""
        return name in self._raw

    def __getitem__(self, name: str) -> pl.LazyFrame:
        """Scan the table ``name`` (:meth:`scan`)."""
        return self.scan(name)

    @validate_params({"name": [TEXT]})
    def scan(self, name: str) -> pl.LazyFrame:
        """Scan the table ``name`` as a LazyFrame with the schema's columns and dtypes.

        The columns the schema declares come first, in its order and of its types (absent optional
        ones as nulls), then the table's own extra columns. A value that the cast to the schema's
        type would change (``1.5`` tokens) is refused here, once per table.

        Raises
        ------
        SchemaError
            The Dataset has no table ``name``.
        DataError
            A value would be changed by the cast to the schema's type.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"], "tokens": [1200]})
        >>> lazy = Dataset.from_frames(runs=runs).scan("runs")
        >>> lazy.collect_schema()["tokens"], lazy.collect_schema()["seconds"]
        (Int64, Float64)
        >>> lazy.select("run_id", "tokens", "seconds").collect().rows()
        [('r1', 1200, None)]
        """
        if name not in self._raw:
            known = ", ".join(self._raw)
            msg = f"the Dataset has no {name!r} table (it has: {known})"
            raise SchemaError(msg)
        if name not in self._exact:
            # A column of another type is cast as it is read: a value the cast would change (1.5
            # tokens made 1) is refused here, once per table, whether or not anything validated it.
            with self.reading():
                validate({name: self._raw[name]}, "exact casts")
            self._exact.add(name)
        return _conform(TABLES[name], self._raw[name])

    @validate_params({"name": [TEXT]})
    def collect(self, name: str) -> pl.DataFrame:
        """Collect the table ``name`` as a DataFrame, sorted by its key so results are reproducible.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r2", "r1"], "system": ["single", "mas"], "case_id": ["c1", "c1"]})
        >>> Dataset.from_frames(runs=runs).collect("runs").select("run_id", "system").rows()
        [('r1', 'mas'), ('r2', 'single')]
        """
        with self.reading():
            return self.scan(name).sort(list(TABLES[name].key)).collect()

    def frames(self) -> dict[str, pl.DataFrame]:
        """Collect every table, each sorted by its key, by name.

        Examples
        --------
        >>> import mas_eval
        >>> for name, frame in mas_eval.simulate(20, seed=1).frames().items():
        ...     print(name, frame.shape)
        runs (20, 22)
        agents (59, 5)
        beliefs (268, 4)
        criteria (74, 5)
        scores (340, 4)
        alt_scores (92, 4)
        """
        return {name: self.collect(name) for name in self._raw}

    @property
    def shards(self) -> int:
        """How many shards the Dataset's folder has: ``N`` when written with ``shards=N``, else 1."""
        return len(next(iter(self._shard_files.values()))) if self._shard_files else 1

    @validate_params({"index": [Interval(int, 0)]})
    def shard(self, index: int) -> Dataset:
        """Take the Dataset of one shard: the runs that hash to ``index`` and all their rows.

        Parameters
        ----------
        index
            From 0 to ``shards - 1``. An unsharded Dataset is its own single shard, 0.

        Returns
        -------
        Dataset
            Every table keyed by ``run_id`` read from its ``shard=<index>`` files only (each
            sorted by the table's key), and ``ground_truth`` narrowed to the cases of the
            shard's runs. Scoring it gives the rows of those runs, exactly as scoring the
            whole Dataset does: a run's rows never span two shards.

        Raises
        ------
        InvalidParameterError
            ``index`` is not an integer from 0 to ``shards - 1``.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     ds = Dataset.open(mas_eval.simulate(40, seed=1).write(Path(tmp) / "ds", shards=2))
        ...     print(ds.shards, [ds.shard(index).collect("runs").height for index in range(ds.shards)])
        2 [22, 18]
        """
        count = self.shards
        check_parameter("index", index, [Interval(int, 0, count - 1)], where="Dataset.shard")
        index = int(index)
        if not self._shard_files:
            return self
        tables: dict[str, pl.LazyFrame] = {}
        files: dict[str, list[Path]] = {}
        for name in self._raw:
            if name in self._shard_files:
                files[name] = self._shard_files[name][index]
                tables[name] = scan_parquet(files[name], schema=self._schemas.get(name))
        runs = tables["runs"]  # always sharded: keyed by run_id
        for name in self._raw:
            if name not in tables:  # keyed by case: the cases of this shard's runs
                files[name] = self._files.get(name, [])
                cases = runs.select(pl.col("case_id").cast(pl.String)).unique()
                tables[name] = self.scan(name).join(cases, on="case_id", how="semi")
        one = Dataset(tables, source=self.source, files=files)
        one.stored_codes = ShardCodes.of(self.source, self._labels, index, files)
        one.shard_position = (index, count)
        return one

    @validate_params({"validate": [Boolean()]})
    def each_shard(self, *, validate: bool = False) -> Iterator[Dataset]:
        """Yield the Dataset of each shard in order (:meth:`shard`), each validated as it is given with ``validate``.

        With ``validate``, each shard is checked before it is yielded (:meth:`validate_shard`), and
        the rules across shards once the last has been used (:meth:`validate_across`): together,
        :meth:`validate` of the Dataset, with one shard's tables read at a time.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     ds = Dataset.open(mas_eval.simulate(40, seed=1).write(Path(tmp) / "ds", shards=2))
        ...     print([shard.collect("runs").height for shard in ds.each_shard(validate=True)])
        [22, 18]
        """
        facts = []
        for index in range(self.shards):
            shard = self.shard(index)
            if validate:
                facts.append(shard.validate_shard())
            yield shard
        if validate:
            self.validate_across(facts)

    @property
    def files(self) -> list[Path]:
        """The Parquet files the tables are read from (none for a Dataset built from frames)."""
        return [file for name in self._files for file in self._files[name]]

    @contextlib.contextmanager
    def reading(self) -> Iterator[Dataset]:
        """Enter a block in which a failure to read one of the Dataset's files names the file.

        Raises :class:`~mas_eval.errors.UnreadableFileError` (file, reason, fix) instead of the
        Polars error of a truncated or corrupt Parquet file, and a
        :class:`~mas_eval.errors.SchemaError` naming the table, column and rows instead of a
        failed cast (a column that does not hold the schema's type, when nothing validated the
        Dataset first); other errors pass through.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     ds = Dataset.open(mas_eval.simulate(20, seed=1).write(Path(tmp) / "ds"))
        ...     _ = (ds.source / "agents.parquet").write_bytes(b"truncated")
        ...     try:
        ...         with ds.reading():
        ...             ds.scan("agents").collect()
        ...     except mas_eval.UnreadableFileError as error:
        ...         print(error)  # doctest: +ELLIPSIS
        /.../ds/agents.parquet: unreadable Parquet file (9 bytes, too short to be a Parquet file); restore it ...
        """
        try:
            with reading(self.files):
                yield self
        except pl.exceptions.InvalidOperationError:
            # Error path only: find the column whose values do not cast, and say so.
            validate(getattr(self, "_raw", {}), "types")
            raise

    def _summary(self) -> tuple[list[tuple[str, str]], list[tuple[str, int | None, int]]]:
        facts = [("source", str(self.source) if self.source else "in memory")]
        if self.shards > 1:
            facts.append(("shards", str(self.shards)))
        tables: list[tuple[str, int | None, int]] = []
        for name, frame in self._raw.items():
            try:  # a Parquet file's row count is in its footer: no data is read
                rows: int | None = frame.select(pl.len()).collect().item()
            except (pl.exceptions.PolarsError, OSError):  # a summary never raises; validate() names the problem
                rows = None
            tables.append((name, rows, len(frame.collect_schema())))
        return facts, tables

    def __repr__(self) -> str:
        """Summarise compactly where the tables come from and each table's shape (rows from the files' metadata).

        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})
        >>> print(repr(Dataset.from_frames(runs=runs)))
        <Dataset: 1 table>
          source  in memory
          runs    1 row x 3 columns
        """
        return summary_text("Dataset", *self._summary())

    def _repr_html_(self) -> str:
        """Summarise the Dataset as :meth:`__repr__` does, in HTML tables for Jupyter; every name escaped."""
        return summary_html("Dataset", *self._summary())

    # -- checks and summaries -----------------------------------------------------------------

    def validate(self) -> Dataset:
        """Check every rule of the schema; raise the first broken one, else return ``self``.

        Raises
        ------
        SchemaError
            A column is missing or of a type that cannot be cast.
        DataError
            Null or duplicate keys, NaN or infinite numbers, values out of range (negative
            masses or weights, an agent's masses summing to more than 1, unknown criterion
            kinds, satisfaction scores outside [0, 1]), or rows whose ``run_id`` is not in ``runs``.

        Notes
        -----
        Stored codes that no longer describe the data are not an error (scoring reads the
        strings instead): :meth:`check_stored_codes` reports them.

        Examples
        --------
        >>> import polars as pl
        >>> import mas_eval
        >>> runs = pl.DataFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})
        >>> ds = Dataset.from_frames(runs=runs)
        >>> ds.validate() is ds
        True
        >>> try:
        ...     Dataset.from_frames(runs=runs.with_columns(tokens=pl.Series([100, -5]))).validate()
        ... except mas_eval.DataError as error:
        ...     print(error)
        table 'runs', column 'tokens': 1 row(s) are negative, e.g. at (run_id='r2'); tokens must be >= 0
        """
        with self.reading():
            validate(self._raw)
            self._check_shards()
        return self

    def validate_shard(self) -> pl.DataFrame:
        """Check the rules a run's own rows decide, on this shard (a Dataset that :meth:`shard` gave).

        What :meth:`validate` checks, but for the rules that compare runs with each other and
        those of ``ground_truth`` (:meth:`validate_across`): types, keys, values, references
        and sums within the shard's runs, and every run in the shard its id hashes to. That it
        holds in every shard, and :meth:`validate_across`, is :meth:`validate` of the Dataset:
        a run's rows all lie in its shard, so a repeated key or a dangling reference is within
        one. Scoring calls it where each shard is read (``score(ds, validate=True)``).

        Returns
        -------
        polars.DataFrame
            Small facts (each score name's pass/fail kinds) for :meth:`validate_across`.

        Raises
        ------
        SchemaError, DataError
            As :meth:`validate`, but counting and naming what this shard holds only.

        Examples
        --------
        Each shard checked on its own (as a worker would), then what lies across them:

        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     ds = Dataset.open(mas_eval.simulate(40, seed=1).write(Path(tmp) / "ds", shards=2))
        ...     facts = [ds.shard(index).validate_shard() for index in range(ds.shards)]
        ...     ds.validate_across(facts)
        >>> [frame.columns for frame in facts]
        [['name', 'unpassed'], ['name', 'unpassed']]
        """
        tables = {name: frame for name, frame in self._raw.items() if sharded(name)}
        with self.reading():
            # The shard's stored codes, when they describe its files: its keys checked as integers.
            stored = self.stored_codes
            read = None if stored is None else stored.read(list(tables))
            codes = {} if read is None else {name: ShardCodes.keys(name, tables[name], read[name]) for name in tables}
            facts = validate(tables, "part", codes=codes)
            if self.shard_position is not None:
                check_shard_runs(self._raw["runs"].select(RUN_KEY).collect()[RUN_KEY], *self.shard_position)
        return facts

    @validate_params({"facts": [sequence_of(pl.DataFrame, "Polars DataFrames")]})
    def validate_across(self, facts: list[pl.DataFrame]) -> None:
        """Check the rules :meth:`validate_shard` leaves: those across runs, and ``ground_truth``'s own.

        The rules across runs: a score name pass/fail in every run or none, a repeat of a case its
        own epoch. ``ground_truth`` is read whole. ``facts`` are what :meth:`validate_shard` returned
        for every shard.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     ds = Dataset.open(mas_eval.simulate(40, seed=1).write(Path(tmp) / "ds", shards=2))
        ...     print(ds.validate_across([ds.shard(index).validate_shard() for index in range(ds.shards)]))
        None
        """
        with self.reading():
            whole = {name: frame for name, frame in self._raw.items() if not sharded(name)}
            validate({"runs": self._raw["runs"], **whole}, "across", facts=facts)

    @validate_params(
        {"run_ids": [Predicate(lambda v: isinstance(v, pl.Series), "a Polars Series")], "unique": [Boolean()]}
    )
    def check_run_ids(self, run_ids: pl.Series, *, unique: bool = False) -> None:
        """Check that the ``run_id`` values read from ``runs`` (**sorted**) are filled in, each once, in this shard.

        Scoring reads them anyway, for its code book: it checks them so, validated or not. With
        ``unique`` the ids are known to be filled in and distinct (a shard's stored codes are stored
        only then), and only their shard is checked. Each run once in its shard and each in its
        own shard (for a Dataset that :meth:`shard` gave): so once in the Dataset.

        Raises
        ------
        DataError
            A null or repeated ``run_id``, or a run that does not hash to this shard.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})
        >>> ds = Dataset.from_frames(runs=runs)
        >>> print(ds.check_run_ids(pl.Series("run_id", ["r1", "r2"])))
        None
        >>> ds.check_run_ids(pl.Series("run_id", ["r1", "r1"]))
        Traceback (most recent call last):
        ...
        mas_eval.errors.DataError: table 'runs', column 'run_id': 1 key(s) occur more than once, e.g. at ...
        """
        if not unique:
            validate({"runs": run_ids.to_frame(RUN_KEY)}, "run keys")
        if self.shard_position is not None:
            check_shard_runs(run_ids, *self.shard_position)

    @validate_params({"names": [TEXTS]})
    def check_keys(self, names: Sequence[str]) -> None:
        """Check that each of the tables ``names`` it has holds each key once (as :meth:`scan` reads them).

        A repeated key multiplies rows in the joins that scoring makes; this is how a result of the
        wrong shape is explained to the user (scoring calls it on that error path only).

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})
        >>> agents = pl.DataFrame({"run_id": ["r1", "r1"], "agent_id": ["a", "a"]})
        >>> Dataset.from_frames(runs=runs, agents=agents).check_keys(["runs", "agents", "beliefs"])
        Traceback (most recent call last):
        ...
        mas_eval.errors.DataError: table 'agents', column 'run_id, agent_id': 1 key(s) occur more than once, ...
        """
        validate({name: self.scan(name) for name in names if name in self}, "unique keys")

    @contextlib.contextmanager
    @validate_params({"validate": [Boolean()]})
    def worded_whole(self, *, validate: bool) -> Iterator[None]:
        """Enter a block in which, with ``validate``, a rule a shard broke is raised as :meth:`validate` words it.

        A shard's check (:meth:`validate_shard`) counts and names what that shard holds; the user
        is owed the counts and keys of the whole Dataset, so on this error path only the Dataset is
        validated whole. An error that whole validation does not find (one of scoring's own) is
        raised as it was. Scoring a sharded Dataset with ``validate=True`` runs in such a block.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})
        >>> with Dataset.from_frames(runs=runs).worded_whole(validate=True):
        ...     print("scored")
        scored
        """
        try:
            yield
        except (DataError, SchemaError) as exc:
            if not validate or self.shards == 1:  # an unsharded Dataset is validated whole already
                raise
            failure = exc
        else:
            return
        self.validate()
        raise failure

    def _check_shards(self) -> None:
        """Every run of a sharded table lies in the shard its id hashes to (else per-shard work is wrong)."""
        for name, by_shard in self._shard_files.items():
            check_placement(name, by_shard, self.shards)

    def check_stored_codes(self) -> str | None:
        """Why scoring will read some shard's strings instead of its stored codes; None if it reads the codes.

        Stored codes (:mod:`mas_eval.storage.stored_codes`) are derived data: when they no longer
        describe the data (a shard file changed, ``_dataset.json``'s label lists are not those
        they were coded against, a code file missing), scoring encodes that shard's strings,
        with the same scores, only slower. That is not an error, so :meth:`validate` passes;
        this says what was found and how to store fresh codes. None too for a Dataset that
        stores no codes (unsharded, or too many labels).

        Examples
        --------
        >>> import shutil
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     folder = mas_eval.simulate(40, seed=1).write(Path(tmp) / "ds", shards=2)
        ...     print(Dataset.open(folder).check_stored_codes())
        ...     shutil.rmtree(folder / "_codes")
        ...     print(Dataset.open(folder).check_stored_codes())  # doctest: +ELLIPSIS
        None
        the stored codes of 2 of 2 shards are not used (/.../ds/_codes/agents/shard=0.parquet is missing), so ...
        """
        if not (self._shard_files and self._codes_recorded) or self.source is None:
            return None
        fix = "scoring reads the strings instead (same scores, slower); `mas-eval reshard` writes fresh codes"
        if self._labels is None:
            return f"{MANIFEST.path(self.source)}: its 'codes' entry is not one this version reads, so {fix}"
        stale = []
        for index in range(self.shards):
            codes = ShardCodes.of(self.source, self._labels, index, {n: f[index] for n, f in self._shard_files.items()})
            problems = [codes.problem(name) for name in self._shard_files] if codes is not None else []
            stale.extend((index, p) for p in problems if p is not None)
        if not stale:
            return None
        shards = len({index for index, _ in stale})
        return f"the stored codes of {shards} of {self.shards} shards are not used ({stale[0][1]}), so {fix}"

    def summary(self) -> pl.DataFrame:
        """One row per table: ``table, rows, runs, systems, cases, tasks``.

        ``runs`` counts the distinct runs the table covers; ``systems``, ``cases`` and
        ``tasks`` count what those runs span (for ``ground_truth``: its cases).

        Notes
        -----
        A table's rows are read once, for their run ids, and only the first row of each
        stretch of equal ids is kept: in the files mas_eval writes (sorted by ``run_id``, shard
        by shard) a run's rows are consecutive, so about one id per run is left. When those ids
        are the ``runs`` table's, in the same order (every run has rows in the table, the usual
        case), the table covers every run and nothing is hashed; otherwise the ids are made
        distinct and matched to ``runs``. Files in another order give the same counts, only
        slower.

        Examples
        --------
        >>> import mas_eval
        >>> for row in mas_eval.simulate(40, seed=1).summary().rows():
        ...     print(row)
        ('runs', 40, 40, 2, 20, 3)
        ('agents', 119, 40, 2, 20, 3)
        ('beliefs', 539, 40, 2, 20, 3)
        ('criteria', 132, 40, 2, 20, 3)
        ('scores', 608, 40, 2, 20, 3)
        ('alt_scores', 182, 40, 2, 20, 3)
        """
        runs = self.scan("runs").select(RUN_KEY, "system", "case_id", "task")
        queries = {"runs": runs}
        for name in self._raw:
            frame = self.scan(name)
            queries[f"rows {name}"] = frame.select(pl.len().cast(pl.Int64))
            if RUN_KEY in TABLES[name].key:
                # The ids of consecutive equal rows are dropped as they are read.
                queries[f"ids {name}"] = frame.select(
                    pl.col(RUN_KEY).filter(pl.col(RUN_KEY).ne_missing(pl.col(RUN_KEY).shift()))
                )
            else:  # keyed by case (ground truth): count its cases
                queries[f"cases {name}"] = frame.select(pl.col("case_id").n_unique().cast(pl.Int64))
        with self.reading():
            got = dict(zip(queries, pl.collect_all(list(queries.values())), strict=True))
        every_run = got["runs"]
        spans = [pl.len().cast(pl.Int64).alias("runs")] + [
            pl.col(c).n_unique().cast(pl.Int64).alias(a)
            for c, a in (("system", "systems"), ("case_id", "cases"), ("task", "tasks"))
        ]
        out = []
        # One row per table (a handful): the loop runs over the Dataset's tables, not its rows.
        for name in self._raw:
            rows = got[f"rows {name}"].item()
            if f"cases {name}" in got:
                out.append((name, rows, None, None, got[f"cases {name}"].item(), None))
                continue
            ids = got[f"ids {name}"][RUN_KEY]
            covered = (
                every_run if ids.equals(every_run[RUN_KEY]) else ids.unique().to_frame().join(every_run, on=RUN_KEY)
            )
            out.append((name, rows, *covered.select(spans).row(0)))
        return pl.DataFrame(out, schema=_SUMMARY_SCHEMA, orient="row")

    # -- output -------------------------------------------------------------------------------

    @validate_params(
        {
            "path": [PATH],
            "overwrite": [Boolean()],
            "validate": [Boolean()],
            "shards": [Interval(int, 1, MAX_SHARDS), NONE],
        }
    )
    def write(
        self, path: str | Path, *, overwrite: bool = False, validate: bool = True, shards: int | None = None
    ) -> Path:
        """Write every table to ``<path>/<table>.parquet``, or in ``shards`` shards, atomically.

        The tables go to a temporary folder beside ``path`` which is renamed into place only
        when all of them are written; on any error nothing is left behind. An existing
        ``path`` is replaced only with ``overwrite=True`` (and is read to the end first, so a
        Dataset can be rewritten onto the folder it was opened from). ``validate=False``
        skips :meth:`validate` for data valid by construction (e.g. the simulator's). The
        manifest keeps the Dataset's :attr:`notes` and :attr:`formats`.

        Parameters
        ----------
        path
            The Dataset folder to write.
        overwrite
            Replace an existing ``path``.
        validate
            Run :meth:`validate` first.
        shards
            ``None`` or 1: one file per table (whatever layout the Dataset was read from). An
            integer ``N`` from 2 to 10,000: every table keyed by ``run_id`` split into ``N``
            shards (see Notes); more shards than runs is allowed (some shards are empty).

        Raises
        ------
        InvalidParameterError
            ``shards`` is not an integer from 1 to 10,000 (checked before anything is written).

        Notes
        -----
        The sharded layout: ``<path>/<table>/shard=<k>/part-0.parquet`` for ``k`` in
        ``0 .. N-1``, every shard present (empty if no run hashes to it), each file sorted by
        the table's key (``run_id`` first), so that a run's rows are contiguous. A run's shard
        is ``fmix64(fnv1a64(utf8(run_id))) % N`` (:func:`mas_eval.storage.sharding.run_hash`), the
        same in every table, on every machine and with every Polars version, so all the rows
        of a run sit in one shard of every table. ``ground_truth``, keyed by case rather than
        run (a case's runs fall in many shards), is written whole as
        ``<path>/ground_truth.parquet``; :meth:`shard` narrows it to the shard's cases.
        ``_dataset.json`` records the layout: ``"shards": {"count": N, "hash":
        "fnv1a64-fmix64", "column": "run_id", "partition": "shard", "tables_whole":
        ["ground_truth"]}``. Each table is written in two passes (rows streamed to their
        shard, then each shard sorted on its own), so memory is bounded by a shard. Then the
        integer codes of every shard's keys are stored under ``<path>/_codes``, for scoring to
        read instead of the strings (:mod:`mas_eval.storage.stored_codes`; ``_dataset.json``'s ``"codes"``).

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import mas_eval
        >>> ds = mas_eval.simulate(40, seed=1)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     flat = ds.write(Path(tmp) / "flat")
        ...     sharded = ds.write(Path(tmp) / "sharded", shards=2)
        ...     print(sorted(p.name for p in flat.iterdir())[:3])
        ...     print(sorted(p.name for p in sharded.iterdir())[:3], sorted(p.name for p in sharded.glob("runs/*")))
        ['_dataset.json', 'agents.parquet', 'alt_scores.parquet']
        ['_codes', '_dataset.json', 'agents'] ['shard=0', 'shard=1']
        """
        count = check_shards(shards)
        target = Path(path)
        # Rewriting a Dataset onto its own folder is fine (it is read to the end first); writing it
        # into, or over a folder that holds, its source would destroy the source.
        inputs = [self.source] if self.source is not None and not same_path(target, self.source) else []
        with atomic_directory(target, overwrite=overwrite, inputs=inputs) as staging:
            if validate:
                self.validate()
            self.write_tables(staging, shards=count)
        return target

    @validate_params({"folder": [PATH], "shards": [Interval(int, 1, MAX_SHARDS)], "notes": [TEXTS], "formats": [TEXTS]})
    def write_tables(
        self, folder: Path, *, shards: int = 1, notes: Sequence[str] = (), formats: Sequence[str] = ()
    ) -> None:
        """Write the tables and ``_dataset.json`` into the existing, empty ``folder`` (not atomically).

        The writing half of :meth:`write`, for writers that stage a folder of their own (ingest),
        which may add ``notes`` (what the tables leave out) and ``formats`` (what the runs were
        ingested from) to the manifest, after the Dataset's own :attr:`notes` and :attr:`formats`.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> import polars as pl
        >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"]})
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     Dataset.from_frames(runs=runs).write_tables(Path(tmp), notes=["tokens were not logged"])
        ...     print(sorted(p.name for p in Path(tmp).iterdir()), Dataset.open(tmp).notes)
        ['_dataset.json', 'runs.parquet'] ('tokens were not logged',)
        """
        for name in self._raw:
            try:
                with self.reading():
                    if shards > 1 and sharded(name):
                        write_sharded_table(self.scan(name), TABLES[name], folder, shards)
                    elif shards > 1:
                        self.scan(name).sort(list(TABLES[name].key)).sink_parquet(folder / f"{name}.parquet")
                    else:
                        self.scan(name).sink_parquet(folder / f"{name}.parquet")
            except pl.exceptions.PolarsError as exc:
                if write_failure(exc, folder) is not None:
                    raise  # the location's fault (disk full...): the atomic write names it
                msg = f"table {name!r} could not be written ({exc}); run validate() to find the rows"
                raise DataError(msg) from exc
        write_dataset_manifest(
            folder,
            self.table_names,
            shards,
            notes=[*self._notes, *notes],
            formats=list(dict.fromkeys([*self._formats, *formats])),
        )


def write_dataset_manifest(
    folder: Path, names: list[str], shards: int, *, notes: Sequence[str] = (), formats: Sequence[str] = ()
) -> None:
    """Write ``_dataset.json`` of the Dataset folder ``folder`` whose tables ``names`` are written.

    A sharded folder (``shards > 1``) records its layout and gets its stored codes
    (:func:`~mas_eval.storage.stored_codes.write_codes`), which read the written shards. Shared
    by :meth:`Dataset.write_tables` and the ingest that writes the shards itself. ``notes`` and
    ``formats`` (:attr:`Dataset.notes`, :attr:`Dataset.formats`) are recorded when there are any.
    """
    manifest: dict[str, Any] = {"tables": names}
    if notes:
        manifest["notes"] = list(notes)
    if formats:
        manifest["formats"] = list(formats)
    if shards > 1:
        manifest["shards"] = ShardLayout(shards).manifest()
        codes = write_codes(folder, names, shards)
        if codes is not None:
            manifest["codes"] = codes
    write_manifest(folder, MANIFEST, manifest)


def _check_listed(root: Path, manifest: Mapping[str, Any], found: Mapping[str, pl.LazyFrame]) -> None:
    """Every table ``_dataset.json`` lists is in the folder: else a family would be skipped without a word."""
    absent = [name for name in manifest.get("tables", []) if name not in found]
    if absent:
        msg = (
            f"{MANIFEST.path(root)}: lists table {absent[0]!r}, which the folder does not hold, so the Dataset is "
            f"incomplete: restore {absent[0]} from a copy, or write the Dataset again without it"
        )
        raise SchemaError(msg)


def _not_a_dataset(path: Path) -> str:
    """Why ``path`` cannot be opened as a Dataset, and what to pass instead."""
    if not path.exists():
        return (
            f"{path}: no such Dataset folder; create one with `mas-eval simulate`, `mas-eval ingest` or Dataset.write"
        )
    if path.name.lower().endswith(".parquet"):
        fix = f"pass the Dataset folder that holds it ({path.parent})"
    elif path.is_file():
        fix = f"ingest it into a Dataset first (`mas-eval ingest {path} --out DATASET`)"
    elif not path.is_dir():  # a FIFO, a socket, a device
        fix = "pass a Dataset folder"
    else:
        fix = "pass the Dataset the scores were computed from"
    return f"{path} {describe_path(path)}, not a Dataset folder; {fix}"


def _clash(datasets: Sequence[Dataset], ids: pl.DataFrame, repeated: pl.DataFrame) -> str:
    """Word what :meth:`Dataset.concat` says of run ids held by two Datasets.

    The message names the first two Datasets that share ids (by their folders, or places), up to
    three of the ids, and the fix.
    """
    first = repeated.group_by(RUN_KEY).agg(pl.col("part").unique().sort().head(2).alias("parts"))
    pairs = first.with_columns(a=pl.col("parts").list.get(0), b=pl.col("parts").list.get(1)).sort("a", "b", RUN_KEY)
    a, b = pairs.row(0, named=True)["a"], pairs.row(0, named=True)["b"]
    shared = pairs.filter((pl.col("a") == a) & (pl.col("b") == b))[RUN_KEY]
    shown = ", ".join(map(repr, shared.head(3).to_list()))
    more = f" (and {shared.len() - 3:,} more)" if shared.len() > 3 else ""
    count = ids.group_by("part").len()
    sizes = dict(zip(count["part"].to_list(), count["len"].to_list(), strict=True))
    same = shared.len() == sizes.get(a) == sizes.get(b)

    def named(index: int) -> str:
        source = datasets[index].source
        return f"{index + 1} ({source if source is not None else 'in memory'})"

    held = "run_id" if shared.len() == 1 else "run_ids"
    why = "they hold the same runs (one Dataset given twice?): drop one, or " if same else ""
    again = option("paths", {"PATH": "SYSTEM"}, cli="PATH=SYSTEM")
    return (
        f"the Datasets {named(a)} and {named(b)} both hold {held} {shown}{more}; {why}give each Dataset's runs "
        f"distinct ids (a prefix per Dataset, or ingest one again under another system name: {again})"
    )
