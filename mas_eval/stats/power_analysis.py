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
from collections.abc import Iterable
from typing import Literal

import polars as pl
from statsmodels.stats.power import TTestIndPower, TTestPower

from mas_eval.errors import MasEvalError
from mas_eval.stats._common import check_probability

__all__ = ["power"]

DESIGNS = ("independent", "paired")
ALTERNATIVES = ("two-sided", "larger", "smaller")


def _values(value: float | Iterable[float] | None, name: str) -> list[float] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, int | float) else list(value)
    if not items or not all(isinstance(v, int | float) and math.isfinite(v) for v in items):
        msg = f"{name} must be a finite number or a non-empty list of them, got {value!r}"
        raise MasEvalError(msg)
    return [float(v) for v in items]


def power(
    effect_size: float | Iterable[float] | None = None,
    n: float | Iterable[float] | None = None,
    power: float | Iterable[float] | None = None,
    *,
    alpha: float = 0.05,
    design: Literal["independent", "paired"] = "independent",
    ratio: float = 1.0,
    alternative: Literal["two-sided", "larger", "smaller"] = "two-sided",
) -> pl.DataFrame:
    """Solve a t test's power equation for whichever of effect size, n and power is left out.

    * ``effect_size`` and ``power`` given: the required ``n`` (per group, or pairs).
    * ``n`` and ``power`` given: the minimum detectable effect (Cohen's d_s, or d_z paired).
    * ``effect_size`` and ``n`` given: the power.

    Each argument may be a list; the result has one row per combination.

    Parameters
    ----------
    effect_size
        Cohen's d (``d_s`` independent, ``d_z`` paired); positive for two-sided tests.
    n
        Treatment group size (independent; control has ``ratio * n``) or number of pairs.
    power
        Target power, in (alpha, 1).
    alpha
        Significance level.
    design
        ``"independent"`` (two groups) or ``"paired"`` (differences of pairs).
    ratio
        ``n_control / n_treatment`` (independent only).
    alternative
        ``"two-sided"`` (default), ``"larger"`` or ``"smaller"``.

    Returns
    -------
    polars.DataFrame
        ============== =====================================================
        design         ``independent`` or ``paired``
        alternative    as given
        alpha          as given
        solved_for     ``n``, ``effect_size`` or ``power``
        effect_size    d (given, or the minimum detectable effect)
        n              treatment n or pairs (given, or the exact solution)
        n_required     ``ceil(n)``: the whole number of runs/cases to plan for
        n_control      ``ratio * n`` (independent), null when paired
        n_control_required ``ceil(ratio * n_required)`` (independent), null when paired
        power          given, or the achieved power
        ============== =====================================================

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
    check_probability(alpha, "alpha")
    if design not in DESIGNS:
        msg = f"design={design!r} is not one of {', '.join(DESIGNS)}"
        raise MasEvalError(msg)
    if alternative not in ALTERNATIVES:
        msg = f"alternative={alternative!r} is not one of {', '.join(ALTERNATIVES)}"
        raise MasEvalError(msg)
    if not (isinstance(ratio, int | float) and ratio > 0):
        msg = f"ratio={ratio!r} must be a positive number (n_control / n_treatment)"
        raise MasEvalError(msg)
    given = {"effect_size": _values(effect_size, "effect_size"), "n": _values(n, "n"), "power": _values(power, "power")}
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        msg = f"give exactly two of effect_size, n and power (the third is solved for); missing: {missing or 'none'}"
        raise MasEvalError(msg)
    solved = missing[0]
    for p in given["power"] or []:
        if not alpha < p < 1:
            msg = f"power={p} must lie between alpha ({alpha}) and 1"
            raise MasEvalError(msg)
    for size in given["n"] or []:
        if size < 2:
            msg = f"n={size} must be at least 2"
            raise MasEvalError(msg)
    for d in given["effect_size"] or []:
        if d == 0 and solved == "n":
            msg = "effect_size=0 cannot be detected with any n; give a non-zero effect"
            raise MasEvalError(msg)

    engine = TTestIndPower() if design == "independent" else TTestPower()
    names = ["effect_size", "n", "power"]
    grids = [given[name] or [None] for name in names]
    records = []
    for effect, size, target in itertools.product(*grids):
        kwargs = {"effect_size": effect, "nobs1" if design == "independent" else "nobs": size, "power": target}
        if design == "independent":
            kwargs["ratio"] = ratio
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(engine.solve_power(alpha=alpha, alternative=alternative, **kwargs))
        if not math.isfinite(value):
            msg = f"no solution for {solved} with effect_size={effect}, n={size}, power={target} ({design})"
            raise MasEvalError(msg)
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
