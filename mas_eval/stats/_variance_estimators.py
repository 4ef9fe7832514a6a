r"""The estimators behind variance components: Satterthwaite's intervals, the ICCs' intervals and the REML fit.

Formulas and sources in :mod:`~mas_eval.stats.variance` (Notes: Intervals, REML); only ``stats/`` uses
this module, through :func:`~mas_eval.stats.variance.variance_components`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from mas_eval.stats._components import Array

_COMPONENTS = ("case", "epoch", "judge", "residual")


def satterthwaite(
    coefficients: Sequence[Array], mean_squares: Sequence[Array], dofs: Sequence[Array], confidence: float
) -> tuple[Array, Array, Array, Array]:
    r"""``(estimate, dof, low, high)`` of :math:`\sum_k c_k MS_k` with Satterthwaite's degrees of freedom.

    NaN limits where the estimate is not positive (its interval is not defined).

    >>> est, dof, low, high = satterthwaite([np.array([0.25]), np.array([-0.25])], [np.array([11.24]),
    ...     np.array([6.26])], [np.array([5.0]), np.array([18.0])], 0.95)
    >>> round(float(est[0]), 3), round(float(dof[0]), 2), round(float(low[0]), 3), round(float(high[0]), 2)
    (1.245, 0.9, 0.237, 2585.51)
    """
    terms = [c * m for c, m in zip(coefficients, mean_squares, strict=True)]
    estimate = sum(terms)
    with np.errstate(all="ignore"):
        denominator = sum(t**2 / d for t, d in zip(terms, dofs, strict=True))
        dof = np.where(estimate > 0, estimate**2 / denominator, np.nan)
        tail = (1.0 - confidence) / 2.0
        ok = np.isfinite(dof) & (dof > 0)
        safe = np.where(ok, dof, 1.0)
        low = np.where(ok, safe * estimate / stats.chi2.ppf(1.0 - tail, safe), np.nan)
        high = np.where(ok, safe * estimate / stats.chi2.ppf(tail, safe), np.nan)
    return np.asarray(estimate, dtype=float), dof, low, high


def icc_interval(f: Array, df1: Array, df2: Array, n0: Array, confidence: float) -> tuple[Array, Array]:
    r"""Return the exact F-based interval of the one-way ICC (Shrout & Fleiss 1979, ICC(1,1)), elementwise.

    >>> low, high = icc_interval(np.array([11.24 / 6.26]), np.array([5.0]), np.array([18.0]), np.array([4.0]), 0.95)
    >>> round(float(low[0]), 3), round(float(high[0]), 3)
    (-0.133, 0.723)
    """
    tail = (1.0 - confidence) / 2.0
    with np.errstate(all="ignore"):
        f_low = f / stats.f.ppf(1.0 - tail, df1, df2)
        f_high = f * stats.f.ppf(1.0 - tail, df2, df1)
        return (f_low - 1.0) / (f_low + n0 - 1.0), (f_high - 1.0) / (f_high + n0 - 1.0)


def agreement_icc(
    msr: Array, msc: Array, mse: Array, n: Array, k: Array, confidence: float
) -> tuple[Array, Array, Array]:
    r"""Shrout & Fleiss's ICC(2,1) of ``n`` targets by ``k`` judges, with McGraw & Wong's (1996) interval.

    :math:`\hat\rho = (MS_R - MS_E)/(MS_R + (k-1)MS_E + k(MS_C - MS_E)/n)`; the limits use
    :math:`F^* = F_{1-\alpha/2}(n-1, \nu)` and :math:`F_* = F_{1-\alpha/2}(\nu, n-1)` with
    :math:`\nu = (a MS_C + b MS_E)^2 / ((a MS_C)^2/(k-1) + (b MS_E)^2/((n-1)(k-1)))`,
    :math:`a = k\hat\rho/(n(1-\hat\rho))`, :math:`b = 1 + k\hat\rho(n-1)/(n(1-\hat\rho))`.

    >>> icc, low, high = agreement_icc(np.array([11.24167]), np.array([32.48611]), np.array([1.019444]),
    ...                                np.array([6.0]), np.array([4.0]), 0.95)
    >>> round(float(icc[0]), 3), round(float(low[0]), 3), round(float(high[0]), 3)
    (0.29, 0.019, 0.761)
    """
    tail = (1.0 - confidence) / 2.0
    with np.errstate(all="ignore"):
        icc = (msr - mse) / (msr + (k - 1.0) * mse + k * (msc - mse) / n)
        a = k * icc / (n * (1.0 - icc))
        b = 1.0 + k * icc * (n - 1.0) / (n * (1.0 - icc))
        nu = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1.0) + (b * mse) ** 2 / ((n - 1.0) * (k - 1.0)))
        f_star = stats.f.ppf(1.0 - tail, n - 1.0, nu)
        f_low_star = stats.f.ppf(1.0 - tail, nu, n - 1.0)
        spread = k * msc + (k * n - k - n) * mse
        low = n * (msr - f_star * mse) / (f_star * spread + n * msr)
        high = n * (f_low_star * msr - mse) / (spread + n * f_low_star * msr)
    return icc, low, high


def _reml(obs: pl.DataFrame, case: str, run: list[str], judge: str | None, with_epoch: bool) -> dict[str, float] | str:
    """REML components of one group (statsmodels ``MixedLM``), or why there are none."""
    from statsmodels.regression.mixed_linear_model import MixedLM, VCSpec
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    y = obs["_y"].to_numpy().astype(float)
    size = y.size
    codes = {
        "case": obs[case].rank("dense").to_numpy() - 1,
        **({"epoch": obs.select(pl.struct(run).rank("dense")).to_series().to_numpy() - 1} if with_epoch else {}),
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if judge is None:
                result = MixedLM(y, np.ones((size, 1)), groups=codes["case"]).fit(reml=True)
                found = {"case": float(np.asarray(result.cov_re).ravel()[0]), "epoch": float(result.scale)}
            else:
                codes["judge"] = obs[judge].rank("dense").to_numpy() - 1
                names = list(codes)
                mats = [[(codes[name][:, None] == np.arange(codes[name].max() + 1)).astype(float)] for name in names]
                columns = [[[str(i) for i in range(m[0].shape[1])]] for m in mats]
                model = MixedLM(
                    y, np.ones((size, 1)), groups=np.zeros(size), exog_re=np.zeros((size, 0)),
                    exog_vc=VCSpec(names, columns, mats),
                )  # fmt: skip
                result = model.fit(reml=True)
                found = {**dict(zip(names, map(float, result.vcomp), strict=True)), "residual": float(result.scale)}
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError) as exc:
            return f"REML fit failed ({type(exc).__name__}: {exc})"
    if not getattr(result, "converged", False):
        problems = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
        return "REML fit did not converge" + (f" ({problems[0]})" if problems else "")
    return found


def reml_rows(
    rows: pl.DataFrame, data: pl.DataFrame, keys: list[str], case: str, run: list[str], judge: str | None
) -> pl.DataFrame:
    """Return the ANOVA rows with REML's points in place of the estimates, and no intervals."""
    fitted: list[dict[str, Any]] = []
    parts = data.partition_by(keys, as_dict=True, maintain_order=True)
    # One MixedLM fit per group, as statsmodels fits one model at a time; never one per run.
    for values, part in parts.items():
        group = rows.filter(pl.all_horizontal(pl.col(k).eq_missing(v) for k, v in zip(keys, values, strict=True)))
        with_epoch = bool(group["runs"][0] > group["cases"][0])
        found = _reml(part, case, run, judge, with_epoch)
        estimates: dict[str, float | None]
        if isinstance(found, str):
            estimates, reason = {}, found
        else:
            estimates, reason = dict(found), None
        epochs = float(group["epochs"][0])
        c, e = estimates.get("case"), estimates.get("epoch")
        r = estimates.get("residual", 0.0)
        judges = float(group["judges"][0])
        if c is not None and e is not None:
            icc = c / (c + e + (r or 0.0) / judges) if judge else c / (c + e)
            estimates["icc"], estimates["design_effect"] = icc, 1.0 + (epochs - 1.0) * icc
        if judge and c is not None and "judge" in estimates:
            between = c + (e or 0.0)
            estimates["judge_icc"] = between / (between + estimates["judge"] + (r or 0.0))
        components = [estimates.get(name) for name in _COMPONENTS if name in estimates]
        total = sum(v for v in components if v is not None)
        for row in group.iter_rows(named=True):
            name = row["quantity"]
            value = estimates.get(name)
            kept = [n for n in (row["note"] or "").split("; ") if n and not n.startswith("negative ANOVA")]
            said = [*kept, reason or "REML: points only; method='anova' gives intervals"]
            fitted.append({
                **row, "estimate": value, "ci_low": None, "ci_high": None, "dof": None,
                "share": value / total if name in _COMPONENTS and value is not None and total > 0 else None,
                "note": "; ".join(said),
            })  # fmt: skip
    return pl.DataFrame(fitted, schema=rows.schema)
