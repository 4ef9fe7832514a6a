"""The recipe every log adapter follows, written once: a format module holds only its own reading.

A log adapter reads files another tool wrote (inspect_ai logs, lm-eval output, OTLP traces,
tables, Local-DDx results) into a Dataset. Around its reading, every adapter does the same
steps, which :func:`ingest_logs` does for it, in order:

1. checks the arguments before anything is read: ``shards``, ``system`` (and the system named
   for each path), and ``out`` (it may not be, hold or lie inside an input; it exists only with
   ``overwrite``);
2. lists the files (:func:`log_files`): a file stands for itself, a folder for the format's files
   in it (or under it), sorted; a file given twice is read once;
3. reads each file with the format's :class:`Reader`, refusing a Git LFS pointer first: a file
   (or one record of it) that cannot be ingested raises :class:`InvalidInputError`, which becomes one
   :class:`~mas_eval.errors.IngestError` line naming the file, the record and the fix, or, with
   ``skip_invalid=True``, is set aside with its reason and the rest is read (:class:`Ingest`);
4. refuses an ingest that kept nothing, saying why (the first reason);
5. hands the Reader's tables to :func:`~mas_eval.ingest.logs.dataset_of`, which validates them
   and writes the folder atomically.

A format module declares a :class:`LogFormat` (its suffixes and what its files are called in
messages) and a :class:`Reader` (how a file becomes rows, and the rows tables), and its public
function is one call of :func:`ingest_logs`. The shared reading steps a Reader uses are here
too: :func:`read_json` (a whole file), :func:`lines` (a file a line at a time), :func:`json_type`.
``tests/ingest/test_recipe.py`` adds a format of its own that way.

Paths may be given with the system of their runs, ``{path: system}``, so that two logs that
would name the same system go into one Dataset under two names; :func:`parse_paths` reads the
command line's ``PATH=SYSTEM``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from mas_eval.constraints import NAME, NONE, PATH, Boolean, Constraint, Interval, Predicate
from mas_eval.errors import IngestError, InvalidParameterError, option
from mas_eval.ingest.logs import LogIngestResult, dataset_of
from mas_eval.storage.inputs import describe_path
from mas_eval.storage.outputs import check_target
from mas_eval.storage.sharding import MAX_SHARDS, check_shards

__all__ = [
    "LFS_FIX",
    "LFS_PROBLEM",
    "LOG_PARAMETERS",
    "PATHS",
    "Ingest",
    "InvalidInputError",
    "LogFormat",
    "Paths",
    "Reader",
    "bounded_lines",
    "ingest_logs",
    "is_lfs_pointer",
    "json_type",
    "lines",
    "log_files",
    "parse_paths",
    "read_json",
    "too_long_integer",
]

#: What a log adapter's ``paths`` may be: one path, several, or each path with the system of its
#: runs (None: the one the file names, or ``system=``).
Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str | os.PathLike[str], str | None]


def _paths(value: object) -> bool:
    """Return whether ``value`` is a :data:`Paths`: a path, a list of them, or a mapping of paths to systems."""
    if isinstance(value, Mapping):
        return all(PATH.is_satisfied_by(k) and (v is None or NAME.is_satisfied_by(v)) for k, v in value.items())
    if PATH.is_satisfied_by(value):
        return True
    return isinstance(value, Sequence | Set) and not isinstance(value, bytes) and all(map(PATH.is_satisfied_by, value))


#: Constraint of ``paths``.
PATHS = Predicate(_paths, "a path, a list of paths, or a mapping of paths to system names (or None)")
#: The parameters every log adapter takes (``ingest_inspect``, ``ingest_otlp``, ...), checked before anything is read.
LOG_PARAMETERS: dict[str, list[Constraint]] = {
    "paths": [PATHS],
    "out": [PATH, NONE],
    "system": [NAME, NONE],
    "overwrite": [Boolean()],
    "skip_invalid": [Boolean()],
    "shards": [Interval(int, 1, MAX_SHARDS), NONE],
}

#: How a Git LFS pointer file starts, and the most it can hold: "a pointer file must be < 1024 bytes
#: in size" and begins with its version line (git-lfs, docs/spec.md, "The Pointer").
_LFS_VERSION = b"version https://git-lfs.github.com/spec/v1"
_LFS_MAX_BYTES = 1024
#: What is wrong with such a file, and the fix.
LFS_PROBLEM = "is a Git LFS pointer, not the file"
LFS_FIX = "run `git lfs pull` in its repository to fetch the file"


def json_type(value: Any) -> str:
    """Name a JSON value's type as a message does: ``"null"``, ``"a number"``, ``"an array"``...

    Examples
    --------
    >>> json_type([1]), json_type(True), json_type(None)
    ('an array', 'a boolean', 'null')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


