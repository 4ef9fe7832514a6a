"""Declarative parameter validation: each public function states once what its parameters accept.

Parameter classes whose fields carry constraints (:class:`~mas_eval.presets.Params`) live with
the presets that fill them; this module only says how a value is checked. It also holds the
checks of a frame's columns that every layer shares (:func:`check_columns`, :func:`numeric_value`).

A parameter's constraints are a list; a value is valid when it satisfies any of them. One
checker raises :class:`~mas_eval.errors.InvalidParameterError` naming the function, the
parameter, the value and what is allowed, so every bad value reads the same whether it came
from Python or from the command line. The allowed values of an option live in one
``Literal`` type: :meth:`Options.of` reads them from it, so the type hints, the checks and the
CLI help cannot drift apart (as scikit-learn's ``_param_validation`` does for its estimators).

>>> from typing import Literal
>>> Correction = Literal["holm", "none"]
>>> @validate_params({"alpha": [Interval(float, 0, 1, closed="neither")], "correction": [Options.of(Correction)]})
... def adjust(alpha: float = 0.05, correction: Correction = "holm") -> float:
...     return alpha
>>> adjust(alpha=1.5)
Traceback (most recent call last):
...
mas_eval.errors.InvalidParameterError: adjust: alpha=1.5 is invalid; alpha must be a number in (0, 1)
>>> adjust(correction="sidak")
Traceback (most recent call last):
...
mas_eval.errors.InvalidParameterError: adjust: correction='sidak' is invalid; correction must be one of 'holm', 'none'
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

import polars as pl

from mas_eval.errors import InvalidParameterError, MasEvalError, SchemaError

__all__ = [
    "AXES",
    "CALLABLE",
    "COLUMN_NAME",
    "COLUMN_NAMES",
    "DATAFRAME",
    "FRAME",
    "MAPPING",
    "NAME",
    "NONE",
    "PATH",
    "PATH_LIST",
    "PROBABILITY",
    "RUN_METRICS",
    "TEXT",
    "TEXTS",
    "Boolean",
    "Constraint",
    "Instance",
    "IntPair",
    "Interval",
    "Options",
    "Predicate",
    "check_columns",
    "check_parameter",
    "describe",
    "is_unicode",
    "numeric_value",
    "parse_value",
    "sequence_of",
    "validate_fields",
    "validate_params",
]

F = TypeVar("F", bound=Callable[..., Any])
_REPR_LIMIT = 60


class Constraint(ABC):
    """One kind of value a parameter accepts."""

    @abstractmethod
    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is of this kind."""

    @abstractmethod
    def __str__(self) -> str:
        """Return what the kind is, as a noun phrase: ``"a number in [0, 1]"``."""


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of values (strings, or ``None``).

    Examples
    --------
    >>> options = Options(("holm", "none", None))
    >>> str(options), options.is_satisfied_by("holm"), options.is_satisfied_by(None), options.is_satisfied_by("sidak")
    ("one of 'holm', 'none', None", True, True, False)
    """

    values: tuple[Any, ...]

    @classmethod
    def of(cls, literal: Any) -> Options:
        """Make the constraint of the values of a ``Literal[...]`` type."""
        return cls(tuple(get_args(literal)))

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is one of the values (``True`` is not ``1``)."""
        return any(value is v or (type(value) is type(v) and value == v) for v in self.values)

    def __str__(self) -> str:
        """Return the values, as a message lists them."""
        shown = ", ".join("None" if v is None else repr(v) for v in self.values)
        return shown if len(self.values) == 1 else f"one of {shown}"


#: The value ``None``.
NONE = Options((None,))


