"""Input paths: what a path holds, the files of a table, and one clear error when a file cannot be read.

The commands take different kinds of input — a Dataset folder, a Scores folder, JSONL files —
and a user who passes one where another is expected should hear what the path *is* and what
was expected instead, not a "no such file" about a table inside it. A Parquet file that is
truncated or corrupt should be named, with the reason, instead of surfacing as a Polars
``ComputeError`` from deep inside a query.

A path the user gives is that path and nothing else: Polars reads a path with ``*``, ``?``,
``[`` or ``{`` in it as a glob pattern (a Dataset ``grp?`` would read its neighbour ``grp1`` too),
so this module lists a table's files with its own directory walk and hands Polars exactly
those files with ``glob=False`` (:func:`scan_parquet`, :func:`read_parquet`, :func:`read_csv`);
no other module calls Polars' readers on a path. A FIFO, a socket or a device is named as what
it is and never opened (opening a FIFO blocks until something writes to it).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> describe_path(folder / "missing"), describe_path(folder)
('does not exist', 'is a folder with no Dataset or Scores tables')
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.errors import MasEvalError, SchemaError, UnreadableFileError

__all__ = [
    "DATASET_MANIFEST",
    "SCORES_MANIFEST",
    "describe_path",
    "input_file",
    "is_dataset_folder",
    "is_scores_folder",
    "parquet_files",
    "read_csv",
    "read_ipc",
    "read_parquet",
    "read_tables",
    "reading",
    "scan_parquet",
    "scan_table_folder",
    "table_entries",
    "table_schema",
]

DATASET_MANIFEST = "_dataset.json"
SCORES_MANIFEST = "_scores.json"

_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json", ".gz")

#: What a path that is neither a file nor a folder is, by the test of its mode.
_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISCHR, "a character device"),
)


def _kind(path: Path) -> str:
    """Say what ``path`` is: ``"file"``, ``"folder"``, ``"missing"``, ``"broken link"``, or another kind.

    Another kind is a FIFO, a socket, a device (:data:`_SPECIAL_KINDS`). Symbolic links are followed;
    the answer comes from ``stat`` alone, so that nothing is opened (opening a FIFO blocks).
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "broken link" if path.is_symlink() else "missing"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), "neither a file nor a folder")


def _entries(folder: Path) -> list[tuple[str, Path]]:
    """List the tables a folder holds, as (name, path), in name order.

    They are its ``<name>.parquet`` entries and ``<name>/`` folders (not manifests, stored codes or
    staging entries, whose names start with ``_`` or ``.``). A name may appear twice (a file and a
    folder): :func:`table_entries` refuses that.
    """
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_dir():
            found.append((entry.name, entry))
        elif entry.name.endswith(".parquet"):
            found.append((entry.name.removesuffix(".parquet"), entry))
    return found


def is_scores_folder(path: Path) -> bool:
    """Whether ``path`` is a folder written by :meth:`~mas_eval.scoring.pipeline.Scores.write`."""
    if not path.is_dir():
        return False
    if (path / SCORES_MANIFEST).is_file():
        return True
    if (path / DATASET_MANIFEST).is_file():
        return False
    # Without a manifest: a runs table beside a table the Dataset schema does not define (an
    # output table of some metric family, whichever).
    names = {name for name, _ in _entries(path)}
    return "runs" in names and any(name not in TABLES for name in names)


def is_dataset_folder(path: Path) -> bool:
    """Whether ``path`` is a Dataset folder (a manifest, or a ``runs`` table and no Scores table)."""
    if not path.is_dir() or is_scores_folder(path):
        return False
    if (path / DATASET_MANIFEST).is_file():
        return True
    return any(name in TABLES for name, _ in _entries(path))


def describe_path(path: str | Path) -> str:
    """Say what ``path`` is, as the rest of a sentence that starts with the path.

    Examples
    --------
    >>> describe_path("/dev/null")
    'is a character device'
    """
    where = Path(path)
    try:
        kind = _kind(where)
    except OSError as exc:  # a folder on the way that cannot be searched
        return f"cannot be looked at ({(exc.strerror or str(exc)).lower()})"
    if kind == "missing":
        return "does not exist"
    if kind == "broken link":
        return f"is a symbolic link to {os.readlink(where)}, which does not exist"
    if kind == "file":
        name = where.name.lower()
        if name.endswith(".parquet"):
            return "is a Parquet file (one table)"
        if name.endswith(_JSONL_SUFFIXES):
            return "is a JSON/JSONL file"
        return "is a file"
    if kind != "folder":
        return f"is {kind}"
    if is_scores_folder(where):
        return "is a Scores folder (written by `mas-eval score`)"
    if is_dataset_folder(where):
        return "is a Dataset folder"
    return "is a folder with no Dataset or Scores tables"


