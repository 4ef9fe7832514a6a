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

Besides its registered columns, ``Scores.runs`` carries the run's identifying columns
(``schema.RUN_ID_COLUMNS``), then :data:`CARRIED` (the run's ``epoch``: identity, not a metric),
and, after every registered column, the columns a family names from the data
(:class:`NamedColumns`: the outcomes family's one column per score name).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mas_eval.data.schema import RUN_ID_COLUMNS
from mas_eval.errors import DataError

__all__ = [
    "CARRIED",
    "METRICS",
    "NAMED",
    "OUTPUT_TABLES",
    "Metric",
    "NamedColumns",
    "OutputTable",
    "check_named",
    "columns",
    "metric",
    "register",
    "reserved",
    "unregister",
]

#: Columns of the Dataset's ``runs`` that ``Scores.runs`` carries as they are, right after the run's
#: identifying columns, whichever families ran (null where the Dataset does not record them): not
#: metrics but what statistics over a case's repeats group by (pass@k, majority vote over epochs).
CARRIED: tuple[str, ...] = ("epoch",)


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
        """The names of the table's key columns, in key order."""
        return [column for column, _ in self.key]


@dataclass(frozen=True)
class NamedColumns:
    """Run columns named by the data: one per distinct value of the Dataset's ``source`` column.

    A family that declares them adds to its ``runs`` frame, besides its registered columns, one
    column per name found (sorted by name); ``score`` keeps them after every registered column,
    lists them in ``Scores.named`` and the Scores manifest, and a sharded scoring gives every
    shard the union of the names (null where a shard's runs lack one). A name equal to another
    column of ``Scores.runs`` (:func:`reserved`) is a :class:`~mas_eval.errors.DataError`
    (:func:`check_named`), never an overwrite.

    Attributes
    ----------
    source
        ``"table.column"`` of the Dataset whose values name the columns (``"outcomes.name"``).
    description
        What each column holds and its type.
    table
        The output table holding them (``"runs"``).
    family
        Set when the family is registered.
    """

    source: str
    description: str
    table: str = "runs"
    family: str = ""


_OUTPUT_TABLES: dict[str, OutputTable] = {
    "runs": OutputTable("runs", (), "One row per run: every family's run-level metrics."),
}
_METRICS: list[Metric] = []
_NAMED: list[NamedColumns] = []


#: Every registered output column (a live view: registered families' columns appear here).
METRICS: list[Metric] = _METRICS
#: Every registered declaration of columns named by the data (a live view).
NAMED: list[NamedColumns] = _NAMED
#: Every registered output table, by name (a live view).
OUTPUT_TABLES: dict[str, OutputTable] = _OUTPUT_TABLES


def columns(table: str, family: str | None = None) -> list[str]:
    """Return the registered columns of output table ``table`` (of one ``family``), in registry order.

    Examples
    --------
    >>> from mas_eval.metrics.registry import columns
    >>> columns("consensus_ddx")
    ['diagnosis', 'points']
    """
    return [m.name for m in _METRICS if m.table == table and (family is None or m.family == family)]


def metric(table: str, name: str) -> Metric:
    """Return the registry entry of column ``name`` in table ``table``.

    Examples
    --------
    >>> from mas_eval.metrics.registry import metric
    >>> entry = metric("runs", "tp_rate")
    >>> entry.family, entry.low, entry.high
    ('diagnosis', 0, 1)
    """
    for m in _METRICS:
        if (m.table, m.name) == (table, name):
            return m
    msg = f"no registered column {name!r} in table {table!r}"
    raise KeyError(msg)


def reserved(table: str = "runs") -> list[str]:
    """Return the columns of output ``table`` that a column named by the data may not take.

    They are the run's identifying columns, :data:`CARRIED` (``runs``), the table's key and every
    registered column of it.

    Examples
    --------
    >>> from mas_eval.metrics.registry import reserved
    >>> reserved("consensus_ddx")[:4]
    ['run_id', 'system', 'case_id', 'task']
    """
    carried = list(CARRIED) if table == "runs" else []
    key = _OUTPUT_TABLES[table].key_columns if table in _OUTPUT_TABLES else []
    return list(dict.fromkeys([*RUN_ID_COLUMNS, *carried, *key, *columns(table)]))


def check_named(names: Iterable[str], source: str, table: str = "runs") -> None:
    """Raise a :class:`~mas_eval.errors.DataError` when a name from ``source`` is a column :func:`reserved` holds.

    >>> check_named(["match", "f1"], "outcomes.name")
    >>> try:
    ...     check_named(["dqs"], "outcomes.name")
    ... except DataError as error:
    ...     print(str(error)[:60])
    outcomes.name: the score(s) 'dqs' would be runs column(s) of
    """
    taken = set(reserved(table))
    clash = sorted({name for name in names if name in taken or name.startswith("_")})
    if clash:
        msg = (
            f"{source}: the score(s) {', '.join(map(repr, clash))} would be {table} column(s) of the Scores that "
            f"another column already is (a run's identifying column, its epoch or a registered metric; names starting "
            f"with '_' are scoring's own); rename them in {source}, e.g. {clash[0].lstrip('_') + '_score'!r}"
        )
        raise DataError(msg)


def register(metrics: Iterable[Metric], tables: Iterable[OutputTable] = (), named: Iterable[NamedColumns] = ()) -> None:
    """Add a family's output tables, columns and columns named by the data; a name taken twice is an error."""
    tables, metrics, named = list(tables), list(metrics), list(named)
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
    for entry in named:
        if entry.table not in table_names:
            msg = f"columns named by {entry.source}: no output table {entry.table!r}"
            raise ValueError(msg)
    _OUTPUT_TABLES.update({t.name: t for t in tables})
    _METRICS.extend(metrics)
    _NAMED.extend(named)


def unregister(family: str) -> None:
    """Remove everything ``family`` registered (its columns, and the tables it owns)."""
    _METRICS[:] = [m for m in _METRICS if m.family != family]
    _NAMED[:] = [n for n in _NAMED if n.family != family]
    for name in [name for name, t in _OUTPUT_TABLES.items() if t.family == family]:
        del _OUTPUT_TABLES[name]
