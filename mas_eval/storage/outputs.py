"""Writing outputs: atomic folders and files, their manifests, and the checks before any work.

Every writer of the package (Dataset, Scores, comparison tables, JSONL export and rejects,
the demo) goes through here, so that

* an output appears whole or not at all, and after a failure the file system is as it was
  (the staging folder is removed, and so are the missing parent folders it created); an output
  of several parts (a Markdown report and its figures) is checked, staged and put in place as
  one (:func:`atomic_outputs`);
* staging left by a writer that was killed (SIGKILL, a lost machine) is recognised and removed
  by the next write beside it, and a live writer's never is (:func:`sweep_staging`);
* an existing output is replaced only when asked, never when it is, holds, or lies inside
  one of the inputs (:func:`check_target`), and never when it appeared while the output was
  written (an atomic rename that refuses to replace);
* a location that cannot be written (read-only, a file in the way) is reported up front, and a
  write that fails there (disk full, file too large) at the end, as one
  :class:`~mas_eval.errors.OutputError` naming the path and the fix, not as an ``OSError`` or a
  Polars error (:func:`write_failure`).

Manifests are written and read by :mod:`mas_eval.storage.manifests`.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import functools
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from mas_eval.constraints import Options, check_parameter
from mas_eval.errors import InvalidParameterError, MasEvalError, OutputError, OutputExistsError, option

try:
    import fcntl
    import resource
except ImportError:  # pragma: no cover - Windows: no locks, so no staging is ever taken for dead
    fcntl = resource = None  # type: ignore[assignment]

__all__ = [
    "COMPRESSIONS",
    "STAGING_PREFIX",
    "Kind",
    "atomic_directory",
    "atomic_file",
    "atomic_outputs",
    "check_compression",
    "check_outputs",
    "check_suffix",
    "check_target",
    "same_path",
    "sweep_staging",
    "write_failure",
]

PathLike = str | Path

#: The Parquet compressions an output's files may be written with: Polars' choices.
COMPRESSIONS: tuple[str, ...] = ("uncompressed", "lz4", "snappy", "zstd", "gzip", "brotli")


def check_suffix(path: PathLike, formats: Sequence[str], what: str) -> str:
    """Return the format ``path``'s suffix names (one of ``formats``, lower case), or raise naming those that exist.

    Examples
    --------
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
    """Whether two paths name the same place once resolved (``~``, ``..``, symbolic links).

    Examples
    --------
    >>> same_path("out/../ds", "ds"), same_path("ds", "ds2")
    (True, False)
    """
    return _resolved(a) == _resolved(b)


def _clash(target: Path, inputs: Iterable[PathLike]) -> tuple[Path, str] | None:
    """Find the first input that ``target`` is, holds or lies inside, and how."""
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
    """Find the nearest ancestor of ``target`` (itself excluded) that exists."""
    parent = target.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


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
    _check_name_lengths(target)
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


#: The longest name of a file or folder where the file system does not say (POSIX's NAME_MAX).
_NAME_MAX = 255


def _check_name_lengths(target: Path) -> None:
    """Raise an OutputError if a name in ``target`` is longer than its file system allows.

    Asked before anything is looked up: the operating system answers a lookup of such a name
    with an ``OSError`` (``File name too long``) that says neither which name nor what to do.
    """
    folder = Path(target.absolute().anchor)
    for name in target.absolute().parent.parts[1:]:  # the deepest existing folder, without a long lookup
        with contextlib.suppress(OSError):
            if (folder / name).is_dir():
                folder = folder / name
                continue
        break
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = _NAME_MAX
    for name in target.parts:
        size = len(os.fsencode(name))
        if size > limit:
            msg = (
                f"{target}: the name {name[:20]!r}... is {size} bytes, longer than the {limit} bytes a name may have "
                "on this file system; choose a shorter output name"
            )
            raise OutputError(msg)


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


# -- staging --------------------------------------------------------------------------------------
#
# Every output is first written into a staging folder beside it, named STAGING_PREFIX and 32 hex
# digits (the name never holds the output's, so a name of any length fits). The writer holds an
# exclusive flock on the folder for as long as it lives: the kernel drops the lock when the
# process ends, however it ends (SIGKILL included), so a staging folder whose lock can be taken
# was left by a writer that is gone, and the next write beside it removes it. Nothing else is
# ever removed: another name, a symbolic link, another user's folder, or a folder whose lock is
# held (or cannot be taken on this file system) stays.