@dataclass(frozen=True)
class Interval(Constraint):
    """A real number (``kind=float``) or an integer (``kind=int``) between ``low`` and ``high``.

    Booleans are neither; a float must be finite. ``None`` bounds are open ends. ``beyond``, when
    given, says why ``high`` is a ceiling and what to do instead: the error for a value above it
    ends with it.

    Examples
    --------
    >>> share = Interval(float, 0, 1, closed="neither")
    >>> str(share), share.is_satisfied_by(0.5), share.is_satisfied_by(1.0), share.is_satisfied_by(True)
    ('a number in (0, 1)', True, False, False)
    >>> str(Interval(int, 1))
    'an integer >= 1'
    """

    kind: type
    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    beyond: str = ""

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is a number of the kind (not a boolean) within the bounds."""
        if isinstance(value, bool):
            return False
        if self.kind is int:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real) or not _finite(value):
            return False
        low_ok = self.low is None or (value >= self.low if self.closed in ("both", "left") else value > self.low)
        high_ok = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        return bool(low_ok and high_ok)

    def is_above(self, value: object) -> bool:
        """Whether ``value`` is a number above the ceiling ``high``."""
        if self.high is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        return bool(value > self.high if self.closed in ("both", "right") else value >= self.high)

    def __str__(self) -> str:
        """Return the kind and its bounds in words: ``"an integer >= 1"``."""
        noun = "an integer" if self.kind is int else "a number"
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is None and self.high is None:
            return noun if self.kind is int else "a finite number"
        if self.high is None:
            if self.low == 0 and not left:
                return f"a positive {noun.split()[-1]}"
            return f"{noun} {'>=' if left else '>'} {_bound(self.low)}"
        if self.low is None:
            return f"{noun} {'<=' if right else '<'} {_bound(self.high)}"
        return f"{noun} in {'[' if left else '('}{_bound(self.low)}, {_bound(self.high)}{']' if right else ')'}"


def _finite(value: numbers.Real) -> bool:
    """Whether ``value`` is a finite float (an integer too large for a float is not)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _bound(value: float) -> str:
    """Show a bound as a message does: whole numbers in full (``2000000``, not ``2e+06``)."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


@dataclass(frozen=True)
class Boolean(Constraint):
    """``True`` or ``False`` (not 0 or 1)."""

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is a boolean."""
        return isinstance(value, bool)

    def __str__(self) -> str:
        """Return ``"True or False"``."""
        return "True or False"


@dataclass(frozen=True)
class Predicate(Constraint):
    """Any value for which ``test`` is true, described by ``description``."""

    test: Callable[[object], bool]
    description: str

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``test(value)`` is true."""
        return bool(self.test(value))

    def __str__(self) -> str:
        """Return the description."""
        return self.description


@dataclass(frozen=True)
class Instance(Constraint):
    """An instance of ``types`` (``isinstance``), described by ``description``: a parameter's type.

    For a parameter whose values need no other check here (a frame, a mapping, a Dataset).
    """

    types: type | tuple[type, ...]
    description: str

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is an instance of ``types``."""
        return isinstance(value, self.types)

    def __str__(self) -> str:
        """Return the description."""
        return self.description


@dataclass(frozen=True)
class IntPair(Constraint):
    """A ``(min, max)`` pair of integers, each from ``minimum`` to ``maximum`` (if given), with ``min <= max``.

    Examples
    --------
    >>> pair = IntPair(1, 10)
    >>> str(pair), pair.is_satisfied_by((2, 5)), pair.is_satisfied_by([5, 2])
    ('a (min, max) pair of integers in [1, 10] with min <= max', True, False)
    """

    minimum: int
    maximum: int | None = None

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is a tuple or list of two integers in range, the first no larger."""
        if not isinstance(value, tuple | list) or len(value) != 2:
            return False
        whole = Interval(int, self.minimum, self.maximum)
        return whole.is_satisfied_by(value[0]) and whole.is_satisfied_by(value[1]) and value[0] <= value[1]

    def __str__(self) -> str:
        """Return the pair's bounds in words."""
        each = f">= {self.minimum}" if self.maximum is None else f"in [{self.minimum}, {self.maximum}]"
        return f"a (min, max) pair of integers {each} with min <= max"


def describe(constraints: Sequence[Constraint]) -> str:
    """Say what ``constraints`` allow, e.g. ``"a number in [0, 1] or None"``.

    Examples
    --------
    >>> describe([Interval(float, 0, 1), NONE])
    'a number in [0, 1] or None'
    """
    return " or ".join(str(c) for c in constraints)


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."


def _satisfies(constraint: Constraint, value: object) -> bool:
    """Whether ``value`` satisfies ``constraint``; a test that cannot even read the value says no.

    A predicate converting the value to numbers may fail on it: the caller then gets the error
    naming the parameter.
    """
    try:
        return constraint.is_satisfied_by(value)
    except (TypeError, ValueError, AttributeError):
        return False


def check_parameter(name: str, value: object, constraints: Sequence[Constraint], *, where: str | None = None) -> None:
    """Raise :class:`~mas_eval.errors.InvalidParameterError` unless ``value`` satisfies one of ``constraints``.

    Examples
    --------
    >>> check_parameter("alpha", 0.05, [Interval(float, 0, 1)], where="compare")
    >>> check_parameter("alpha", 2, [Interval(float, 0, 1)], where="compare")
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: compare: alpha=2 is invalid; alpha must be a number in [0, 1]
    """
    if any(_satisfies(c, value) for c in constraints):
        return
    prefix = f"{where}: " if where else ""
    msg = f"{prefix}{name}={_short_repr(value)} is invalid; {name} must be {describe(constraints)}"
    beyond = [c.beyond for c in constraints if isinstance(c, Interval) and c.beyond and c.is_above(value)]
    raise InvalidParameterError(f"{msg}; {beyond[0]}" if beyond else msg)


