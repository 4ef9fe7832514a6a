r"""Cost-effectiveness: whether the treatment's extra cost is worth its extra quality, and how sure that is.

A MAS usually costs more than a single agent. "Is it worth it?" is the incremental cost-effectiveness
ratio (ICER) of health economics: the extra cost per extra unit of quality, here per extra correct
answer when the metric is pass/fail. With each system's mean effect :math:`E` (higher is better) and
mean cost :math:`C` per case,

.. math:: \Delta E = E_T - E_C,\qquad \Delta C = C_T - C_C,\qquad \mathrm{ICER} = \Delta C / \Delta E.

Paired on cases (``pair_on``), :math:`\Delta E` and :math:`\Delta C` are the means of the per-case
differences :math:`e_i = E_{Ti} - E_{Ci}`, :math:`c_i = C_{Ti} - C_{Ci}` (a system's runs of a case
averaged first), with :math:`V_E = s_e^2/n`, :math:`V_C = s_c^2/n`, :math:`K = s_{ec}/n` and
:math:`\nu = n - 1`. Unpaired, each system's runs are independent samples:
:math:`V_E = s_{E_T}^2/n_T + s_{E_C}^2/n_C`, likewise :math:`V_C`, :math:`K = s_{E_TC_T}/n_T + s_{E_CC_C}/n_C`,
and :math:`\nu` the Welch–Satterthwaite degrees of freedom of :math:`\Delta E`.

Notes
-----
* Intervals of :math:`\Delta E` and :math:`\Delta C`: :math:`\Delta \pm t_{\nu,1-\gamma/2}\sqrt V` (paired t,
  or Welch with each difference's own df).
* Fieller's interval of the ICER (Fieller 1954; for cost-effectiveness ratios Willan & O'Brien 1996,
  "Confidence intervals for cost-effectiveness ratios: an application of Fieller's theorem", Health
  Economics 5, 297–305): the set of :math:`R` with :math:`(\Delta C - R\Delta E)^2 \le t^2 (V_C - 2RK + R^2V_E)`,
  :math:`t = t_{\nu,1-\gamma/2}`, i.e. :math:`aR^2 + bR + c \le 0` with :math:`a = \Delta E^2 - t^2V_E`,
  :math:`b = -2(\Delta E\Delta C - t^2K)`, :math:`c = \Delta C^2 - t^2V_C`. When :math:`a > 0` (the interval of
  :math:`\Delta E` excludes 0) it is bounded, between the roots; when :math:`a < 0` and the roots are real it
  is *exclusive*, :math:`(-\infty, R_1] \cup [R_2, \infty)`; otherwise it is the whole line (*unbounded*).
  Paired, this is exactly the set of :math:`R` at which the paired t test of :math:`c_i - Re_i` does not
  reject (tested against ``scipy.stats.ttest_1samp``).
* The paired bootstrap resamples cases (both systems' values of a case together; unpaired, each
  system's runs apart), :math:`B` times, from one seeded generator: index matrices, not a loop per
  replicate. The ICER's percentile interval is the :math:`(1\mp\gamma)/2` quantiles of
  :math:`\Delta C^*/\Delta E^*`, given only when every replicate's :math:`\Delta E^*` has the sign of
  :math:`\Delta E`: across :math:`\Delta E = 0` the ratio stops ordering cost-effectiveness (a ratio of
  -50 may be a cheaper, better treatment or a dearer, worse one), and the acceptability curve is the
  honest summary (Briggs, O'Brien & Blackhouse 2002, "Thinking outside the box", Annu Rev Public Health).
* Net monetary benefit at a price :math:`\lambda` per unit of effect (what an extra correct answer is
  worth): :math:`NB(\lambda) = \lambda\Delta E - \Delta C`, variance :math:`\lambda^2V_E - 2\lambda K + V_C`. The
  cost-effectiveness acceptability curve is :math:`P(NB^*(\lambda) > 0)` over the bootstrap replicates (van
  Hout et al. 1994, "Costs, effects and C/E-ratios alongside a clinical trial"; Fenwick, O'Brien & Briggs
  2004). :math:`NB`'s interval, with the same :math:`t`, excludes 0 exactly for the prices outside Fieller's
  set (Heitjan 2000, "Fieller's method and net health benefits", Health Economics 9, 327–335).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
from numpy.typing import NDArray
from scipy import stats

from mas_eval.constraints import NONE, RUN_METRICS, Interval, Options, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    GROUP,
    PROBABILITY,
    SYSTEM_NAME,
    as_lazy,
    check_columns,
    check_no_nulls,
    column_list,
    one_or_list,
    values_of,
)
from mas_eval.stats.comparison import MAX_BOOT

# The module is not named after its function: in the lazily exporting package a submodule
# ``cost_effectiveness``, once imported, would stand where ``mas_eval.stats.cost_effectiveness`` is.

__all__ = [
    "ACCEPTABILITY_COLUMNS",
    "COST_EFFECTIVENESS_COLUMNS",
    "REPLICATE_COLUMNS",
    "CostLevel",
    "cost_effectiveness",
    "fieller_interval",
]

Array = NDArray[np.float64]

#: What :func:`cost_effectiveness` returns: one row per group, per (group, price), or per (group, replicate).
CostLevel = Literal["summary", "acceptability", "replicates"]

#: The columns of ``level="summary"`` after the ``by`` columns.
COST_EFFECTIVENESS_COLUMNS = [
    "metric", "cost_metric", "n_treatment", "n_control", "n_pairs", "effect_treatment", "effect_control",
    "cost_treatment", "cost_control", "delta_effect", "delta_effect_low", "delta_effect_high", "delta_cost",
    "delta_cost_low", "delta_cost_high", "icer", "fieller_low", "fieller_high", "fieller", "bootstrap_low",
    "bootstrap_high", "n_boot", "share_dominant", "share_dearer_better", "share_cheaper_worse", "share_dominated",
    "quadrant", "verdict", "warning",
]  # fmt: skip
#: The columns of ``level="acceptability"`` after the ``by`` columns.
ACCEPTABILITY_COLUMNS = [
    "metric", "cost_metric", "price", "probability", "net_benefit", "net_benefit_low", "net_benefit_high",
]  # fmt: skip
#: The columns of ``level="replicates"`` after the ``by`` columns.
REPLICATE_COLUMNS = ["replicate", "delta_effect", "delta_cost"]

#: Largest index matrix drawn at once (elements); more resamples are drawn in row chunks of the same stream.
MAX_ELEMENTS = 1 << 22
#: Prices of the acceptability curve when none are given: this many, from 0 up.
DEFAULT_PRICES = 101

_MORE_BOOT = "more resamples would only cost memory and time; 10,000 give a stable interval"
_SEED_SEQUENCE = Predicate(lambda value: isinstance(value, np.random.SeedSequence), "a numpy SeedSequence")
#: Internal names: the effect, the cost, and the two systems' per-case means.
EFFECT, COST = "_effect", "_cost"


# --- Fieller's interval -------------------------------------------------------------------------------


def fieller_interval(
    delta_cost: Array, delta_effect: Array, var_cost: Array, var_effect: Array, covariance: Array, critical: Array
) -> tuple[Array, Array, NDArray[np.object_]]:
    r"""Fieller's confidence set of :math:`\Delta C/\Delta E`, element by element (module notes), unchecked.

    Returns the lower and upper roots and the set's shape: ``"bounded"`` (between the roots),
    ``"exclusive"`` (outside them: :math:`(-\infty, R_1] \cup [R_2, \infty)`) or ``"unbounded"`` (every
    ratio; the roots are NaN); None where an input is NaN.

    Examples
    --------
    >>> low, high, shape = fieller_interval(*(np.array([v]) for v in (3.0, 0.2, 0.25, 0.0016, 0.004, 1.96)))
    >>> round(float(low[0]), 3), round(float(high[0]), 3), shape[0]
    (9.475, 25.064, 'bounded')
    """
    t2 = critical**2
    a = delta_effect**2 - t2 * var_effect
    b = -2.0 * (delta_effect * delta_cost - t2 * covariance)
    c = delta_cost**2 - t2 * var_cost
    with np.errstate(all="ignore"):
        disc = b**2 - 4.0 * a * c
        root = np.sqrt(np.maximum(disc, 0.0))
        first, second = (-b - root) / (2.0 * a), (-b + root) / (2.0 * a)
    low, high = np.minimum(first, second), np.maximum(first, second)
    defined = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    bounded = defined & (a > 0)
    exclusive = defined & (a < 0) & (disc > 0)
    shape = np.full(a.shape, None, dtype=object)
    shape[defined] = "unbounded"
    shape[exclusive] = "exclusive"
    shape[bounded] = "bounded"
    keep = bounded | exclusive
    return np.where(keep, low, np.nan), np.where(keep, high, np.nan), shape


# --- preparing the runs ----------------------------------------------------------------------------------


def _runs(
    frame: pl.LazyFrame,
    metric: str,
    cost: str,
    keys: list[str],
    system: str,
    names: tuple[str, str],
    pair_on: str | None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return the compared runs with a finite effect and a finite cost >= 0, and per group how many were set aside."""
    schema = frame.collect_schema()
    check_columns(schema, [system], "cost_effectiveness: system")
    check_columns(schema, [k for k in keys if k != GROUP], "cost_effectiveness: by")
    check_columns(schema, [metric], "metrics")
    check_columns(schema, [cost], "cost_effectiveness: cost")
    if pair_on is not None:
        check_columns(schema, [pair_on], "cost_effectiveness: pair_on")
    for name, what, allowed in ((metric, "metric", "numeric or boolean"), (cost, "cost", "numeric")):
        dtype = schema[name]
        if not (dtype.is_numeric() or (dtype == pl.Boolean and what == "metric")):
            msg = f"cost_effectiveness: {what} {name!r} has type {dtype}; it must be {allowed}"
            raise SchemaError(msg)
    if pair_on is not None and (pair_on == system or pair_on in keys):
        msg = f"cost_effectiveness: pair_on={pair_on!r} is also the system or a by column; pass the case column"
        raise InvalidParameterError(msg)
    compared = frame.filter(pl.col(system).is_in(list(names)))
    if GROUP in keys:
        compared = compared.with_columns(pl.lit(0, dtype=pl.Int8).alias(GROUP))
    if pair_on is not None:
        check_no_nulls(compared, [pair_on], "cost_effectiveness: pair_on")
    effect = pl.col(metric).cast(pl.Float64)
    spent = pl.col(cost).cast(pl.Float64)
    usable_effect = effect.is_not_null() & effect.is_finite()
    usable_cost = spent.is_not_null() & spent.is_finite() & (spent >= 0)
    runs = compared.select(
        *keys, system, *([pair_on] if pair_on is not None else []), effect.alias(EFFECT), spent.alias(COST),
        usable_effect.alias("_ok_effect"), usable_cost.alias("_ok_cost"),
    ).collect(engine=ENGINE)  # fmt: skip
    present = runs[system].unique().to_list()
    missing = [name for name in names if name not in present]
    if missing:
        systems = frame.select(pl.col(system).unique().sort()).head(20).collect(engine=ENGINE).to_series().to_list()
        msg = (
            f"cost_effectiveness: no runs of system {', '.join(map(repr, missing))} in column {system!r}; "
            f"the systems present are: {', '.join(map(repr, systems)) or '(none: the frame is empty)'}"
        )
        raise DataError(msg)
    aside = runs.group_by(keys).agg(
        (~pl.col("_ok_effect")).sum().alias("aside_effect"),
        (pl.col("_ok_effect") & ~pl.col("_ok_cost")).sum().alias("aside_cost"),
    )
    kept = runs.filter(pl.col("_ok_effect") & pl.col("_ok_cost")).drop("_ok_effect", "_ok_cost")
    return kept, aside


