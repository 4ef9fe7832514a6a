"""The one boundary where a value another tool wrote becomes a value of a Dataset column.

A log adapter reads Python values out of JSON, a zip member or a table, and must never hand one to
Polars unchecked: ``1.5`` for an integer column is not silently truncated to 1, ``2**64`` does
not overflow, a lone surrogate does not reach Arrow, an empty string is not a run's id. Every
adapter passes each foreign value through one of the checks here before it becomes a row:

- :func:`integer`, :func:`number`, :func:`flag`, :func:`identifier` and :func:`text` return the value as its
  column holds it, or raise :class:`~mas_eval.ingest.recipe.InvalidInputError` naming the field and
  the value: the record (or the file) is refused, or set aside with ``skip_invalid``;
- :func:`count` and :func:`duration` are for usage a run cannot have had (a negative number of
  tokens or seconds, as some writers record): such a value is not a reason to refuse the run, it
  is set to null for that run and reported, once per file and field (:class:`Impossible`);
- :func:`checked_sum` adds counts in exact integer arithmetic and refuses a total that no
  64-bit integer column can hold.

Examples
--------
>>> integer(3, "epoch"), integer(3.0, "epoch"), integer("7", "epoch", strings=True)
(3, 3, 7)
>>> integer(1.5, "epoch")
Traceback (most recent call last):
...
mas_eval.ingest.recipe.InvalidInputError: field 'epoch' is 1.5, not a whole number
>>> impossible = Impossible()
>>> count(-12, "tokens", impossible, where="sample 3") is None
True
>>> impossible.lines("log.json")
["log.json: field 'tokens' was negative in 1 record(s) (sample 3: -12), which no run can have; set to null there"]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from mas_eval.ingest.recipe import InvalidInputError

__all__ = [
    "FALSE_WORDS",
    "INT64_MAX",
    "INT64_MIN",
    "TRUE_WORDS",
    "Impossible",
    "checked_sum",
    "count",
    "duration",
    "flag",
    "identifier",
    "integer",
    "number",
    "text",
    "unsigned",
]

#: The range of an Int64 column: the Dataset's integer columns.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: How many examples of an impossible value a report line quotes.
_EXAMPLES = 3


def _shown(value: Any) -> str:
    """Return a value as a message quotes it: at most 40 characters, surrogates escaped."""
    said = repr(value)
    if len(said) > 40:
        said = said[:37] + "..."
    return said.encode("utf-8", "backslashreplace").decode("utf-8")


def _refuse(field: str, value: Any, problem: str) -> InvalidInputError:
    return InvalidInputError(f"field {field!r} is {_shown(value)}, {problem}")


def integer(value: Any, field: str, *, strings: bool = False, minimum: int | None = None) -> int | None:
    """Read ``value`` as an Int64 column's value: an integer, a float with no fraction, or None.

    ``strings=True`` also reads a decimal string (OTLP JSON writes 64-bit integers as strings).
    A boolean, a fractional number, a non-finite one, one outside Int64, or one below ``minimum``
    is refused with :class:`~mas_eval.ingest.recipe.InvalidInputError`.

    Examples
    --------
    >>> integer(None, "epoch") is None, integer(2**62, "tokens")
    (True, 4611686018427387904)
    >>> integer(2**63, "epoch")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'epoch' is 9223372036854775808, beyond the largest integer a column holds (2**63 - 1)
    """  # noqa: E501
    if value is None:
        return None
    if isinstance(value, bool):
        raise _refuse(field, value, "a boolean, not a whole number")
    if isinstance(value, str) and strings:
        try:
            number_ = int(value.strip())
        except ValueError:
            raise _refuse(field, value, "not a whole number") from None
    elif isinstance(value, int):
        number_ = value
    elif isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise _refuse(field, value, "not a whole number")
        number_ = int(value)
    else:
        raise _refuse(field, value, "not a whole number")
    if not INT64_MIN <= number_ <= INT64_MAX:
        raise _refuse(field, value, "beyond the largest integer a column holds (2**63 - 1)")
    if minimum is not None and number_ < minimum:
        raise _refuse(field, value, f"less than {minimum}")
    return number_


def unsigned(value: Any, field: str, *, bits: int = 64, strings: bool = False) -> int | None:
    """Read ``value`` as an unsigned integer of ``bits`` bits (protobuf's ``fixed64``), or None.

    For a value that is no column's own but an operand (an OTLP time in nanoseconds, up to
    2**64 - 1, of which only differences become columns), kept as Python's exact integer.
    ``strings=True`` also reads a decimal string. A boolean, a fractional or non-finite number,
    a negative one or one of more than ``bits`` bits is refused.

    Examples
    --------
    >>> unsigned("18446744073709551615", "startTimeUnixNano", strings=True)
    18446744073709551615
    >>> unsigned(2**64, "startTimeUnixNano")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'startTimeUnixNano' is 18446744073709551616, beyond the largest unsigned 64-bit integer (2**64 - 1)
    """  # noqa: E501
    if value is None:
        return None
    if isinstance(value, bool):
        raise _refuse(field, value, "a boolean, not a whole number")
    if isinstance(value, str) and strings:
        try:
            number_ = int(value.strip())
        except ValueError:
            raise _refuse(field, value, "not a whole number") from None
    elif isinstance(value, int):
        number_ = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number_ = int(value)
    else:
        raise _refuse(field, value, "not a whole number")
    if number_ < 0:
        raise _refuse(field, value, "negative, not an unsigned integer")
    if number_ >= 2**bits:
        raise _refuse(field, value, f"beyond the largest unsigned {bits}-bit integer (2**{bits} - 1)")
    return number_


def number(value: Any, field: str, *, strings: bool = False) -> float | None:
    """Read ``value`` as a Float64 column's value: a finite number, or None.

    A boolean, a non-finite number (NaN, infinity, or an integer too large for a float), or
    (without ``strings``) a string is refused.

    Examples
    --------
    >>> number(2, "seconds"), number("1e3", "seconds", strings=True)
    (2.0, 1000.0)
    >>> number(float("inf"), "cost_usd")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'cost_usd' is inf, not a finite number
    """
    if value is None:
        return None
    if isinstance(value, bool) or (isinstance(value, str) and not strings):
        raise _refuse(field, value, "not a number")
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _refuse(field, value, "not a finite number") from None
    if not math.isfinite(result):
        raise _refuse(field, value, "not a finite number")
    return result


#: The words :func:`flag` reads as true and as false (compared case-insensitively, spaces stripped).
TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1", "1.0"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0", "0.0"})


def flag(value: Any, field: str, *, strings: bool = False) -> bool | None:
    """Read ``value`` as a Boolean column's value: True, False, or None (missing).

    A boolean, or the number 0 or 1, is read as such; NaN and None are missing (MAST's files write
    an annotation not made as ``NaN``). ``strings=True`` also reads the words of a table's cells:
    ``true``/``false``, ``yes``/``no``, ``t``/``f``, ``y``/``n``, ``1``/``0`` (any case), and an
    empty cell as missing. Anything else is refused.

    Examples
    --------
    >>> flag(1, "present"), flag(False, "present"), flag(float("nan"), "present") is None
    (True, False, True)
    >>> flag(" TRUE ", "present", strings=True), flag("", "present", strings=True) is None
    (True, True)
    >>> flag(2, "present")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'present' is 2, not a boolean (true/false, 1/0)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and strings:
        word = value.strip().casefold()
        if not word:
            return None
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise _refuse(field, value, "not a boolean (true/false, 1/0)")


