r"""Calibration of a system's confidence against ground truth: reliability bins, ECE, MCE, Brier.

Notes
-----
Runs with both a confidence :math:`c_i \in [0, 1]` and an outcome :math:`y_i \in \{0, 1\}`
(e.g. ``gt_match``) are binned; bin :math:`b` holds :math:`n_b` runs with mean confidence
:math:`\bar c_b` and accuracy :math:`\bar y_b`. Over the :math:`n` runs of a (group, system):

* :math:`ECE = \sum_b \frac{n_b}{n} \lvert \bar y_b - \bar c_b \rvert` (expected calibration error),
* :math:`MCE = \max_b \lvert \bar y_b - \bar c_b \rvert` over non-empty bins,
* :math:`Brier = \frac{1}{n} \sum_i (c_i - y_i)^2`.

Bins are left-closed, the last one closed: ``[e_k, e_{k+1})``, ``[e_{B-1}, e_B]``.
``strategy="uniform"``: :math:`e_k = k/B`. ``strategy="quantile"``: :math:`e_k` is the
linear-interpolation :math:`k/B` quantile of the group's confidences (equal-mass bins; tied
edges leave empty bins, as in scikit-learn's ``calibration_curve``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, Interval, Options, validate_params
from mas_eval.errors import DataError
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    GROUP,
    as_lazy,
    aside_note,
    check_columns,
    column_list,
    joined_notes,
    numeric_value,
    set_aside,
    with_aside,
)
from mas_eval.stats.options import Strategy

__all__ = ["CALIBRATION_CONSTRAINTS", "MAX_BINS", "calibration", "reliability_table"]

#: Internal names of the confidence and outcome values, and of bin edge ``k``: ``f"{EDGE}{k}"``.
CONFIDENCE = "_confidence"
OUTCOME = "_outcome"
EDGE = "_edge_"

#: Most confidence bins.
MAX_BINS = 1_000
#: What the parameters of :func:`calibration` and :func:`reliability_table` accept.
CALIBRATION_CONSTRAINTS = {
    "confidence": [COLUMN_NAME],
    "outcome": [COLUMN_NAME],
    "by": [COLUMN_NAMES, NONE],
    # Quantile bins cost a column each (docs/performance.md), and more bins than this would leave
    # most empty on any real sample.
    "bins": [Interval(int, 1, MAX_BINS)],
    "strategy": [Options.of(Strategy)],
    "system": [COLUMN_NAME, NONE],
}


def _prepare(
    run_metrics: Any,
    confidence: str,
    outcome: str,
    by: str | Sequence[str] | None,
    system: str | None,
) -> tuple[pl.LazyFrame, pl.DataFrame, list[str]]:
    """Return the runs ``(keys..., _confidence, _outcome)`` with complete, checked values, the set-aside counts, keys.

    The counts are the (group, system) list with the :data:`ASIDE` count of runs with a NaN or
    infinite confidence or outcome, set aside.
    """
    frame = as_lazy(run_metrics)
    keys_by = column_list(by, "by")
    schema = frame.collect_schema()
    check_columns(schema, [confidence, outcome], "confidence/outcome")
    check_columns(schema, keys_by, "by")
    if system is not None:
        check_columns(schema, [system], "system")
    group_keys = [*keys_by, *([system] if system is not None and system not in keys_by else [])]
    keys = group_keys or [GROUP]
    frame = frame if group_keys else frame.with_columns(pl.lit(0, pl.Int8).alias(GROUP))
    groups = frame.group_by(keys).agg(runs=pl.len()).sort(keys, nulls_last=True).collect(engine=ENGINE)
    frame, aside = set_aside(frame, [confidence, outcome], keys)
    groups = with_aside(groups, aside, keys)
    runs = frame.select(
        *keys,
        numeric_value(schema, confidence, "confidence").alias(CONFIDENCE),
        numeric_value(schema, outcome, "outcome").alias(OUTCOME),
    )
    c, y = pl.col(CONFIDENCE), pl.col(OUTCOME)
    complete = runs.filter(c.is_not_null() & y.is_not_null())
    outside, not_binary = (c < 0) | (c > 1), ~y.is_in([0.0, 1.0])
    bad = complete.select(
        outside.sum().alias("confidence_outside"),
        not_binary.sum().alias("outcome_not_binary"),
        c.filter(outside).first().alias("confidence_example"),
        y.filter(not_binary).first().alias("outcome_example"),
    ).collect(engine=ENGINE)
    if bad["confidence_outside"][0]:
        msg = (
            f"confidence {confidence!r} must lie in [0, 1]: {bad['confidence_outside'][0]:,} runs do not "
            f"(e.g. {bad['confidence_example'][0]!r})"
        )
        raise DataError(msg)
    if bad["outcome_not_binary"][0]:
        msg = (
            f"outcome {outcome!r} must be boolean or 0/1: {bad['outcome_not_binary'][0]:,} runs are not "
            f"(e.g. {bad['outcome_example'][0]!r})"
        )
        raise DataError(msg)
    return complete, groups, keys


def _binned(complete: pl.LazyFrame, keys: list[str], bins: int, strategy: str) -> pl.LazyFrame:
    """``complete`` with ``bin`` (0-based), ``bin_low`` and ``bin_high``."""
    c = pl.col(CONFIDENCE)
    if strategy == "uniform":
        # Edges k/bins as Python computes them, then numpy's searchsorted rule: exact at every edge
        # (an expression like (c * bins).floor() misplaces values such as 0.3 and 0.7).
        edges = pl.Series([k / bins for k in range(bins + 1)])
        index = pl.lit(edges[1:-1]).search_sorted(c, side="right").cast(pl.Int64)
        return complete.with_columns(bin=index).with_columns(
            bin_low=pl.lit(edges).gather(pl.col("bin")), bin_high=pl.lit(edges).gather(pl.col("bin") + 1)
        )
    quantiles = [c.quantile(k / bins, interpolation="linear").alias(f"{EDGE}{k}") for k in range(bins + 1)]
    edges = complete.group_by(keys).agg(quantiles)
    with_edges = complete.join(edges, on=keys, how="left", nulls_equal=True)
    # The number of interior edges at or below c: numpy's searchsorted(edges[1:-1], c, "right").
    inner = [(c >= pl.col(f"{EDGE}{k}")).cast(pl.Int64) for k in range(1, bins)]
    index = pl.sum_horizontal(inner) if inner else pl.lit(0, pl.Int64)
    edge_list = pl.concat_list([pl.col(f"{EDGE}{k}") for k in range(bins + 1)])
    return (
        with_edges.with_columns(bin=index)
        .with_columns(bin_low=edge_list.list.get(pl.col("bin")), bin_high=edge_list.list.get(pl.col("bin") + 1))
        .drop([f"{EDGE}{k}" for k in range(bins + 1)])
    )


def _reliability(complete: pl.LazyFrame, keys: list[str], bins: int, strategy: str) -> pl.DataFrame:
    return (
        _binned(complete, keys, bins, strategy)
        .group_by([*keys, "bin"])
        .agg(
            bin_low=pl.col("bin_low").first(),
            bin_high=pl.col("bin_high").first(),
            n=pl.len().cast(pl.Int64),
            mean_confidence=pl.col(CONFIDENCE).mean(),
            accuracy=pl.col(OUTCOME).mean(),
        )
        .sort([*keys, "bin"], nulls_last=True)
        .collect(engine=ENGINE)
    )


@validate_params({**CALIBRATION_CONSTRAINTS, "run_metrics": [RUN_METRICS]})
def reliability_table(
    run_metrics: Any,
    confidence: str = "decision_confidence",
    outcome: str = "gt_match",
    by: str | Sequence[str] | None = None,
    bins: int = 10,
    strategy: Strategy = "uniform",
    system: str | None = "system",
) -> pl.DataFrame:
    """One row per non-empty confidence bin of each (group, system): the reliability diagram's data.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run.
    confidence : str
        Column of confidences in [0, 1] (NaN/null runs are left out).
    outcome : str
        Boolean or 0/1 column: whether the run was right (null runs are left out).
    by : str or list of str, optional
        Grouping columns besides ``system``.
    bins : int
        Number of bins, from 1 to :data:`MAX_BINS` (1,000).
    strategy : {"uniform", "quantile"}
        ``"uniform"`` (edges k/bins) or ``"quantile"`` (equal-mass bins per group).
    system : str or None
        The system column (one calibration per system); ``None`` pools systems.

    Returns
    -------
    polars.DataFrame
        The ``by`` and ``system`` columns, then ``bin`` (0-based), ``bin_low``,
        ``bin_high`` (left-closed bins, the last closed), ``n``, ``mean_confidence``,
        ``accuracy`` (share of outcomes that are true), ``note`` (the group's runs with a NaN or
        infinite confidence or outcome, set aside; or null).

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above.
    SchemaError
        A named column is missing, or not numeric or boolean.
    DataError
        A confidence outside [0, 1], or an outcome other than 0/1.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4, "decision_confidence": [0.15, 0.2, 0.85, 1.0],
    ...                      "gt_match": [False, True, True, True]})
    >>> reliability_table(runs, bins=2).select("bin", "n", "mean_confidence", "accuracy").rows()
    [(0, 2, 0.175, 0.5), (1, 2, 0.925, 1.0)]
    """
    complete, groups, keys = _prepare(run_metrics, confidence, outcome, by, system)
    table = _reliability(complete, keys, bins, strategy)
    said = aside_note(f"{confidence!r} or {outcome!r}").alias("note")
    table = table.join(groups.select(*keys, said), on=keys, how="left", nulls_equal=True, maintain_order="left")
    return table.drop(GROUP) if GROUP in table.columns else table


@validate_params({**CALIBRATION_CONSTRAINTS, "run_metrics": [RUN_METRICS]})
def calibration(
    run_metrics: Any,
    confidence: str = "decision_confidence",
    outcome: str = "gt_match",
    by: str | Sequence[str] | None = None,
    bins: int = 10,
    strategy: Strategy = "uniform",
    system: str | None = "system",
) -> pl.DataFrame:
    """Whether a system's confidence means anything: ECE, MCE and Brier score per (group, system).

    Parameters and errors are those of :func:`reliability_table`.

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, ``system``):

        =============== ========================================================
        n               runs with both a confidence and an outcome
        mean_confidence mean confidence
        accuracy        share of true outcomes
        ece             expected calibration error (bin-size weighted mean gap)
        mce             maximum calibration error (largest gap of a bin)
        brier           mean squared error of confidence as a probability
        n_bins          non-empty bins
        warning         why a row is empty (no run with both values), the runs with a
                        NaN or infinite value set aside, or null
        =============== ========================================================

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4, "decision_confidence": [0.15, 0.2, 0.85, 1.0],
    ...                      "gt_match": [False, True, True, True]})
    >>> row = calibration(runs, bins=2).row(0, named=True)
    >>> round(row["ece"], 4), round(row["mce"], 4), round(row["brier"], 4)
    (0.2, 0.325, 0.1713)
    """
    complete, groups, keys = _prepare(run_metrics, confidence, outcome, by, system)
    table = _reliability(complete, keys, bins, strategy)
    gap = (pl.col("accuracy") - pl.col("mean_confidence")).abs()
    per_bin = table.group_by(keys).agg(
        ece=(pl.col("n") * gap).sum() / pl.col("n").sum(), mce=gap.max(), n_bins=pl.len().cast(pl.Int64)
    )
    per_run = (
        complete.group_by(keys)
        .agg(
            n=pl.len().cast(pl.Int64),
            mean_confidence=pl.col(CONFIDENCE).mean(),
            accuracy=pl.col(OUTCOME).mean(),
            brier=((pl.col(CONFIDENCE) - pl.col(OUTCOME)) ** 2).mean(),
        )
        .collect(engine=ENGINE)
    )
    out = (
        groups.drop("runs")
        .join(per_run, on=keys, how="left", nulls_equal=True, maintain_order="left")
        .join(per_bin, on=keys, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(pl.col("n").fill_null(0), pl.col("n_bins").fill_null(0))
        .with_columns(
            warning=joined_notes(
                pl.when(pl.col("n") == 0).then(pl.lit(f"no run with both {confidence!r} and {outcome!r}")),
                aside_note(f"{confidence!r} or {outcome!r}"),
            )
        )
        .select(*keys, "n", "mean_confidence", "accuracy", "ece", "mce", "brier", "n_bins", "warning")
    )
    return out.drop(GROUP) if GROUP in out.columns else out