# --- the two designs' summaries ------------------------------------------------------------------------


def _paired_cases(runs: pl.DataFrame, keys: list[str], system: str, names: tuple[str, str], pair_on: str):
    """Per (group, case) both systems' mean effect and cost, for the cases both ran; and unpaired counts."""
    per_case = runs.group_by([*keys, pair_on, system]).agg(
        pl.col(EFFECT).mean(), pl.col(COST).mean(), pl.len().alias("_runs")
    )
    sides = []
    for side, name in zip(("t", "c"), names, strict=True):
        sides.append(
            per_case.filter(pl.col(system) == name).select(
                *keys,
                pair_on,
                pl.col(EFFECT).alias(f"e_{side}"),
                pl.col(COST).alias(f"c_{side}"),
                pl.col("_runs").alias(f"runs_{side}"),
            )
        )
    joined = sides[0].join(sides[1], on=[*keys, pair_on], how="full", coalesce=True, nulls_equal=True)
    unpaired = joined.group_by(keys).agg((pl.col("e_t").is_null() | pl.col("e_c").is_null()).sum().alias("unpaired"))
    cases = joined.drop_nulls(["e_t", "e_c"]).with_columns(
        (pl.col("e_t") - pl.col("e_c")).alias("d_e"), (pl.col("c_t") - pl.col("c_c")).alias("d_c")
    )
    # Sorted so that sums, and the bootstrap's draws, are the same on every call.
    return cases.sort([*keys, pair_on], nulls_last=True), unpaired