class InvalidInputError(Exception):
    """A file, or one record of it, that cannot be ingested: the problem, where, and the fix.

    Raised by a :class:`Reader` (or a shared reading step); :class:`Ingest` turns it into one
    :class:`~mas_eval.errors.IngestError` line, or sets it aside with ``skip_invalid``.

    Parameters
    ----------
    problem
        What is wrong, as the rest of a sentence after the file (and ``where``).
    where
        Where in the file: a record (``"line 4"``, ``"sample 3, epoch 1"``) or a place
        (``"$.full_transcript"``); "" for the file as a whole.
    fix
        What the user should do (default: "fix the file"); the message adds how to skip it.
    skip
        What ``skip_invalid=True`` would do (default: "skip the files that cannot be read" when
        the file cannot be ingested, "set it aside" for a record).
    file
        The file, when it is not the one being read (a file read beside it, or a record found
        once every file was read).

    Examples
    --------
    >>> InvalidInputError("no doc_id", where="line 3").reason()
    'line 3: no doc_id'
    """

    def __init__(
        self,
        problem: str,
        *,
        where: str = "",
        fix: str | None = None,
        skip: str | None = None,
        file: Path | None = None,
    ) -> None:
        super().__init__(problem)
        self.problem, self.where, self.fix, self.skip, self.file = problem, where, fix, skip, file

    def reason(self) -> str:
        """Why it was set aside: the record and the problem (the file is listed beside it)."""
        return f"{self.where}: {self.problem}" if self.where else self.problem


@dataclass(frozen=True)
class LogFormat:
    """What the recipe needs to know of a log format: which files are its, and what they are called.

    Attributes
    ----------
    name
        What its files are called: ``"inspect_ai"`` ("2 inspect_ai file(s)").
    files
        What to pass, in a fix: ``"inspect_ai .eval or .json logs"``.
    suffixes
        A folder stands for the files whose names end so (and start with ``prefix``).
    in_folder
        What an empty folder lacks, before "in this folder": ``"no .eval or .json logs directly"``.
    record
        What one run is read from: ``"no inspect_ai sample could be ingested"``.
    skips
        What the count of things set aside counts: ``"log(s) or sample(s)"``.
    prefix
        How the names of its files start, if they have a fixed start (``"results_"``).
    recursive
        Whether a folder stands for the files under its sub-folders too (lm-eval writes a
        folder per model); else only for those directly in it.
    located
        Where a problem is, before it: ``"{file}: {where}"`` (``{file}, {where}`` for lm-eval's
        ``file, line 3``).

    Examples
    --------
    >>> toy = LogFormat("toy", "toy .runs files", (".runs",), "no .runs files", "toy run")
    >>> toy.holds("a.runs"), toy.holds("a.txt"), toy.holds(".hidden.runs")
    (True, False, False)
    """

    name: str
    files: str
    suffixes: tuple[str, ...]
    in_folder: str
    record: str
    skips: str = "file(s)"
    prefix: str = ""
    recursive: bool = False
    located: str = "{file}: {where}"

    def holds(self, name: str) -> bool:
        """Return whether a file of this name in a folder is one of the format's (hidden files never are)."""
        return not name.startswith(".") and name.startswith(self.prefix) and name.endswith(self.suffixes)

    def message(self, file: Path, invalid: InvalidInputError, *, whole: bool) -> str:
        """Return the one line that refuses ``invalid`` (of the ``whole`` file, or a record).

        The line names the file, record, problem, fix, and how to skip it.
        """
        place = self.located.format(file=file, where=invalid.where) if invalid.where else str(file)
        skip = invalid.skip or ("skip the files that cannot be read" if whole else "set it aside")
        fix = invalid.fix or "fix the file"
        return f"{place}: {invalid.problem}; {fix}, or pass {option('skip_invalid')} to {skip}"


