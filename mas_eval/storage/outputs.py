"""Writing outputs: atomic folders and files, their manifests, and the checks before any work.

Every writer of the package (Dataset, Scores, comparison tables, JSONL export and rejects,
the demo) goes through here, so that

* an output appears whole or not at all, and after a failure the file system is as it was
  (the staging file or folder is removed, and so are the missing parent folders it created);
* an existing output is replaced only when asked, and never when it is, holds, or lies inside
  one of the inputs (:func:`check_target`);
* a location that cannot be written (read-only, a file in the way) is reported up front, as
  one :class:`~mas_eval.errors.OutputError` naming the path, not as an ``OSError`` halfway.

Manifests are written and read by :mod:`mas_eval.storage.manifests`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from mas_eval.constraints import Options, check_parameter
from mas_eval.errors import InvalidParameterError, OutputError, OutputExistsError, option

__all__ = [
    "COMPRESSIONS",
    "atomic_directory",
    "atomic_file",
    "check_compression",
    "check_suffix",
    "check_target",
    "same_path",
]

PathLike = str | Path

#: The Parquet compressions an output's files may be written with: Polars' choices.
COMPRESSIONS: tuple[str, ...] = ("uncompressed", "lz4", "snappy", "zstd", "gzip", "brotli")


def check_suffix(path: PathLike, formats: Sequence[str], what: str) -> str:
    """The format ``path``'s suffix names (one of ``formats``, lower case), or an error naming those that exist.

    >>> check_suffix("out/report.HTML", (".html", ".md"), "a report")
    '.html'
    >>> check_suffix("out/report", (".html", ".md"), "a report")
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: out/report: a report is written as .html, .md (the suffix picks the format), not a path without a suffix; change the output path's suffix
    """  # noqa: E501
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in formats:
        msg = (
            f"{target}: {what} is written as {', '.join(formats)} (the suffix picks the format), "
            f"not {suffix or 'a path without a suffix'}; change the output path's suffix"
        )
        raise InvalidParameterError(msg)
    return suffix


def check_compression(compression: object) -> str:
    """``compression`` if it is one of :data:`COMPRESSIONS`, else an :class:`InvalidParameterError`."""
    check_parameter("compression", compression, [Options(COMPRESSIONS)], where="score")
    return str(compression)


def _resolved(path: PathLike) -> Path:
    return Path(path).expanduser().resolve(strict=False)


def same_path(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name the same place once resolved (``~``, ``..``, symbolic links)."""
    return _resolved(a) == _resolved(b)


def _clash(target: Path, inputs: Iterable[PathLike]) -> tuple[Path, str] | None:
    """The first input that ``target`` is, holds or lies inside, and how."""
    where = _resolved(target)
    for given in inputs:
        source = _resolved(given)
        if where == source:
            return Path(given), "is"
        if where.is_relative_to(source):
            return Path(given), "lies inside"
        if source.is_relative_to(where):
            return Path(given), "holds"
    return None


def _existing_ancestor(target: Path) -> Path:
    """The nearest ancestor of ``target`` (itself excluded) that exists."""
    parent = target.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def _describe(exc: OSError) -> str:
    """An ``OSError`` in words: ``read-only file system``, ``permission denied``..."""
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


def check_target(path: PathLike, *, overwrite: bool, inputs: Iterable[PathLike] = ()) -> Path:
    """``path`` as a Path, once it is known that the output can go there.

    Called before any work, so that a command fails in a second, not after the computation.

    Raises
    ------
    OutputError
        ``path`` is, holds, or lies inside one of ``inputs`` (whatever ``overwrite`` says); a
        file stands where a parent folder must be; or the location cannot be written
        (read-only, permission denied).
    OutputExistsError
        ``path`` exists and ``overwrite`` is false.
    """
    target = Path(path)
    clash = _clash(target, inputs)
    if clash is not None:
        source, how = clash
        harm = {"is": "replace", "holds": "delete", "lies inside": "change"}[how]
        msg = (
            f"{target}: the output {how} the input {source}, so writing it would {harm} the input; "
            "choose an output path outside the inputs"
        )
        raise OutputError(msg)
    if target.exists() and not overwrite:
        msg = f"{target} already exists; pass {option('overwrite')} to replace it"
        raise OutputExistsError(msg)
    ancestor = _existing_ancestor(target)
    if not ancestor.is_dir():
        msg = f"{target}: cannot create it, because {ancestor} is a file, not a folder; choose another output path"
        raise OutputError(msg)
    if not os.access(ancestor, os.W_OK | os.X_OK):
        reason = "read-only file system" if _read_only(ancestor) else "permission denied"
        msg = f"{target}: cannot write in {ancestor} ({reason}); choose an output path you can write to"
        raise OutputError(msg)
    return target


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