def _paired_summary(cases: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return cases.group_by(keys, maintain_order=True).agg(
        pl.len().alias("n_pairs"),
        pl.col("runs_t").sum().alias("n_treatment"),
        pl.col("runs_c").sum().alias("n_control"),
        pl.col("e_t").mean().alias("effect_treatment"),
        pl.col("e_c").mean().alias("effect_control"),
        pl.col("c_t").mean().alias("cost_treatment"),
        pl.col("c_c").mean().alias("cost_control"),
        pl.col("d_e").mean().alias("delta_effect"),
        pl.col("d_c").mean().alias("delta_cost"),
        (pl.col("d_e").var() / pl.len()).alias("var_effect"),
        (pl.col("d_c").var() / pl.len()).alias("var_cost"),
        (pl.cov("d_e", "d_c") / pl.len()).alias("covariance"),
    )


def _independent_summary(runs: pl.DataFrame, keys: list[str], system: str, names: tuple[str, str]) -> pl.DataFrame:
    stats_ = (
        runs.sort([*keys, system], nulls_last=True)
        .group_by([*keys, system], maintain_order=True)
        .agg(
            pl.len().alias("n"),
            pl.col(EFFECT).mean().alias("e"),
            pl.col(COST).mean().alias("c"),
            pl.col(EFFECT).var().alias("ve"),
            pl.col(COST).var().alias("vc"),
            pl.cov(EFFECT, COST).alias("k"),
        )
    )
    t = stats_.filter(pl.col(system) == names[0]).drop(system)
    c = stats_.filter(pl.col(system) == names[1]).drop(system)
    both = t.join(c, on=keys, how="full", coalesce=True, suffix="_c", nulls_equal=True)
    n_t, n_c = pl.col("n"), pl.col("n_c")
    var_e_t, var_e_c = pl.col("ve") / n_t, pl.col("ve_c") / n_c
    var_c_t, var_c_c = pl.col("vc") / n_t, pl.col("vc_c") / n_c
    return both.select(
        *keys,
        pl.lit(None, dtype=pl.Int64).alias("n_pairs"),
        n_t.fill_null(0).alias("n_treatment"),
        n_c.fill_null(0).alias("n_control"),
        pl.col("e").alias("effect_treatment"),
        pl.col("e_c").alias("effect_control"),
        pl.col("c").alias("cost_treatment"),
        pl.col("c_c").alias("cost_control"),
        (pl.col("e") - pl.col("e_c")).alias("delta_effect"),
        (pl.col("c") - pl.col("c_c")).alias("delta_cost"),
        (var_e_t + var_e_c).alias("var_effect"),
        (var_c_t + var_c_c).alias("var_cost"),
        (pl.col("k") / n_t + pl.col("k_c") / n_c).alias("covariance"),
        _welch_df(var_e_t, n_t, var_e_c, n_c).alias("dof_effect"),
        _welch_df(var_c_t, n_t, var_c_c, n_c).alias("dof_cost"),
    )


def _welch_df(a: pl.Expr, n_a: pl.Expr, b: pl.Expr, n_b: pl.Expr) -> pl.Expr:
    return (a + b) ** 2 / (a**2 / (n_a - 1) + b**2 / (n_b - 1))


# --- the bootstrap -----------------------------------------------------------------------------------------


def _resampled_means(values: Array, n_boot: int, rng: np.random.Generator) -> Array:
    """Column means of ``n_boot`` resamples of the rows of ``values`` (n, k): ``(n_boot, k)``, rows kept together.

    The indices are drawn as ``(rows, n)`` matrices in a fixed chunk size (a function of n only),
    so the draws, and so the results, depend on the seed and the data alone.
    """
    n = values.shape[0]
    rows = max(1, MAX_ELEMENTS // max(n, 1))
    # One contiguous array per column to take from, not a 3-d gather (docs/performance.md).
    columns = [np.ascontiguousarray(values[:, j]) for j in range(values.shape[1])]
    out = np.empty((n_boot, values.shape[1]))
    # A loop over chunks of resamples (one for up to 4M drawn indices), each a vector operation.
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        index = rng.integers(0, n, (stop - start, n))
        for j, column in enumerate(columns):
            out[start:stop, j] = np.take(column, index).mean(axis=1)
    return out


def _replicates(
    groups: pl.DataFrame, data: dict[tuple[Any, ...], Any], keys: list[str], paired: bool, n_boot: int, seed: Any
) -> list[tuple[Array, Array] | None]:
    """``(delta_effect*, delta_cost*)`` for each group in order; None for a group too small to resample."""
    rng = np.random.default_rng(seed)
    out: list[tuple[Array, Array] | None] = []
    # One resampling per group (each draws all its resamples at once); not per run.
    for key in groups.select(keys).iter_rows():
        part = data.get(key)
        if part is None:
            out.append(None)
            continue
        if paired:
            values = part.select("d_e", "d_c").to_numpy()
            if values.shape[0] < 2:
                out.append(None)
                continue
            means = _resampled_means(values, n_boot, rng)
            out.append((means[:, 0], means[:, 1]))
        else:
            treated, control = part
            if treated.shape[0] < 2 or control.shape[0] < 2:
                out.append(None)
                continue
            t = _resampled_means(treated, n_boot, rng)
            c = _resampled_means(control, n_boot, rng)
            out.append((t[:, 0] - c[:, 0], t[:, 1] - c[:, 1]))
    return out


# --- the verdicts ------------------------------------------------------------------------------------------


def _quadrant(delta_effect: float, delta_cost: float) -> str | None:
    """Where the point estimate lies on the cost-effectiveness plane."""
    if not (np.isfinite(delta_effect) and np.isfinite(delta_cost)):
        return None
    effect = "better" if delta_effect > 0 else "worse" if delta_effect < 0 else "same effect"
    cost = "dearer" if delta_cost > 0 else "cheaper" if delta_cost < 0 else "same cost"
    named = {("cheaper", "better"): "dominant", ("dearer", "worse"): "dominated"}
    return named.get((cost, effect), f"{cost} and {effect}")


def _verdict(effect_low: float, effect_high: float, cost_low: float, cost_high: float) -> str | None:
    """Return what the two intervals show: dominance, a trade-off, or which difference is not shown."""
    if not all(np.isfinite(v) for v in (effect_low, effect_high, cost_low, cost_high)):
        return None
    effect = "better" if effect_low > 0 else "worse" if effect_high < 0 else None
    cost = "dearer" if cost_low > 0 else "cheaper" if cost_high < 0 else None
    if effect and cost:
        words = {
            ("cheaper", "better"): "dominant: cheaper and better",
            ("dearer", "worse"): "dominated: dearer and worse",
        }
        return words.get((cost, effect), f"trade-off: {cost} and {effect}")
    if cost:
        return f"{cost}, no difference in effect shown"
    if effect:
        return f"{effect}, no difference in cost shown"
    return "no difference in cost or effect shown"


# --- the function ----------------------------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "cost": [COLUMN_NAME],
        "treatment": [SYSTEM_NAME],
        "control": [SYSTEM_NAME],
        "pair_on": [COLUMN_NAME, NONE],
        "by": [COLUMN_NAMES, NONE],
        "n_boot": [Interval(int, 0, MAX_BOOT, beyond=_MORE_BOOT)],
        "seed": [Interval(int, 0), _SEED_SEQUENCE, NONE],
        "prices": [*one_or_list(Interval(float, 0)), NONE],
        "confidence": [PROBABILITY],
        "system": [COLUMN_NAME],
        "level": [Options.of(CostLevel)],
    }
)
def cost_effectiveness(
    run_metrics: Any,
    metric: str,
    cost: str = "run_cost_usd",
    treatment: str = "mas",
    control: str = "single",
    pair_on: str | None = "case_id",
    by: str | Sequence[str] | None = None,
    n_boot: int = 2000,
    seed: int | np.random.SeedSequence | None = None,
    prices: float | Sequence[float] | None = None,
    confidence: float = 0.95,
    system: str = "system",
    *,
    level: CostLevel = "summary",
) -> pl.DataFrame:
    r"""Return the treatment's extra cost per extra unit of quality (ICER), with Fieller's and a bootstrap interval.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run, with ``system``, ``metric``, ``cost`` and any ``pair_on`` / ``by`` columns.
    metric : str
        The effect, higher is better: a pass/fail outcome (boolean or 0/1, so that the ICER is the
        cost per extra correct answer) or any score.
    cost : str
        Each run's cost (``run_cost_usd``; tokens work too), not negative.
    treatment, control : str
        The two values of ``system``; every difference is treatment - control.
    pair_on : str or None
        The case column both systems ran (``case_id``): the differences are per case (a system's
        runs of a case averaged first) and the bootstrap resamples cases, keeping pairs. None:
        two independent samples of runs.
    by : str or list of str, optional
        Grouping columns: one analysis per group (e.g. ``"task"``).
    n_boot : int
        Bootstrap resamples (0: none, and no bootstrap columns), at most 1,000,000.
    seed : int or numpy.random.SeedSequence, optional
        Seed of ``numpy.random.default_rng``, which draws for the groups in order: the same seed and
        data give the same intervals and curve, bit for bit.
    prices : float or list of float, optional
        ``level="acceptability"`` only: the prices :math:`\lambda \ge 0` of one unit of effect (of one
        extra correct answer) at which to evaluate the curve. Default: 101 from 0 to 1.25 times the
        upper percentile of the bootstrap ratios in the dearer-and-better quadrant (or twice the
        ICER's size when there are none), per group.
    confidence : float
        Level of every interval, in (0, 1).
    system : str
        The column naming the system of each run.
    level : {"summary", "acceptability", "replicates"}
        What to return (keyword only): one row per group; the acceptability curve, one row per
        group and price; or the bootstrap replicates, one row per group and replicate (for
        :func:`mas_eval.plots.cost_effectiveness_plane`).

    Returns
    -------
    polars.DataFrame
        ``level="summary"``: the ``by`` columns, then

        ===================== ==========================================================
        metric, cost_metric   the effect and cost columns, as named
        n_treatment           runs of each system used (paired: in the paired cases)
        n_control
        n_pairs               paired cases (null when unpaired)
        effect_treatment      mean effect per case (paired: over the paired cases)
        effect_control
        cost_treatment        mean cost per case
        cost_control
        delta_effect          :math:`\Delta E`, with its t interval (``_low``, ``_high``)
        delta_cost            :math:`\Delta C`, with its t interval
        icer                  :math:`\Delta C/\Delta E` (null when :math:`\Delta E = 0`)
        fieller_low           Fieller's limits (module notes); null when unbounded
        fieller_high
        fieller               ``bounded`` (between the limits), ``exclusive`` (outside
                              them: the ratio is below ``fieller_low`` or above
                              ``fieller_high``) or ``unbounded`` (any ratio)
        bootstrap_low         the ratio's percentile interval over the paired bootstrap;
        bootstrap_high        null when a replicate's :math:`\Delta E^*` crosses 0 (then
                              ``warning`` says how many) or without a bootstrap
        n_boot                resamples drawn
        share_dominant        share of replicates cheaper and better
                              (:math:`\Delta C^* < 0 < \Delta E^*`)
        share_dearer_better   dearer and better; then cheaper and worse; dearer and worse
        share_cheaper_worse
        share_dominated
        quadrant              the estimate's quadrant: ``dominant``, ``dominated``,
                              ``dearer and better``, ``cheaper and worse`` (or ``same ...``)
        verdict               what the two intervals show: ``dominant: cheaper and
                              better``, ``dominated: dearer and worse``, ``trade-off:
                              dearer and better``, ``trade-off: cheaper and worse``,
                              ``cheaper, no difference in effect shown``, ...
        warning               runs set aside, unpaired cases, undefined ratios, or null
        ===================== ==========================================================

        ``level="acceptability"``: the ``by`` columns, ``metric``, ``cost_metric``, ``price``
        (:math:`\lambda`), ``probability`` (:math:`P(\lambda\Delta E^* - \Delta C^* > 0)`, the
        curve), ``net_benefit`` (:math:`\lambda\Delta E - \Delta C`) and its t interval
        ``net_benefit_low``, ``net_benefit_high``.

        ``level="replicates"``: the ``by`` columns, ``replicate`` (1 to ``n_boot``),
        ``delta_effect`` and ``delta_cost``.

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above, ``prices`` without ``level="acceptability"``, or
        ``n_boot=0`` for the curve or the replicates.
    SchemaError
        A named column is missing, or ``metric``/``cost`` is not numeric.
    DataError
        No runs of ``treatment`` or ``control``; nulls in ``pair_on``.

    Notes
    -----
    A run whose metric is null, NaN or infinite, or whose cost is null, NaN, infinite or negative,
    cannot be weighed: it is set aside (with its effect and its cost, so that both differences
    come from the same runs) and the group's ``warning`` counts it; nothing is rejected. A group
    with fewer than two paired cases (or runs of a system) has no intervals. Formulas and sources
    in the module notes. A dominant treatment's ICER is negative and means nothing as a price;
    read ``quadrant`` and ``verdict`` first.

    Examples
    --------
    The MAS passes 3 of 4 cases, the single agent 1 of them, at three times the cost:

    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4, "case_id": [1, 2, 3, 4] * 2,
    ...                      "passed": [1, 1, 1, 0, 1, 0, 0, 0],
    ...                      "run_cost_usd": [0.30, 0.33, 0.27, 0.30, 0.10, 0.11, 0.09, 0.10]})
    >>> row = cost_effectiveness(runs, "passed", seed=1).row(0, named=True)
    >>> row["delta_effect"], round(row["delta_cost"], 3), round(row["icer"], 2), row["quadrant"]
    (0.5, 0.2, 0.4, 'dearer and better')
    >>> row["verdict"], row["fieller"], round(row["fieller_low"], 3), round(row["fieller_high"], 3)
    ('dearer, no difference in effect shown', 'exclusive', -0.476, 0.139)

    Four cases cannot show the extra correct answers, so Fieller's set is two half-lines: any price
    per correct answer above 0.139 (or below -0.476) fits the data. The acceptability curve says how
    likely the MAS is worth its cost at each price:

    >>> curve = cost_effectiveness(runs, "passed", seed=1, prices=[0.2, 1.0], level="acceptability")
    >>> curve.select("price", "probability").rows()
    [(0.2, 0.0165), (1.0, 0.9285)]
    """
    names = (treatment, control)
    if treatment == control:
        msg = f"cost_effectiveness: treatment and control are both {treatment!r}; compare two different systems"
        raise InvalidParameterError(msg)
    if prices is not None and level != "acceptability":
        msg = (
            f"cost_effectiveness: prices are the prices per unit of effect of the acceptability curve; pass "
            f"level='acceptability' (not {level!r}) or drop prices"
        )
        raise InvalidParameterError(msg)
    if level != "summary" and n_boot == 0:
        msg = f"cost_effectiveness: level={level!r} is drawn from the bootstrap; pass n_boot > 0 (e.g. 2000)"
        raise InvalidParameterError(msg)
    by_columns = column_list(by, "by")
    keys = by_columns or [GROUP]
    runs, aside = _runs(as_lazy(run_metrics), metric, cost, keys, system, names, pair_on)
    paired = pair_on is not None
    if paired:
        assert pair_on is not None
        cases, unpaired = _paired_cases(runs, keys, system, names, pair_on)
        summary = _paired_summary(cases, keys)
    else:
        summary = _independent_summary(runs, keys, system, names)
    groups = aside.select(keys).sort(keys, nulls_last=True)
    summary = groups.join(summary, on=keys, how="left", nulls_equal=True, maintain_order="left")

    data: dict[tuple[Any, ...], Any] = {}
    if n_boot:
        if paired:
            data = cases.partition_by(keys, as_dict=True, maintain_order=True)
        else:
            sides = runs.sort([*keys, system], nulls_last=True)
            data = {
                key: tuple(part.filter(pl.col(system) == name).select(EFFECT, COST).to_numpy() for name in names)
                for key, part in sides.partition_by(keys, as_dict=True, maintain_order=True).items()
            }
    replicates = _replicates(summary, data, keys, paired, n_boot, seed) if n_boot else [None] * summary.height

    if level == "replicates":
        return _replicate_frame(summary, replicates, keys, by_columns)
    inference = _inference(summary, paired, confidence)
    if level == "acceptability":
        return _acceptability(summary, inference, replicates, keys, by_columns, metric, cost, prices, confidence)
    notes = _notes(summary, aside, unpaired if paired else None, keys, names, paired)
    return _summary_frame(summary, inference, replicates, notes, keys, by_columns, metric, cost, n_boot, confidence)