class Ingest:
    """One ingest's bookkeeping, shared by the recipe and the format's :class:`Reader`.

    Attributes
    ----------
    format
        The :class:`LogFormat` read.
    skip_invalid
        Whether what cannot be ingested is set aside (else refused).
    files
        The files read, in order (a file a Reader read beside another, after it).
    skipped
        ``(file, reason)`` of what was set aside.
    warnings
        What was read with a gap, each naming the file and where in it.
    read_as
        How a Reader read each file, for a format whose files come in several shapes (OTLP's:
        ``"Jaeger JSON export, one document"``); the ingest's summary says it.

    Examples
    --------
    >>> toy = LogFormat("toy", "toy .runs files", (".runs",), "no .runs files", "toy run")
    >>> ingest = Ingest(toy, skip_invalid=True)
    >>> with ingest.attempt("line 2", file=Path("a.runs")):
    ...     raise InvalidInputError("not a number")
    >>> ingest.skipped
    [(PosixPath('a.runs'), 'line 2: not a number')]
    >>> with Ingest(toy, skip_invalid=False).attempt("line 2", file=Path("a.runs")):
    ...     raise InvalidInputError("not a number")
    Traceback (most recent call last):
    ...
    mas_eval.errors.IngestError: a.runs: line 2: not a number; fix the file, or pass skip_invalid=True to set it aside
    """

    def __init__(self, fmt: LogFormat, *, skip_invalid: bool) -> None:
        self.format, self.skip_invalid = fmt, skip_invalid
        self.files: list[Path] = []
        self.skipped: list[tuple[Path, str]] = []
        self.warnings: list[str] = []
        self.read_as: dict[Path, str] = {}
        self._reading: Path | None = None

    def set_aside(self, invalid: InvalidInputError, *, whole: bool = False) -> None:
        """Record ``invalid`` (a record, or the ``whole`` file) as set aside, or raise it without ``skip_invalid``.

        Raised, it is one line.
        """
        file = invalid.file or self._reading
        if file is None:  # not expected: a Reader's frames() names the file of what it sets aside
            msg = f"{invalid.problem} (the file is not known)"
            raise IngestError(msg)
        if not self.skip_invalid:
            raise IngestError(self.format.message(file, invalid, whole=whole)) from None
        self.skipped.append((file, invalid.reason()))

    @contextlib.contextmanager
    def attempt(self, where: str = "", *, file: Path | None = None) -> Iterator[None]:
        """Set aside the block's :class:`InvalidInputError` (:meth:`set_aside`) as that of record ``where``.

        The record is of ``file``, if not the one being read; the code after the block goes on.
        """
        try:
            yield
        except InvalidInputError as invalid:
            if where:
                invalid.where = f"{where}: {invalid.where}" if invalid.where else where
            invalid.file = invalid.file or file
            self.set_aside(invalid)

    def read_beside(self, file: Path) -> None:
        """Count ``file`` among those read (a Reader read it beside the file given)."""
        self.files.append(file)

    def read(self, reader: Reader, file: Path, system: str | None) -> None:
        """Have ``reader`` read ``file``; keep nothing of it if it cannot be ingested.

        Nothing means no file, skip or warning (the Reader keeps its own rows only once a file is read).
        """
        marks = len(self.files), len(self.skipped), len(self.warnings)
        self._reading = file
        self.files.append(file)
        try:
            if is_lfs_pointer(file):
                raise InvalidInputError(LFS_PROBLEM, fix=LFS_FIX)
            reader.read(file, system, self)
        except InvalidInputError as invalid:
            del self.files[marks[0] :], self.skipped[marks[1] :], self.warnings[marks[2] :]
            self.read_as.pop(file, None)
            self.set_aside(invalid, whole=True)
        finally:
            self._reading = None

    def nothing_read(self) -> IngestError:
        """Return the error of an ingest that kept no run, with the first reason."""
        first = f": {self.skipped[0][0]}: {self.skipped[0][1]}" if self.skipped else ""
        count = f"{len(self.skipped)} {self.format.skips} skipped{first}"
        return IngestError(f"no {self.format.record} could be ingested ({count}); nothing was written")


