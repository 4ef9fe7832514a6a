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
    """Base class of every error about the user's input or request.

    Catch it to handle every refusal of ``mas_eval`` at once; its message is one line naming what is
    wrong and the fix (the command line prints it and exits with code 2).

    Examples
    --------
    >>> import mas_eval
    >>> try:
    ...     mas_eval.simulate(1, seed=0)
    ... except MasEvalError as error:
    ...     print(type(error).__name__, "-", error)
    InvalidParameterError - simulate_decision: runs=1 is invalid; runs must be an integer in [2, 4400000]
    """


class SchemaError(MasEvalError):
    """A table or column is missing, unknown, or of a type that cannot be cast.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval import Dataset
    >>> try:
    ...     Dataset.from_frames(runs=pl.DataFrame({"run_id": ["r1"]}))
    ... except SchemaError as error:
    ...     print(error)
    table 'runs': missing required column(s) 'system', 'case_id'; it has 'run_id'; add or rename them
    """


class DataError(MasEvalError):
    """Values break a rule: null or duplicate keys, NaN, out-of-range, dangling references.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval import Dataset
    >>> runs = pl.DataFrame({"run_id": ["r1", "r1"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})
    >>> try:
    ...     Dataset.from_frames(runs=runs).validate()
    ... except DataError as error:
    ...     print(error)  # doctest: +ELLIPSIS
    table 'runs', column 'run_id': 1 key(s) occur more than once, e.g. at (run_id='r1'); the key (run_id) must be ...
    """


class IngestError(MasEvalError):
    r"""A run-log file cannot be read: names the file and the line.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mas_eval.ingest import ingest_jsonl
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     log = Path(tmp) / "runs.jsonl"
    ...     _ = log.write_text("{not json\n")
    ...     try:
    ...         ingest_jsonl(log, Path(tmp) / "ds")
    ...     except IngestError as error:
    ...         print(error)  # doctest: +ELLIPSIS
    /.../runs.jsonl:1: not valid JSON (...); fix the line, or pass skip_invalid=True to set malformed lines aside ...
    """


class InvalidParameterError(MasEvalError, ValueError):
    """A function was called with a parameter value it does not accept.

    The message names the function, the parameter, the value and what is allowed
    (:mod:`mas_eval.constraints`). It is also a ``ValueError``.

    Examples
    --------
    >>> import mas_eval
    >>> try:
    ...     mas_eval.simulate(100, seed=1, effect=5)
    ... except ValueError as error:
    ...     print(isinstance(error, InvalidParameterError), "-", error)
    True - simulate_decision: effect=5 is invalid; effect must be a number in [-1, 1]
    """


class OutputExistsError(MasEvalError):
    """An output path exists and overwriting was not asked for.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import mas_eval
    >>> ds = mas_eval.simulate(20, seed=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = ds.write(Path(tmp) / "ds")
    ...     try:
    ...         ds.write(Path(tmp) / "ds")
    ...     except OutputExistsError as error:
    ...         print(error)  # doctest: +ELLIPSIS
    /.../ds already exists; pass overwrite=True to replace it
    """


class OutputError(MasEvalError):
    """An output cannot go where asked.

    The location is read-only, full or missing, a file stands where a folder must be, or the output
    path is (or holds, or lies inside) one of the inputs.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import mas_eval
    >>> ds = mas_eval.simulate(20, seed=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "notes.txt").write_text("a file")
    ...     try:
    ...         ds.write(Path(tmp) / "notes.txt" / "ds")
    ...     except OutputError as error:
    ...         print(error)  # doctest: +ELLIPSIS
    /.../notes.txt/ds: cannot create it, because /.../notes.txt is a file, not a folder; choose another output path
    """


class UnreadableFileError(MasEvalError):
    """An input file cannot be read: truncated, corrupt, not of the expected format, or not readable.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import mas_eval
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = mas_eval.simulate(20, seed=1).write(Path(tmp) / "ds")
    ...     _ = (folder / "runs.parquet").write_bytes(b"not parquet")
    ...     try:
    ...         mas_eval.Dataset.open(folder).collect("runs")
    ...     except UnreadableFileError as error:
    ...         print(error)  # doctest: +ELLIPSIS
    /.../ds/runs.parquet: unreadable Parquet file (11 bytes, too short to be a Parquet file); restore it from a copy ...
    """


class MixedDqsMethodsError(DataError):
    """DQS values from different cascade steps (``dqs_method``: criteria, MCDA, final) would be compared.

    Examples
    --------
    >>> import polars as pl
    >>> import mas_eval
    >>> runs = pl.DataFrame(
    ...     {
    ...         "run_id": ["r1", "r2", "r3", "r4"],
    ...         "system": ["mas", "mas", "single", "single"],
    ...         "dqs": [0.7, 0.6, 0.5, 0.4],
    ...         "dqs_method": ["criteria", "criteria", "final", "final"],
    ...     }
    ... )
    >>> try:
    ...     mas_eval.compare(runs, "dqs")
    ... except MixedDqsMethodsError as error:
    ...     print(error)  # doctest: +ELLIPSIS
    cannot compare dqs of 'mas' and 'single': dqs_method differs within 1 group(s): (all runs) mas: criteria; ...
    """


def format_keys(rows: Sequence[dict[str, object]] | Iterable[tuple[object, ...]], limit: int = 5) -> str:
    """Render up to ``limit`` offending keys as ``(run_id='r1', agent_id='a2'), ...``.

    Examples
    --------
    >>> format_keys([{"run_id": "r1", "agent_id": "a2"}, {"run_id": "r3", "agent_id": "a1"}])
    "(run_id='r1', agent_id='a2'), (run_id='r3', agent_id='a1')"
    >>> format_keys([("r1",), ("r2",)], limit=1)
    "('r1',)"
    """
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

    Examples
    --------
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
