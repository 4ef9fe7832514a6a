"""Input handling shared by the statistics functions: frames, column checks, shared parameter constraints."""

from __future__ import annotations

import numbers
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from mas_eval.constraints import (
    COLUMN_NAME,
    COLUMN_NAMES,
    PROBABILITY,
    Constraint,
    Interval,
    Predicate,
    check_columns,
    check_parameter,
    numeric_value,
)
from mas_eval.errors import DataError, InvalidParameterError

__all__ = [
    "ASIDE",
    "COLUMN_NAME",
    "COLUMN_NAMES",
    "ENGINE",
    "GROUP",
    "PROBABILITY",
    "SYSTEM_NAME",
    "as_lazy",
    "aside_note",
    "check_columns",
    "check_no_nulls",
    "column_list",
    "group_label",
    "joined_notes",
    "numeric_value",
    "one_or_list",
    "raise_on_nulls",
    "set_aside",
    "solved_for",
    "values_of",
    "with_aside",
]

#: Constraint of ``treatment`` and ``control``: a value of the ``system`` column.
SYSTEM_NAME = Predicate(lambda value: isinstance(value, str), "a system name (string)")

#: Key column standing in for ``by`` when no grouping is asked for (dropped from the output).
GROUP = "__mas_eval_group__"

#: Polars engine of every statistics query. Sums over rows met in a varying order differ in
#: their last bits; with the in-memory engine, and the case and cluster tables sorted before
#: they are summed (summaries, cluster), two identical calls give identical results (tested).
#: It is also the quicker engine for these aggregations (docs/performance.md).
ENGINE = "in-memory"


def as_lazy(run_metrics: Any) -> pl.LazyFrame:
    """Return a LazyFrame of a Polars DataFrame or LazyFrame, or of anything with ``.runs`` (``Scores``)."""
    if hasattr(run_metrics, "runs") and not isinstance(run_metrics, pl.DataFrame | pl.LazyFrame):
        run_metrics = run_metrics.runs
    if isinstance(run_metrics, pl.DataFrame):
        return run_metrics.lazy()
    if isinstance(run_metrics, pl.LazyFrame):
        return run_metrics
    msg = (
        f"run_metrics must be a Polars DataFrame or LazyFrame (or Scores, whose .runs is used), "
        f"not {type(run_metrics).__name__}"
    )
    raise InvalidParameterError(msg)


# -- values a statistic cannot use: set aside per run, and said -----------------------------------

#: The column of :func:`set_aside` counting a group's runs set aside.
ASIDE = "_aside"


def set_aside(frame: pl.LazyFrame, columns: Sequence[str], keys: Sequence[str]) -> tuple[pl.LazyFrame, pl.DataFrame]:
    """Set aside, and count, the runs whose value in any of ``columns`` is NaN or infinite.

    This is the rule of every statistic for a value it cannot use (an outcome, a cost, a token
    count, a score).

    Returns ``frame`` without those runs, and per ``keys`` (the groups of the output rows, or finer)
    how many were set aside, in the column :data:`ASIDE` (only groups with some; none, at no cost
    beyond one scan, when no column is a float). The caller reports the count in its ``note``
    column (:func:`aside_note`), computes the rest from the runs left, and never rejects the data
    for it. A missing column is left for the caller's own check to name.
    """
    schema = frame.collect_schema()
    floats = [name for name in dict.fromkeys(columns) if name in schema and schema[name].is_float()]
    if not floats or any(key not in schema for key in keys):
        return frame, pl.DataFrame(schema={**{key: schema.get(key, pl.Null) for key in keys}, ASIDE: pl.Int64})
    bad = pl.any_horizontal((pl.col(name).is_nan() | pl.col(name).is_infinite()).fill_null(False) for name in floats)
    counts = frame.filter(bad).group_by(keys).agg(pl.len().cast(pl.Int64).alias(ASIDE)).collect(engine=ENGINE)
    return (frame.filter(~bad) if counts.height else frame), counts


def aside_note(what: str, count: pl.Expr | None = None) -> pl.Expr:
    """Return the note on the runs set aside (:func:`set_aside`), null when none were.

    The note reads ``"2 run(s) with a NaN or infinite cost set aside"``; ``count`` is the
    :data:`ASIDE` column by default (null counts as none).
    """
    count = pl.col(ASIDE) if count is None else count
    return pl.when(count > 0).then(pl.format(f"{{}} run(s) with a NaN or infinite {what} set aside", count))