class Reader(Protocol):
    """How a log format's files become the Dataset's tables: what a format module writes.

    The recipe makes one Reader per ingest (the format's public function does, with its own
    options) and calls :meth:`read` once per file, in order, then :meth:`frames` once.

    Examples
    --------
    What a format writes (:func:`ingest_logs` shows a Reader of one case a line):

    >>> sorted(name for name in vars(Reader) if not name.startswith("_"))
    ['frames', 'read']
    """

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        """Read ``file``'s rows (``system``: the system named for its runs, or None for its own).

        Raise :class:`InvalidInputError` for the file as a whole (the Reader keeps nothing of it);
        set a record aside with ``with ingest.attempt(where): ...``; add warnings to
        ``ingest.warnings``. Raise :class:`~mas_eval.errors.IngestError` only for what no file
        could fix (an argument that names a column none has).
        """
        ...

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        """Return the Dataset's tables of every file read: ``runs`` always (maybe empty), the others if they have rows.

        What only the whole input shows (a run id twice) is set aside here, with :meth:`Ingest.set_aside`
        and the file named in the :class:`InvalidInputError`.
        """
        ...


# -- the path list ----------------------------------------------------------------------------


def _system(value: object, where: str) -> str | None:
    if value is not None and not NAME.is_satisfied_by(value):
        msg = (
            f"ingest: {where}={value!r} is not a name; pass a non-empty string of valid Unicode (no lone "
            "surrogate), or None for the one the files name"
        )
        raise InvalidParameterError(msg)
    return value if isinstance(value, str) else None


def _given(fmt: LogFormat, paths: Paths, system: str | None) -> list[tuple[Path, str | None]]:
    """Return the paths given, each with the system named for it (or ``system``), checked."""
    _system(system, "system")
    if isinstance(paths, Mapping):
        given = [(Path(path), _system(name, f"paths[{str(path)!r}]") or system) for path, name in paths.items()]
    elif isinstance(paths, str | os.PathLike):
        given = [(Path(paths), system)]
    else:
        given = [(Path(path), system) for path in paths]
    if not given:
        msg = f"no input given; pass {fmt.files}, or folders holding them"
        raise IngestError(msg)
    return given


def _folder_files(fmt: LogFormat, folder: Path) -> list[Path]:
    """Return the format's files in ``folder`` (and under it, if ``fmt.recursive``), sorted by their path's parts.

    Walked with a list of folders still to list, not by recursion; a folder reached again through a
    symbolic link into a folder above it is refused, since the walk would never end. A folder's real
    path is its parent's and its name, unless it is a symbolic link: resolving every folder's path
    anew would cost a look-up per folder above it, each as deep (docs/performance.md).
    """
    found: list[Path] = []
    top = os.path.realpath(folder)
    pending = [(folder, top, frozenset({top}))]
    while pending:
        current, current_real, above = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = list(listing)
        except OSError as exc:
            msg = f"{current}: cannot be listed ({(exc.strerror or str(exc)).lower()}); make the folder readable"
            raise IngestError(msg) from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                if not fmt.recursive:
                    continue
                real = os.path.realpath(entry.path) if entry.is_symlink() else os.path.join(current_real, entry.name)
                if real in above:
                    msg = f"{entry.path}: a symbolic link to {real}, a folder it lies in, so it never ends; remove it"
                    raise IngestError(msg)
                pending.append((Path(entry.path), real, above | {real}))
            elif fmt.holds(entry.name) and entry.is_file():
                found.append(Path(entry.path))
    return sorted(found, key=lambda path: path.parts)


