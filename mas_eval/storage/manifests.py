"""Manifests and the other JSON files the package writes and reads back, checked in one place.

A Dataset folder carries ``_dataset.json`` and a Scores folder ``_scores.json``. Each is declared
once, as a :class:`Manifest` (its file name, the shape of what it holds, the fix to suggest),
beside the code that writes it (:data:`mas_eval.storage.dataset.MANIFEST`,
:data:`mas_eval.storage.scores_folder.MANIFEST`). :func:`write_manifest` checks what it writes
against that shape and :func:`read_manifest` checks what it reads, so that writer and reader
cannot drift apart, and a manifest damaged, truncated, or copied from elsewhere is one
:class:`~mas_eval.errors.SchemaError` naming the file, what is wrong and the fix, never a
traceback from the code that trusted it.

Reading is bounded: a manifest larger than :data:`MAX_MANIFEST_BYTES` is refused before it is
read, and one nested deeper than :data:`MAX_DEPTH` after it is parsed (a 100,000-deep
``[[[...]]]`` stops the parser at Python's recursion limit, and is refused the same way).
:func:`read_json` is the same reader for the other JSON files the package reads back (a
report's JSON, a comparisons table as JSON).

>>> shape = Obj({"tables": ListOf(str), "shards": Integer(1, 8)}, required=("tables",))
>>> check_shape({"tables": ["runs"], "shards": 2}, shape)
>>> check_shape({"tables": "runs"}, shape)
"'tables' must be a list of strings, not the string 'runs'"
>>> check_shape({"tables": ["runs"], "shards": 9}, shape)
"'shards' must be an integer from 1 to 8, not 9"
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mas_eval._version import __version__
from mas_eval.errors import MasEvalError, SchemaError, UnreadableFileError

__all__ = [
    "JSON",
    "MAX_DEPTH",
    "MAX_MANIFEST_BYTES",
    "Integer",
    "Lenient",
    "ListOf",
    "Manifest",
    "MapOf",
    "Obj",
    "check_shape",
    "read_json",
    "read_manifest",
    "write_manifest",
]

#: The largest manifest read. The largest one written is a sharded Dataset's with its label lists
#: (:mod:`mas_eval.storage.stored_codes` stores codes only while they take at most 16 MiB).
MAX_MANIFEST_BYTES = 64 * 2**20
#: The deepest nesting of lists and objects read. The package's own files nest 5 deep at most.
MAX_DEPTH = 32


# -- shapes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListOf:
    """A JSON list whose every item has shape ``item``."""

    item: Shape


@dataclass(frozen=True)
class MapOf:
    """A JSON object with any keys, whose every value has shape ``value``."""

    value: Shape


@dataclass(frozen=True)
class Obj:
    """A JSON object with the keys ``keys`` (name → shape); those in ``required`` must be present.

    Keys not declared are allowed and kept: a later version may add some.
    """

    keys: Mapping[str, Shape]
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class Integer:
    """A JSON integer (not ``true``/``false``) from ``low`` to ``high`` (``None``: unbounded)."""

    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class Lenient:
    """A value of shape ``shape`` that the reader can do without (derived data, such as stored codes).

    One that does not have the shape is read as ``None`` instead of being an error.
    """

    shape: Shape


class _Any:
    """Any JSON value (nesting still bounded by :data:`MAX_DEPTH`)."""

    def __repr__(self) -> str:
        return "JSON"


#: Any JSON value.
JSON = _Any()

#: What a value may be declared as: ``str``, ``bool``, ``float`` (any number), or one of the classes above.
Shape = type | ListOf | MapOf | Obj | Integer | Lenient | _Any


def _described(shape: Shape) -> str:
    """Describe a shape in words: ``a list of strings``."""
    if isinstance(shape, ListOf):
        return "a list" if shape.item is JSON else f"a list of {_plural(shape.item)}"
    if isinstance(shape, MapOf):
        return "an object" if shape.value is JSON else f"an object of {_plural(shape.value)}"
    if isinstance(shape, Obj):
        return "an object"
    if isinstance(shape, Integer):
        if shape.low is not None and shape.high is not None:
            return f"an integer from {shape.low:,} to {shape.high:,}"
        if shape.low is not None:
            return f"an integer of at least {shape.low:,}"
        return "an integer"
    if isinstance(shape, Lenient):
        return _described(shape.shape)
    return {str: "a string", bool: "true or false", float: "a number"}.get(shape, "a JSON value")  # type: ignore[call-overload]


def _plural(shape: Shape) -> str:
    """Describe a shape in words, for many of them: ``strings``, ``lists of strings``."""
    words = _described(shape)
    for single, many in (("a string", "strings"), ("an integer", "integers"), ("a number", "numbers")):
        if words.startswith(single):
            return many + words[len(single) :]
    for single, many in (("a list", "lists"), ("an object", "objects"), ("true or false", "booleans")):
        if words.startswith(single):
            return many + words[len(single) :]
    return "JSON values"


def _found(value: object) -> str:
    """Say what a JSON value is, for a message: ``the string '3'``, ``a list``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, int | float):
        shown = repr(value)
        return shown if len(shown) <= 40 else f"{shown[:12]}... ({len(shown):,} digits)"
    return {list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _fits(value: object, shape: Shape) -> bool:
    """Whether ``value`` is of ``shape``'s own type (its items and keys aside)."""
    if isinstance(shape, ListOf):
        return isinstance(value, list)
    if isinstance(shape, MapOf | Obj):
        return isinstance(value, dict)
    if isinstance(shape, Integer):
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and (shape.low is None or value >= shape.low)
            and (shape.high is None or value <= shape.high)
        )
    if shape is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if shape is bool:
        return isinstance(value, bool)
    if shape is str:
        return isinstance(value, str)
    return True  # JSON


