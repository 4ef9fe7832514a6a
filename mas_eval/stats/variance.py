r"""Variance components of repeated evaluations (case, epoch, judge): the components, the ICC, the design effect.

The design of cases × epochs they imply for a comparison (:func:`plan`, :func:`design_power`)
lives in :mod:`~mas_eval.stats.planning`; this module hands those names on, so
``from mas_eval.stats.variance import plan`` keeps working.

A score :math:`y_{iel}` of case :math:`i`, epoch :math:`e` (a run of the case) and, when several
scorers score every run, judge :math:`l`, is modelled as

.. math:: y_{iel} = \mu + a_i + b_{ie} + j_l + \varepsilon_{iel},

with independent random effects of variances :math:`\sigma^2_\text{case}`,
:math:`\sigma^2_\text{epoch}`, :math:`\sigma^2_\text{judge}` and :math:`\sigma^2_\text{residual}`
(without judges :math:`b_{ie}` and :math:`\varepsilon` are one term, the epoch variance). How
much of a system's spread is the cases' and how much its repeats' decides whether more epochs or
more cases buy precision (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640, §3–5).

ANOVA (method of moments)
    With :math:`a` cases, :math:`n_i` epochs of case :math:`i`, :math:`N = \sum n_i` runs and
    :math:`L` judges, the sums of squares of the run scores (their judge means, with judges)
    give :math:`MS_\text{case} = L\,SS_B/(a-1)` and :math:`MS_\text{epoch} = L\,SS_W/(N-a)`;
    with judges the runs × judges table gives :math:`MS_\text{judge}` and :math:`MS_\text{res}`
    on :math:`L-1` and :math:`(N-1)(L-1)` degrees of freedom. For unequal :math:`n_i` the
    case mean square's coefficient is :math:`n_0 = (N - \sum n_i^2/N)/(a-1)` (Searle, Casella
    & McCulloch 1992, *Variance Components*, §3.5; Snedecor & Cochran's :math:`n_0`). Then

    .. math::
        \hat\sigma^2_\text{case} = \frac{MS_\text{case} - MS_\text{epoch}}{n_0 L},\quad
        \hat\sigma^2_\text{epoch} = \frac{MS_\text{epoch} - MS_\text{res}}{L},\quad
        \hat\sigma^2_\text{judge} = \frac{MS_\text{judge} - MS_\text{res}}{N},\quad
        \hat\sigma^2_\text{residual} = MS_\text{res}

    (without judges :math:`L = 1` and :math:`MS_\text{res}` drops out:
    :math:`\hat\sigma^2_\text{epoch} = MS_\text{epoch}`). An estimate may be negative: the
    component is then indistinguishable from 0 (its note says so).

Intervals
    A component :math:`\hat\sigma^2 = \sum_k c_k MS_k` has Satterthwaite's (1946) approximate
    degrees of freedom :math:`\nu = \hat\sigma^4 / \sum_k (c_k MS_k)^2/\nu_k` and the interval
    :math:`[\nu\hat\sigma^2/\chi^2_{\nu,1-\alpha/2},\ \nu\hat\sigma^2/\chi^2_{\nu,\alpha/2}]`
    (exact for a single mean square; Searle, Casella & McCulloch 1992, §3.6d). The ICC of two
    epochs of a case, :math:`\rho = \sigma^2_\text{case}/(\sigma^2_\text{case} +
    \sigma^2_\text{epoch} + \sigma^2_\text{residual}/L)`, is
    :math:`\hat\rho = (F-1)/(F+n_0-1)` with :math:`F = MS_\text{case}/MS_\text{epoch}`, and its
    interval is the exact F-based one of the one-way model (Shrout & Fleiss 1979, ICC(1,1);
    Searle 1971, *Linear Models*, §9.8): :math:`F_L = F/F_{1-\alpha/2}(a-1, N-a)`,
    :math:`F_U = F\,F_{1-\alpha/2}(N-a, a-1)`, limits :math:`(F_{L,U}-1)/(F_{L,U}+n_0-1)`
    (exact when balanced; with :math:`n_0` an approximation otherwise). With judges,
    ``judge_icc`` is the agreement of two judges on one run, Shrout & Fleiss's ICC(2,1) on the
    runs × judges table, with McGraw & Wong's (1996, "Forming inferences about some intraclass
    correlation coefficients", Psychological Methods 1, 30–46, case 2A) approximate interval.

Design effect
    :math:`1 + (\bar m - 1)\hat\rho` with :math:`\bar m = N/a` epochs per case (Kish 1965,
    *Survey Sampling*): the factor by which clustering inflates the variance of a mean over
    :math:`N` runs compared with :math:`N` independent cases. :math:`N` runs are worth
    :math:`N / \text{deff}` independent cases.

REML
    ``method="reml"`` fits the same model by restricted maximum likelihood with statsmodels'
    ``MixedLM`` (crossed judges as variance components of one group); it equals ANOVA on a
    balanced design whose components are positive, and never goes below 0. It gives points only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, Options, Predicate, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    GROUP,
    PROBABILITY,
    as_lazy,
    check_columns,
    check_no_nulls,
    column_list,
    group_label,
    numeric_value,
)
from mas_eval.stats._components import COMPONENT_COLUMNS, Array
from mas_eval.stats._variance_estimators import agreement_icc, icc_interval, reml_rows, satterthwaite
from mas_eval.stats.planning import PLAN_COLUMNS, design_power, plan

__all__ = [
    "COMPONENT_COLUMNS",
    "PLAN_COLUMNS",
    "VarianceMethod",
    "design_power",
    "plan",
    "variance_components",
]


#: How :func:`variance_components` estimates: the ANOVA (method of moments) or REML.
VarianceMethod = Literal["anova", "reml"]


def _pair(value: object) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
        and value[0] != value[1]
    )


#: Constraint of ``paired``: two distinct system names.
SYSTEM_PAIR = Predicate(_pair, "a (treatment, control) pair of two different system names")


# --- reading the scores ---------------------------------------------------------------------------


def _scores(
    frame: pl.LazyFrame,
    metric: str,
    groups: list[str],
    case: str,
    epoch: str,
    judge: str | None,
    paired: tuple[str, str] | None,
    system: str,
    where: str,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return the finite scores ``_y`` keyed by ``groups, case, epoch[, judge]``, and what was left out.

    The scores are differences when ``paired``, sorted; per group, the values set aside
    (``_aside``) and unmatched (``_unmatched``).

    Without ``groups`` the frames have a constant key, :data:`~mas_eval.stats._common.GROUP`.
    """
    schema = frame.collect_schema()
    check_columns(schema, [metric], f"{where}: metric")
    named = [*groups, case, epoch, *([judge] if judge else []), *([system] if paired else [])]
    check_columns(schema, named, f"{where}: scores")
    check_no_nulls(frame, named, f"{where}: scores")
    value = numeric_value(schema, metric, f"{where}: metric")
    if not groups:
        # The ungrouped call is one group: a constant key, added once the user's columns are checked.
        groups = [GROUP]
        frame = frame.with_columns(**{GROUP: pl.lit(0, pl.Int8)})
    keys = [*groups, case, epoch, *([judge] if judge else [])]
    if paired:
        frame = frame.filter(pl.col(system).is_in(list(paired)))
    raw = frame.select(
        *keys, *([system] if paired else []), _y=value, _bad=pl.col(metric).is_not_null() & value.is_null()
    )
    data = raw.collect(engine=ENGINE)
    if schema[metric].is_float():
        # NaN is null already; ±inf cannot be a score either: set aside like NaN, and counted.
        infinite = data["_y"].is_infinite()
        data = data.with_columns(
            _bad=pl.col("_bad") | infinite, _y=pl.when(infinite).then(None).otherwise(pl.col("_y"))
        )
    aside = data.group_by(groups).agg(_aside=pl.col("_bad").sum().cast(pl.Int64))
    data = data.filter(pl.col("_y").is_not_null()).drop("_bad")
    repeated = data.select(*keys, *([system] if paired else [])).is_duplicated()
    if repeated.any():
        named_keys = [k for k in [*keys, *([system] if paired else [])] if k != GROUP]
        shown = format_keys(data.filter(repeated).select(named_keys).unique(maintain_order=True).iter_rows(named=True))
        what = ", ".join(named_keys)
        msg = (
            f"{where}: more than one score of the same {what}: {shown}; keep one score per key (several systems: "
            "group by their column, by='system', or take their difference, paired=(treatment, control))"
        )
        raise DataError(msg)
    if paired:
        treatment, control = paired
        mine = data.filter(pl.col(system) == treatment).drop(system)
        theirs = data.filter(pl.col(system) == control).drop(system).rename({"_y": "_yc"})
        for role, name, part in (("treatment", treatment, mine), ("control", control, theirs)):
            if part.height == 0:
                msg = f"{where}: paired: no score of the {role} {name!r} in {metric!r}; check the system names"
                raise DataError(msg)
        both = mine.join(theirs, on=keys, how="full", nulls_equal=True, coalesce=True)
        unmatched = both.group_by(groups).agg(
            _unmatched=(pl.col("_y").is_null() | pl.col("_yc").is_null()).sum().cast(pl.Int64)
        )
        aside = aside.join(unmatched, on=groups, how="full", nulls_equal=True, coalesce=True)
        data = both.drop_nulls(["_y", "_yc"]).select(*keys, _y=pl.col("_y") - pl.col("_yc"))
    return data.sort(keys, nulls_last=True), aside