def log_files(fmt: LogFormat, given: Sequence[tuple[Path, str | None]]) -> list[tuple[Path, str | None]]:
    """Return the files the paths stand for, each with its system; a file given twice is read once.

    A file stands for itself, a folder for the format's files in it (:attr:`LogFormat.recursive`: and
    under it), sorted.

    Raises
    ------
    IngestError
        A path does not exist or is neither a file nor a folder; a folder holds none of the
        format's files or loops; a file is given twice with two systems.

    Examples
    --------
    >>> import tempfile
    >>> toy = LogFormat("toy", "toy .runs files", (".runs",), "no .runs files", "toy run")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     for name in ("b.runs", "a.runs", "notes.txt"):
    ...         _ = (Path(folder) / name).write_text("")
    ...     found = log_files(toy, [(Path(folder), None), (Path(folder) / "a.runs", None)])
    ...     [(path.name, system) for path, system in found]
    [('a.runs', None), ('b.runs', None)]
    """
    fix = f"pass {fmt.files} or a folder holding them"
    files: dict[Path, tuple[Path, str | None]] = {}
    for path, system in given:
        if path.is_dir():
            found = _folder_files(fmt, path)
            if not found:
                msg = f"{path}: {fmt.in_folder} in this folder{' or under it' if fmt.recursive else ''}; {fix}"
                raise IngestError(msg)
        elif path.is_file():
            found = [path]
        else:
            what = describe_path(path)
            msg = f"{path}: no such file or folder; {fix}" if what == "does not exist" else f"{path} {what}; {fix}"
            raise IngestError(msg)
        for file in found:
            key = file.resolve()
            first = files.setdefault(key, (file, system))
            if first[1] != system:
                names = " and ".join(repr(s) if s is not None else "the one it names" for s in (first[1], system))
                msg = f"{file}: given twice, with the systems {names}; name each file's system once"
                raise IngestError(msg)
    return list(files.values())


def parse_paths(texts: Sequence[str]) -> list[Path] | dict[Path, str | None]:
    """Parse the command line's paths, each ``PATH`` or ``PATH=SYSTEM``, as a log adapter's ``paths``.

    A text that exists as a path, ``=`` and all, is that path. Otherwise it is split at the first
    ``=`` after which the part before exists: that path, named the system after it (which may
    hold ``=`` itself). When no text names a system, the paths come as a list.

    Raises
    ------
    InvalidParameterError
        A system after ``=`` is empty, or a path is named twice with two systems.
    IngestError
        A text with ``=`` of which neither the whole nor a part before an ``=`` exists.

    Examples
    --------
    >>> parse_paths(["/tmp"])
    [PosixPath('/tmp')]
    >>> parse_paths(["/tmp=gpt-4o debate (agents=3)", "/"])
    {PosixPath('/tmp'): 'gpt-4o debate (agents=3)', PosixPath('/'): None}
    """
    named: dict[Path, str | None] = {}
    for text in texts:
        path, system = Path(text), None
        if "=" in text and not os.path.lexists(text):
            cuts = [at for at, char in enumerate(text) if char == "=" and os.path.lexists(text[:at])]
            if not cuts:
                msg = (
                    f"{text}: no such file or folder, nor is any part of it before an '=' one "
                    "(PATH=SYSTEM names the system of PATH's runs)"
                )
                raise IngestError(msg)
            path, system = Path(text[: cuts[0]]), text[cuts[0] + 1 :]
            if not system.strip():
                msg = f"ingest: {text!r} names no system after '='; write PATH=SYSTEM, or PATH alone"
                raise InvalidParameterError(msg)
        earlier = named.setdefault(path, system)
        if earlier != system and None not in (earlier, system):
            msg = f"ingest: {path} is named twice, {earlier!r} and {system!r}; name each path once"
            raise InvalidParameterError(msg)
        named[path] = earlier or system
    if all(system is None for system in named.values()):
        return [Path(text) for text in texts]
    return named


# -- the shared reading steps -----------------------------------------------------------------


def is_lfs_pointer(file: Path) -> bool:
    r"""Return whether ``file`` is a Git LFS pointer (a checkout without ``git lfs pull``), not the file it points to.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".eval") as pointer:
    ...     _ = pointer.write("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n")
    ...     pointer.flush()
    ...     is_lfs_pointer(Path(pointer.name))
    True
    """
    try:
        if file.stat().st_size >= _LFS_MAX_BYTES:
            return False
        with file.open("rb") as handle:
            return handle.read(len(_LFS_VERSION)) == _LFS_VERSION
    except OSError:  # the reading that follows names it
        return False