def _inference(summary: pl.DataFrame, paired: bool, confidence: float) -> dict[str, Array]:
    """Intervals of the two differences, the ICER and Fieller's set, for every group at once."""
    col = {name: summary[name].cast(pl.Float64).to_numpy() for name in summary.columns if name in (
        "delta_effect", "delta_cost", "var_effect", "var_cost", "covariance", "dof_effect", "dof_cost", "n_pairs",
        "n_treatment", "n_control")}  # fmt: skip
    tail = 1.0 - (1.0 - confidence) / 2.0
    if paired:
        dof_effect = dof_cost = col["n_pairs"] - 1.0
    else:
        dof_effect, dof_cost = col["dof_effect"], col["dof_cost"]
    with np.errstate(all="ignore"):
        valid = np.isfinite(dof_effect) & (dof_effect > 0)
        t_effect = np.where(valid, stats.t.ppf(tail, np.where(valid, dof_effect, 1.0)), np.nan)
        valid_cost = np.isfinite(dof_cost) & (dof_cost > 0)
        t_cost = np.where(valid_cost, stats.t.ppf(tail, np.where(valid_cost, dof_cost, 1.0)), np.nan)
        se_effect, se_cost = np.sqrt(col["var_effect"]), np.sqrt(col["var_cost"])
        icer = np.where(col["delta_effect"] != 0, col["delta_cost"] / col["delta_effect"], np.nan)
    low, high, shape = fieller_interval(
        col["delta_cost"], col["delta_effect"], col["var_cost"], col["var_effect"], col["covariance"], t_effect
    )
    return {
        **col,
        "critical": t_effect,
        "delta_effect_low": col["delta_effect"] - t_effect * se_effect,
        "delta_effect_high": col["delta_effect"] + t_effect * se_effect,
        "delta_cost_low": col["delta_cost"] - t_cost * se_cost,
        "delta_cost_high": col["delta_cost"] + t_cost * se_cost,
        "icer": icer,
        "fieller_low": low,
        "fieller_high": high,
        "fieller": shape,
    }