def _one_way(obs: pl.DataFrame, groups: list[str], case: str, value: str) -> pl.DataFrame:
    r"""Per group: cases ``a``, observations ``N``, :math:`\sum n_i^2`, ``ssb``, ``ssw`` of ``value`` over cases."""
    keys = groups
    per_case = obs.group_by([*keys, case], maintain_order=True).agg(
        n=pl.len().cast(pl.Float64),
        mean=pl.col(value).mean(),
        ssw=(pl.col(value) - pl.col(value).mean()).pow(2).sum(),
    )
    grand = (pl.col("n") * pl.col("mean")).sum().over(keys) / pl.col("n").sum().over(keys)
    return (
        per_case.with_columns(_dev=pl.col("n") * (pl.col("mean") - grand).pow(2))
        .group_by(keys, maintain_order=True)
        .agg(
            a=pl.len().cast(pl.Float64),
            N=pl.col("n").sum(),
            sum_n2=pl.col("n").pow(2).sum(),
            ssb=pl.col("_dev").sum(),
            ssw=pl.col("ssw").sum(),
        )
    )


def _two_way(obs: pl.DataFrame, groups: list[str], run: list[str], judge: str) -> pl.DataFrame:
    """Per group, on the complete runs × judges table: judges ``L``, ``ss_runs``, ``ss_judge``, ``ss_res``."""
    keys = groups
    y = pl.col("_y")
    grand = y.mean().over(keys)
    run_mean = y.mean().over([*keys, *run])
    judge_mean = y.mean().over([*keys, judge])
    return (
        obs.with_columns(
            _run=(run_mean - grand).pow(2),
            _judge=(judge_mean - grand).pow(2),
            _res=(y - run_mean - judge_mean + grand).pow(2),
        )
        .group_by(keys, maintain_order=True)
        .agg(
            L=pl.col(judge).n_unique().cast(pl.Float64),
            ss_runs=pl.col("_run").sum(),
            ss_judge=pl.col("_judge").sum(),
            ss_res=pl.col("_res").sum(),
        )
    )


