"""The domain exception hierarchy: every error ``mas_eval`` raises on bad input or a bad request.

All of them are :class:`MasEvalError`, so callers (and the CLI, which turns them into one line
and exit code 2) can catch them at once. :class:`InvalidParameterError` is also a
``ValueError``, so code that guards a call with ``except ValueError`` keeps working.

>>> from mas_eval.errors import InvalidParameterError, MasEvalError
>>> issubclass(InvalidParameterError, MasEvalError) and issubclass(InvalidParameterError, ValueError)
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "DataError",
    "IngestError",
    "InvalidParameterError",
    "MasEvalError",
    "MixedDqsMethodsError",
    "OutputExistsError",
    "SchemaError",
    "format_keys",
]


class MasEvalError(Exception):
    """Base class of every error about the user's input or request."""


class SchemaError(MasEvalError):
    """A table or column is missing, unknown, or of a type that cannot be cast."""


class DataError(MasEvalError):
    """Values break a rule: null or duplicate keys, NaN, out-of-range, dangling references."""


class IngestError(MasEvalError):
    """A run-log file cannot be read: names the file and the line."""


class InvalidParameterError(MasEvalError, ValueError):
    """A function was called with a parameter value it does not accept: names the parameter,
    the value and what is allowed (:mod:`mas_eval.constraints`)."""


class OutputExistsError(MasEvalError):
    """An output path exists and overwriting was not asked for."""


class MixedDqsMethodsError(DataError):
    """DQS values from different cascade steps (``dqs_method``) would be compared (seed 004, Bug #3)."""


def format_keys(rows: Sequence[dict[str, object]] | Iterable[tuple[object, ...]], limit: int = 5) -> str:
    """Render up to ``limit`` offending keys as ``(run_id='r1', agent_id='a2'), ...``."""
    rendered = []
    for row in list(rows)[:limit]:
        if isinstance(row, dict):
            rendered.append("(" + ", ".join(f"{k}={v!r}" for k, v in row.items()) + ")")
        else:
            rendered.append(repr(row))
    return ", ".join(rendered)