def _notes(
    summary: pl.DataFrame,
    aside: pl.DataFrame,
    unpaired: pl.DataFrame | None,
    keys: list[str],
    names: tuple[str, str],
    paired: bool,
) -> list[list[str]]:
    """Each group's notes: runs set aside, unpaired cases, too few values."""
    frame = summary.select(*keys, "n_pairs", "n_treatment", "n_control").join(
        aside, on=keys, how="left", nulls_equal=True, maintain_order="left"
    )
    if unpaired is not None:
        frame = frame.join(unpaired, on=keys, how="left", nulls_equal=True, maintain_order="left")
    notes: list[list[str]] = []
    # A loop over groups to word their notes, not over runs.
    for row in frame.iter_rows(named=True):
        out = []
        if row["aside_effect"]:
            out.append(f"{row['aside_effect']:,} run(s) without a finite metric value set aside")
        if row["aside_cost"]:
            out.append(f"{row['aside_cost']:,} run(s) with a missing, non-finite or negative cost set aside")
        if paired and row.get("unpaired"):
            out.append(f"{row['unpaired']:,} unpaired case(s) left out")
        if paired and (row["n_pairs"] or 0) < 2:
            out.append(f"fewer than 2 paired cases (n_pairs={row['n_pairs'] or 0}): no intervals")
        if not paired and min(row["n_treatment"] or 0, row["n_control"] or 0) < 2:
            out.append(
                f"fewer than 2 runs of a system ({names[0]!r}: {row['n_treatment'] or 0}, "
                f"{names[1]!r}: {row['n_control'] or 0}): no intervals"
            )
        notes.append(out)
    return notes


