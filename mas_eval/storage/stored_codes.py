"""Integer codes of a sharded Dataset's keys, written beside its shards so that scoring reads integers.

Scoring groups, joins and sorts integer codes of the keys (:mod:`mas_eval.metrics.codes`).
Encoding them from strings means reading every ``run_id``, ``agent_id``, ``alternative`` and
``criterion`` string and looking it up in a code book; on a shard of 62,500 runs of the
decision benchmark that took about 0.25 s, as long as everything else scoring does. A sharded
Dataset therefore stores the codes once, when it is written::

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
strings, bit for bit (``tests/test_stored_codes.py``). A code file records, in its Parquet
metadata, the SHA-256 of the shard file it was computed from; a shard whose files changed
since, or whose code file is missing or unreadable, is scored from its strings. Codes are
written only when every kind of label has at most :data:`MAX_LABELS` values and every shard's
run ids are distinct and not null; otherwise scoring reads strings, and reports bad keys as it
always does.

Dataset.open skips folders whose names start with ``_``, so the code files are never
mistaken for a table.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.data.schema import LABEL_COLUMNS, LABEL_KINDS, RUN_KEY
from mas_eval.storage.inputs import read_parquet, scan_parquet
from mas_eval.storage.sharding import PART, SHARD_COLUMN, shard_folder, sharded

__all__ = ["CODES_FOLDER", "MAX_LABELS", "ShardCodes", "code_columns", "write_codes"]

#: The folder of the code files, inside the Dataset's folder.
CODES_FOLDER = "_codes"
#: The most labels of one kind for which codes are stored (the list of labels is in ``_dataset.json``).
MAX_LABELS = 10_000
#: The Parquet metadata key of a code file that holds its source file's SHA-256.
SOURCE_HASH = "mas_eval.codes.source_sha256"
#: The codes' dtype: that of :data:`mas_eval.metrics.codes.CODE`.
CODE = pl.UInt32


def code_columns(name: str) -> dict[str, str | None]:
    """The coded columns of table ``name``: ``run_id`` (kind ``None``), then each label column and its kind."""
    return {RUN_KEY: None, **LABEL_COLUMNS.get(name, {})}


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex (about 5 ms for a shard's 9 MB of files)."""
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
    return None if any(len(book) > MAX_LABELS for book in books.values()) else books


def write_codes(root: Path, names: Iterable[str], shards: int) -> dict[str, Any] | None:
    """Write the code files of the sharded Dataset at ``root`` (its tables ``names`` already written).

    Returns the ``"codes"`` entry of ``_dataset.json``, or None (and writes nothing) when the
    codes cannot be stored: a kind with more than :data:`MAX_LABELS` labels, or a shard whose run
    ids repeat or are null.
    """
    tables = [name for name in names if sharded(name)]
    books = _label_books(root, tables, shards)
    if books is None:
        return None
    labels = {kind: pl.Enum(book) for kind, book in books.items()}
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
            frame.select(coded).collect().write_parquet(target, metadata={SOURCE_HASH: sha256_of(source)})
    return {"folder": CODES_FOLDER, "hash": "sha256", "labels": books}


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
        Each kind's sorted labels, as ``_dataset.json`` lists them.
    files
        The shard's data files of each table, as the Dataset reads them.
    """

    root: Path
    index: int
    labels: Mapping[str, list[str]]
    files: Mapping[str, list[Path]]
    _checked: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, root: Path | None, entry: Any, index: int, files: Mapping[str, list[Path]]) -> ShardCodes | None:
        """The codes of shard ``index`` that ``entry`` (``_dataset.json``'s ``"codes"``) describes, if it is one."""
        if root is None or not isinstance(entry, Mapping) or entry.get("folder") != CODES_FOLDER:
            return None
        labels = entry.get("labels")
        if not isinstance(labels, Mapping) or set(labels) != set(LABEL_KINDS):
            return None
        if not all(isinstance(book, list) and all(isinstance(x, str) for x in book) for book in labels.values()):
            return None
        return cls(root=root, index=index, labels=dict(labels), files=dict(files))

    def current(self, name: str) -> bool:
        """Whether table ``name``'s codes describe its shard file as it is now (one file, same SHA-256)."""
        if name not in self._checked:
            self._checked[name] = self._matches(name)
        return self._checked[name]

    def _matches(self, name: str) -> bool:
        files, codes = self.files.get(name, []), code_file(self.root, name, self.index)
        if len(files) != 1 or not codes.is_file():
            return False
        try:
            recorded = pl.read_parquet_metadata(codes).get(SOURCE_HASH)
        except (OSError, pl.exceptions.PolarsError):
            return False
        return recorded is not None and recorded == sha256_of(files[0])

    def books(self) -> dict[str, pl.Series]:
        """Each kind's labels as a ``String`` Series (a :class:`~mas_eval.metrics.codes.KeyCodes` code book)."""
        return {kind: pl.Series(kind, book, dtype=pl.String) for kind, book in self.labels.items()}

    def read(self, names: Iterable[str]) -> dict[str, pl.DataFrame] | None:
        """The code files of tables ``names``, read; None if one is not :meth:`current` or cannot be read.

        Codes are derived data: a shard whose code file is missing, stale or corrupt is scored
        from its strings rather than failing.
        """
        if not all(self.current(name) for name in names):
            return None
        try:
            return {name: read_parquet(code_file(self.root, name, self.index)) for name in names}
        except (OSError, pl.exceptions.PolarsError):
            return None

    @staticmethod
    def coded(name: str, table: pl.LazyFrame, codes: pl.DataFrame) -> pl.LazyFrame:
        """Table ``name`` of the shard (``table``, as the Dataset scans it) with its key and label
        columns replaced by ``codes`` (:meth:`read`): what :meth:`KeyCodes.encode` gives from the strings."""
        order = table.collect_schema().names()
        side_by_side = pl.concat([table.drop(list(code_columns(name))), codes.lazy()], how="horizontal")
        # As KeyCodes.encode: a row whose run is not in runs is dropped (validation reports it).
        return side_by_side.select(order).filter(pl.col(RUN_KEY).is_not_null())