def with_aside(table: pl.DataFrame, counts: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Return ``table`` with the :data:`ASIDE` count of its rows' ``keys`` (0 where none).

    The counts are summed from ``counts``, whose keys may be finer.
    """
    summed = counts.group_by(keys).agg(pl.col(ASIDE).sum()) if counts.height else counts.select(*keys, ASIDE)
    joined = table.join(summed, on=list(keys), how="left", nulls_equal=True, maintain_order="left")
    return joined.with_columns(pl.col(ASIDE).fill_null(0))


def joined_notes(*notes: pl.Expr) -> pl.Expr:
    """Join notes (null where there is nothing to say) by ``"; "``; null when all are null."""
    text = pl.concat_str(notes, separator="; ", ignore_nulls=True)
    return pl.when(text != "").then(text)


def column_list(value: str | Iterable[str] | None, what: str, *, required: bool = False) -> list[str]:
    """Return ``"a"`` or ``"a,b"`` or ``["a", "b"]`` as a list of unique names, in order.

    Anything else (names that are not strings, none when ``required``, a name twice) is an
    :class:`~mas_eval.errors.InvalidParameterError` naming the parameter ``what``.
    """
    if value is None:
        names: list[str] = []
    elif isinstance(value, str):
        names = [part.strip() for part in value.split(",") if part.strip()]
    else:
        names = list(value)
        if not all(isinstance(name, str) for name in names):
            msg = f"{what} must be column names (strings), got {names!r}"
            raise InvalidParameterError(msg)
    if required and not names:
        msg = f"{what}: name at least one column"
        raise InvalidParameterError(msg)
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        msg = f"{what} names {', '.join(duplicated)} more than once"
        raise InvalidParameterError(msg)
    return names


def check_no_nulls(frame: pl.LazyFrame, names: Sequence[str], what: str) -> None:
    """Raise :class:`DataError` when a column of ``names`` holds nulls among the compared runs."""
    if not names:
        return
    counts = frame.select(pl.col(name).null_count() for name in names).collect(engine=ENGINE).row(0)
    raise_on_nulls(dict(zip(names, counts, strict=True)), what)


def raise_on_nulls(counts: dict[str, int], what: str) -> None:
    """Raise :class:`DataError` naming the columns of ``counts`` (name -> runs with a null) that hold nulls."""
    bad = [f"{name!r} ({count:,} runs)" for name, count in counts.items() if count]
    if bad:
        msg = f"{what}: null values in {', '.join(bad)}; fill or drop those runs first"
        raise DataError(msg)


def group_label(keys: Sequence[str], values: Sequence[object]) -> str:
    """``(task='t1', variant='v2')``, or ``(all runs)`` for the ungrouped case."""
    pairs = [(k, v) for k, v in zip(keys, values, strict=True) if k != GROUP]
    if not pairs:
        return "(all runs)"
    return "(" + ", ".join(f"{k}={v!r}" for k, v in pairs) + ")"


# -- power analyses: two of three given, the third solved for ------------------------------------


def one_or_list(number: Interval) -> list[Constraint]:
    """Return the constraints ``number``, or a non-empty list (any sized collection) of such numbers: a power grid."""

    def every(value: object) -> bool:
        return (
            isinstance(value, Collection)
            and not isinstance(value, str | bytes)
            and len(value) > 0
            and all(number.is_satisfied_by(item) for item in value)
        )

    plural = str(number).removeprefix("a ").replace("number", "numbers", 1)
    return [number, Predicate(every, f"a non-empty list of {plural}")]


def values_of(value: float | Collection[float] | None) -> list[float] | None:
    """Return a number or a list of numbers as a list of floats; None stays None (the quantity to solve for)."""
    if value is None:
        return None
    items = [value] if isinstance(value, numbers.Real) else list(value)
    return [float(v) for v in items]


def solved_for(where: str, given: Mapping[str, list[float] | None], alpha: float) -> str:
    """Return the one quantity of ``given`` left out (None), after checking that every given power exceeds ``alpha``.

    ``given`` maps each of the three quantities of a power analysis (the effect, n and power, in
    the order the message names them) to its values; exactly one must be None.
    """
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        *first, last = given
        msg = (
            f"{where}: give exactly two of {', '.join(first)} and {last} (the third is solved for); "
            f"missing: {', '.join(missing) or 'none'}"
        )
        raise InvalidParameterError(msg)
    above_alpha = Interval(float, alpha, 1, closed="neither")
    for p in given.get("power") or []:
        check_parameter("power", p, [above_alpha], where=where)
    return missing[0]