def read_json(file: Path, *, what: str, fix: str | None = None, max_bytes: int | None = None) -> Any:
    """Read the JSON document in ``file``; raise an :class:`InvalidInputError` saying why it cannot be read.

    ``what`` is what the file should be ("a Local-DDx result"), for an empty one. A byte-order
    mark is allowed. The problems: cannot be read, larger than ``max_bytes``, not UTF-8, empty,
    truncated (the text stops before the JSON does), not valid JSON, nested too deeply.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json") as broken:
    ...     _ = broken.write('{"a": [1, 2')
    ...     broken.flush()
    ...     read_json(Path(broken.name), what="a result")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: is truncated: the JSON stops before it is complete (not valid JSON: Expecting ',' delimiter at line 1, column 12)
    """  # noqa: E501
    try:
        size = file.stat().st_size
        if max_bytes is not None and size > max_bytes:
            msg = f"is {size:,} bytes, more than such a file can be ({max_bytes:,})"
            raise InvalidInputError(msg, fix=fix)
        raw = file.read_bytes()
    except OSError as exc:
        msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
        raise InvalidInputError(msg, fix=fix) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"is not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise InvalidInputError(msg, fix=fix) from None
    if not text.strip():
        msg = f"is empty, not {what}"
        raise InvalidInputError(msg, fix=fix)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        # A string left open, or an error at the very end, means the text stops before the JSON does.
        if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()):
            problem = f"is truncated: the JSON stops before it is complete (not valid JSON: {where})"
            raise InvalidInputError(problem, fix=fix) from None
        msg = f"is not valid JSON ({where})"
        raise InvalidInputError(msg, fix=fix) from None
    except RecursionError:
        msg = "cannot be decoded: nested too deeply"
        raise InvalidInputError(msg, fix=fix) from None
    except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        msg = f"cannot be decoded: {too_long_integer(exc)}"
        raise InvalidInputError(msg, fix=fix) from None


def too_long_integer(exc: ValueError) -> str:
    """Say what :func:`json.loads` refused when it raised ``exc``, other than a syntax error.

    That is an integer written with more digits than Python converts (4,300 by default), which no
    field can hold.

    Examples
    --------
    >>> try:
    ...     json.loads("1" * 5000)
    ... except ValueError as exc:
    ...     too_long_integer(exc)
    'an integer of 5000 digits, more than any field can hold'
    """
    digits = re.search(r"value has (\d+) digits", str(exc))
    size = f"of {digits.group(1)} digits" if digits else "too long to convert"
    return f"an integer {size}, more than any field can hold"


def lines(file: Path) -> Iterator[tuple[int, bytes]]:
    r"""Yield ``(number, line)`` of each line of ``file`` that is not blank.

    Numbers start at 1; the line is bytes, with its newline if it has one. An
    :class:`InvalidInputError` if the file cannot be opened.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as file:
    ...     _ = file.write('{"a": 1}\n\n{"a": 2}')
    ...     file.flush()
    ...     list(lines(Path(file.name)))
    [(1, b'{"a": 1}\n'), (3, b'{"a": 2}')]
    """
    if is_lfs_pointer(file):
        raise InvalidInputError(LFS_PROBLEM, fix=LFS_FIX, file=file)
    try:
        handle = file.open("rb")
    except OSError as exc:
        fix = "make it readable"
        msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
        raise InvalidInputError(msg, fix=fix, file=file) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw


#: How much of a line longer than the limit :func:`bounded_lines` reads at a time, to skip it.
_SKIP_PIECE = 2**20


