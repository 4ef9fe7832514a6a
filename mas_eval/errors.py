"""The domain exception hierarchy.

Every error ``mas_eval`` raises on bad input is a :class:`MasEvalError`, so callers (and the
CLI, which turns them into one line and exit code 2) can catch them all at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["DataError", "IngestError", "MasEvalError", "SchemaError", "format_keys"]


class MasEvalError(Exception):
    """Base class of every error about the user's input or request."""


class SchemaError(MasEvalError):
    """A table or column is missing, unknown, or of a type that cannot be cast."""


class DataError(MasEvalError):
    """Values break a rule: null or duplicate keys, NaN, out-of-range, dangling references."""


class IngestError(MasEvalError):
    """A run-log file cannot be read: names the file and the line."""


def format_keys(rows: Sequence[dict[str, object]] | Iterable[tuple[object, ...]], limit: int = 5) -> str:
    """Render up to ``limit`` offending keys as ``(run_id='r1', agent_id='a2'), ...``."""
    rendered = []
    for row in list(rows)[:limit]:
        if isinstance(row, dict):
            rendered.append("(" + ", ".join(f"{k}={v!r}" for k, v in row.items()) + ")")
        else:
            rendered.append(repr(row))
    return ", ".join(rendered)
