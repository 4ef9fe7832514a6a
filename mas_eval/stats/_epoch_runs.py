"""The runs the statistics over epochs start from: checked, sorted by case and epoch, numbered.

Shared by :mod:`~mas_eval.stats.epochs` (pass@k, pass^k, majority), :mod:`~mas_eval.stats.compute`
(cost per correct answer, the compute-matched comparison) and :mod:`~mas_eval.stats.frontier` (the
accuracy–cost frontier); only ``stats/`` uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, Predicate
from mas_eval.errors import DataError, SchemaError, format_keys
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    as_lazy,
    check_columns,
    check_no_nulls,
    numeric_value,
)

#: Largest k: each k costs k vector products over all cases, and no benchmark repeats a case more.
MAX_K = 10_000

#: The outcomes family's run column of a judge's tokens, left out of its ``run_tokens``.
EVALUATOR_TOKENS = "evaluator_tokens"
#: Internal names of the outcome, the budget, the best-of score and a run's place among its case's epochs.
VALUE, SPENT, SCORE, POSITION = "_value", "_spent", "_score", "_position"


def _is_k(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool) and 1 <= int(value) <= MAX_K


def _are_ks(value: object) -> bool:
    if _is_k(value):
        return True
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        return False
    return all(_is_k(v) for v in value) and len(set(value)) == len(value)


#: Constraint of ``k`` and ``ks``: one k, or distinct ks.
K_VALUES = Predicate(_are_ks, f"an integer in [1, {MAX_K}] or a sequence of distinct such integers")

#: The column parameters of every statistic over epochs, as ``validate_params`` checks them.
EPOCH_COLUMNS = {"system": [COLUMN_NAME], "case": [COLUMN_NAME], "epoch": [COLUMN_NAME], "by": [COLUMN_NAMES, NONE]}


def named_columns(columns: Sequence[str | None]) -> str:
    """Columns as a note names them: ``'ok' or 'run_tokens'``."""
    return " or ".join(repr(name) for name in dict.fromkeys(columns) if name is not None)


def k_list(k: int | Sequence[int]) -> list[int]:
    return [int(k)] if isinstance(k, Integral) else [int(v) for v in k]


def epoch_runs(
    run_metrics: Any,
    metric: str,
    keys: list[str],
    epoch: str,
    where: str,
    *,
    spent: str | None = None,
    score: str | None = None,
    binary: bool = True,
) -> tuple[pl.DataFrame, bool]:
    """Return the runs with a ``metric`` value, sorted by ``keys`` and ``epoch``, and whether all are 0 or 1.

    The runs have ``_value`` (Float64), ``_position`` (1 for a case's first epoch) and
    ``_spent``/``_score`` when asked; a value other than 0 or 1 is an error when ``binary``.
    """
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    named = [*keys, epoch, *([spent] if spent else []), *([score] if score else [])]
    check_columns(schema, [metric], f"{where}: metric")
    check_columns(schema, named, f"{where}: run_metrics")
    if not schema[epoch].is_integer():
        # Epochs are counted, and sorted as numbers: as strings "10" would come before "2".
        msg = f"{where}: epoch column {epoch!r} has type {schema[epoch]}; it must hold integers (1 = first)"
        raise SchemaError(msg)
    check_no_nulls(frame, [*keys, epoch], f"{where}: run_metrics")
    extra = []
    if spent:
        extra.append(numeric_value(schema, spent, f"{where}: column").alias(SPENT))
    if score:
        extra.append(numeric_value(schema, score, f"{where}: score").alias(SCORE))
    runs = (
        frame.select(*keys, epoch, numeric_value(schema, metric, f"{where}: metric").alias(VALUE), *extra)
        .filter(pl.col(VALUE).is_not_null())
        .collect(engine=ENGINE)
        # Sorted before anything is summed: the sums then meet the values in one order whatever the input's.
        .sort([*keys, epoch], nulls_last=True)
    )
    repeated = runs.select(*keys, epoch).is_duplicated()
    if repeated.any():
        shown = format_keys(
            runs.filter(repeated).select(*keys, epoch).unique(maintain_order=True).iter_rows(named=True)
        )
        msg = f"{where}: more than one run of the same {', '.join(keys)} and {epoch}: {shown}; keep one run per epoch"
        raise DataError(msg)
    for column, what in ((SPENT, spent), (SCORE, score)):
        if what and runs[column].null_count():
            msg = f"{where}: {runs[column].null_count():,} runs with a {metric!r} have no {what!r}; fill or drop them"
            raise DataError(msg)
    if spent and (runs[SPENT] < 0).any():
        msg = f"{where}: {spent!r} is negative in {int((runs[SPENT] < 0).sum()):,} runs; spending cannot be"
        raise DataError(msg)
    outside = ~runs[VALUE].is_in([0.0, 1.0])
    if binary and outside.any():
        msg = (
            f"{where}: metric {metric!r} must be pass/fail (boolean or 0/1): {int(outside.sum()):,} runs are not "
            f"(e.g. {runs.filter(outside)[VALUE][0]!r})"
        )
        raise DataError(msg)
    runs = runs.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(keys).alias(POSITION))
    return runs, not bool(outside.any())


def join_spending(
    frame: pl.LazyFrame, runs: pl.DataFrame, keys: list[str], spent: dict[str, str], *, judged: bool, where: str
) -> tuple[pl.DataFrame, str | None]:
    """Join each run's spending (``spent``: output name → column) onto ``runs``, checked not null nor negative.

    ``keys`` identify a run (groups, case, epoch). With ``judged`` (tokens are counted) and an
    ``evaluator_tokens`` column, the judge's tokens are joined too; its name is returned (else None).

    Examples
    --------
    >>> frame = pl.LazyFrame({"case_id": ["a", "b"], "epoch": [1, 1], "run_tokens": [10, 20]})
    >>> runs = pl.DataFrame({"case_id": ["a", "b"], "epoch": [1, 1]})
    >>> joined, judge = join_spending(frame, runs, ["case_id", "epoch"], {"tokens": "run_tokens"}, judged=True,
    ...                               where="demo")
    >>> joined["tokens"].to_list(), judge
    ([10.0, 20.0], None)
    """
    schema = frame.collect_schema()
    check_columns(schema, list(spent.values()), f"{where}: run_metrics")
    if not spent:
        return runs, None
    # The spending columns, read for the same runs in the same order as the outcomes.
    values = (numeric_value(schema, c, f"{where}: column").alias(name) for name, c in spent.items())
    spending = frame.select(*keys, *values).collect(engine=ENGINE)
    judge = EVALUATOR_TOKENS if judged and EVALUATOR_TOKENS in schema else None
    if judge is not None:
        spending = spending.join(
            frame.select(*keys, pl.col(judge).cast(pl.Float64)).collect(engine=ENGINE),
            on=keys,
            how="left",
            nulls_equal=True,
        )
    runs = runs.join(spending, on=keys, how="left", nulls_equal=True, maintain_order="left")
    for name, column in spent.items():
        bad = runs[name].is_null() | (runs[name] < 0)
        if bad.any():
            msg = f"{where}: {column!r} is null or negative in {int(bad.sum()):,} runs; fill or drop them"
            raise DataError(msg)
    return runs, judge
