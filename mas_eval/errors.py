"""The domain exception hierarchy: every error ``mas_eval`` raises on bad input or a bad request.

All of them are :class:`MasEvalError`, so callers (and the CLI, which turns them into one line
and exit code 2) can catch them at once. :class:`InvalidParameterError` is also a
``ValueError``, so code that guards a call with ``except ValueError`` keeps working.

>>> from mas_eval.errors import InvalidParameterError, MasEvalError
>>> issubclass(InvalidParameterError, MasEvalError) and issubclass(InvalidParameterError, ValueError)
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar

__all__ = [
    "DataError",
    "IngestError",
    "InvalidParameterError",
    "MasEvalError",
    "MixedDqsMethodsError",
    "OutputError",
    "OutputExistsError",
    "SchemaError",
    "UnreadableFileError",
    "command_line",
    "format_keys",
    "option",
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


class OutputError(MasEvalError):
    """An output cannot go where asked: the location is read-only, full or missing, a file stands
    where a folder must be, or the output path is (or holds, or lies inside) one of the inputs."""


class UnreadableFileError(MasEvalError):
    """An input file cannot be read: truncated, corrupt, not of the expected format, or not readable."""


class MixedDqsMethodsError(DataError):
    """DQS values from different cascade steps (``dqs_method``: criteria, MCDA, final) would be compared."""


def format_keys(rows: Sequence[dict[str, object]] | Iterable[tuple[object, ...]], limit: int = 5) -> str:
    """Render up to ``limit`` offending keys as ``(run_id='r1', agent_id='a2'), ...``."""
    rendered = []
    for row in list(rows)[:limit]:
        if isinstance(row, dict):
            rendered.append("(" + ", ".join(f"{k}={v!r}" for k, v in row.items()) + ")")
        else:
            rendered.append(repr(row))
    return ", ".join(rendered)


#: Which interface is talking to the user: error messages spell options the way it takes them.
_INTERFACE: ContextVar[str] = ContextVar("mas_eval_interface", default="python")


@contextlib.contextmanager
def command_line() -> Iterator[None]:
    """Within this block, :func:`option` spells options as command-line flags (the CLI enters it)."""
    token = _INTERFACE.set("cli")
    try:
        yield
    finally:
        _INTERFACE.reset(token)


def option(name: str, value: object = True, *, cli: str | None = None) -> str:
    """How the user passes ``name=value``, for the fix an error message suggests.

    ``cli`` is how the command line spells it, when its option is not the parameter's name as a
    flag (a size in MiB for a parameter in bytes).

    >>> option("skip_invalid"), option("chunk_bytes", 1 << 20, cli="--chunk-mb 1")
    ('skip_invalid=True', 'chunk_bytes=1048576')
    >>> with command_line():
    ...     option("skip_invalid"), option("chunk_bytes", 1 << 20, cli="--chunk-mb 1"), option("shards", 4)
    ('--skip-invalid', '--chunk-mb 1', '--shards 4')
    """
    if _INTERFACE.get() == "cli":
        if cli is not None:
            return cli
        flag = "--" + name.replace("_", "-")
        return flag if value is True else f"{flag} {value}"
    return f"{name}={value!r}"