# --- variance components --------------------------------------------------------------------------


@validate_params(
    {
        "scores": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "by": [COLUMN_NAMES, NONE],
        "case": [COLUMN_NAME],
        "epoch": [COLUMN_NAME],
        "judge": [COLUMN_NAME, NONE],
        "method": [Options.of(VarianceMethod)],
        "confidence": [PROBABILITY],
        "paired": [SYSTEM_PAIR, NONE],
        "system": [COLUMN_NAME],
    }
)
def variance_components(
    scores: Any,
    metric: str,
    by: str | Sequence[str] | None = None,
    *,
    case: str = "case_id",
    epoch: str = "epoch",
    judge: str | None = None,
    method: VarianceMethod = "anova",
    confidence: float = 0.95,
    paired: tuple[str, str] | None = None,
    system: str = "system",
) -> pl.DataFrame:
    r"""Between-case, within-case (epoch) and judge variance of a score, with the ICC and the design effect.

    Parameters
    ----------
    scores : polars.DataFrame, polars.LazyFrame or Scores
        One row per scored run (per run and judge, with ``judge``): ``case``, ``epoch``,
        ``metric``, the ``by`` columns (and ``judge``, ``system``).
    metric : str
        The score: numeric or boolean (pass/fail works: the components of a 0/1 outcome).
    by : str or list of str, optional
        Grouping columns (``"system"`` for each system's own components; a task).
    case, epoch : str
        The case column and the epoch column (which repeat of the case a run is).
    judge : str, optional
        The scorer column when several scorers score each run: adds the judge and residual
        components and ``judge_icc``. A run lacking a judge's score is set aside.
    method : {"anova", "reml"}
        ANOVA (method of moments, with intervals) or REML (statsmodels ``MixedLM``; points only).
    confidence : float
        Level of the intervals, in (0, 1).
    paired : (str, str), optional
        ``(treatment, control)``: the components of the paired difference treatment − control on
        each (case, epoch[, judge]) both systems have (epoch e of one set against epoch e of the
        other: repeats are exchangeable). What :func:`plan` needs for a paired design.
    system : str
        The system column, read when ``paired`` is given.

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, quantity), the ``by`` columns then

        =========== ==============================================================
        quantity    ``case``, ``epoch`` (with ``judge``: also ``judge`` and
                    ``residual``), ``icc``, ``design_effect`` (and ``judge_icc``)
        estimate    the component's variance; the ICC; the design effect
        ci_low      lower limit: Satterthwaite's for a component, the exact F
                    interval for ``icc`` (mapped for ``design_effect``), McGraw &
                    Wong's for ``judge_icc``; null under REML or when undefined
        ci_high     upper limit, likewise
        share       a component's share of their sum (negative ones counted as 0)
        dof         a component's Satterthwaite degrees of freedom
        cases       cases :math:`a`
        runs        runs :math:`N` (case and epoch pairs)
        epochs      mean epochs per case, :math:`N/a`
        judges      judges :math:`L` (1 without ``judge``)
        difference  ``"treatment - control"`` when ``paired``, else null
        method      ``"anova"`` or ``"reml"``
        note        values set aside, a negative estimate, an unbalanced design
        =========== ==============================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above.
    SchemaError
        A named column is missing, or the metric is not numeric or boolean.
    DataError
        A null key; two scores of one key; a group with fewer than 2 cases; without ``judge``,
        a group whose cases all have one epoch (no within-case variance to estimate).

    Notes
    -----
    The estimators and intervals are in :mod:`mas_eval.stats.variance`. Non-finite scores
    (NaN, ±inf) are set aside like nulls and counted in the note (one rule for every score).
    With judges and one epoch per case the epoch variance cannot be told from the case
    variance: the ``case`` row holds both and the ``epoch``, ``icc`` and ``design_effect`` rows
    are null (as in Shrout & Fleiss's targets × judges design).

    Examples
    --------
    Shrout & Fleiss's (1979) six targets rated by four judges, as psych's ``ICC`` example: read
    as four repeats of each case, the ICC is their ICC(1,1) = 0.166 (-0.133, 0.723); with the
    judges named, ``judge_icc`` is their ICC(2,1) = 0.290 (0.019, 0.761).

    >>> import polars as pl
    >>> ratings = [9, 2, 5, 8, 6, 1, 3, 2, 8, 4, 6, 8, 7, 1, 2, 6, 10, 5, 6, 9, 6, 2, 4, 7]
    >>> sf = pl.DataFrame({"case_id": [i // 4 for i in range(24)], "epoch": 1,
    ...                    "judge": [i % 4 for i in range(24)], "score": ratings})
    >>> one_way = variance_components(sf.with_columns(epoch=pl.col("judge")), "score")
    >>> with pl.Config(float_precision=3, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
    ...     print(one_way.select("quantity", "estimate", "ci_low", "ci_high", "share", "dof"))
    ┌───────────────┬──────────┬────────┬──────────┬───────┬────────┐
    │ quantity      ┆ estimate ┆ ci_low ┆ ci_high  ┆ share ┆ dof    │
    ╞═══════════════╪══════════╪════════╪══════════╪═══════╪════════╡
    │ case          ┆ 1.244    ┆ 0.236  ┆ 2608.741 ┆ 0.166 ┆ 0.903  │
    │ epoch         ┆ 6.264    ┆ 3.576  ┆ 13.699   ┆ 0.834 ┆ 18.000 │
    │ icc           ┆ 0.166    ┆ -0.133 ┆ 0.723    ┆ null  ┆ null   │
    │ design_effect ┆ 1.497    ┆ 0.601  ┆ 3.168    ┆ null  ┆ null   │
    └───────────────┴──────────┴────────┴──────────┴───────┴────────┘
    >>> two_way = variance_components(sf, "score", judge="judge")
    >>> [round(v, 3) for v in two_way.filter(pl.col("quantity") == "judge_icc").row(0)[1:3]]
    [0.29, 0.019]
    """
    where = "variance_components"
    groups = column_list(by, "by")
    keys = groups or [GROUP]
    pair = (paired[0], paired[1]) if paired else None
    data, aside = _scores(as_lazy(scores), metric, groups, case, epoch, judge, pair, system, where)
    run = [case, epoch]
    incomplete = pl.DataFrame(schema={**{k: data.schema[k] for k in keys}, "_incomplete": pl.Int64})
    if judge is not None:
        # Only runs scored by every judge of their group: the runs × judges table must be complete.
        complete = pl.col(judge).n_unique().over([*keys, *run]) == pl.col(judge).n_unique().over(keys)
        flagged = data.with_columns(_complete=complete)
        incomplete = (
            flagged.filter(~pl.col("_complete"))
            .group_by(keys)
            .agg(_incomplete=pl.struct(run).n_unique().cast(pl.Int64))
        )
        data = flagged.filter(pl.col("_complete")).drop("_complete")
        runs = data.group_by([*keys, *run], maintain_order=True).agg(_y=pl.col("_y").mean())
        one = _one_way(runs, keys, case, "_y").join(
            _two_way(data, keys, run, judge), on=keys, how="left", nulls_equal=True, maintain_order="left"
        )
    else:
        runs = data
        one = _one_way(runs, keys, case, "_y").with_columns(
            L=pl.lit(1.0), ss_runs=pl.lit(None, pl.Float64), ss_judge=pl.lit(None, pl.Float64),
            ss_res=pl.lit(None, pl.Float64),
        )  # fmt: skip
    few = one.filter(pl.col("a") < 2)
    if few.height:
        shown = ", ".join(group_label(keys, row) for row in few.select(keys).iter_rows())
        msg = (
            f"{where}: fewer than 2 cases in {shown}; the between-case variance needs at least 2 "
            "(drop that group, or score more cases)"
        )
        raise DataError(msg)
    if judge is None:
        flat = one.filter(pl.col("N") <= pl.col("a"))
        if flat.height:
            shown = ", ".join(group_label(keys, row) for row in flat.select(keys).iter_rows())
            msg = (
                f"{where}: every case has one epoch in {shown}; the within-case (epoch) variance needs a case "
                "with 2 or more (run more epochs, or name the scorer column with judge= if the repeats are judges)"
            )
            raise DataError(msg)
    table = (
        one.join(aside, on=keys, how="left", nulls_equal=True, maintain_order="left")
        .join(incomplete, on=keys, how="left", nulls_equal=True, maintain_order="left")
        .sort(keys, nulls_last=True)
    )
    rows = _anova_rows(table, keys, judge is not None, confidence)
    if method == "reml":
        rows = reml_rows(rows, runs if judge is None else data, keys, case, run, judge)
    difference = f"{pair[0]} - {pair[1]}" if pair else None
    out = rows.with_columns(pl.lit(difference, pl.String).alias("difference"), pl.lit(method).alias("method")).select(
        *keys, *COMPONENT_COLUMNS
    )
    return out if groups else out.drop(GROUP)


