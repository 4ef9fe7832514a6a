r"""Planning a comparison from variance components: the cases × epochs that reach a power at least cost.

:func:`plan` searches the grid of designs for the cheapest one that detects a difference ``mde``
with the wanted power; :func:`design_power` gives the power of chosen designs. Both read the
components that :func:`~mas_eval.stats.variance.variance_components` estimates (its ``case``,
``epoch`` and ``residual`` rows); the standard error of a difference of means under a design of
:math:`a` cases × :math:`m` epochs is in :func:`plan`'s Notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from mas_eval.constraints import FRAME, NONE, Boolean, Interval, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.stats._common import (
    ENGINE,
    GROUP,
    PROBABILITY,
    as_lazy,
    check_columns,
    group_label,
)
from mas_eval.stats._components import COMPONENT_COLUMNS, Array

__all__ = ["MAX_CASES", "MAX_EPOCHS", "PLAN_COLUMNS", "design_power", "plan"]

#: The columns :func:`plan` returns after the ``by`` columns.
PLAN_COLUMNS = ("epochs", "cases", "runs", "se", "power", "cost", "reaches", "chosen", "note")

#: Largest number of cases :func:`plan` considers.
MAX_CASES = 10_000_000
#: Largest number of epochs :func:`plan` considers.
MAX_EPOCHS = 1_000


def _two_sided_power(se: Array, dof: Array, mde: float, alpha: float) -> Array:
    r"""Power of the two-sided t test of a difference ``mde`` with standard error ``se``: noncentral t."""
    with np.errstate(all="ignore"):
        crit = stats.t.ppf(1.0 - alpha / 2.0, dof)
        ncp = mde / se
        upper, lower = stats.nct.sf(crit, dof, ncp), stats.nct.cdf(-crit, dof, ncp)
        # SciPy's noncentral t returns NaN far in a tail (large df and ncp), where the normal is exact enough.
        upper = np.where(np.isnan(upper), stats.norm.sf(crit - ncp), upper)
        lower = np.where(np.isnan(lower), stats.norm.cdf(-crit - ncp), lower)
        return upper + lower


def _design_inputs(components: Any, paired: bool, where: str) -> tuple[pl.DataFrame, list[str]]:
    """Per group of ``components``: ``case``, ``epoch`` and ``residual`` variances (negatives as 0) and ``judges``."""
    frame = as_lazy(components).collect(engine=ENGINE)
    check_columns(frame.schema, ["quantity", "estimate", "judges", "difference"], f"{where}: components",
                  fix="pass the output of variance_components")  # fmt: skip
    groups = [c for c in frame.columns if c not in COMPONENT_COLUMNS]
    keys = groups or [GROUP]
    if not groups:
        frame = frame.with_columns(**{GROUP: pl.lit(0)})
    is_paired = frame["difference"].is_not_null().any()
    if paired and not is_paired:
        msg = (
            f"{where}: paired=True needs the components of the paired difference, "
            "variance_components(..., paired=(treatment, control)); these are one system's scores: pass paired=False"
        )
        raise InvalidParameterError(msg)
    if not paired and is_paired:
        msg = f"{where}: paired=False needs one system's components; these are of a paired difference: pass paired=True"
        raise InvalidParameterError(msg)
    value = pl.col("estimate").clip(lower_bound=0.0)
    wide = frame.group_by(keys, maintain_order=True).agg(
        **{name: value.filter(pl.col("quantity") == name).first() for name in ("case", "epoch")},
        residual=value.filter(pl.col("quantity") == "residual").first().fill_null(0.0),
        judges=pl.col("judges").first().cast(pl.Float64),
    )
    missing = wide.filter(pl.col("case").is_null() | pl.col("epoch").is_null())
    if missing.height:
        shown = ", ".join(group_label(keys, row) for row in missing.select(keys).iter_rows())
        msg = (
            f"{where}: no case or epoch variance in {shown} (one epoch per case, or a failed fit); "
            "a design needs both: estimate them from runs with repeated epochs"
        )
        raise DataError(msg)
    return wide.sort(keys, nulls_last=True), keys


def _standard_error(wide: pl.DataFrame, cases: Array, epochs: Array, paired: bool) -> tuple[Array, Array]:
    r"""SE of the difference of means and its dof, for each group (rows) × design (columns)."""
    c = wide["case"].to_numpy()[:, None]
    within = (wide["epoch"].to_numpy() + wide["residual"].to_numpy() / wide["judges"].to_numpy())[:, None]
    per_case = c + within / epochs
    if paired:
        return np.sqrt(per_case / cases), cases - 1.0
    return np.sqrt(2.0 * per_case / cases), 2.0 * cases - 2.0


@validate_params(
    {
        "components": [FRAME],
        "mde": [Interval(float, 0, None, closed="neither")],
        "power": [PROBABILITY],
        "alpha": [PROBABILITY],
        "cost_per_run": [Interval(float, 0, None, closed="neither")],
        "cost_per_case": [Interval(float, 0, None)],
        "max_epochs": [Interval(int, 1, MAX_EPOCHS)],
        "max_cases": [Interval(int, 2, MAX_CASES)],
        "paired": [Boolean()],
    }
)
def plan(
    components: Any,
    *,
    mde: float,
    power: float = 0.8,
    alpha: float = 0.05,
    cost_per_run: float = 1.0,
    cost_per_case: float = 0.0,
    max_epochs: int = 10,
    max_cases: int = 100_000,
    paired: bool = True,
) -> pl.DataFrame:
    r"""Plan the cases × epochs that reach a power at least cost, given the variance components.

    Parameters
    ----------
    components : polars.DataFrame
        The output of :func:`variance_components` (``paired=(treatment, control)`` for a paired
        design); each ``by`` group is planned on its own.
    mde : float
        The smallest difference of means (treatment − control) worth detecting, > 0, in the
        score's units.
    power : float
        The power to reach, in (0, 1).
    alpha : float
        Two-sided significance level, in (0, 1).
    cost_per_run : float
        What one run (one system, one case, one epoch, scored by every judge) costs, > 0.
    cost_per_case : float
        What one more case costs whatever its epochs (writing and checking it), >= 0.
    max_epochs : int
        The most epochs per case considered (1 to 1,000).
    max_cases : int
        The most cases there are (a benchmark's size), 2 to 10,000,000.
    paired : bool
        Both systems run the same cases (a paired t test on the case means' differences), or
        different cases (a two-sample t test).

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, epochs from 1 to ``max_epochs``), the ``by`` columns then

        ======== ===================================================================
        epochs   epochs per case and system, :math:`m`
        cases    the fewest cases that reach ``power`` with m epochs (``max_cases``
                 when none does)
        runs     runs of both systems, :math:`2nm`
        se       standard error of the difference of means
        power    the power of that design
        cost     :math:`2nm\cdot\text{cost\_per\_run} + n'\cdot\text{cost\_per\_case}`
                 (:math:`n' = n` paired, :math:`2n` otherwise)
        reaches  whether the design reaches ``power``
        chosen   the cheapest design that reaches it (fewer runs, then fewer epochs,
                 among equal costs)
        note     why no design is chosen
        ======== ===================================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above; ``paired`` not matching how the components were
        estimated.
    SchemaError
        ``components`` lacks the columns of :func:`variance_components`.
    DataError
        A group without a case or epoch variance.

    Notes
    -----
    With :math:`n` cases of :math:`m` epochs, a case's mean score has variance
    :math:`v(m) = \sigma^2_\text{case} + (\sigma^2_\text{epoch} + \sigma^2_\text{residual}/L)/m`
    (the judges' own offsets are common to both systems and cancel). Paired, the components
    are those of the difference and :math:`SE = \sqrt{v(m)/n}` on :math:`n-1` degrees of
    freedom; unpaired, both systems share the components and :math:`SE = \sqrt{2v(m)/n}` on
    :math:`2n-2`. Power is the two-sided t test's, from the noncentral t with noncentrality
    :math:`\text{mde}/SE`. Negative ANOVA components count as 0.

    Since :math:`m\,v(m) = m\sigma^2_\text{case} + \sigma^2_\text{within}` grows with
    :math:`m`, without ``cost_per_case`` the cheapest design has one epoch whenever the cases
    vary; epochs pay when cases are few (``max_cases``) or dear: the optimum is near
    :math:`m^* = \sqrt{(\text{cost\_per\_case}/\text{cost\_per\_run})\,
    \sigma^2_\text{within}/\sigma^2_\text{case}}` (Cochran 1977, *Sampling Techniques*, §10.6;
    Miller 2024, §5).

    Examples
    --------
    A benchmark of 150 cases: epochs must make up for the cases it lacks.

    >>> import polars as pl
    >>> components = pl.DataFrame({"quantity": ["case", "epoch"], "estimate": [0.02, 0.2], "judges": 1,
    ...                            "difference": "mas - single"})
    >>> table = plan(components, mde=0.06, max_cases=150, max_epochs=6)
    >>> with pl.Config(float_precision=3, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
    ...     print(table.drop("note"))
    ┌────────┬───────┬──────┬───────┬───────┬──────────┬─────────┬────────┐
    │ epochs ┆ cases ┆ runs ┆ se    ┆ power ┆ cost     ┆ reaches ┆ chosen │
    ╞════════╪═══════╪══════╪═══════╪═══════╪══════════╪═════════╪════════╡
    │ 1      ┆ 150   ┆ 300  ┆ 0.038 ┆ 0.344 ┆ 300.000  ┆ false   ┆ false  │
    │ 2      ┆ 150   ┆ 600  ┆ 0.028 ┆ 0.559 ┆ 600.000  ┆ false   ┆ false  │
    │ 3      ┆ 150   ┆ 900  ┆ 0.024 ┆ 0.698 ┆ 900.000  ┆ false   ┆ false  │
    │ 4      ┆ 150   ┆ 1200 ┆ 0.022 ┆ 0.788 ┆ 1200.000 ┆ false   ┆ false  │
    │ 5      ┆ 133   ┆ 1330 ┆ 0.021 ┆ 0.801 ┆ 1330.000 ┆ true    ┆ true   │
    │ 6      ┆ 119   ┆ 1428 ┆ 0.021 ┆ 0.803 ┆ 1428.000 ┆ true    ┆ false  │
    └────────┴───────┴──────┴───────┴───────┴──────────┴─────────┴────────┘
    """
    where = "plan"
    wide, keys = _design_inputs(components, paired, where)
    epochs = np.arange(1, max_epochs + 1, dtype=float)[None, :]
    groups = wide.height
    # The fewest cases per (group, epochs) by bisection over all of them at once: power grows with n.
    low = np.full((groups, max_epochs), 2.0)
    high = np.full((groups, max_epochs), float(max_cases))

    def reached(n: Array) -> Array:
        se, dof = _standard_error(wide, n, epochs, paired)
        return _two_sided_power(se, dof, mde, alpha) >= power

    ok_high = reached(high)
    ok_low = reached(low)
    while np.any((high - low > 1) & ok_high & ~ok_low):
        middle = np.floor((low + high) / 2.0)
        ok = reached(middle)
        high = np.where(ok, middle, high)
        low = np.where(ok, low, middle)
    cases = np.where(ok_low, low, high)
    se, dof = _standard_error(wide, cases, epochs, paired)
    achieved = _two_sided_power(se, dof, mde, alpha)
    reaches = achieved >= power
    runs = 2.0 * cases * epochs
    cost = runs * cost_per_run + (1.0 if paired else 2.0) * cases * cost_per_case
    # The cheapest design that reaches the power; among equal costs fewer runs, then fewer epochs.
    ranked = np.where(reaches, cost, np.inf)
    order = np.lexsort((np.broadcast_to(epochs, ranked.shape), runs, ranked), axis=1)[:, 0]
    chosen = np.zeros_like(reaches)
    any_reach = reaches.any(axis=1)
    chosen[np.arange(groups)[any_reach], order[any_reach]] = True
    rows = []
    for g in range(groups):
        key = dict(zip(keys, wide.row(g)[: len(keys)], strict=True))
        note = None if any_reach[g] else (
            f"no design up to {max_cases:,} cases and {max_epochs} epochs reaches power {power:g}: "
            "raise max_cases or max_epochs, or accept a larger mde"
        )  # fmt: skip
        rows += [
            {
                **key, "epochs": int(epochs[0, j]), "cases": int(cases[g, j]), "runs": int(runs[g, j]),
                "se": float(se[g, j]), "power": float(achieved[g, j]), "cost": float(cost[g, j]),
                "reaches": bool(reaches[g, j]), "chosen": bool(chosen[g, j]), "note": note,
            }
            for j in range(max_epochs)
        ]  # fmt: skip
    schema = {**{k: wide.schema[k] for k in keys}, "epochs": pl.Int64, "cases": pl.Int64, "runs": pl.Int64,
              "se": pl.Float64, "power": pl.Float64, "cost": pl.Float64, "reaches": pl.Boolean,
              "chosen": pl.Boolean, "note": pl.String}  # fmt: skip
    out = pl.DataFrame(rows, schema=schema)
    return out.drop(GROUP) if keys == [GROUP] else out


def _counts(value: object) -> bool:
    if isinstance(value, bool | str | bytes):
        return False
    items = [value] if isinstance(value, int) else value
    try:
        items = list(items)  # type: ignore[call-overload]
    except TypeError:
        return False
    return bool(items) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in items)


#: Constraint of ``epochs`` and ``cases`` grids: an integer >= 1 or a non-empty list of them.
COUNTS = Predicate(_counts, "an integer >= 1 or a non-empty list of them")


@validate_params(
    {
        "components": [FRAME],
        "mde": [Interval(float, 0, None, closed="neither")],
        "alpha": [PROBABILITY],
        "epochs": [COUNTS],
        "cases": [COUNTS, NONE],
        "paired": [Boolean()],
    }
)
def design_power(
    components: Any,
    *,
    mde: float,
    alpha: float = 0.05,
    epochs: int | Sequence[int] = (1, 2, 4, 8),
    cases: int | Sequence[int] | None = None,
    paired: bool = True,
) -> pl.DataFrame:
    r"""Power over a grid of cases for several epoch counts: the curves :func:`mas_eval.plots.design_power` draws.

    Parameters
    ----------
    components : polars.DataFrame
        The output of :func:`variance_components`, as for :func:`plan`.
    mde, alpha, paired
        As for :func:`plan`.
    epochs : int or list of int
        The epoch counts, one curve each.
    cases : int or list of int, optional
        The case counts (each >= 2 is drawn); by default about 60 from 2 to twice the cases
        one epoch needs for 80 % power (at most 100,000).

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, epochs, cases): the ``by`` columns, ``epochs``, ``cases``,
        ``se`` and ``power`` (as :func:`plan` computes them).

    Examples
    --------
    >>> import polars as pl
    >>> components = pl.DataFrame({"quantity": ["case", "epoch"], "estimate": [0.02, 0.2], "judges": 1,
    ...                            "difference": "mas - single"})
    >>> curves = design_power(components, mde=0.05, epochs=[1, 4], cases=[100, 400])
    >>> [(e, n, round(p, 3)) for e, n, p in curves.select("epochs", "cases", "power").iter_rows()]
    [(1, 100, 0.184), (1, 400, 0.566), (4, 100, 0.465), (4, 400, 0.965)]
    """
    wide, keys = _design_inputs(components, paired, "design_power")
    counts = sorted(set([epochs] if isinstance(epochs, int) else epochs))
    if cases is None:
        one = plan(components, mde=mde, alpha=alpha, max_epochs=1, paired=paired)
        top = int(min(100_000, max(10, 2 * int(one["cases"].max()))))
        grid = sorted({int(v) for v in np.unique(np.geomspace(2, top, 60).round())})
    else:
        grid = sorted({c for c in ([cases] if isinstance(cases, int) else cases) if c >= 2})
    n = np.tile(np.asarray(grid, dtype=float), len(counts))[None, :]
    m = np.repeat(np.asarray(counts, dtype=float), len(grid))[None, :]
    se, dof = _standard_error(wide, n, m, paired)
    achieved = _two_sided_power(se, dof, mde, alpha)
    out = pl.concat([
        pl.DataFrame({
            **{k: [wide[k][g]] * n.shape[1] for k in keys},
            "epochs": m[0].astype(np.int64), "cases": n[0].astype(np.int64), "se": se[g], "power": achieved[g],
        })
        for g in range(wide.height)
    ])  # fmt: skip
    return out.drop(GROUP) if keys == [GROUP] else out
