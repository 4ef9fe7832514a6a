"""Integer codes of a sharded Dataset's keys, written beside its shards so that scoring reads integers.

Scoring groups, joins and sorts integer codes of the keys (:mod:`mas_eval.metrics.codes`).
Encoding them from strings means reading every ``run_id``, ``agent_id``, ``alternative`` and
``criterion`` string and looking it up in a code book, which takes as long as everything else
scoring does (docs/performance.md). A sharded Dataset therefore stores the codes once, when it is
written::

    DATASET/
      _dataset.json                   "codes": {"folder": "_codes", "hash": "sha256", "labels": {...}}
      _codes/<table>/shard=<k>.parquet

Each code file has one row per row of the shard's file of that table, in the same order, and one
``UInt32`` column for each of the table's key and label columns (``run_id`` and
:data:`~mas_eval.data.schema.LABEL_COLUMNS`), named as that column:

* ``run_id``: the run's row in the shard's ``runs`` file (which is sorted by ``run_id``), null
  for a run that ``runs`` lacks;
* a label: its position in the Dataset's sorted labels of its kind, which ``_dataset.json``
  lists under ``"labels"``.

Both keep the order of the ids and labels, as the codes :class:`~mas_eval.metrics.codes.KeyCodes`
encodes from strings do (a label's code there is its rank among the labels of the tables read,
here among the Dataset's), so the tables scored from them are the tables scored from the
strings, bit for bit (``tests/storage/test_stored_codes.py``).

Codes are derived data, and they are used only while they still describe the data: a code
file records, in its Parquet metadata, the SHA-256 of the shard file it was computed from and
the SHA-256 (and lengths) of the label lists it was coded against. A shard is scored from its
strings instead when one of its files changed since, when ``_dataset.json``'s label lists are
not those its codes were coded against (another Dataset's manifest copied in, a list shortened
or reordered by hand), when a code file is missing or unreadable, or when a code lies outside
its list; :meth:`ShardCodes.problem` says which. Codes are written only when every kind of
label has at most :data:`MAX_LABELS` values, the lists take at most :data:`MAX_LABEL_BYTES` of
JSON, and every shard's run ids are distinct and not null; otherwise scoring reads strings, and
reports bad keys as it always does.

Dataset.open skips folders whose names start with ``_``, so the code files are never
mistaken for a table.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.data.schema import LABEL_COLUMNS, LABEL_KINDS, RUN_KEY, TABLES
from mas_eval.storage.inputs import read_parquet, scan_parquet
from mas_eval.storage.manifests import Lenient, ListOf, MapOf, Obj
from mas_eval.storage.sharding import PART, SHARD_COLUMN, shard_folder, sharded

__all__ = [
    "CODES_ENTRY",
    "CODES_FOLDER",
    "MAX_LABELS",
    "MAX_LABEL_BYTES",
    "ShardCodes",
    "StoredLabels",
    "code_columns",
    "write_codes",
]

#: The folder of the code files, inside the Dataset's folder.
CODES_FOLDER = "_codes"
#: The most labels of one kind for which codes are stored (the list of labels is in ``_dataset.json``).
MAX_LABELS = 10_000
#: The most bytes the label lists may take as JSON for codes to be stored: ``_dataset.json`` stays
#: well below :data:`~mas_eval.storage.manifests.MAX_MANIFEST_BYTES`.
MAX_LABEL_BYTES = 16 * 2**20
#: The Parquet metadata key of a code file that holds its source file's SHA-256.
SOURCE_HASH = "mas_eval.codes.source_sha256"
#: The Parquet metadata keys of a code file that hold the SHA-256 of the label lists it was coded
#: against (:meth:`StoredLabels.digest`) and their lengths, by kind (JSON).
LABELS_HASH = "mas_eval.codes.labels_sha256"
LABEL_COUNTS = "mas_eval.codes.label_counts"

#: The ``"codes"`` entry of ``_dataset.json``, as :func:`write_codes` returns it. Lenient: the codes
#: are derived data, so an entry that is not of this shape is read as none (strings are scored).
CODES_ENTRY = Lenient(
    Obj({"folder": str, "hash": str, "labels": MapOf(ListOf(str))}, required=("folder", "hash", "labels"))
)
#: The codes' dtype: that of :data:`mas_eval.metrics.codes.CODE`.
CODE = pl.UInt32


def code_columns(name: str) -> dict[str, str | None]:
    """Return the coded columns of table ``name``: ``run_id`` (kind ``None``), then each label column and its kind.

    Examples
    --------
    >>> code_columns("runs")
    {'run_id': None, 'recommended': 'alternative', 'correct': 'alternative'}
    """
    return {RUN_KEY: None, **LABEL_COLUMNS.get(name, {})}


def sha256_of(path: Path) -> str:
    """Hash a file's bytes with SHA-256, in hex (cheap beside a shard's scoring: docs/performance.md)."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def code_file(root: Path, name: str, index: int) -> Path:
    """Where the codes of shard ``index`` of table ``name`` live."""
    return root / CODES_FOLDER / name / f"{SHARD_COLUMN}={index}.parquet"


