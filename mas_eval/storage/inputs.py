"""Input paths: what a path holds, and one clear error when a file cannot be read.

The commands take different kinds of input — a Dataset folder, a Scores folder, JSONL files —
and a user who passes one where another is expected should hear what the path *is* and what
was expected instead, not a "no such file" about a table inside it. A Parquet file that is
truncated or corrupt should be named, with the reason, instead of surfacing as a Polars
``ComputeError`` from deep inside a query.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> describe_path(folder / "missing"), describe_path(folder)
('does not exist', 'is a folder with no Dataset or Scores tables')
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.errors import MasEvalError, UnreadableFileError

__all__ = [
    "DATASET_MANIFEST",
    "SCORES_MANIFEST",
    "check_parquet_files",
    "describe_path",
    "is_dataset_folder",
    "is_scores_folder",
    "parquet_files",
    "reading",
]

DATASET_MANIFEST = "_dataset.json"
SCORES_MANIFEST = "_scores.json"

_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json", ".gz")


def _entries(folder: Path) -> set[str]:
    """The tables a folder holds: its ``<name>.parquet`` files and ``<name>/`` folders (not manifests,
    stored codes or staging entries, whose names start with ``_`` or ``.``)."""
    return {
        p.name.removesuffix(".parquet")
        for p in folder.iterdir()
        if not p.name.startswith(("_", ".")) and (p.is_dir() or p.name.endswith(".parquet"))
    }


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
    names = _entries(path)
    return "runs" in names and any(name not in TABLES for name in names)


def is_dataset_folder(path: Path) -> bool:
    """Whether ``path`` is a Dataset folder (a manifest, or a ``runs`` table and no Scores table)."""
    if not path.is_dir() or is_scores_folder(path):
        return False
    if (path / DATASET_MANIFEST).is_file():
        return True
    return any(name in TABLES for name in _entries(path))


def describe_path(path: str | Path) -> str:
    """What ``path`` is, as the rest of a sentence that starts with the path."""
    where = Path(path)
    if not where.exists():
        return "does not exist"
    if where.is_file():
        name = where.name.lower()
        if name.endswith(".parquet"):
            return "is a Parquet file (one table)"
        if name.endswith(_JSONL_SUFFIXES):
            return "is a JSON/JSONL file"
        return "is a file"
    if is_scores_folder(where):
        return "is a Scores folder (written by `mas-eval score`)"
    if is_dataset_folder(where):
        return "is a Dataset folder"
    return "is a folder with no Dataset or Scores tables"


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of a table: the file itself, or every ``*.parquet`` under its folder."""
    if path.is_file():
        return [path]
    # Hidden entries (a writer's staging files) are not part of the table, as for Polars' glob.
    return sorted(
        p for p in path.rglob("*.parquet") if not any(part.startswith(".") for part in p.relative_to(path).parts)
    )


#: How far a file is checked: its Parquet markers (two small reads), its footer, or every value.
_LEVELS = ("markers", "footer", "full")


def _problem(file: Path, level: str) -> str | None:
    """Why ``file`` cannot be read as Parquet, checked to ``level`` (:data:`_LEVELS`), or None."""
    import pyarrow as pa  # the error path's reader; not worth its import time otherwise
    import pyarrow.parquet as pq

    try:
        size = file.stat().st_size
        if size < 12:  # the magic bytes at both ends and the footer length: 12 bytes at least
            return f"{size} bytes, too short to be a Parquet file"
        with file.open("rb") as handle:
            head = handle.read(4)
            handle.seek(-4, 2)
            tail = handle.read(4)
        if head != b"PAR1" or tail != b"PAR1":
            return "not a Parquet file, or truncated: its Parquet markers are missing"
        # PyArrow, not Polars, on this error path: a Polars query that just panicked on a corrupt
        # page may have left its thread pool in a state where another read hangs.
        if level == "footer":
            pq.read_metadata(file)
        elif level == "full":
            pq.read_table(file)
            # What PyArrow reads, Polars may still refuse: its reader, and a filter that reads the
            # row groups' statistics (seen: invalid UTF-8 in a statistic only a query touched).
            pl.read_parquet(file)
            pl.scan_parquet(file).filter(pl.all_horizontal(pl.all().is_not_null())).select(pl.len()).collect()
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


def check_parquet_files(files: Iterable[Path], *, level: str = "markers") -> None:
    """Raise :class:`~mas_eval.errors.UnreadableFileError` naming the first file that is not Parquet.

    ``level="markers"`` (default) reads the 4 bytes at each end of every file: cheap enough for
    :meth:`Dataset.open <mas_eval.storage.dataset.Dataset.open>`, and it finds truncated and foreign
    files. ``"footer"`` also parses the schema; ``"full"`` decodes every value (corrupt pages).
    """
    for file in files:
        problem = _problem(file, level)
        if problem is not None:
            raise _unreadable(file, problem)


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