def validate_params(constraints: Mapping[str, Sequence[Constraint]], *, where: str | None = None) -> Callable[[F], F]:
    """Decorate a function so that the arguments it is called with are checked first.

    Only arguments the caller passes are checked (the defaults are valid by construction, and a
    test checks that they are). The constraints are kept on the function as
    ``__parameter_constraints__``, for documentation and the CLI.
    """

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        unknown = sorted(set(constraints) - set(signature.parameters))
        if unknown:
            msg = f"{func.__qualname__} has no parameter(s) {', '.join(unknown)}"
            raise TypeError(msg)

        # A method is named with its class (``Dataset.open``), a constructor by its class, as the user calls them.
        named = func.__name__ if "<locals>" in func.__qualname__ else func.__qualname__
        named = where or named.removesuffix(".__init__")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                if name in constraints:
                    check_parameter(name, value, constraints[name], where=named)
            return func(*args, **kwargs)

        wrapper.__parameter_constraints__ = dict(constraints)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


C = TypeVar("C", bound=type)


def validate_fields(constraints: Mapping[str, Sequence[Constraint]]) -> Callable[[C], C]:
    """Decorate a dataclass (above ``@dataclass``) so that the fields it is made with are checked first.

    The fields are checked as :func:`validate_params` checks a function's arguments; the errors name
    the class.
    """

    def decorate(cls: C) -> C:
        cls.__init__ = validate_params(constraints, where=cls.__name__)(cls.__init__)  # type: ignore[misc]
        return cls

    return decorate


def parse_value(text: str, constraints: Sequence[Constraint]) -> Any:
    """Parse a command-line string as the value ``constraints`` expect (the check comes afterwards).

    ``none``/``null`` is ``None``; ``true``/``false`` a boolean where one is allowed; a number
    where an interval is allowed; otherwise the string itself.

    Examples
    --------
    >>> parse_value("none", [Interval(float, 0, 1), NONE]), parse_value("3", [Interval(float, 0)])
    (None, 3.0)
    >>> parse_value("false", [Boolean()]), parse_value("topsis", [Options(("topsis", "weighted_sum"))])
    (False, 'topsis')
    """
    raw = text.strip()
    if raw.lower() in ("none", "null"):
        return None
    if any(isinstance(c, Boolean) for c in constraints) and raw.lower() in ("true", "false", "yes", "no", "1", "0"):
        return raw.lower() in ("true", "yes", "1")
    for constraint in constraints:
        if isinstance(constraint, Interval):
            try:
                return int(raw) if constraint.kind is int else float(raw)
            except ValueError:
                continue
    return raw


def _is_path(value: object) -> bool:
    return isinstance(value, str | os.PathLike) and not isinstance(os.fspath(value), bytes)


#: Constraint of a path the user gives: a string or a ``pathlib.Path`` (any ``os.PathLike`` of text).
PATH = Predicate(_is_path, "a path (a string or pathlib.Path)")
#: Constraint of a parameter of text.
TEXT = Instance(str, "a string")