def text(value: Any, field: str) -> str | None:
    r"""Read ``value`` as a String column's value: valid Unicode text, or None.

    A lone surrogate (which JSON's ``\ud800`` can write and no UTF-8 text can hold) is refused.

    Examples
    --------
    >>> text("Paris", "answer")
    'Paris'
    >>> text("\ud800", "answer")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'answer' is '\ud800', not valid Unicode text (a lone surrogate)
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise _refuse(field, value, "not text")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(field, value, "not valid Unicode text (a lone surrogate)") from None
    return value


def identifier(value: Any, field: str) -> str:
    """Read ``value`` as a key column's value: non-empty text, or an integer written as text.

    Examples
    --------
    >>> identifier(42, "sample id"), identifier("q1", "sample id")
    ('42', 'q1')
    >>> identifier(" ", "case_id")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'case_id' is ' ', blank, not an identifier
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        msg = f"field {field!r} is missing (null), not an identifier"
        raise InvalidInputError(msg)
    checked = text(value, field)
    if checked is None or not checked.strip():
        raise _refuse(field, value, "blank, not an identifier")
    return checked


class Impossible:
    """Values no run can have, set to null where they were found, and said once per file and field.

    Examples
    --------
    >>> impossible = Impossible()
    >>> duration(-3.5, "working_time", impossible, where="sample 1, epoch 1") is None
    True
    >>> impossible.fields()
    ['working_time']
    """

    def __init__(self) -> None:
        self._found: dict[str, list[str]] = {}

    def add(self, field: str, value: Any, where: str) -> None:
        """Record that ``field`` held ``value`` in record ``where``."""
        self._found.setdefault(field, []).append(f"{where}: {_shown(value)}" if where else _shown(value))

    def fields(self) -> list[str]:
        """Return the fields that held an impossible value, in the order first found."""
        return list(self._found)

    def absorb(self, other: Impossible) -> None:
        """Add what ``other`` recorded (a record's values, kept once the record is accepted).

        Examples
        --------
        >>> log, record = Impossible(), Impossible()
        >>> record.add("tokens", -1, "sample 2")
        >>> log.absorb(record)
        >>> log.fields()
        ['tokens']
        """
        for field, found in other._found.items():
            self._found.setdefault(field, []).extend(found)

    def lines(self, file: object) -> list[str]:
        """Return one report line per field: the file, how many records, the first examples."""
        out = []
        for field, found in self._found.items():
            examples = "; ".join(found[:_EXAMPLES]) + ("; ..." if len(found) > _EXAMPLES else "")
            out.append(
                f"{file}: field {field!r} was negative in {len(found)} record(s) ({examples}), "
                "which no run can have; set to null there"
            )
        return out