#: The name of every staging folder starts with this.
STAGING_PREFIX = ".mas-eval-staging-"
_STAGING_NAME = re.compile(re.escape(STAGING_PREFIX) + "[0-9a-f]{32}")
#: Inside a staging folder: the outputs as written (``new/<name>``), and what they replace, moved
#: aside where the file system cannot swap two entries at once (``old/<name>``).
_NEW, _OLD = "new", "old"


def _lock(fd: int, *, wait: bool) -> bool:
    """Take the exclusive flock of ``fd``; False if another holds it or the file system has none."""
    if fcntl is None:  # pragma: no cover - Windows
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _same_entry(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the folder open as ``fd`` (not removed, not replaced)."""
    try:
        here = os.lstat(path)
    except OSError:
        return False
    there = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _open_folder(path: Path) -> int:
    return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))


class _Staging:
    """A locked staging folder in ``folder``: the lock is held from creation until :meth:`close`."""

    def __init__(self, folder: Path) -> None:
        fd: int | None = None
        while True:
            path = folder / f"{STAGING_PREFIX}{uuid.uuid4().hex}"
            path.mkdir()
            try:
                fd = _open_folder(path)
            except FileNotFoundError:  # a sweep took it in the instant before it was open
                continue
            except OSError:  # a folder cannot be opened here (Windows): unlocked, so never swept
                break
            # A sweep that opened it in the instant before the lock holds the lock and removes
            # the folder: waiting for the lock outlasts the sweep, and the check sees the folder gone.
            _lock(fd, wait=True)
            if _same_entry(fd, path):
                break
            os.close(fd)
        self.path, self._fd = path, fd
        (path / _NEW).mkdir()

    def close(self) -> None:
        """Remove the folder (and whatever is left in it), then release the lock."""
        try:
            _remove(self.path)
        finally:
            if self._fd is not None:
                os.close(self._fd)


def sweep_staging(folder: PathLike) -> list[Path]:
    """Remove the staging folders in ``folder`` whose writer is gone (killed, or its machine lost); return them.

    Every atomic write calls it on the folder of its output; a live writer's staging is never
    touched (module comment above :data:`STAGING_PREFIX`).
    """
    removed = []
    try:
        entries = [e for e in os.scandir(folder) if _STAGING_NAME.fullmatch(e.name)]
    except OSError:
        return removed
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            fd = _open_folder(Path(entry.path))
        except OSError:
            continue
        try:
            if _lock(fd, wait=False) and _same_entry(fd, Path(entry.path)):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
        finally:
            os.close(fd)
    return removed


# -- committing: renames that refuse to replace, or swap -------------------------------------------

_AT_FDCWD, _RENAME_NOREPLACE, _RENAME_EXCHANGE = -100, 1, 2


@functools.cache
def _renameat2() -> Any:
    """Linux's ``renameat2`` (glibc 2.28 and later), or None where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _rename2(source: Path, target: Path, flag: int) -> bool:
    """``renameat2(source, target, flag)``; False where the system or file system does not have it."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flag) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(source), None, os.fspath(target))


def _place(staged: Path, target: Path) -> None:
    """Rename ``staged`` to ``target``, never replacing an entry: FileExistsError if ``target`` exists."""
    if _rename2(staged, target, _RENAME_NOREPLACE):
        return
    if not staged.is_dir():
        try:
            os.link(staged, target)  # refuses to replace, like RENAME_NOREPLACE
        except FileExistsError:
            raise
        except OSError:  # no hard links here (FAT, some network file systems): check, then rename
            pass
        else:
            staged.unlink()
            return
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(target))
    staged.rename(target)


@dataclasses.dataclass
class _Part:
    """One output of :func:`atomic_outputs`: where it goes, whether a folder, and how it was committed."""

    target: Path
    folder: bool
    staging: _Staging | None = None
    #: Set once committed: how to take the commit back ("placed", "swapped" or "moved aside").
    how: str | None = None

    @property
    def staged(self) -> Path:
        assert self.staging is not None
        return self.staging.path / _NEW / self.target.name

    @property
    def aside(self) -> Path:
        assert self.staging is not None
        return self.staging.path / _OLD / self.target.name

    def commit(self, overwrite: bool) -> None:
        """Move the staged output to its target; an entry there is replaced only with ``overwrite``.

        The entry is replaced by an atomic swap where the file system has one (the target is never
        missing), and kept (swapped into the staging folder) until every part is committed.
        """
        target = self.target
        if overwrite and os.path.lexists(target):
            if not self.folder and target.is_dir() and not target.is_symlink():
                msg = f"{target} is a folder (it appeared while the output was written); the output is a file"
                raise OutputError(msg)
            try:
                if _rename2(self.staged, target, _RENAME_EXCHANGE):
                    self.how = "swapped"
                    return
            except FileNotFoundError:  # removed meanwhile: nothing to replace
                pass
            else:
                if os.path.lexists(target):  # no atomic swap here: a moment without the target
                    self.aside.parent.mkdir(exist_ok=True)
                    target.rename(self.aside)
                    try:
                        self.staged.rename(target)
                    except BaseException:
                        self.aside.rename(target)
                        raise
                    self.how = "moved aside"
                    return
        try:
            _place(self.staged, target)
        except FileExistsError:
            msg = (
                f"{target} already exists (it appeared while the output was written); "
                f"pass {option('overwrite')} to replace it"
            )
            raise OutputExistsError(msg) from None
        self.how = "placed"

    def undo(self) -> None:
        """Take the commit back: the target as it was, the output back in staging."""
        if self.how == "swapped":
            _rename2(self.staged, self.target, _RENAME_EXCHANGE)
        elif self.how == "placed":
            self.target.rename(self.staged)
        elif self.how == "moved aside":
            self.target.rename(self.staged)
            self.aside.rename(self.target)
        self.how = None


# -- failures of a write ---------------------------------------------------------------------------

#: The errors of a write that the location, not the data, is to blame for, and the fix of each.
_FIXES: dict[int, str] = {
    errno.ENOSPC: "free some space or choose another output path",
    errno.EDQUOT: "free some space (the disk quota is reached) or choose another output path",
    errno.EFBIG: "raise the file size limit (ulimit -f) or choose another output path",
    errno.EROFS: "choose an output path you can write to",
    errno.EACCES: "choose an output path you can write to",
    errno.EPERM: "choose an output path you can write to",
    errno.ENOENT: "its folder takes no new files (a virtual file system such as /proc?): choose another output path",
}
#: Of those, the ones only a write can meet: an error of Polars that names one (it names no path)
#: is about the output, not about an input it was reading.
_ONLY_WRITES = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
#: Free space below which a failed write is put down to a full disk.
_NEARLY_FULL = 1 << 20


def _files_at_limit(folder: Path) -> bool:
    """Whether a file under ``folder`` has the size ``ulimit -f`` allows, so that a write past it failed."""
    if resource is None:  # pragma: no cover - Windows
        return False
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit == resource.RLIM_INFINITY:
        return False
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                if os.lstat(os.path.join(root, name)).st_size >= limit:
                    return True
    return False


def _nearly_full(folder: Path) -> bool:
    try:
        space = os.statvfs(folder)
    except OSError:
        return False
    free = space.f_bfree if os.geteuid() == 0 else space.f_bavail  # root may use the reserved blocks
    return free * space.f_frsize < _NEARLY_FULL


def write_failure(exc: BaseException, staging: Path, outputs: Iterable[Path] = ()) -> int | None:
    """Return the ``errno`` of the write failure that ``exc`` reports about ``staging`` or ``outputs``.

    A write failure is a disk full, a file too large, a read-only location, a permission denied;
    ``staging`` is a staging folder. None if ``exc`` reports something else (bad data, an input
    that cannot be read).

    An ``OSError`` counts when it names ``staging``, a path under it or one of ``outputs`` (or
    their folders), or names no path and has one of those errors. Polars' errors name no path:
    one counts when its text holds ``(os error N)`` with an error only a write can meet, or, when
    the cause is lost (a Parquet footer's write fails as "Invalid thrift: transport error"), when
    the location shows it: a file under ``staging`` at the ``ulimit -f`` size, or less than 1 MiB
    free.
    """
    found = _OS_ERROR.search(str(exc))
    if isinstance(exc, OSError) and exc.errno is not None:
        code = exc.errno
        if code not in _FIXES:
            return None
        names = [Path(os.fsdecode(n)).absolute() for n in (exc.filename, exc.filename2) if n is not None]
        if code == errno.ENOENT:
            # Only the staging itself missing where it was just made is the location's fault: any other
            # missing file (an input that vanished) is not.
            ours = [n for n in names if n.is_relative_to(staging.absolute()) and STAGING_PREFIX in str(n)]
            return code if ours else None
        if not names:
            return code
        ours = {staging.absolute(), *(p.absolute() for p in outputs), *(p.absolute().parent for p in outputs)}
        return code if any(n in ours or n.is_relative_to(staging.absolute()) for n in names) else None
    polars = sys.modules.get("polars")
    # Polars raises a bare OSError (no errno, no path: "File too large (os error 27)") or its own.
    if not isinstance(exc, OSError) and (polars is None or not isinstance(exc, polars.exceptions.PolarsError)):
        return None
    if found is not None:
        code = int(found.group(1))
        return code if code in _ONLY_WRITES else None
    text = str(exc)
    if "transport error" not in text:
        return None
    if _files_at_limit(staging):
        return errno.EFBIG
    if _nearly_full(staging):
        return errno.ENOSPC
    return None


@contextlib.contextmanager
def _as_output_error(parts: Sequence[_Part]) -> Iterator[None]:
    """Turn a write failure (:func:`write_failure`) into an OutputError naming the output and the fix.

    Any other error (bad data, an input that vanished) passes through unchanged.
    """
    try:
        yield
    except _WriteFailureError as exc:
        # An output written inside this one's staging (the demo's Scores, a report's figures) is
        # named as the user named it: this output.
        for part in parts:
            if part.staging is not None and exc.target.absolute().is_relative_to(part.staging.path.absolute()):
                raise _WriteFailureError(part.target, exc.code) from exc.__cause__
        raise
    except (MasEvalError, KeyboardInterrupt):
        raise
    except Exception as exc:
        for part in parts:
            folder = part.staging.path if part.staging is not None else part.target.absolute().parent
            code = write_failure(exc, folder, [part.target])
            if code is not None:
                raise _WriteFailureError(part.target, code) from exc
        raise


class _WriteFailureError(OutputError):
    """An output that could not be written for a reason of its location: the path, the reason, the fix."""

    def __init__(self, target: Path, code: int) -> None:
        self.target, self.code = target, code
        reason = os.strerror(code)
        super().__init__(f"{target}: cannot be written ({reason[:1].lower() + reason[1:]}); {_FIXES[code]}")


# -- atomic outputs --------------------------------------------------------------------------------

#: What an output of :func:`atomic_outputs` is.
Kind = Literal["file", "folder"]


@contextlib.contextmanager
def _parents(targets: Iterable[Path]) -> Iterator[None]:
    """Create the targets' missing parent folders; remove those created if the block fails."""
    missing: list[Path] = []
    for target in targets:
        parent = target.absolute().parent
        while not parent.exists() and parent not in missing:
            missing.append(parent)
            parent = parent.parent
    missing.sort(key=lambda folder: len(folder.parts))
    try:
        for folder in missing:
            folder.mkdir(exist_ok=True)
        yield
    except BaseException:
        for folder in reversed(missing):  # deepest first; a folder something else wrote into stays
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _check_parts(outputs: Sequence[tuple[PathLike, Kind]], overwrite: bool, inputs: Iterable[PathLike]) -> list[_Part]:
    """Every output checked (:func:`check_target`, and a file's target not a folder) before any is written."""
    inputs = list(inputs)
    parts = []
    for path, kind in outputs:
        target = check_target(path, overwrite=overwrite, inputs=inputs)
        if kind == "file" and target.is_dir():
            msg = f"{target} is a folder; the output is a file: choose a file path"
            raise OutputError(msg)
        clash = _clash(target, [part.target for part in parts])
        if clash is not None:
            other, how = clash
            msg = f"{target}: this output {how} the other output {other}; choose paths outside each other"
            raise OutputError(msg)
        parts.append(_Part(target, folder=kind == "folder"))
    return parts


def check_outputs(*outputs: tuple[PathLike, Kind], overwrite: bool, inputs: Iterable[PathLike] = ()) -> list[Path]:
    """Check the outputs as :func:`atomic_outputs` does before writing, for a command to check before its work.

    Raises
    ------
    OutputError, OutputExistsError
        As :func:`check_target` does for each output; also when a file's path is a folder, or
        one output is, holds or lies inside another.
    """
    return [part.target for part in _check_parts(outputs, overwrite, inputs)]


@contextlib.contextmanager
def atomic_outputs(
    *outputs: tuple[PathLike, Kind], overwrite: bool = False, inputs: Iterable[PathLike] = ()
) -> Iterator[list[Path]]:
    """Yield a staging path for each of ``outputs``; if the block succeeds, they replace their paths together.

    ``outputs`` are ``(path, "file" | "folder")`` pairs. If the block fails, none replaces its path.

    Before anything is written, every output is checked (:func:`check_target` with ``inputs``; a
    file's path must not be a folder; no output is, holds or lies inside another). Each is then
    staged beside its path, in a staging folder of this process (a folder is created empty, a
    file created empty, so that a location that cannot be written fails at once), and dead
    writers' staging there is removed first (:func:`sweep_staging`). When the block succeeds the
    outputs are moved into place one after the other: a path that exists is replaced only with
    ``overwrite`` (swapped atomically where the file system can: the path is never missing), and
    one that appeared meanwhile without ``overwrite`` is an :class:`OutputExistsError`, not
    replaced (``renameat2`` with ``RENAME_NOREPLACE`` on Linux). If moving one fails, those moved
    before are put back. A failure anywhere leaves no trace: the staging is removed, and so are
    the parent folders created for it; the replaced entries are removed only once all are in place.

    Raises
    ------
    OutputError, OutputExistsError
        A check failed (:func:`check_target`), or the write failed for a reason of the location
        (disk full, file too large, read-only, permission denied: :func:`write_failure`), named
        with the output's path and the fix.
    """
    parts = _check_parts(outputs, overwrite, inputs)
    stagings: dict[Path, _Staging] = {}
    with _as_output_error(parts), _parents(part.target for part in parts):
        try:
            # Inside the staging's lifetime, so that a failure is judged while what was written is there.
            with _as_output_error(parts):
                for part in parts:
                    folder = part.target.absolute().parent
                    if folder not in stagings:
                        sweep_staging(folder)
                        stagings[folder] = _Staging(folder)
                    part.staging = stagings[folder]
                    if part.folder:
                        part.staged.mkdir()
                    else:
                        part.staged.touch(exist_ok=False)
                yield [part.staged for part in parts]
                _commit(parts, overwrite)
        finally:
            for staging in stagings.values():
                staging.close()


def _commit(parts: Sequence[_Part], overwrite: bool) -> None:
    """Move every part into place, or none: the parts moved before a failure are put back."""
    committed: list[_Part] = []
    try:
        for part in parts:
            part.commit(overwrite)
            committed.append(part)
    except BaseException:
        for part in reversed(committed):
            with contextlib.suppress(OSError):
                part.undo()
        raise


@contextlib.contextmanager
def atomic_directory(path: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = ()) -> Iterator[Path]:
    """Yield a temporary folder that replaces the folder ``path`` only if the block succeeds (:func:`atomic_outputs`).

    A failure anywhere leaves no trace; an existing ``path`` (a folder or a file) is replaced only
    with ``overwrite=True``.
    """
    with atomic_outputs((path, "folder"), overwrite=overwrite, inputs=inputs) as (staging,):
        yield staging


@contextlib.contextmanager
def atomic_file(path: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = ()) -> Iterator[Path]:
    """Yield a temporary file (created empty) that replaces the file ``path`` only if the block succeeds.

    As :func:`atomic_outputs` does; ``path`` must not be a folder.
    """
    with atomic_outputs((path, "file"), overwrite=overwrite, inputs=inputs) as (staging,):
        yield staging