def is_unicode(text: str) -> bool:
    r"""Whether ``text`` holds no lone surrogate, which no UTF-8 output can write.

    A name read from bytes that are not UTF-8 holds one (Python's ``surrogateescape``).

    Examples
    --------
    >>> is_unicode("Amélie"), is_unicode("\udcff")
    (True, False)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Constraint of a name the user gives (a system, a model): a non-empty string of valid Unicode.
NAME = Predicate(
    lambda value: isinstance(value, str) and bool(value.strip()) and is_unicode(value),
    "a non-empty name of valid Unicode text (no lone surrogate)",
)
#: Constraint of a callback.
CALLABLE = Predicate(callable, "a callable")
#: Constraint of a mapping parameter (a dict).
MAPPING = Instance(Mapping, "a mapping (dict)")
#: Constraint of a Polars frame.
FRAME = Instance((pl.DataFrame, pl.LazyFrame), "a Polars DataFrame or LazyFrame")
#: Constraint of the runs a statistic or figure reads: a Polars frame, or Scores (whose ``runs`` are read).
RUN_METRICS = Predicate(
    lambda value: (
        isinstance(value, pl.DataFrame | pl.LazyFrame) or isinstance(getattr(value, "runs", None), pl.DataFrame)
    ),
    "a Polars DataFrame or LazyFrame, or Scores",
)
#: Constraint of where a figure is drawn: a matplotlib Axes (matplotlib loads with the first figure drawn).
AXES = Predicate(lambda value: callable(getattr(value, "add_artist", None)), "a matplotlib Axes")
#: Constraint of several Axes, one per panel (a list or tuple of them).
AXES_LIST = Predicate(
    lambda value: isinstance(value, Sequence) and not isinstance(value, str) and all(map(AXES.is_satisfied_by, value)),
    "a list of matplotlib Axes",
)
#: Constraint of a Polars DataFrame (a table in memory).
DATAFRAME = Instance(pl.DataFrame, "a Polars DataFrame")


def _sequence_of(kind: type | tuple[type, ...]) -> Callable[[object], bool]:
    def test(value: object) -> bool:
        return (
            isinstance(value, Sequence | Set)
            and not isinstance(value, str | bytes)
            and all(isinstance(v, kind) for v in value)
        )

    return test


def sequence_of(kind: type | tuple[type, ...], noun: str) -> Predicate:
    """Make the constraint of a list (tuple, set) whose every item is a ``kind``, described as ``a list of NOUN``.

    Examples
    --------
    >>> names = sequence_of(str, "strings")
    >>> str(names), names.is_satisfied_by(["a", "b"]), names.is_satisfied_by(["a", 1])
    ('a list of strings', True, False)
    """
    return Predicate(_sequence_of(kind), f"a list of {noun}")


#: Constraint of a list of names (strings).
TEXTS = sequence_of(str, "strings")
#: Constraint of a list of paths (the inputs an output must not overwrite).
PATH_LIST = Predicate(
    lambda value: (
        isinstance(value, Iterable)
        and not isinstance(value, str | bytes | Mapping)
        and (not isinstance(value, Collection) or all(_is_path(item) for item in value))
    ),
    "a list of paths",
)


#: Constraint of a parameter naming one column.
COLUMN_NAME = Predicate(lambda value: isinstance(value, str), "a column name (string)")


def _column_names(value: object) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, bytes | Mapping) or not isinstance(value, Iterable):
        return False
    # A one-pass iterable (a generator) is not read here: its names are checked as they are used.
    return not isinstance(value, Collection) or all(isinstance(name, str) for name in value)


#: Constraint of a parameter naming columns: ``"dqs"``, ``"dqs,decision_confidence"`` or a list of names.
COLUMN_NAMES = Predicate(_column_names, "a column name, names separated by commas, or a list of column names")
#: Constraint of a level or probability: ``alpha``, ``confidence``, a target power.
PROBABILITY = Interval(float, 0, 1, closed="neither")


def check_columns(
    schema: pl.Schema,
    names: Sequence[str],
    what: str,
    *,
    fix: str = "",
    error: type[MasEvalError] = SchemaError,
) -> None:
    """Raise :class:`SchemaError` naming every column of ``names`` that ``schema`` lacks.

    ``what`` leads the message: the table, and who reads it (``"assign: pairs"``). The message
    names each missing column once, suggests the closest existing column for each and lists the
    candidates: every numeric or boolean column for ``metrics``, every column otherwise. ``fix``,
    when given, ends it with what to do. ``error`` is the exception class, for a function that
    documents another (``task_means`` raises :class:`~mas_eval.errors.InvalidParameterError`).

    Examples
    --------
    >>> schema = pl.Schema({"system": pl.String, "dqs": pl.Float64, "efficiency_score": pl.Float64})
    >>> check_columns(schema, ["efficency_score"], "metrics")
    Traceback (most recent call last):
    ...
    mas_eval.errors.SchemaError: metrics: no column 'efficency_score' (did you mean 'efficiency_score'?); the metrics that can be compared are: dqs, efficiency_score
    >>> check_columns(schema, ["left", "right", "left"], "assign: pairs", fix="pass the output of match_pairs")
    Traceback (most recent call last):
    ...
    mas_eval.errors.SchemaError: assign: pairs: no column 'left', 'right'; the columns are: system, dqs, efficiency_score; pass the output of match_pairs
    """  # noqa: E501
    missing = list(dict.fromkeys(name for name in names if name not in schema))
    if not missing:
        return
    if what == "metrics":
        candidates = [n for n, dtype in schema.items() if dtype.is_numeric() or dtype == pl.Boolean]
        listing = "the metrics that can be compared are"
    else:
        candidates, listing = schema.names(), "the columns are"
    shown = []
    for name in missing:
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
        shown.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    msg = f"{what}: no column {', '.join(shown)}; {listing}: {', '.join(candidates) or '(none)'}"
    raise error(f"{msg}; {fix}" if fix else msg)


def numeric_value(schema: pl.Schema, name: str, what: str) -> pl.Expr:
    """Column ``name`` as Float64 (booleans as 0/1, NaN as null); other types are an error."""
    dtype = schema[name]
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        msg = f"{what} {name!r} has type {dtype}; it must be numeric or boolean"
        raise SchemaError(msg)
    expr = pl.col(name).cast(pl.Float64)
    return expr.fill_nan(None) if dtype.is_float() else expr