def input_file(
    path: str | Path, expected: str, fix: str, *, where: str = "", error: type[MasEvalError] = UnreadableFileError
) -> Path:
    """Return ``path`` if it is a file to read (a symbolic link to one counts); else raise ``error``.

    The error says what the path is instead of ``expected``, and ``fix`` (after ``where``, the
    input's name, if given).

    Checked from the path's kind alone, before anything opens it: a FIFO given as an input would
    block the command until something writes to it.

    Examples
    --------
    >>> input_file("/dev/null", "a CSV file", "pass the CSV")
    Traceback (most recent call last):
    ...
    mas_eval.errors.UnreadableFileError: /dev/null is a character device, not a CSV file; pass the CSV
    """
    file = Path(path)
    if file.is_file():
        return file
    what = describe_path(file)
    prefix = f"{where}: " if where else ""
    if what == "does not exist":
        msg = f"{where or file}: no such file; {fix}"
    else:
        msg = f"{prefix}{file} {what}, not {expected}; {fix}"
    raise error(msg)


def table_entries(folder: Path) -> dict[str, Path]:
    """Find the tables of a Dataset or Scores folder, by name: ``<name>.parquet`` or the folder ``<name>/``.

    Raises
    ------
    SchemaError
        A table is there twice, as a file and as a folder (the one read would be a guess), or a
        ``<name>.parquet`` entry is not a file (a FIFO, a socket, a device).
    """
    tables: dict[str, Path] = {}
    for name, entry in _entries(folder):
        if name in tables:
            file, other = sorted((tables[name], entry), key=lambda p: p.is_dir())
            msg = (
                f"{folder}: table {name!r} is there twice, as the file {file} and as the folder {other}; "
                "a table is one or the other: remove (or move away) the one that is not current"
            )
            raise SchemaError(msg)
        if not entry.is_dir():
            _check_is_file(entry)
        tables[name] = entry
    return tables


def _check_is_file(file: Path) -> None:
    """Raise if a Parquet file of a table is not a file (a FIFO, a device, a broken link); never open it."""
    kind = _kind(file)
    if kind == "missing":  # named by a manifest, not found by a walk
        msg = f"{file}: no such file, so the folder is incomplete; restore it from a copy or write the folder again"
        raise SchemaError(msg)
    if kind != "file":
        msg = f"{file} {describe_path(file)}, not a Parquet file; a table is Parquet files: remove it or replace it"
        raise SchemaError(msg)