def count(value: Any, field: str, impossible: Impossible, *, where: str = "", strings: bool = False) -> int | None:
    """Read ``value`` as a count (tokens, calls): :func:`integer`, with a negative one set to null and recorded.

    Examples
    --------
    >>> count(12, "tokens", Impossible())
    12
    """
    result = integer(value, field, strings=strings)
    if result is not None and result < 0:
        impossible.add(field, value, where)
        return None
    return result


def duration(value: Any, field: str, impossible: Impossible, *, where: str = "", strings: bool = False) -> float | None:
    """Read ``value`` as seconds or a cost: :func:`number`, with a negative one set to null and recorded.

    Examples
    --------
    >>> duration(1, "seconds", Impossible())
    1.0
    """
    result = number(value, field, strings=strings)
    if result is not None and result < 0:
        impossible.add(field, value, where)
        return None
    return result


def checked_sum(values: Iterable[int | None], field: str) -> int | None:
    """Return the sum of counts (None when every one is None); refuse it when it is beyond Int64.

    Python's integers are exact, so the total is checked before it becomes a column value,
    where it would wrap around.

    Examples
    --------
    >>> checked_sum([1, None, 2], "input_tokens"), checked_sum([None], "input_tokens") is None
    (3, True)
    >>> checked_sum([2**62] * 4, "input_tokens")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: field 'input_tokens' sums to 18446744073709551616, beyond the largest integer a column holds (2**63 - 1)
    """  # noqa: E501
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = sum(present)
    if not INT64_MIN <= total <= INT64_MAX:
        msg = f"field {field!r} sums to {total}, beyond the largest integer a column holds (2**63 - 1)"
        raise InvalidInputError(msg)
    return total