#: How long a failed write's leftovers are chased: a failing Polars sink can still create its file
#: a moment after it raised, and a removal that ran meanwhile leaves the folder behind (measured:
#: 17 of 300 failed Dataset writes left their staging folder with the other core busy).
_REMOVE_ATTEMPTS, _REMOVE_PAUSE = 50, 0.02


def _remove(path: Path) -> None:
    """Remove a file or folder, again while something still writes into it (at most about 1 s)."""
    for _ in range(_REMOVE_ATTEMPTS):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        if not path.exists() and not path.is_symlink():
            return
        time.sleep(_REMOVE_PAUSE)


def _staging_name(target: Path, kind: str) -> Path:
    return target.parent / f".{target.name}.{kind}-{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def _parents(target: Path) -> Iterator[None]:
    """Create ``target``'s missing parent folders; remove those created if the block fails."""
    missing = []
    parent = target.absolute().parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    try:
        for folder in reversed(missing):
            folder.mkdir()
        yield
    except BaseException:
        for folder in missing:  # deepest first; a folder something else wrote into stays
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


#: The errors of a write that the location, not the data, is to blame for.
_WRITE_ERRORS = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT)


@contextlib.contextmanager
def _as_output_error(target: Path, staging: Path) -> Iterator[None]:
    """Turn an ``OSError`` about the output (its folder, staging path or target) into an OutputError.

    An ``OSError`` about any other path (an input that vanished, say) passes through unchanged.
    """
    try:
        yield
    except OSError as exc:
        names = [Path(os.fsdecode(n)).absolute() for n in (exc.filename, exc.filename2) if n is not None]
        ours = [staging.absolute(), target.absolute(), target.absolute().parent]
        about_output = any(n in ours or n.is_relative_to(staging.absolute()) for n in names)
        # Without a file name (errors raised by Polars' writers), only a write failure is ours.
        if not about_output and (names or exc.errno not in _WRITE_ERRORS):
            raise
        if exc.errno == errno.ENOSPC:
            fix = "free some space or choose another output path"
        else:
            fix = "choose an output path you can write to"
        msg = f"{target}: cannot be written ({_describe(exc)}); {fix}"
        raise OutputError(msg) from exc


@contextlib.contextmanager
def atomic_directory(path: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = ()) -> Iterator[Path]:
    """Yield a temporary folder beside ``path`` that replaces ``path`` only if the block succeeds.

    A failure anywhere leaves no trace: the temporary folder is removed, and so are the parent
    folders created for it; an existing ``path`` is untouched. An existing ``path`` (a folder
    or a file) is replaced only with ``overwrite=True``. :func:`check_target` runs first, with
    ``inputs``.
    """
    target = check_target(path, overwrite=overwrite, inputs=inputs)
    staging = _staging_name(target, "tmp")
    with _as_output_error(target, staging), _parents(target):
        try:
            staging.mkdir()
            yield staging
            if target.exists() or target.is_symlink():
                retired = _staging_name(target, "old")
                target.rename(retired)
                staging.rename(target)
                _remove(retired)
            else:
                staging.rename(target)
        finally:
            if staging.exists():
                _remove(staging)


@contextlib.contextmanager
def atomic_file(path: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = ()) -> Iterator[Path]:
    """Yield a temporary file path beside ``path``, renamed over ``path`` only if the block succeeds.

    The temporary file is created (empty) before the block runs, so that a location that
    cannot be written fails at once. A failure leaves no trace, as with :func:`atomic_directory`.
    """
    target = check_target(path, overwrite=overwrite, inputs=inputs)
    if target.is_dir():
        msg = f"{target} is a folder; the output is a file: choose a file path"
        raise OutputError(msg)
    staging = _staging_name(target, "tmp")
    with _as_output_error(target, staging), _parents(target):
        try:
            staging.touch(exist_ok=False)
            yield staging
            staging.replace(target)
        finally:
            if staging.exists():
                _remove(staging)