def _data_file(root: Path, name: str, index: int) -> Path:
    return shard_folder(root / name, index) / PART


def _label_books(root: Path, names: list[str], shards: int) -> dict[str, list[str]] | None:
    """Every kind's sorted distinct labels across the tables ``names``; None if a kind has too many."""
    queries = []
    for kind in LABEL_KINDS:
        parts = [
            scan_parquet([_data_file(root, name, k) for k in range(shards)]).select(pl.col(column).alias(kind))
            for name in names
            for column, column_kind in LABEL_COLUMNS.get(name, {}).items()
            if column_kind == kind
        ]
        parts = parts or [pl.LazyFrame(schema={kind: pl.String})]
        queries.append(pl.concat(parts).drop_nulls().unique().sort(kind))
    books = {kind: frame[kind].to_list() for kind, frame in zip(LABEL_KINDS, pl.collect_all(queries), strict=True)}
    if any(len(book) > MAX_LABELS for book in books.values()) or len(json.dumps(books)) > MAX_LABEL_BYTES:
        return None
    return books


def write_codes(root: Path, names: Iterable[str], shards: int) -> dict[str, Any] | None:
    """Write the code files of the sharded Dataset at ``root`` (its tables ``names`` already written).

    Returns the ``"codes"`` entry of ``_dataset.json``, or None (and writes nothing) when the
    codes cannot be stored: a kind with more than :data:`MAX_LABELS` labels, lists longer than
    :data:`MAX_LABEL_BYTES` as JSON, or a shard whose run ids repeat or are null.
    """
    tables = [name for name in names if sharded(name)]
    books = _label_books(root, tables, shards)
    if books is None:
        return None
    labels = {kind: pl.Enum(book) for kind, book in books.items()}
    coded_against = StoredLabels(books)
    recorded = {
        LABELS_HASH: coded_against.digest,
        LABEL_COUNTS: json.dumps(coded_against.counts, sort_keys=True),
    }
    for index in range(shards):
        ids = read_parquet(_data_file(root, "runs", index), columns=[RUN_KEY])[RUN_KEY]
        if ids.has_nulls() or ids.is_duplicated().any():
            shutil.rmtree(root / CODES_FOLDER, ignore_errors=True)
            return None
        runs = pl.Enum(ids)
        for name in tables:
            source = _data_file(root, name, index)
            frame = scan_parquet(source)
            present = frame.collect_schema().names()
            coded = [
                pl.col(column).cast(runs if kind is None else labels[kind], strict=False).to_physical().cast(CODE)
                if column in present
                else pl.lit(None, dtype=CODE).alias(column)  # an optional column the table lacks
                for column, kind in code_columns(name).items()
            ]
            target = code_file(root, name, index)
            target.parent.mkdir(parents=True, exist_ok=True)
            frame.select(coded).collect().write_parquet(target, metadata={SOURCE_HASH: sha256_of(source), **recorded})
    return {"folder": CODES_FOLDER, "hash": "sha256", "labels": books}


