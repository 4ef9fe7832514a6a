r"""Power analysis of two-sided t tests: required n, minimum detectable effect, or power.

Notes
-----
Independent design (statsmodels ``TTestIndPower``): :math:`n_T` per treatment group,
:math:`n_C = \text{ratio}\cdot n_T`, effect :math:`d_s`, noncentrality
:math:`\lambda = d\sqrt{n_T n_C/(n_T+n_C)}`, df :math:`n_T+n_C-2`. Paired design
(``TTestPower``): :math:`n` pairs, effect :math:`d_z`, :math:`\lambda = d\sqrt n`, df
:math:`n-1`. Power :math:`= 1 - F_{t_{df}(\lambda)}(c) + F_{t_{df}(\lambda)}(-c)`,
:math:`c = t_{df,1-\alpha/2}` (one-sided alternatives use one tail).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Collection

import numpy as np
import polars as pl
from statsmodels.stats.power import TTestIndPower, TTestPower

from mas_eval.constraints import NONE, Interval, Options, validate_params
from mas_eval.errors import InvalidParameterError, MasEvalError
from mas_eval.stats._common import PROBABILITY, one_or_list, solved_for, values_of
from mas_eval.stats.options import Alternative, Design

__all__ = ["MAX_N", "MAX_RATIO", "power"]

#: Largest ``n`` given or solved for (runs or cases): far beyond any experiment, and within what the
#: whole-number columns hold once multiplied by ``ratio`` (at most :data:`MAX_RATIO`).
MAX_N = 1e15
#: Largest ``ratio`` of control to treatment runs.
MAX_RATIO = 1_000


@validate_params(
    {
        "effect_size": [*one_or_list(Interval(float)), NONE],
        "n": [*one_or_list(Interval(float, 2, MAX_N)), NONE],
        "power": [*one_or_list(PROBABILITY), NONE],
        "alpha": [PROBABILITY],
        "design": [Options.of(Design)],
        "ratio": [Interval(float, 0, MAX_RATIO, closed="right")],
        "alternative": [Options.of(Alternative)],
    }
)
def power(
    effect_size: float | Collection[float] | None = None,
    n: float | Collection[float] | None = None,
    power: float | Collection[float] | None = None,
    *,
    alpha: float = 0.05,
    design: Design = "independent",
    ratio: float = 1.0,
    alternative: Alternative = "two-sided",
) -> pl.DataFrame:
    """Solve a t test's power equation for whichever of effect size, n and power is left out.

    * ``effect_size`` and ``power`` given: the required ``n`` (per group, or pairs).
    * ``n`` and ``power`` given: the minimum detectable effect (Cohen's d_s, or d_z paired).
    * ``effect_size`` and ``n`` given: the power.

    Each argument may be a list; the result has one row per combination.

    Parameters
    ----------
    effect_size : float or list of float, optional
        Cohen's d (``d_s`` independent, ``d_z`` paired); positive for two-sided tests, non-zero
        when ``n`` is solved for.
    n : float or list of float, optional
        Treatment group size (independent; control has ``ratio * n``) or number of pairs; from
        2 to :data:`MAX_N` (1e15).
    power : float or list of float, optional
        Target power, in (alpha, 1).
    alpha : float
        Significance level, in (0, 1).
    design : {"independent", "paired"}
        ``"independent"`` (two groups) or ``"paired"`` (differences of pairs).
    ratio : float
        ``n_control / n_treatment`` (independent only), positive and at most :data:`MAX_RATIO` (1000).
    alternative : {"two-sided", "larger", "smaller"}
        ``"two-sided"`` (default), ``"larger"`` or ``"smaller"``.

    Returns
    -------
    polars.DataFrame
        ================== =====================================================
        design             ``independent`` or ``paired``
        alternative        as given
        alpha              as given
        solved_for         ``n``, ``effect_size`` or ``power``
        effect_size        d (given, or the minimum detectable effect)
        n                  treatment n or pairs (given, or the exact solution)
        n_required         ``ceil(n)``: the whole number of runs/cases to plan for
        n_control          ``ratio * n`` (independent), null when paired
        n_control_required ``ceil(ratio * n_required)`` (independent), null when paired
        power              given, or the achieved power
        ================== =====================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above, not exactly two of ``effect_size``, ``n`` and
        ``power``, a target power not above ``alpha``, or ``effect_size=0`` when solving for ``n``.
    MasEvalError
        The power equation has no solution for a combination, or the ``n`` solved for is over
        :data:`MAX_N` (the effect is too small to detect in any experiment).

    Examples
    --------
    Runs per system to detect d = 0.5 with 80% power at alpha 0.05 (64 per group):

    >>> power(effect_size=0.5, power=0.8)["n_required"].item()
    64
    >>> round(power(n=64, power=0.8)["effect_size"].item(), 4)
    0.4991
    >>> round(power(effect_size=0.5, n=20, design="paired")["power"].item(), 4)
    0.5645
    """
    given = {"effect_size": values_of(effect_size), "n": values_of(n), "power": values_of(power)}
    solved = solved_for("power", given, alpha)
    if solved == "n" and 0.0 in (given["effect_size"] or []):
        msg = "power: effect_size=0 cannot be detected with any n; give a non-zero effect"
        raise InvalidParameterError(msg)

    engine = TTestIndPower() if design == "independent" else TTestPower()
    names = ["effect_size", "n", "power"]
    grids = [given[name] or [None] for name in names]
    records = []
    for effect, size, target in itertools.product(*grids):
        kwargs = {"effect_size": effect, "nobs1" if design == "independent" else "nobs": size, "power": target}
        if design == "independent":
            kwargs["ratio"] = ratio
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = float(np.squeeze(engine.solve_power(alpha=alpha, alternative=alternative, **kwargs)))
        except (ArithmeticError, TypeError, ValueError):
            # statsmodels' root finder fails outright in some corners (a ratio far from 1, extreme effects).
            value = math.nan
        if not math.isfinite(value) or (solved == "n" and value > MAX_N):
            why = f"n would be {value:.3g}, beyond any experiment (at most {MAX_N:g})" if math.isfinite(value) else ""
            msg = f"no solution for {solved} with effect_size={effect}, n={size}, power={target} ({design})"
            raise MasEvalError(f"{msg}: {why}" if why else msg)
        row = {"effect_size": effect, "n": size, "power": target}
        row[solved] = value
        records.append(row)
    out = pl.DataFrame(records, schema={"effect_size": pl.Float64, "n": pl.Float64, "power": pl.Float64})
    ceil_n = (pl.col("n") - 1e-9).ceil().cast(pl.Int64)
    paired = design == "paired"
    return out.select(
        design=pl.lit(design),
        alternative=pl.lit(alternative),
        alpha=pl.lit(float(alpha)),
        solved_for=pl.lit(solved),
        effect_size=pl.col("effect_size"),
        n=pl.col("n"),
        n_required=ceil_n,
        n_control=pl.lit(None, pl.Float64) if paired else pl.col("n") * ratio,
        n_control_required=pl.lit(None, pl.Int64) if paired else (ceil_n * ratio - 1e-9).ceil().cast(pl.Int64),
        power=pl.col("power"),
    )
