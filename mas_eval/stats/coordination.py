r"""Overhead against a control system: what each run spent, divided by the control's mean on the same case.

A multi-agent system's coordination costs tokens, calls, time and money that a single agent does
not spend; "The Cost of Consensus" (arXiv:2605.00914) measures debate at 2.1-3.4 times the tokens
of self-correction, and Kim et al. (2025, "Towards a Science of Scaling Agent Systems",
arXiv:2512.08296) compare architectures at standardised budgets for that reason. The ratio pairs
a run with the control's runs of its case, so the case's difficulty cancels.

Why a statistic and not a run column of the process family: a run's overhead depends on other
runs (the control's on its case), which a family scoring one shard at a time may not have, and a
row of ``Scores`` depends on its own run alone, so that shards can be scored anywhere in any
order (:mod:`mas_eval.metrics.process`). Here every run of every shard meets. The process
family gives the spending columns (``system_tokens``, ``system_calls``, ``system_seconds``,
``system_cost_usd``); any other per-run column of spending will do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from mas_eval.constraints import FRAME, NONE, RUN_METRICS, Options, Predicate, validate_params
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics.ordered import ordered_aggregates
from mas_eval.metrics.process.columns import SPENDING
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    SYSTEM_NAME,
    as_lazy,
    check_columns,
    check_no_nulls,
    column_list,
    numeric_value,
)

__all__ = ["SHARED", "OverheadLevel", "agent_shares", "overhead"]

#: What :func:`agent_shares` divides among a system's agents: the process family's per-agent counts.
SHARED = ("tokens", "turns", "tool_calls")

#: Constraint of :func:`agent_shares`' input: a frame, or Scores with the process family's per-agent table.
AGENT_METRICS = Predicate(
    lambda value: FRAME.is_satisfied_by(value) or (callable(getattr(value, "get", None)) and hasattr(value, "runs")),
    "a Polars DataFrame or LazyFrame, or Scores",
)

#: What :func:`overhead` returns: one row per run and metric, or per system and metric.
OverheadLevel = Literal["run", "system"]

#: Internal names: the metric's position among those asked for, and a value that cannot be spending.
_METRIC, _SET_ASIDE = "_metric_position", "_set_aside"


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metrics": [COLUMN_NAMES],
        "by": [COLUMN_NAMES, NONE],
        "control": [SYSTEM_NAME],
        "level": [Options.of(OverheadLevel)],
        "run": [COLUMN_NAME],
        "system": [COLUMN_NAME],
        "case": [COLUMN_NAME],
    }
)
def overhead(
    run_metrics: Any,
    metrics: str | Sequence[str] = SPENDING,
    by: str | Sequence[str] | None = None,
    *,
    control: str = "single",
    level: OverheadLevel = "run",
    run: str = "run_id",
    system: str = "system",
    case: str = "case_id",
) -> pl.DataFrame:
    r"""Each run's spending as a multiple of the control system's mean on the same case.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run (``Scores.runs`` of a Dataset the process family scored).
    metrics : str or list of str
        Columns of spending (not negative), by default the process family's ``system_tokens``,
        ``system_calls``, ``system_seconds`` and ``system_cost_usd``.
    by : str or list of str, optional
        Grouping columns (a task, a variant); a case is a (group, case) pair.
    control : str, default "single"
        The value of ``system`` whose runs are the denominator.
    level : {"run", "system"}
        One row per run and metric, or per system and metric (the summary).
    run, system, case : str
        The run, system and case columns (none of them null).

    Returns
    -------
    polars.DataFrame
        ``level="run"``, sorted by the ``by`` columns, system, case, run and metric:

        ============ ==================================================================
        run, by…     the run and its groups
        system, case the run's system and case
        metric       the column divided
        value        the run's value (null when not recorded or set aside)
        control_mean :math:`\bar c`: the mean of the control's values on the case
        control_runs the control's runs with a value on the case (0: none)
        ratio        value / control_mean; null without both, or when the mean is 0
        note         why the ratio is null, or null
        ============ ==================================================================

        The control's own runs are rows too (their ratios spread around 1).

        ``level="system"``: per ``by`` group, system and metric: ``runs`` (with a value),
        ``matched`` (with a ratio), ``cases`` (matched cases), ``mean_ratio``, ``median_ratio``,
        ``geometric_mean_ratio`` (:math:`\exp` of the mean log ratio; 0 when a ratio is 0),
        ``ratio_of_means`` (:math:`\sum_r x_r / \sum_r \bar c_{case(r)}` over the matched runs:
        the system's mean spending over the control's on the same cases), ``set_aside`` and
        ``note``.

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above, or a metric that is also a key column.
    SchemaError
        A named column is missing, or a metric is neither numeric nor boolean.
    DataError
        A null ``run``, ``system`` or ``case``.

    Notes
    -----
    For run :math:`r` of case :math:`k` and its value :math:`x_r` of a metric,

    .. math:: overhead_r = \frac{x_r}{\bar c_k},\qquad
              \bar c_k = \frac{1}{|C_k|} \sum_{s \in C_k} x_s

    with :math:`C_k` the control's runs of case :math:`k` that have a value: a MAS run that spent
    five times the single agent's tokens on its case has 5. Null when the control did not run
    the case (no value on it) or its mean is 0. A value that cannot be spending (negative or
    infinite) is set aside, for its run only: it is neither divided nor part of a control mean,
    and its row's ``note`` says so. Every mean and sum adds its terms in the order of the sorted
    rows, so equal inputs give equal bits: the overhead from a Scores scored shard by shard is
    that of an unsharded scoring, as its Scores are.

    The mean of ratios weighs every run alike and is pulled up by a case where the control spent
    little; the ratio of means weighs runs by the control's spending, as "the MAS spent 5x the
    tokens" is usually meant; the geometric mean is the symmetric summary of ratios (a run at
    half and one at twice average to 1).

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"run_id": ["m1", "m2", "s1", "s2", "s3"], "system": ["mas", "mas", "single", "single", "single"],
    ...                      "case_id": ["a", "b", "a", "a", "c"], "system_tokens": [500, 700, 90, 110, 100]})
    >>> overhead(runs, "system_tokens").select("run_id", "control_mean", "ratio", "note").rows()
    [('m1', 100.0, 5.0, None), ('m2', None, None, "no run of 'single' with a value on this case"), ('s1', 100.0, 0.9, None), ('s2', 100.0, 1.1, None), ('s3', 100.0, 1.0, None)]
    >>> overhead(runs, "system_tokens", level="system").select("system", "matched", "mean_ratio", "ratio_of_means").rows()
    [('mas', 1, 5.0, 5.0), ('single', 3, 1.0, 1.0)]
    """  # noqa: E501
    where = "overhead"
    names = column_list(metrics, "metrics", required=True)
    groups = column_list(by, "by")
    keys = [run, *groups, system, case]
    if len(set(keys)) != len(keys) or set(names) & set(keys):
        msg = f"{where}: run, by, system, case and metrics must name different columns; got {keys} and {names}"
        raise InvalidParameterError(msg)
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    check_columns(schema, names, f"{where}: metrics")
    check_columns(schema, keys, f"{where}: run_metrics")
    check_no_nulls(frame, [run, system, case], f"{where}: run_metrics")
    wide = frame.select(*keys, *(numeric_value(schema, m, f"{where}: metric").alias(m) for m in names))
    long = pl.concat(
        [
            wide.select(*keys, pl.lit(i, pl.Int64).alias(_METRIC), pl.lit(m).alias("metric"), pl.col(m).alias("value"))
            for i, m in enumerate(names)
        ]
    ).collect(engine=ENGINE)
    value = pl.col("value")
    long = long.with_columns(
        (value.is_not_null() & ((value < 0) | value.is_infinite())).alias(_SET_ASIDE)
    ).with_columns(pl.when(~pl.col(_SET_ASIDE)).then(value).alias("value"))
    cases = [_METRIC, *groups, case]
    # Sorted before anything is summed: each mean adds its terms in one order whatever the input's.
    means = ordered_aggregates(
        long.lazy().filter((pl.col(system) == control) & value.is_not_null()).sort([*cases, run]),
        cases,
        means={"control_mean": value},
        other={"control_runs": pl.len().cast(pl.Int64)},
    ).collect(engine=ENGINE)
    mean = pl.col("control_mean")
    ratio = pl.when(value.is_not_null() & (mean > 0)).then(value / mean)
    note = (
        pl.when(_SET_ASIDE)
        .then(pl.lit("the value is negative or infinite, which spending cannot be: set aside"))
        .when(value.is_null())
        .then(pl.lit("no value"))
        .when(mean.is_null())
        .then(pl.lit(f"no run of {control!r} with a value on this case"))
        .when(mean == 0)
        .then(pl.lit(f"{control!r}'s mean on this case is 0"))
    )
    table = (
        long.join(means, on=cases, how="left", nulls_equal=True)
        .with_columns(ratio.alias("ratio"), note.alias("note"), pl.col("control_runs").fill_null(0))
        .sort([*groups, system, case, run, _METRIC], nulls_last=True)
    )
    if level == "run":
        return table.select(*keys, "metric", "value", "control_mean", "control_runs", "ratio", "note")
    return _summary(table, groups, system, case, run)


def _summary(table: pl.DataFrame, groups: list[str], system: str, case: str, run: str) -> pl.DataFrame:
    """Per group, system and metric: the counts and the four summaries of the ratios (``level="system"``)."""
    matched = pl.col("ratio").is_not_null()
    ratios = pl.col("_ratios")
    per = (
        table.sort([*groups, system, _METRIC, case, run], nulls_last=True)
        .group_by([*groups, system, _METRIC], maintain_order=True)
        .agg(
            pl.col("metric").first(),
            pl.col("value").count().cast(pl.Int64).alias("runs"),
            matched.sum().cast(pl.Int64).alias("matched"),
            pl.col(case).filter(matched).n_unique().cast(pl.Int64).alias("cases"),
            pl.col("ratio").filter(matched).alias("_ratios"),
            pl.col("value").filter(matched).alias("_values"),
            pl.col("control_mean").filter(matched).alias("_means"),
            pl.col(_SET_ASIDE).sum().cast(pl.Int64).alias("set_aside"),
        )
    )
    some = pl.col("matched") > 0
    geometric = pl.when(ratios.list.min() > 0).then(ratios.list.eval(pl.element().log()).list.mean().exp())
    note = (
        pl.when(~some)
        .then(pl.lit("no run has a ratio: the control ran none of its cases, or spent nothing on them"))
        .when(pl.col("matched") < pl.col("runs"))
        .then(
            pl.format(
                "{} run(s) with a value but no control mean on their case left out",
                pl.col("runs") - pl.col("matched"),
            )
        )
    )
    return (
        per.with_columns(
            pl.when(some).then(ratios.list.mean()).alias("mean_ratio"),
            pl.when(some).then(ratios.list.median()).alias("median_ratio"),
            pl.when(some).then(geometric.fill_null(0.0)).alias("geometric_mean_ratio"),
            pl.when(some).then(pl.col("_values").list.sum() / pl.col("_means").list.sum()).alias("ratio_of_means"),
            note.alias("note"),
        )
        .sort([*groups, system, _METRIC], nulls_last=True)
        .select(
            *groups,
            system,
            "metric",
            "runs",
            "matched",
            "cases",
            "mean_ratio",
            "median_ratio",
            "geometric_mean_ratio",
            "ratio_of_means",
            "set_aside",
            "note",
        )
    )


@validate_params(
    {
        "agent_metrics": [AGENT_METRICS],
        "by": [COLUMN_NAMES, NONE],
        "system": [COLUMN_NAME],
        "agent": [COLUMN_NAME],
    }
)
def agent_shares(
    agent_metrics: Any,
    by: str | Sequence[str] | None = None,
    *,
    system: str = "system",
    agent: str = "agent_id",
) -> pl.DataFrame:
    r"""Each agent's share of its system's tokens, turns and tool calls, pooled over the system's runs.

    Parameters
    ----------
    agent_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run and active agent with its ``tokens``, ``turns`` and ``tool_calls`` (the process
        family's ``agent_process`` table; for a ``Scores`` that table is used), and the ``system``.
    by : str or list of str, optional
        Grouping columns besides ``system`` (a task).
    system, agent : str
        The system and agent columns.

    Returns
    -------
    polars.DataFrame
        One row per group, system and agent, sorted by group, system, then the agent's tokens (most first)
        and name: ``runs`` (runs the agent was active in), and for each of ``tokens``, ``turns``,
        ``tool_calls``: the sum over the system's runs and ``<name>_share`` (that sum over the sum of
        every agent of the system; null when nothing of it was recorded or the total is 0).

    Notes
    -----
    :math:`s_a = \sum_r x_{a,r} / \sum_r \sum_b x_{b,r}`, a ratio of sums over the system's runs: a share
    of what the system spent, not a mean of per-run shares, in which a run that spent little would weigh as
    much as one that spent much. An agent absent from a run adds nothing to it. Unrecorded values (null) add
    nothing to either sum. The Gini of the per-run shares is the process family's ``token_gini`` and kin.

    Examples
    --------
    >>> import polars as pl
    >>> agents = pl.DataFrame({"run_id": ["r1", "r1", "r2", "r3"], "system": ["mas", "mas", "mas", "single"],
    ...                        "agent_id": ["lead", "critic", "lead", "solo"], "tokens": [600, 200, 200, 300],
    ...                        "turns": [2, 2, 1, 3], "tool_calls": [1, 0, 1, 0]})
    >>> agent_shares(agents).select("system", "agent_id", "runs", "token_share", "turn_share", "tool_call_share").rows()
    [('mas', 'lead', 2, 0.8, 0.6, 1.0), ('mas', 'critic', 1, 0.2, 0.4, 0.0), ('single', 'solo', 1, 1.0, 1.0, None)]
    """
    where = "agent_shares"
    groups = column_list(by, "by")
    frame = agent_metrics["agent_process"].lazy() if _is_scores(agent_metrics) else as_lazy(agent_metrics)
    schema = frame.collect_schema()
    check_columns(schema, [*groups, system, agent], f"{where}: agent_metrics")
    check_columns(schema, list(SHARED), f"{where}: agent_metrics")
    keys = [*groups, system]
    values = [numeric_value(schema, name, f"{where}: column").alias(name) for name in SHARED]
    # Sorted before summing: each sum adds its terms in one order, whatever the input's.
    per_agent = (
        frame.select(*keys, agent, *values)
        .sort([*keys, agent], nulls_last=True)
        .group_by([*keys, agent], maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("runs"),
            *(pl.col(name).sum().alias(name) for name in SHARED),
            *(pl.col(name).count().alias(f"_{name}_recorded") for name in SHARED),
        )
        .collect(engine=ENGINE)
    )
    shares = []
    for name in SHARED:
        total = pl.col(name).sum().over(keys)
        recorded = pl.col(f"_{name}_recorded").sum().over(keys) > 0
        shares.append(pl.when(recorded & (total > 0)).then(pl.col(name) / total).alias(_share(name)))
    return (
        per_agent.with_columns(
            *(pl.when(pl.col(f"_{name}_recorded") > 0).then(pl.col(name)).alias(name) for name in SHARED)
        )
        .with_columns(shares)
        .sort([*keys, pl.col("tokens").fill_null(-1), agent], descending=[*[False] * len(keys), True, False],
              nulls_last=True)
        .select(*keys, agent, "runs", *(c for name in SHARED for c in (name, _share(name))))
    )  # fmt: skip


def _share(name: str) -> str:
    """``tokens`` -> ``token_share``, ``turns`` -> ``turn_share``, ``tool_calls`` -> ``tool_call_share``."""
    return {"tokens": "token_share", "turns": "turn_share", "tool_calls": "tool_call_share"}[name]


def _is_scores(value: object) -> bool:
    """Whether ``value`` is a Scores (holds named tables), whose ``agent_process`` table is read."""
    return hasattr(value, "names") and hasattr(value, "runs") and not isinstance(value, pl.DataFrame | pl.LazyFrame)
