r"""Linear mixed model ``y ~ 1 + treatment + (1 | case)`` for designs with repeated runs per case.

Notes
-----
:math:`y_{ij} = \beta_0 + \beta_1 T_{ij} + u_j + \varepsilon_{ij}`, :math:`u_j \sim N(0, \tau^2)`,
:math:`\varepsilon_{ij} \sim N(0, \sigma^2)`, fitted by REML with statsmodels' ``MixedLM``.
The difference is :math:`\hat\beta_1` with its model-based standard error and a normal (z)
reference. A fit that does not converge, or is singular (:math:`\hat\tau^2 \approx 0`, the
estimate on the boundary, where the model reduces to OLS), is reported as a reason string, and
the row falls back to the ordinary test; nothing here raises.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from mas_eval.stats._common import ENGINE
from mas_eval.stats._rows import Patch
from mas_eval.stats.designs import independent_rows, pooled_sd
from mas_eval.stats.effects import hedges_correction, observed_power
from mas_eval.stats.summaries import Summary, flat, metric
from mas_eval.stats.ttests import t_inference

__all__ = ["SINGULAR_RATIO", "fit_random_intercept", "mixed_step"]

#: A random-intercept variance below this share of the residual variance is a singular fit.
SINGULAR_RATIO = 1e-6


def fit_random_intercept(
    y: NDArray[np.float64], treated: NDArray[np.float64], case: NDArray[np.generic]
) -> tuple[float, float, float] | str:
    """``(estimate, standard_error, n_cases)`` of the treatment effect, or why there is none.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> case = np.repeat(np.arange(30), 4)
    >>> treated = np.tile([0.0, 0.0, 1.0, 1.0], 30)
    >>> y = 0.5 * treated + rng.normal(size=30)[case] + rng.normal(scale=0.5, size=120)
    >>> estimate, se, n_cases = fit_random_intercept(y, treated, case)
    >>> bool(abs(estimate - 0.5) < 3 * se), n_cases
    (True, 30.0)
    >>> fit_random_intercept(y[:3], treated[:3], case[:3])
    'fewer than 2 cases'
    """
    # Imported here: statsmodels (and the pandas it loads) takes longer to import than a
    # comparison of a million runs takes to compute, and only this method needs it.
    from statsmodels.regression.mixed_linear_model import MixedLM
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    n_cases = np.unique(case).size
    if n_cases < 2:
        return "fewer than 2 cases"
    exog = np.column_stack([np.ones_like(y), treated])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = MixedLM(y, exog, groups=case).fit(reml=True)
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError) as exc:
            return f"fit failed: {type(exc).__name__}: {exc}"
    convergence = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    if not getattr(result, "converged", False):
        return "did not converge" + (f": {convergence[0]}" if convergence else "")
    tau2 = float(np.asarray(result.cov_re).ravel()[0])
    boundary = any("boundary" in message for message in convergence)
    if boundary or not np.isfinite(tau2) or tau2 <= SINGULAR_RATIO * float(result.scale):
        return "singular fit: the random-intercept variance is (near) 0, on the boundary"
    # "Retrying MixedLM optimization with lbfgs" only says the first optimiser gave up; the fit converged.
    serious = [message for message in convergence if not message.startswith("Retrying")]
    if serious:
        return f"convergence warning: {serious[0]}"
    estimate, se = float(result.fe_params[1]), float(result.bse_fe[1])
    if not (np.isfinite(estimate) and np.isfinite(se) and se > 0):
        return "non-finite estimate or standard error"
    return estimate, se, float(n_cases)


def mixed_step(
    runs: pl.LazyFrame,
    summary: Summary,
    *,
    keys: Sequence[str],
    system: str,
    names: tuple[str, str],
    case: str,
    fallback: str,
    alpha: float,
    confidence: float,
) -> Patch:
    """Whole rows of run-level descriptives and the mixed model's inference, where a fit works.

    ``summary`` is the independent (run-level) summary, aligned with the table's groups. The rows
    whose fit worked are replaced whole (``test`` ``"mixed"``, no earlier warning); the others
    keep the design's test ``fallback`` and get, first, a warning saying why. Cohen's d is the
    fixed effect over the pooled SD; its CI is the effect's CI over the pooled SD.
    """
    stats = flat(summary.arrays)
    m = next(iter(summary.arrays.values())).shape[1]
    rows = independent_rows(
        n_t=stats["n_t"], mean_t=stats["mean_t"], var_t=stats["var_t"],
        n_c=stats["n_c"], mean_c=stats["mean_c"], var_c=stats["var_c"],
        test="welch", alpha=alpha, confidence=confidence, names=names,
    )  # fmt: skip
    columns = [*keys, system, pl.col(case).cast(pl.String), *(metric(i) for i in range(m))]
    parts = runs.select(columns).collect(engine=ENGINE).partition_by(list(keys), as_dict=True, maintain_order=True)
    fitted = np.zeros(rows.size, dtype=bool)
    reasons: dict[int, str] = {}
    estimate, se, n_cases = (np.full(rows.size, np.nan) for _ in range(3))
    # One MixedLM fit per (group, metric) row, as statsmodels fits one model at a time; not per run.
    for g, key in enumerate(summary.groups.iter_rows()):
        part = parts.get(key)
        for i in range(m):
            r = g * m + i
            if part is None or not rows.ok[r]:
                reasons[r] = "too few values for a mixed model"
                continue
            data = part.select(system, case, y=metric(i)).drop_nulls("y")
            treated = (data[system] == names[0]).to_numpy().astype(float)
            fit = fit_random_intercept(data["y"].to_numpy().astype(float), treated, data[case].to_numpy())
            if isinstance(fit, str):
                reasons[r] = fit
            else:
                fitted[r] = True
                estimate[r], se[r], n_cases[r] = fit
    sd = pooled_sd(stats["n_t"], stats["var_t"], stats["n_c"], stats["var_c"])
    inference = t_inference(estimate, se, np.inf, confidence)
    with np.errstate(all="ignore"):
        model = {
            "test": "mixed",
            "n_clusters": n_cases,
            "difference": estimate,
            "dof": np.nan,
            **inference,
            "ci_method": "mixed",
            "standard_error": se,
            "improvement_percentage": np.where(stats["mean_c"] == 0.0, np.nan, 100.0 * estimate / stats["mean_c"]),
            "cohens_d": estimate / sd,
            "hedges_g": hedges_correction(stats["n_t"] + stats["n_c"] - 2.0) * estimate / sd,
            "d_ci_low": inference["ci_low"] / sd,
            "d_ci_high": inference["ci_high"] / sd,
        }
    model["power"] = observed_power(inference["statistic"], np.inf, alpha)
    # The fitted rows are the run-level rows (descriptives and their notes) with the model's inference.
    columns = {**rows.cols, **model}
    return Patch(
        columns=columns,
        where=fitted,
        warnings={r: rows.warnings[r] for r in np.flatnonzero(fitted) if rows.warnings[r]},
        invalid=fitted & ~rows.ok,
        first_warnings={
            r: [f"mixed model not used ({reason}); fell back to {fallback}"] for r, reason in reasons.items()
        },
        whole_rows=True,
    )