def _shares(replicates: list[tuple[Array, Array] | None]) -> dict[str, Array]:
    size = len(replicates)
    out = {name: np.full(size, np.nan) for name in ("dominant", "dearer_better", "cheaper_worse", "dominated")}
    for g, pair in enumerate(replicates):
        if pair is None:
            continue
        effect, cost = pair
        out["dominant"][g] = np.mean((effect > 0) & (cost < 0))
        out["dearer_better"][g] = np.mean((effect > 0) & (cost > 0))
        out["cheaper_worse"][g] = np.mean((effect < 0) & (cost < 0))
        out["dominated"][g] = np.mean((effect < 0) & (cost > 0))
    return out


def _summary_frame(
    summary: pl.DataFrame,
    inference: dict[str, Array],
    replicates: list[tuple[Array, Array] | None],
    notes: list[list[str]],
    keys: list[str],
    by_columns: list[str],
    metric: str,
    cost: str,
    n_boot: int,
    confidence: float,
) -> pl.DataFrame:
    size = summary.height
    low, high = np.full(size, np.nan), np.full(size, np.nan)
    tail = (1.0 - confidence) / 2.0
    for g, pair in enumerate(replicates):
        if pair is None:
            continue
        effect, spent = pair
        estimate = inference["delta_effect"][g]
        across = int(np.count_nonzero(np.sign(effect) != np.sign(estimate))) if estimate != 0 else effect.size
        if across:
            notes[g].append(
                f"{across:,} of {effect.size:,} bootstrap replicates have a difference in effect of the other sign "
                f"or 0: the ratio's bootstrap interval is undefined; read the acceptability curve"
            )
            continue
        low[g], high[g] = np.quantile(spent / effect, [tail, 1.0 - tail])
    fewer = ~np.isfinite(inference["critical"])
    columns = dict(inference)
    for name in ("delta_effect_low", "delta_effect_high", "delta_cost_low", "delta_cost_high"):
        columns[name] = np.where(fewer, np.nan, columns[name])
    shape = np.where(fewer, None, inference["fieller"])
    undefined = ~np.isfinite(inference["icer"]) & np.isfinite(inference["delta_effect"])
    for g in np.flatnonzero(undefined):
        notes[g].append("no difference in effect: the ICER is undefined")
    for g in np.flatnonzero((shape == "exclusive") | (shape == "unbounded")):
        shown = (
            "the whole line" if shape[g] == "unbounded" else "two half-lines, below fieller_low and above fieller_high"
        )
        notes[g].append(f"the interval of the difference in effect contains 0: Fieller's set is {shown}")
    shares = _shares(replicates)
    quadrant = [_quadrant(e, c) for e, c in zip(inference["delta_effect"], inference["delta_cost"], strict=True)]
    verdict = [
        _verdict(*values)
        for values in zip(
            columns["delta_effect_low"],
            columns["delta_effect_high"],
            columns["delta_cost_low"],
            columns["delta_cost_high"],
            strict=True,
        )
    ]
    has_boot = np.array([pair is not None for pair in replicates])
    floats = {
        "effect_treatment": summary["effect_treatment"].to_numpy(),
        "effect_control": summary["effect_control"].to_numpy(),
        "cost_treatment": summary["cost_treatment"].to_numpy(),
        "cost_control": summary["cost_control"].to_numpy(),
        "delta_effect": inference["delta_effect"],
        "delta_effect_low": columns["delta_effect_low"],
        "delta_effect_high": columns["delta_effect_high"],
        "delta_cost": inference["delta_cost"],
        "delta_cost_low": columns["delta_cost_low"],
        "delta_cost_high": columns["delta_cost_high"],
        "icer": inference["icer"],
        "fieller_low": np.where(fewer, np.nan, inference["fieller_low"]),
        "fieller_high": np.where(fewer, np.nan, inference["fieller_high"]),
    }
    out = summary.select(*keys).with_columns(
        pl.lit(metric).alias("metric"),
        pl.lit(cost).alias("cost_metric"),
        summary["n_treatment"].cast(pl.Int64).fill_null(0),
        summary["n_control"].cast(pl.Int64).fill_null(0),
        summary["n_pairs"].cast(pl.Int64),
        *(pl.Series(name, np.asarray(values, dtype=float), nan_to_null=True) for name, values in floats.items()),
        pl.Series("fieller", shape.tolist(), dtype=pl.String),
        pl.Series("bootstrap_low", low, nan_to_null=True),
        pl.Series("bootstrap_high", high, nan_to_null=True),
        pl.Series("n_boot", np.where(has_boot, n_boot, 0), dtype=pl.Int64),
        *(pl.Series(f"share_{name}", values, nan_to_null=True) for name, values in shares.items()),
        pl.Series("quadrant", quadrant, dtype=pl.String),
        pl.Series("verdict", verdict, dtype=pl.String),
        pl.Series("warning", ["; ".join(n) if n else None for n in notes], dtype=pl.String),
    )
    return out.select(*by_columns, *COST_EFFECTIVENESS_COLUMNS)