def _notes(table: pl.DataFrame) -> list[list[str]]:
    """Per group: the values set aside, the incomplete runs and unmatched pairs, and an unbalanced design."""
    notes: list[list[str]] = []
    columns = table.columns
    for row in table.iter_rows(named=True):
        said = []
        if row.get("_aside"):
            said.append(f"{row['_aside']:,} non-finite score(s) set aside, like nulls")
        if "_incomplete" in columns and row.get("_incomplete"):
            said.append(f"{row['_incomplete']:,} run(s) not scored by every judge set aside")
        if "_unmatched" in columns and row.get("_unmatched"):
            said.append(f"{row['_unmatched']:,} score(s) without the other system's on the same key set aside")
        notes.append(said)
    return notes


class _MeanSquares(NamedTuple):
    """Each group's sizes, degrees of freedom and the case and epoch mean squares of the one-way ANOVA."""

    a: Array
    big_n: Array
    sum_n2: Array
    L: Array
    df_case: Array
    df_epoch: Array
    n0: Array
    ms_case: Array
    ms_epoch: Array
    repeated: Array


def _mean_squares(table: pl.DataFrame) -> _MeanSquares:
    """Return the groups' sizes, degrees of freedom and case and epoch mean squares from their sums of squares."""
    a, big_n, sum_n2 = (table[c].to_numpy() for c in ("a", "N", "sum_n2"))
    L = table["L"].to_numpy().astype(float)  # noqa: N806 (the judges' L of the formulas)
    df_case, df_epoch = a - 1.0, big_n - a
    n0 = (big_n - sum_n2 / big_n) / df_case
    with np.errstate(all="ignore"):
        ms_case = L * table["ssb"].to_numpy() / df_case
        ms_epoch = np.where(df_epoch > 0, L * table["ssw"].to_numpy() / np.where(df_epoch > 0, df_epoch, 1.0), np.nan)
    return _MeanSquares(a, big_n, sum_n2, L, df_case, df_epoch, n0, ms_case, ms_epoch, df_epoch > 0)