def _problem(value: Any, shape: Shape, where: str) -> str | None:
    """Describe the first place where ``value`` is not of ``shape``, in words; None if it is.

    ``Lenient`` values that do not fit are replaced by ``None`` in their container as a side
    effect. Recursion follows the declared shape, so its depth is the shape's, not the value's.
    """
    if isinstance(shape, Lenient):
        return _problem(value, shape.shape, where)
    if not _fits(value, shape):
        verb = "must be" if where else "must hold"
        return f"{_named(where)} {verb} {_described(shape)}, not {_found(value)}"
    if isinstance(shape, ListOf):
        return _first_problem((item, shape.item, f"{where}[{index}]") for index, item in enumerate(value))
    if isinstance(shape, MapOf):
        return _first_problem((item, shape.value, _key(where, key)) for key, item in value.items())
    if isinstance(shape, Obj):
        return _entries_problem(value, shape, where)
    return None


def _first_problem(places: Iterable[tuple[Any, Shape, str]]) -> str | None:
    """Describe the first of ``places`` (value, shape, where) whose value is not of its shape; None if none."""
    for value, shape, where in places:
        problem = _problem(value, shape, where)
        if problem is not None:
            return problem
    return None


def _entries_problem(value: dict[str, Any], shape: Obj, where: str) -> str | None:
    """Describe the first entry of object ``value`` that is missing or not of its shape; None if none.

    A ``Lenient`` entry that does not fit is replaced by ``None`` in ``value``.
    """
    missing = [key for key in shape.required if key not in value]
    if missing:
        return f"{_named(where)} has no {missing[0]!r} entry"
    for key, declared in shape.keys.items():
        if key not in value:
            continue
        problem = _problem(value[key], declared, _key(where, key))
        if problem is not None and isinstance(declared, Lenient):
            value[key] = None
        elif problem is not None:
            return problem
    return None


def _key(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _named(where: str) -> str:
    """Name a place in the file for a message: ``'codes.labels'``, or ``the file`` for the whole."""
    return repr(where) if where else "the file"


def check_shape(value: Any, shape: Shape) -> str | None:
    """Why ``value`` (parsed JSON) is not of ``shape``, as ``'tables' must be ...``; None if it is.

    A :class:`Lenient` value that does not fit is set to ``None`` in ``value`` (not a problem).

    Examples
    --------
    >>> shape = Obj({"tables": ListOf(str), "rows": Integer(0)}, required=("tables",))
    >>> check_shape({"tables": ["runs"], "rows": 3}, shape) is None
    True
    >>> check_shape({"tables": ["runs", 3]}, shape)
    "'tables[1]' must be a string, not 3"
    >>> check_shape({"rows": 3}, shape)
    "the file has no 'tables' entry"
    """
    return _problem(value, shape, "")


# -- reading JSON -----------------------------------------------------------------------------


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, list | dict):
            level += 1
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((inner, level) for inner in (item.values() if isinstance(item, dict) else item))
    return deepest


#: The most digits an integer read may have: Python refuses to convert more than 4,300 (CVE-2020-10735), and any
#: integer of more than 309 digits is beyond the largest float (about 1.8e308) already.
_MAX_DIGITS = 309


class _OutOfRangeError(ValueError):
    """A number in a JSON file that no number of the package can be: its text, and what it is."""

    def __init__(self, digits: str, what: str) -> None:
        self.digits = digits
        super().__init__(what)


def _integer(text: str) -> int:
    """Read a JSON integer, refused beyond the largest float (whose digits Python may not even convert)."""
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise _OutOfRangeError(text, f"an integer of {len(text.lstrip('-')):,} digits, beyond the largest float")
    value = int(text)
    if abs(value) > sys.float_info.max:
        raise _OutOfRangeError(
            text, f"the integer {text[:12]}... ({len(text.lstrip('-')):,} digits), beyond the largest float"
        )
    return value


def _float(text: str) -> float:
    """Read a JSON number with a fraction or an exponent, refused beyond the largest float (``1e400``).

    Python would read such a number as infinity.
    """
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 24 else text[:21] + "..."
        raise _OutOfRangeError(text, f"the number {shown}, beyond the largest float (about 1.8e308)")
    return value