def _default_prices(pair: tuple[Array, Array] | None, icer: float, confidence: float) -> Array:
    """101 prices from 0 to past where the curve still moves: the dearer-and-better replicates' upper ratio."""
    upper = np.nan
    if pair is not None:
        effect, cost = pair
        dearer_better = (effect > 0) & (cost > 0)
        if dearer_better.any():
            upper = 1.25 * float(np.quantile(cost[dearer_better] / effect[dearer_better], (1.0 + confidence) / 2.0))
    if not (np.isfinite(upper) and upper > 0):
        upper = 2.0 * abs(icer) if np.isfinite(icer) and icer != 0 else 1.0
    return np.linspace(0.0, upper, DEFAULT_PRICES)


def _acceptability(
    summary: pl.DataFrame,
    inference: dict[str, Array],
    replicates: list[tuple[Array, Array] | None],
    keys: list[str],
    by_columns: list[str],
    metric: str,
    cost: str,
    prices: float | Sequence[float] | None,
    confidence: float,
) -> pl.DataFrame:
    given = values_of(prices)
    parts = []
    # A loop over groups; each group's prices x replicates is one matrix operation.
    for g, pair in enumerate(replicates):
        grid = (
            np.array(given, dtype=float)
            if given is not None
            else _default_prices(pair, inference["icer"][g], confidence)
        )
        if pair is None:
            probability = np.full(grid.size, np.nan)
        else:
            effect, spent = pair
            probability = np.mean(grid[:, None] * effect[None, :] - spent[None, :] > 0, axis=1)
        d_e, d_c = inference["delta_effect"][g], inference["delta_cost"][g]
        with np.errstate(all="ignore"):
            benefit = grid * d_e - d_c
            variance = (
                grid**2 * inference["var_effect"][g] - 2 * grid * inference["covariance"][g] + inference["var_cost"][g]
            )
            half = inference["critical"][g] * np.sqrt(np.maximum(variance, 0.0))
        head = summary.select(*keys)[[g] * grid.size]
        parts.append(
            head.with_columns(
                pl.lit(metric).alias("metric"),
                pl.lit(cost).alias("cost_metric"),
                pl.Series("price", grid),
                pl.Series("probability", probability, nan_to_null=True),
                pl.Series("net_benefit", benefit, nan_to_null=True),
                pl.Series("net_benefit_low", benefit - half, nan_to_null=True),
                pl.Series("net_benefit_high", benefit + half, nan_to_null=True),
            )
        )
    return pl.concat(parts).select(*by_columns, *ACCEPTABILITY_COLUMNS)


def _replicate_frame(
    summary: pl.DataFrame, replicates: list[tuple[Array, Array] | None], keys: list[str], by_columns: list[str]
) -> pl.DataFrame:
    parts = []
    for g, pair in enumerate(replicates):
        if pair is None:
            continue
        effect, spent = pair
        head = summary.select(*keys)[[g] * effect.size]
        parts.append(
            head.with_columns(
                pl.Series("replicate", np.arange(1, effect.size + 1), dtype=pl.Int64),
                pl.Series("delta_effect", effect),
                pl.Series("delta_cost", spent),
            )
        )
    if not parts:
        schema = {**summary.select(by_columns).schema, "replicate": pl.Int64, "delta_effect": pl.Float64,
                  "delta_cost": pl.Float64}  # fmt: skip
        return pl.DataFrame(schema=schema)
    return pl.concat(parts).select(*by_columns, *REPLICATE_COLUMNS)