def _components(
    table: pl.DataFrame, ms: _MeanSquares, judged: bool, confidence: float
) -> tuple[dict[str, tuple[Array, Array, Array, Array]], tuple[Array, Array, Array] | None]:
    """Return each component's (estimate, dof, low, high) by Satterthwaite, and the judges' ICC when ``judged``."""
    a, big_n, L, n0, repeated = ms.a, ms.big_n, ms.L, ms.n0, ms.repeated  # noqa: N806 (the judges' L)
    ms_case, ms_epoch, df_case, df_epoch = ms.ms_case, ms.ms_epoch, ms.df_case, ms.df_epoch
    values: dict[str, tuple[Array, Array, Array, Array]] = {}
    judge_icc = None
    if judged:
        df_judge, df_res = L - 1.0, (big_n - 1.0) * (L - 1.0)
        ms_judge = table["ss_judge"].to_numpy() / df_judge
        ms_res = table["ss_res"].to_numpy() / df_res
        ms_runs = table["ss_runs"].to_numpy() / (big_n - 1.0)
        # With one epoch per case the case mean square is the runs' (epoch inside it).
        case_ms, case_df = np.where(repeated, ms_case, ms_runs), np.where(repeated, df_case, big_n - 1.0)
        case_below, case_below_df = np.where(repeated, ms_epoch, ms_res), np.where(repeated, df_epoch, df_res)
        case_scale = np.where(repeated, n0 * L, L)
        values["case"] = satterthwaite(
            [1.0 / case_scale, -1.0 / case_scale], [case_ms, case_below], [case_df, case_below_df], confidence
        )
        values["epoch"] = satterthwaite([1.0 / L, -1.0 / L], [ms_epoch, ms_res], [df_epoch, df_res], confidence)
        values["judge"] = satterthwaite([1.0 / big_n, -1.0 / big_n], [ms_judge, ms_res], [df_judge, df_res], confidence)
        values["residual"] = satterthwaite([np.ones_like(L)], [ms_res], [df_res], confidence)
        judge_icc = agreement_icc(ms_runs, ms_judge, ms_res, big_n, L, confidence)
    else:
        values["case"] = satterthwaite([1.0 / n0, -1.0 / n0], [ms_case, ms_epoch], [df_case, df_epoch], confidence)
        values["epoch"] = satterthwaite([np.ones_like(a)], [ms_epoch], [df_epoch], confidence)
    return values, judge_icc