def bounded_lines(file: Path, max_bytes: int) -> Iterator[tuple[int, bytes | None, int]]:
    r"""Yield ``(number, line, size)`` of each line of ``file`` that is not blank, holding no line over ``max_bytes``.

    The lines are as :func:`lines` reads them, but a line longer than ``max_bytes`` (without its
    newline) comes as ``(number, None, size)``, its size in bytes counted as it is read past in
    bounded pieces.

    Memory is bounded by ``max_bytes``, whatever the file holds (a 1 GiB line is read past in
    1 MiB pieces). An :class:`InvalidInputError` if the file cannot be opened.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".jsonl") as file:
    ...     _ = file.write(b'{"a": 1}\n' + b"x" * 50 + b"\n\n{}")
    ...     file.flush()
    ...     [(number, line, size) for number, line, size in bounded_lines(Path(file.name), 20)]
    [(1, b'{"a": 1}\n', 8), (2, None, 50), (4, b'{}', 2)]
    """
    if is_lfs_pointer(file):
        raise InvalidInputError(LFS_PROBLEM, fix=LFS_FIX, file=file)
    try:
        handle = file.open("rb")
    except OSError as exc:
        fix = "make it readable"
        msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
        raise InvalidInputError(msg, fix=fix, file=file) from None
    with handle:
        number = 0
        while True:
            # One byte more than the limit, and the newline: a line that fits ends within them.
            raw = handle.readline(max_bytes + 2)
            if not raw:
                return
            number += 1
            size = len(raw) - raw.endswith(b"\n")
            if size <= max_bytes:
                if raw.strip():
                    yield number, raw, size
                continue
            while not raw.endswith(b"\n"):
                raw = handle.readline(_SKIP_PIECE)
                if not raw:
                    break
                size += len(raw) - raw.endswith(b"\n")
            yield number, None, size


# -- the ingest -------------------------------------------------------------------------------


def ingest_logs(
    fmt: LogFormat,
    reader: Reader,
    paths: Paths,
    out: str | Path | None,
    *,
    system: str | None,
    overwrite: bool,
    skip_invalid: bool,
    shards: int | None,
    beside: Sequence[Path] = (),
) -> LogIngestResult:
    r"""Run the recipe: read ``paths`` with ``reader`` into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    fmt
        The format: its files and what they are called.
    reader
        A new :class:`Reader` of the format, for this ingest.
    paths
        Files or folders (:func:`log_files`), one or several, or each with the system of its
        runs: ``{path: system}`` (None: the one the file names, or ``system``).
    out, overwrite, skip_invalid, shards
        As every log adapter takes them (:func:`~mas_eval.ingest.ingest_inspect`).
    system
        The system of every run of a path given without one; None: the one each file names.
    beside
        Other inputs the Reader reads (a Dataset the rows are joined onto): like ``paths``, the
        output may not be, hold or lie inside one.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and files read, what was set aside, the warnings.

    Examples
    --------
    A format of one case a line, its files named ``*.cases``, read from a folder named ``"mas"``:

    >>> import tempfile
    >>> from mas_eval.ingest.logs import conform
    >>> class Cases:
    ...     def __init__(self):
    ...         self.rows = []
    ...
    ...     def read(self, file, system, ingest):
    ...         for number, raw in lines(file):
    ...             case = raw.decode().strip()
    ...             self.rows.append({"run_id": f"{file.stem}/{number}", "system": system, "case_id": case})
    ...
    ...     def frames(self, ingest):
    ...         return {"runs": conform(pl.DataFrame(self.rows, schema=["run_id", "system", "case_id"]), "runs")}
    >>> cases = LogFormat("cases", "case files", (".cases",), "no .cases files", "case")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "a.cases").write_text("q1\nq2\n")
    ...     result = ingest_logs(
    ...         cases, Cases(), {folder: "mas"}, None, system=None, overwrite=False, skip_invalid=False, shards=None
    ...     )
    >>> result.runs, result.dataset.collect("runs").select("run_id", "system").rows()
    (2, [('a/1', 'mas'), ('a/2', 'mas')])

    ``tests/ingest/test_recipe.py`` has another, with records set aside.
    """
    count = check_shards(shards, where="ingest")
    given = _given(fmt, paths, system)
    inputs = [*(path for path, _ in given), *beside]
    target = check_target(out, overwrite=overwrite, inputs=inputs) if out is not None else None
    ingest = Ingest(fmt, skip_invalid=skip_invalid)
    for file, named in log_files(fmt, given):
        ingest.read(reader, file, named)
    frames = reader.frames(ingest)
    if not frames["runs"].height:
        raise ingest.nothing_read()
    dataset = dataset_of(
        frames, target, overwrite=overwrite, inputs=inputs, shards=count, notes=ingest.warnings, formats=[fmt.name]
    )
    return LogIngestResult(
        out=target,
        dataset=dataset,
        runs=frames["runs"].height,
        files=tuple(ingest.files),
        skipped=tuple(ingest.skipped),
        warnings=tuple(ingest.warnings),
        read_as=tuple(ingest.read_as.items()),
    )