@dataclass(frozen=True)
class StoredLabels:
    """The label lists of a sharded Dataset's ``_dataset.json`` (``"codes"`` → ``"labels"``).

    Every kind's sorted labels, which the code files hold positions in.

    Examples
    --------
    >>> StoredLabels({"agent_id": ["a", "b"], "alternative": ["x"], "criterion": []}).counts
    {'agent_id': 2, 'alternative': 1, 'criterion': 0}
    """

    labels: Mapping[str, list[str]]

    @classmethod
    def of(cls, entry: Any) -> StoredLabels | None:
        """Read the lists of a ``"codes"`` entry of the shape :data:`CODES_ENTRY`.

        None: no codes, or an entry this version does not read (another folder, or not every kind of label).
        """
        if not isinstance(entry, Mapping) or entry.get("folder") != CODES_FOLDER or entry.get("hash") != "sha256":
            return None
        labels = entry["labels"]
        return cls(dict(labels)) if set(labels) == set(LABEL_KINDS) else None

    @cached_property
    def digest(self) -> str:
        """The SHA-256 of the lists (every kind, in :data:`LABEL_KINDS` order), as a code file records it."""
        canonical = json.dumps([self.labels[kind] for kind in LABEL_KINDS], ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @cached_property
    def counts(self) -> dict[str, int]:
        """How many labels each kind has."""
        return {kind: len(self.labels[kind]) for kind in LABEL_KINDS}

    def books(self) -> dict[str, pl.Series]:
        """Each kind's labels as a ``String`` Series (a :class:`~mas_eval.metrics.codes.KeyCodes` code book)."""
        return {kind: pl.Series(kind, self.labels[kind], dtype=pl.String) for kind in LABEL_KINDS}


@dataclass(frozen=True)
class ShardCodes:
    """The stored codes of one shard of a Dataset (module docstring).

    Attributes
    ----------
    root
        The Dataset's folder.
    index
        The shard.
    labels
        The label lists ``_dataset.json`` records.
    files
        The shard's data files of each table, as the Dataset reads them.
    """

    root: Path
    index: int
    labels: StoredLabels
    files: Mapping[str, list[Path]]
    _problems: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(
        cls, root: Path | None, labels: StoredLabels | None, index: int, files: Mapping[str, list[Path]]
    ) -> ShardCodes | None:
        """Make the codes of shard ``index`` coded against ``labels`` (None without a folder or lists)."""
        if root is None or labels is None:
            return None
        return cls(root=root, index=index, labels=labels, files=dict(files))

    def current(self, name: str) -> bool:
        """Whether table ``name``'s codes describe its shard file as it is now, against ``_dataset.json``'s lists."""
        return self.problem(name) is None

    def problem(self, name: str) -> str | None:
        """Why table ``name``'s code file does not describe its shard file and the manifest's lists; None if it does.

        Compares what the code file records (its source file's SHA-256, the lists' SHA-256) with the
        shard file's hash and the lists' (once per table; cheap: docs/performance.md).
        """
        if name not in self._problems:
            self._problems[name] = self._problem(name)
        return self._problems[name]

    def _problem(self, name: str) -> str | None:
        files, codes = self.files.get(name, []), code_file(self.root, name, self.index)
        if len(files) != 1:
            return f"table {name!r} of shard {self.index} is not one file"
        if not codes.is_file():
            return f"{codes} is missing"
        try:
            recorded = pl.read_parquet_metadata(codes)
        except (OSError, pl.exceptions.PolarsError):
            return f"{codes} is unreadable"
        if recorded.get(LABELS_HASH) != self.labels.digest:
            how = _how_lists_differ(recorded.get(LABEL_COUNTS), self.labels.counts)
            return f"{codes} was coded against other label lists than those _dataset.json records ({how})"
        if recorded.get(SOURCE_HASH) != sha256_of(files[0]):
            return f"{files[0]} changed after its codes were written"
        return None

    def books(self) -> dict[str, pl.Series]:
        """Each kind's labels as a ``String`` Series (a :class:`~mas_eval.metrics.codes.KeyCodes` code book)."""
        return self.labels.books()

    def read(self, names: Iterable[str]) -> dict[str, pl.DataFrame] | None:
        """Read the code files of ``runs`` and tables ``names``; None if one is stale, unreadable or out of range.

        Of ``names``, those the shard has and that are keyed by ``run_id``: the others have no code files.

        Stale: not :meth:`current`; out of range: it holds a code outside its list.

        Codes are derived data: a shard whose codes do not describe it is scored from its strings
        rather than failing. ``runs`` is always checked: every table's ``run_id`` codes are rows of
        the shard's ``runs`` file.
        """
        wanted = list(dict.fromkeys(["runs", *(name for name in names if name in self.files and sharded(name))]))
        if not all(self.current(name) for name in wanted):
            return None
        try:
            read = {name: read_parquet(code_file(self.root, name, self.index)) for name in wanted}
        except (OSError, pl.exceptions.PolarsError):
            return None
        return read if self._in_range(read) else None

    def _in_range(self, read: Mapping[str, pl.DataFrame]) -> bool:
        """Whether every code is a position in its list (a run's: a row of ``runs``), so that decoding cannot fail."""
        sizes = {kind: len(book) for kind, book in self.labels.labels.items()} | {None: read["runs"].height}
        queries = [
            frame.lazy().select(pl.col(column).max().alias(column) for column in code_columns(name))
            for name, frame in read.items()
        ]
        for name, highest in zip(read, pl.collect_all(queries), strict=True):
            for column, kind in code_columns(name).items():
                top = highest[column][0]
                if top is not None and top >= sizes[kind]:
                    return False
        return True

    @staticmethod
    def keys(name: str, table: pl.LazyFrame, codes: pl.DataFrame) -> pl.LazyFrame:
        """Select table ``name``'s key columns, row for row, as ``codes`` (:meth:`read`) where they are coded.

        The others are as ``table`` holds them. :func:`~mas_eval.data.validation.validate` (``"part"``) checks
        the keys' order and references on them.
        """
        coded = code_columns(name)
        plain = [column for column in TABLES[name].key if column not in coded]
        side_by_side = pl.concat(
            [codes.lazy().select(column for column in TABLES[name].key if column in coded), table.select(plain)],
            how="horizontal",
        )
        return side_by_side.select(TABLES[name].key)

    @staticmethod
    def coded(name: str, table: pl.LazyFrame, codes: pl.DataFrame) -> pl.LazyFrame:
        """Replace the key and label columns of table ``name`` of the shard by ``codes`` (:meth:`read`).

        ``table`` is the table as the Dataset scans it; the result is what :meth:`KeyCodes.encode`
        gives from the strings.
        """
        order = table.collect_schema().names()
        side_by_side = pl.concat([table.drop(list(code_columns(name))), codes.lazy()], how="horizontal")
        # As KeyCodes.encode: a row whose run is not in runs is dropped (validation reports it).
        return side_by_side.select(order).filter(pl.col(RUN_KEY).is_not_null())


def _how_lists_differ(recorded: str | None, counts: Mapping[str, int]) -> str:
    """How the label lists of a manifest differ from those a code file recorded (their lengths as JSON)."""
    try:
        before = json.loads(recorded) if recorded is not None else None
    except ValueError:
        before = None
    if not isinstance(before, dict):
        return "written by an earlier version"
    changed = [
        f"{counts[kind]:,} {kind} labels, not {before.get(kind)!r}"
        for kind in counts
        if before.get(kind) != counts[kind]
    ]
    return "; ".join(changed) if changed else "as many labels, but other ones or in another order"