def _anova_rows(table: pl.DataFrame, keys: list[str], judged: bool, confidence: float) -> pl.DataFrame:
    """Return the ANOVA rows of every group at once: numpy over the groups' mean squares."""
    ms = _mean_squares(table)
    a, big_n, sum_n2, L, n0, repeated = ms.a, ms.big_n, ms.sum_n2, ms.L, ms.n0, ms.repeated  # noqa: N806 (L)
    ms_case, ms_epoch, df_case, df_epoch = ms.ms_case, ms.ms_epoch, ms.df_case, ms.df_epoch
    values, judge_icc = _components(table, ms, judged, confidence)
    with np.errstate(all="ignore"):
        f = ms_case / ms_epoch
        # (F - 1)/(F + n0 - 1), written so that no epoch noise at all (MS_epoch = 0) gives 1, not inf/inf.
        icc = (ms_case - ms_epoch) / (ms_case + (n0 - 1.0) * ms_epoch)
    icc_low, icc_high = icc_interval(f, df_case, df_epoch, n0, confidence)
    mean_epochs = big_n / a
    names = list(values)
    positive = [np.where(values[name][0] > 0, values[name][0], 0.0) for name in names]
    total = sum(positive)
    notes = _notes(table)
    rows = []
    for g in range(table.height):
        key = dict(zip(keys, table.row(g)[: len(keys)], strict=True))
        common = {
            "cases": int(a[g]), "runs": int(big_n[g]), "epochs": float(mean_epochs[g]), "judges": int(L[g]),
        }  # fmt: skip
        group_notes = list(notes[g])
        balanced = sum_n2[g] == big_n[g] ** 2 / a[g]
        if not balanced and repeated[g]:
            group_notes.append(f"unbalanced (epochs per case vary): n0 = {n0[g]:.4g}; the ICC interval is approximate")
        for i, name in enumerate(names):
            estimate, dof, low, high = (v[g] for v in values[name])
            said = list(group_notes)
            if name == "case" and judged and not repeated[g]:
                said.append("one epoch per case: this holds the epoch variance too")
            if name == "epoch" and judged and not repeated[g]:
                said.append("one epoch per case: the epoch variance cannot be told from the case variance")
                estimate = np.nan
            elif estimate <= 0:
                said.append("negative ANOVA estimate: indistinguishable from 0, no interval")
            rows.append({
                **key, "quantity": name, "estimate": estimate, "ci_low": low, "ci_high": high,
                "share": positive[i][g] / total[g] if total[g] > 0 and np.isfinite(estimate) else np.nan,
                "dof": dof, **common, "note": "; ".join(said) or None,
            })  # fmt: skip
        icc_row = {"estimate": icc[g], "ci_low": icc_low[g], "ci_high": icc_high[g]} if repeated[g] else {}
        deff = {k: 1.0 + (mean_epochs[g] - 1.0) * v for k, v in icc_row.items()}
        for name, row in (("icc", icc_row), ("design_effect", deff)):
            said = list(group_notes) + ([] if repeated[g] else ["one epoch per case: no ICC of epochs"])
            rows.append({
                **key, "quantity": name, "estimate": row.get("estimate", np.nan), "ci_low": row.get("ci_low", np.nan),
                "ci_high": row.get("ci_high", np.nan), "share": np.nan, "dof": np.nan, **common,
                "note": "; ".join(said) or None,
            })  # fmt: skip
        if judged:
            rows.append({
                **key, "quantity": "judge_icc", "estimate": judge_icc[0][g], "ci_low": judge_icc[1][g],
                "ci_high": judge_icc[2][g], "share": np.nan, "dof": np.nan, **common,
                "note": "; ".join(group_notes) or None,
            })  # fmt: skip
    schema = {
        **{k: table.schema[k] for k in keys}, "quantity": pl.String, "estimate": pl.Float64, "ci_low": pl.Float64,
        "ci_high": pl.Float64, "share": pl.Float64, "dof": pl.Float64, "cases": pl.Int64, "runs": pl.Int64,
        "epochs": pl.Float64, "judges": pl.Int64, "note": pl.String,
    }  # fmt: skip
    out = pl.DataFrame(rows, schema=schema)
    return out.with_columns(pl.col("estimate", "ci_low", "ci_high", "share", "dof").fill_nan(None))
