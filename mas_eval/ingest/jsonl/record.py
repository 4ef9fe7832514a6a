"""The canonical run record's layout: its lists, the tables they fill, and the Polars dtype it is decoded with.

Derived from :mod:`mas_eval.data.schema`, so that the record (``run_record.schema.json``), its
ingest and its export (:mod:`mas_eval.ingest.export`) cannot drift apart.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import cast

import polars as pl

from mas_eval.data.schema import TABLES

__all__ = ["BY_TABLE", "RECORD_LISTS", "RUNS_TOP", "USAGE", "USAGE_FIELD", "RecordList", "json_path", "record_dtype"]

#: ``runs`` columns that a record holds in its ``usage`` object rather than at the top level.
USAGE_FIELD = "usage"
USAGE = (
    "iterations",
    "api_calls",
    "seconds",
    "tokens",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "tool_calls",
    "tool_errors",
)


@dataclass(frozen=True)
class RecordList:
    """A list in the record whose items become the rows of one table.

    ``field`` is the list's name in the item of ``parent`` (``"runs"`` is the record itself);
    the table's ``inherit`` columns are copied from that parent item (they are the parent
    table's key, or ``case_id`` for ground truth); a ``scalar`` list holds plain strings that
    fill the table's single own column.
    """

    table: str
    parent: str
    field: str
    inherit: tuple[str, ...]
    scalar: bool = False

    @property
    def own(self) -> list[str]:
        """The table's columns read from each item."""
        return [c for c in TABLES[self.table].names if c not in self.inherit]


#: The record's lists, parents before children (run_record.schema.json).
RECORD_LISTS = (
    RecordList("agents", "runs", "agents", ("run_id",)),
    RecordList("beliefs", "agents", "beliefs", ("run_id", "agent_id")),
    RecordList("criteria", "runs", "criteria", ("run_id",)),
    RecordList("alt_scores", "runs", "alternatives", ("run_id",)),
    RecordList("scores", "alt_scores", "scores", ("run_id", "alternative")),
    RecordList("ddx", "runs", "ddx", ("run_id",)),
    RecordList("ground_truth", "runs", "ground_truth", ("case_id",), scalar=True),
    RecordList("messages", "runs", "messages", ("run_id",)),
    RecordList("interventions", "runs", "interventions", ("run_id",), scalar=True),
    RecordList("answers", "runs", "answers", ("run_id",)),
    RecordList("usage", "runs", "agent_usage", ("run_id",)),
    RecordList("outcomes", "runs", "outcomes", ("run_id",)),
    RecordList("tool_calls", "runs", "tools", ("run_id",)),
    RecordList("annotations", "runs", "annotations", ("run_id",)),
)
BY_TABLE = {lst.table: lst for lst in RECORD_LISTS}
RUNS_TOP = [c for c in TABLES["runs"].names if c not in USAGE]


def _children(table: str) -> list[RecordList]:
    return [lst for lst in RECORD_LISTS if lst.parent == table]


def _leaf(dtype: pl.DataType, permissive: bool) -> pl.DataType:
    # Numbers are decoded as text in the permissive dtype, so that a wrong value ("high", 1.5 for
    # an integer, true) becomes a null after a non-strict cast instead of failing the whole chunk
    # (strings) or being silently coerced by the decoder (1.5 -> 1, true -> 1).
    return pl.String() if permissive and dtype.is_numeric() else dtype


def _item_dtype(table: str, permissive: bool) -> pl.DataType:
    spec = TABLES[table]
    if table == "runs":
        own = RUNS_TOP
    else:
        lst = BY_TABLE[table]
        own = lst.own
        if lst.scalar:
            return _leaf(spec.column_map[own[0]].dtype, permissive)
    fields = {c: _leaf(spec.column_map[c].dtype, permissive) for c in own}
    if table == "runs":
        fields[USAGE_FIELD] = pl.Struct({c: _leaf(spec.column_map[c].dtype, permissive) for c in USAGE})
    for child in _children(table):
        fields[child.field] = pl.List(_item_dtype(child.table, permissive))
    return pl.Struct(fields)


@functools.cache
def record_dtype(*, permissive: bool = False) -> pl.Struct:
    """Return the Polars dtype of one canonical run record, derived from :mod:`mas_eval.data.schema`.

    Parameters
    ----------
    permissive
        Decode every number as a string (what :func:`ingest_jsonl` does, so that values of the
        wrong type can be found row by row); the default gives the schema's dtypes.

    Examples
    --------
    >>> record_dtype().to_schema()["usage"]  # doctest: +NORMALIZE_WHITESPACE
    Struct({'iterations': Int64, 'api_calls': Int64, 'seconds': Float64, 'tokens': Int64,
            'input_tokens': Int64, 'output_tokens': Int64, 'cost_usd': Float64, 'tool_calls': Int64,
            'tool_errors': Int64})
    """
    return cast(pl.Struct, _item_dtype("runs", permissive))


def json_path(table: str) -> str:
    """JSON path of a table's items in the record, e.g. ``agents[].beliefs[]``."""
    if table == "runs":
        return ""
    lst = BY_TABLE[table]
    parent = json_path(lst.parent)
    return f"{parent}.{lst.field}[]" if parent else f"{lst.field}[]"