def read_json(path: Path, *, fix: str, max_bytes: int | None = None, error: type[MasEvalError] = SchemaError) -> Any:
    """Read the JSON value in file ``path``; one error naming the file, the problem and ``fix`` otherwise.

    Parameters
    ----------
    path
        The file.
    fix
        What the user should do, ending each message: ``restore it from a copy``.
    max_bytes
        The largest file read (``None``: any size).
    error
        The error raised for what the file holds (for a file of another tool's format, which
        is an input that cannot be read rather than a damaged file of ours:
        :class:`~mas_eval.errors.UnreadableFileError`).

    Raises
    ------
    UnreadableFileError
        ``path`` is not a regular file (a folder, a FIFO, a device) or cannot be read (permission denied).
    SchemaError (or ``error``)
        The file is larger than ``max_bytes``, empty, not UTF-8 (a byte-order mark is allowed),
        not JSON, or nested deeper than :data:`MAX_DEPTH`.
    """
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, a socket or a device)"
            msg = f"{path} is {kind}; {fix}"
            raise UnreadableFileError(msg)
        if max_bytes is not None and info.st_size > max_bytes:
            msg = f"{path}: {info.st_size:,} bytes, more than such a file can be ({max_bytes:,}); {fix}"
            raise error(msg)
        with path.open("rb") as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        msg = f"{path}: cannot be read ({reason}); {fix}"
        raise UnreadableFileError(msg) from None
    if max_bytes is not None and len(data) > max_bytes:  # it grew since stat
        msg = f"{path}: more than {max_bytes:,} bytes, more than such a file can be; {fix}"
        raise error(msg)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); {fix}"
        raise error(msg) from None
    if not text.strip():
        msg = f"{path} is empty, not JSON; {fix}"
        raise error(msg)
    try:
        value = json.loads(text, parse_int=_integer, parse_float=_float)
        too_deep = _depth(value) > MAX_DEPTH
    except json.JSONDecodeError as exc:
        msg = f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); {fix}"
        raise error(msg) from None
    except _OutOfRangeError as exc:
        line = text.count("\n", 0, max(text.find(exc.digits), 0)) + 1
        msg = f"{path}:{line}: {exc}; {fix}"
        raise error(msg) from None
    except RecursionError:  # the parser's own bound: Python's recursion limit, about 1,000 levels
        too_deep = True
    if too_deep:
        msg = f"{path}: lists or objects nested more than {MAX_DEPTH} deep, deeper than such a file can be; {fix}"
        raise error(msg)
    return value


# -- manifests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Manifest:
    """A manifest file: its name inside the folder, the shape of what it holds, what to do when it is wrong.

    ``shape`` is an :class:`Obj`; every manifest also holds ``mas_eval_version`` (the version
    that wrote it), added by :func:`write_manifest`.
    """

    name: str
    shape: Obj
    fix: str
    _full: Obj = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Declare the full shape: the manifest's own keys and ``mas_eval_version``."""
        keys = {"mas_eval_version": str, **self.shape.keys}
        object.__setattr__(self, "_full", Obj(keys, self.shape.required))

    def path(self, folder: Path) -> Path:
        """Where the manifest of ``folder`` is."""
        return folder / self.name

    def problem(self, content: Any) -> str | None:
        """Why ``content`` is not a manifest of this kind, or None (:func:`check_shape`)."""
        return check_shape(content, self._full)


def write_manifest(folder: Path, manifest: Manifest, content: Mapping[str, Any]) -> None:
    """Write ``content`` as ``folder``'s ``manifest`` (JSON), led by the package version.

    Raises
    ------
    RuntimeError
        ``content`` is not of the manifest's declared shape: a bug of the writer, caught before
        a reader meets it.
    """
    document = {"mas_eval_version": __version__, **content}
    problem = manifest.problem(json.loads(json.dumps(document)))
    if problem is not None:
        msg = f"mas_eval wrote a {manifest.name} that its own reader refuses: {problem}"
        raise RuntimeError(msg)
    manifest.path(folder).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def read_manifest(folder: Path, manifest: Manifest) -> dict[str, Any]:
    """``folder``'s ``manifest``, checked against its shape; ``{}`` when there is none.

    A :class:`Lenient` entry that is not of its shape reads as ``None``.

    Raises
    ------
    SchemaError
        The file is too large, empty, not UTF-8, not JSON, nested too deeply, or not of the
        manifest's shape (a list where an object is expected, an entry missing or of the wrong
        type): one line naming the file, the problem and the manifest's fix.
    UnreadableFileError
        The manifest is a folder, a FIFO or a device, or cannot be read.
    """
    path = manifest.path(folder)
    if not os.path.lexists(path):
        return {}
    content = read_json(path, fix=manifest.fix, max_bytes=MAX_MANIFEST_BYTES)
    problem = manifest.problem(content)
    if problem is not None:
        msg = f"{path}: {problem}; {manifest.fix}"
        raise SchemaError(msg)
    return content
