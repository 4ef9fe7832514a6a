"""Every output column of every metric family, once, with its declared properties.

The registry is the single list of what :func:`mas_eval.score` produces: the families take
their output columns from it, the CLI and README document them from it, and one
parametrised test suite checks each declared property (range, row-order invariance) on
random datasets, as scikit-learn does for its metrics. A family adds its columns (and any
table of its own) with :func:`register`.

>>> from mas_eval.metrics.registry import columns, metric
>>> columns("agents", "decision")
['contribution', 'normalized_entropy', 'confidence', 'top_choice']
>>> columns("agents", "diagnosis")
['insight', 'synthesis', 'action', 'valence', 'credibility']
>>> metric("runs", "consensus_level").high
1
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["METRICS", "OUTPUT_TABLES", "Metric", "OutputTable", "columns", "metric", "register", "unregister"]


@dataclass(frozen=True)
class Metric:
    """One output column.

    Attributes
    ----------
    name, table
        Column name and the :class:`~mas_eval.scoring.pipeline.Scores` table holding it.
    description
        What it measures, and where its formula comes from.
    low, high
        Documented range (inclusive); ``None`` for unbounded.
    family
        The metric family that computes it: set when the family is registered
        (:func:`mas_eval.metrics.family.register`).
    codes
        For a column of labels: the kind of label (``"alternative"``, ``"agent_id"``) it holds
        as integer codes until the output is decoded (:mod:`mas_eval.metrics.codes`).
    order_invariant
        Unchanged when the rows of the input tables are shuffled.
    """

    name: str
    table: str
    description: str
    low: float | None = None
    high: float | None = None
    family: str = ""
    codes: str | None = None
    order_invariant: bool = True


@dataclass(frozen=True)
class OutputTable:
    """One table of :class:`~mas_eval.scoring.pipeline.Scores`.

    Every row is led by the run's identifying columns (``schema.RUN_ID_COLUMNS``), then
    ``key``: the columns that, with ``run_id``, identify the row, each with the kind of label
    it holds as a code (:mod:`mas_eval.metrics.codes`), or ``None`` for a column of plain
    labels. ``family`` is the family that produces it; ``None`` for ``runs``, to which every
    family may add columns. A family's frame may carry an identifying column of its own (the
    answers family's ``items`` carry each answer's ``task``): its values, where not null,
    replace the run's.
    """

    name: str
    key: tuple[tuple[str, str | None], ...]
    description: str
    family: str | None = None

    @property
    def key_columns(self) -> list[str]:
        return [column for column, _ in self.key]


_OUTPUT_TABLES: dict[str, OutputTable] = {
    "runs": OutputTable("runs", (), "One row per run: every family's run-level metrics."),
}
_METRICS: list[Metric] = []


#: Every registered output column (a live view: registered families' columns appear here).
METRICS: list[Metric] = _METRICS
#: Every registered output table, by name (a live view).
OUTPUT_TABLES: dict[str, OutputTable] = _OUTPUT_TABLES


def columns(table: str, family: str | None = None) -> list[str]:
    """The registered columns of output table ``table`` (of one ``family``), in registry order."""
    return [m.name for m in _METRICS if m.table == table and (family is None or m.family == family)]


def metric(table: str, name: str) -> Metric:
    """The registry entry of column ``name`` in table ``table``."""
    for m in _METRICS:
        if (m.table, m.name) == (table, name):
            return m
    msg = f"no registered column {name!r} in table {table!r}"
    raise KeyError(msg)


def register(metrics: Iterable[Metric], tables: Iterable[OutputTable] = ()) -> None:
    """Add a family's output tables and columns; a name taken by another entry is an error."""
    tables, metrics = list(tables), list(metrics)
    for table in tables:
        if table.name in _OUTPUT_TABLES:
            msg = f"output table {table.name!r} is already registered (by {_OUTPUT_TABLES[table.name].family!r})"
            raise ValueError(msg)
    known = {(m.table, m.name) for m in _METRICS}
    table_names = set(_OUTPUT_TABLES) | {t.name for t in tables}
    for m in metrics:
        if (m.table, m.name) in known:
            msg = f"column {m.name!r} of table {m.table!r} is already registered"
            raise ValueError(msg)
        if m.table not in table_names:
            msg = f"column {m.name!r}: no output table {m.table!r}; register the table with it"
            raise ValueError(msg)
        known.add((m.table, m.name))
    _OUTPUT_TABLES.update({t.name: t for t in tables})
    _METRICS.extend(metrics)


def unregister(family: str) -> None:
    """Remove everything ``family`` registered (its columns, and the tables it owns)."""
    _METRICS[:] = [m for m in _METRICS if m.family != family]
    for name in [name for name, t in _OUTPUT_TABLES.items() if t.family == family]:
        del _OUTPUT_TABLES[name]