def _walk(folder: Path, followed: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Yield every ``*.parquet`` entry under ``folder``, depth first in name order.

    Hidden entries (a writer's staging files, names starting with ``.``) are skipped, symbolic links followed.
    """
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if entry.is_symlink():  # a link back to a folder it lies in would never end
                target = os.path.realpath(entry.path)
                if target in followed:
                    msg = f"{entry.path}: a symbolic link that leads back into itself; remove the link"
                    raise SchemaError(msg)
                yield from _walk(Path(entry.path), followed | {target})
            else:
                yield from _walk(Path(entry.path), followed)
        elif entry.name.endswith(".parquet"):
            if not entry.is_file():  # a FIFO, a device or a broken link: never opened
                _check_is_file(Path(entry.path))
            yield Path(entry.path)


def parquet_files(path: Path) -> list[Path]:
    """List the Parquet files of a table: the file itself, or every ``*.parquet`` under its folder.

    Listed by walking the folder (never a glob pattern: the path's characters are its own);
    hidden entries (names starting with ``.``) are not part of the table.

    Raises
    ------
    SchemaError
        A ``*.parquet`` entry is not a file (a FIFO, a device, a broken link), or a symbolic
        link loops.
    """
    if path.is_dir():
        return list(_walk(path))
    _check_is_file(path)
    return [path]


# -- Polars' readers, on exactly the files given ------------------------------------------------


def scan_parquet(files: Path | Sequence[Path], *, schema: pl.Schema | None = None, **options: Any) -> pl.LazyFrame:
    """Polars' ``scan_parquet`` of exactly ``files``: no glob pattern, no hive partition columns.

    ``schema`` (from :func:`table_schema`) spares Polars reading the first file's footer again.
    """
    sources = [files] if isinstance(files, Path) else list(files)
    return pl.scan_parquet(sources, glob=False, hive_partitioning=False, schema=schema, **options)


def read_parquet(files: Path | Sequence[Path], **options: Any) -> pl.DataFrame:
    """Polars' ``read_parquet`` of exactly ``files``: no glob pattern, no hive partition columns."""
    sources = [files] if isinstance(files, Path) else list(files)
    return pl.read_parquet(sources, glob=False, hive_partitioning=False, **options)


def read_ipc(file: Path) -> pl.DataFrame:
    """Read an uncompressed Arrow IPC file that this package wrote, mapped into memory, not copied.

    The files are a worker's tables (:func:`~mas_eval.scoring.shards.score_shards_in_memory`). They
    are read through PyArrow's memory map, since Polars' ``read_ipc`` copies every buffer
    (docs/performance.md).
    """
    import pyarrow as pa  # a dependency of mas_eval; imported here, where it is needed

    # Not closed here: the table's buffers hold the map, which lives as long as they do.
    table = pa.ipc.open_file(pa.memory_map(str(file))).read_all()
    return pl.DataFrame(pl.from_arrow(table, rechunk=False))


def read_csv(file: Path, **options: Any) -> pl.DataFrame:
    """Polars' ``read_csv`` of exactly ``file`` (no glob pattern)."""
    return pl.read_csv(file, glob=False, **options)


def _footer_schema(file: Path) -> pl.Schema:
    """Read the schema in ``file``'s footer, as Polars reads it; an unreadable file is named."""
    problem = _problem(file, "markers")  # a file that is not Parquet never reaches Polars' reader
    if problem is None:
        try:
            return scan_parquet(file).collect_schema()
        except (Exception, pl.exceptions.PanicException) as exc:
            problem = _problem(file, "footer") or str(exc).strip().split("\n")[0]
    raise _unreadable(file, problem)


#: How a Parquet footer spells its ``ARROW:schema`` key-value entry in Thrift's compact protocol:
#: the key (a binary of length 12) and the header of the value, a binary field.
_ARROW_SCHEMA_KEY = b"\x0cARROW:schema\x18"


def _arrow_schema_entry(file: Path) -> bytes | None:
    """Find the ``ARROW:schema`` entry of a Parquet file's footer, as written, or None (not Parquet, or no entry).

    Polars and PyArrow record the Arrow schema of what they write there, so two files whose
    entries are equal have the same columns and types. Finding it among the footer's bytes costs
    a read, far less than decoding the footer (docs/performance.md): at open, a table of many
    shards compares them and decodes only a footer that differs.
    """
    with file.open("rb") as handle:
        if handle.read(4) != b"PAR1":
            return None
        size = handle.seek(0, os.SEEK_END)
        handle.seek(-8, os.SEEK_END)
        tail = handle.read(8)
        length = int.from_bytes(tail[:4], "little")
        if tail[4:] != b"PAR1" or length > size - 12:
            return None
        handle.seek(-8 - length, os.SEEK_END)
        footer = handle.read(length)
    # The last occurrence: the key-value metadata follows the row groups and their statistics.
    at = footer.rfind(_ARROW_SCHEMA_KEY)
    if at < 0:
        return None
    position, length, shift = at + len(_ARROW_SCHEMA_KEY), 0, 0
    while position < len(footer):  # the value's length, a varint
        byte = footer[position]
        position, length, shift = position + 1, length | (byte & 0x7F) << shift, shift + 7
        if byte < 0x80:
            break
    return footer[position : position + length]


def table_schema(table: str, files: Sequence[Path]) -> pl.Schema:
    """Return the schema that every file of ``table`` has, read from their footers.

    Polars reads several files as one table only when they have the same columns, of the same
    types, in any order; this says which two files differ and how, instead of Polars'
    ``SchemaError`` halfway through a query. The first file's footer is decoded; another file's
    only if its recorded Arrow schema differs from the first's (:func:`_arrow_schema_entry`),
    so that opening a Dataset of many shards stays cheap.

    Raises
    ------
    UnreadableFileError
        A file is not Parquet, or is truncated (it is named).
    SchemaError
        A file is not a file (a FIFO, a device: never opened), or two files differ: a column
        one has and the other lacks, or a column of two types.
    """
    if not files:
        msg = f"table {table!r} has no files"
        raise SchemaError(msg)
    for file in files:  # files a Scores manifest names are not walked: their kinds are checked here
        _check_is_file(file)
    first = (files[0], _footer_schema(files[0]))
    entry = _arrow_schema_entry(files[0])
    for file in files[1:]:
        if entry is None or _arrow_schema_entry(file) != entry:
            _same_columns(table, first, (file, _footer_schema(file)))
    return first[1]


def _same_columns(table: str, first: tuple[Path, pl.Schema], other: tuple[Path, pl.Schema]) -> None:
    """Refuse two files of ``table`` whose columns differ (by name or type; their order may differ)."""
    (a, left), (b, right) = first, other
    fix = "write the table's files again with the same columns and types, or remove the file that does not belong"
    for lacking, having, lacked in (
        (b, a, [c for c in left if c not in right]),
        (a, b, [c for c in right if c not in left]),
    ):
        if lacked:
            msg = f"table {table!r}: {lacking} lacks column(s) {', '.join(map(repr, lacked))} that {having} has; {fix}"
            raise SchemaError(msg)
    differ = [c for c in left if left[c] != right[c]]
    if differ:
        shown = ", ".join(f"{c!r} is {right[c]} in {b} but {left[c]} in {a}" for c in differ)
        msg = f"table {table!r}: column {shown}; {fix}"
        raise SchemaError(msg)


# -- hive partitions: a table folder whose sub-folders name a column's value (system=mas/) -------

#: The folder name of a null partition value, as Hive, Spark and Polars write it.
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def _partition(table_folder: Path, file: Path) -> dict[str, str | None]:
    """Read the ``column=value`` folders between a table's folder and one of its files, outermost first.

    The value is percent-decoded, as Hive writes it.
    """
    values: dict[str, str | None] = {}
    for part in file.relative_to(table_folder).parts[:-1]:
        column, equals, value = part.partition("=")
        if equals and column:
            decoded = unquote(value)
            values[unquote(column)] = None if decoded == _HIVE_NULL else decoded
    return values


def _partition_dtype(values: Iterable[str | None]) -> pl.DataType:
    """Infer the type of a partition column no file holds from its folders' values: integers, numbers or text."""
    given = pl.Series([v for v in values if v is not None], dtype=pl.String)
    for dtype in (pl.Int64, pl.Float64):
        if given.len() and given.cast(dtype, strict=False).null_count() == 0:
            return dtype
    return pl.String


def _check_partition(table: str, column: str, folder: str | None, files: list[Path], dtype: pl.DataType) -> None:
    """Every value of ``column`` in ``files`` is the partition folder's ``folder`` value (or null)."""
    expected = pl.lit(folder, dtype=pl.String).cast(dtype, strict=False)
    disagrees = pl.col(column).is_not_null() & (expected.is_null() | (pl.col(column) != expected))
    for file in files:
        found = scan_parquet(file).select(column).filter(disagrees).head(1).collect()
        if found.height:
            value = found[column][0]
            msg = (
                f"table {table!r}, column {column!r}: {file} holds {value!r}, but it lies in the partition folder "
                f"{column}={folder if folder is not None else _HIVE_NULL}, which says {folder!r}; a partition "
                f"folder and the file's own column must agree: move the file to the folder of its value, or "
                f"correct the column (or drop it from the file, and the folder gives it)"
            )
            raise SchemaError(msg)


def scan_table_folder(table: str, entry: Path, files: list[Path]) -> pl.LazyFrame:
    """Table ``table`` of a Dataset folder (``entry``: its file, or its folder of ``files``), lazily.

    A folder may be hive-partitioned: a sub-folder ``column=value`` gives every row of its files
    that value of ``column`` when the files lack the column (and fills its nulls when they have
    it). A file whose own value disagrees with its folder's is refused rather than relabelled:
    the check reads that column of such files, which costs nothing in the usual layout, where
    partitioned files do not hold the column (Polars, Spark and PyArrow write them so).

    Raises
    ------
    UnreadableFileError, SchemaError
        As :func:`table_schema`; and a file whose column disagrees with its partition folder.
    """
    schema = table_schema(table, files)
    partitions = [_partition(entry, file) for file in files] if entry.is_dir() else []
    if not any(partitions):
        return scan_parquet(files, schema=schema)
    columns = list(dict.fromkeys(column for values in partitions for column in values))
    dtypes = {
        column: schema[column]
        if column in schema
        else _partition_dtype(values[column] for values in partitions if column in values)
        for column in columns
    }
    parts = []
    for values, group in itertools.groupby(zip(partitions, files, strict=True), key=lambda pair: pair[0]):
        together = [file for _, file in group]
        filled = []
        for column, value in values.items():
            given = pl.lit(value, dtype=pl.String).cast(dtypes[column], strict=False)
            if column in schema:
                _check_partition(table, column, value, together, dtypes[column])
                filled.append(pl.coalesce(pl.col(column), given).alias(column))
            else:
                filled.append(given.alias(column))
        parts.append(scan_parquet(together, schema=schema).with_columns(filled))
    return pl.concat(parts, how="diagonal")


#: How far a file is checked: its Parquet markers (two small reads), its footer, or every value.
_LEVELS = ("markers", "footer", "full")


def _marker_problem(file: Path) -> str | None:
    """Why ``file`` is not Parquet by its size and the magic bytes at both ends, or None."""
    try:
        size = file.stat().st_size
        if size < 12:  # the magic bytes at both ends and the footer length: 12 bytes at least
            return f"{size} bytes, too short to be a Parquet file"
        with file.open("rb") as handle:
            head = handle.read(4)
            handle.seek(-4, 2)
            tail = handle.read(4)
    except OSError as exc:
        return (exc.strerror or str(exc)).strip().splitlines()[0]
    if head != b"PAR1" or tail != b"PAR1":
        return "not a Parquet file, or truncated: its Parquet markers are missing"
    return None


def _problem(file: Path, level: str) -> str | None:
    """Why ``file`` cannot be read as Parquet, checked to ``level`` (:data:`_LEVELS`), or None."""
    problem = _marker_problem(file)
    if problem is not None or level == "markers":
        # The check made whenever a table is opened: it needs no PyArrow, whose import is slow.
        return problem
    import pyarrow as pa  # the error path's reader; not worth its import time otherwise
    import pyarrow.parquet as pq

    try:
        # PyArrow, not Polars, on this error path: a Polars query that just panicked on a corrupt
        # page may have left its thread pool in a state where another read hangs.
        if level == "footer":
            pq.read_metadata(file)
        elif level == "full":
            pq.read_table(file)
            # What PyArrow reads, Polars may still refuse: its reader, and a filter that reads the
            # row groups' statistics (seen: invalid UTF-8 in a statistic only a query touched).
            read_parquet(file)
            scan_parquet(file).filter(pl.all_horizontal(pl.all().is_not_null())).select(pl.len()).collect()
    except OSError as exc:
        return (exc.strerror or str(exc)).strip().splitlines()[0]
    except (pa.ArrowException, pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError) as exc:
        # ValueError: a UnicodeDecodeError of a corrupt name or key-value metadata, among others.
        first = str(exc).strip().splitlines()
        return first[0] if first else type(exc).__name__
    return None


def _unreadable(file: Path, problem: str) -> UnreadableFileError:
    msg = f"{file}: unreadable Parquet file ({problem}); restore it from a copy or re-create it"
    return UnreadableFileError(msg)


@contextlib.contextmanager
def reading(files: Iterable[Path]) -> Iterator[None]:
    """Turn a failure to read one of ``files`` inside the block into an error naming that file.

    A query over several Parquet files fails with Polars' own error, which rarely says which
    file is at fault. On that error path only, the files are checked one by one, footers
    first, then in full; the first bad one is reported. When every file reads, the original
    error is re-raised: it was not about reading.
    """
    try:
        yield
    except MasEvalError:
        raise
    except (Exception, pl.exceptions.PanicException) as exc:
        # Any exception, not only Polars' (a corrupt name surfaces as a UnicodeDecodeError):
        # whatever cannot be blamed on a file is re-raised as it was.
        candidates = list(files)
        for level in ("footer", "full"):
            for file in candidates:
                problem = _problem(file, level)
                if problem is not None:
                    raise _unreadable(file, problem) from exc
        raise


def read_tables(
    files: Mapping[str, Sequence[Path]], *, counted: Mapping[str, Sequence[Path]] | None = None
) -> tuple[dict[str, pl.DataFrame], dict[str, int]]:
    """Read each table of ``files`` (its name → its Parquet files) whole, and count the rows of ``counted``.

    A table is read with the schema its files share (:func:`table_schema`); a table of ``counted``
    is counted from its files' footers, no value read. A failure to read a file names it
    (:func:`reading`): first among the tables read, then among those counted.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import polars as pl
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     one, two = Path(tmp) / "a.parquet", Path(tmp) / "b.parquet"
    ...     pl.DataFrame({"run_id": ["r1", "r2"]}).write_parquet(one)
    ...     pl.DataFrame({"run_id": ["r3"]}).write_parquet(two)
    ...     read, rows = read_tables({"runs": [one, two]}, counted={"agents": [one]})
    >>> read["runs"]["run_id"].to_list(), rows
    (['r1', 'r2', 'r3'], {'agents': 2})
    """
    with reading([file for paths in files.values() for file in paths]):
        read = {name: read_parquet(paths, schema=table_schema(name, paths)) for name, paths in files.items()}
    counted = counted or {}
    with reading([file for paths in counted.values() for file in paths]):
        rows = {name: scan_parquet(paths).select(pl.len()).collect().item() for name, paths in counted.items()}
    return read, rows
