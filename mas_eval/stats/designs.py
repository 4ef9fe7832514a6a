r"""The base rows of the two designs from group summaries: independent samples and paired cases.

Each function fills every column of the comparison table for all rows at once (numpy arrays,
one element per (group, metric)) and flags degenerate rows with a warning. The optional steps
(rank tests, clusters, bootstrap, mixed model) read these rows and return what they change
(:class:`~mas_eval.stats._rows.Patch`), in their own modules.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mas_eval.constraints import Interval, Options, validate_params
from mas_eval.stats._common import PROBABILITY
from mas_eval.stats._rows import Patch, Rows, RowsBuilder
from mas_eval.stats.effects import d_confidence_interval, hedges_correction, observed_power
from mas_eval.stats.options import SummaryTest
from mas_eval.stats.ttests import t_inference, welch_dof

__all__ = ["ZERO_SD", "independent_rows", "paired_rows", "pooled_sd", "ttest_from_summary"]

#: A standard deviation this small relative to the means counts as zero (floating-point noise).
ZERO_SD = 1e-12


def zero_sd(var: np.ndarray, *means: np.ndarray) -> np.ndarray:
    """Whether a variance is zero up to floating-point noise relative to the means."""
    scale = np.max(np.abs(np.stack(means)), axis=0)
    with np.errstate(invalid="ignore"):
        return (var <= 0.0) | (np.sqrt(np.maximum(var, 0.0)) <= ZERO_SD * scale)


def pooled_sd(n_t: np.ndarray, var_t: np.ndarray, n_c: np.ndarray, var_c: np.ndarray) -> np.ndarray:
    r"""Return :math:`s_p = \sqrt{((n_T-1)s_T^2 + (n_C-1)s_C^2)/(n_T+n_C-2)}`, the crisis-MAS methodology's pooled SD.

    Examples
    --------
    >>> import numpy as np
    >>> pooled_sd(np.array([3.0]), np.array([0.01]), np.array([3.0]), np.array([0.0058])).round(4)
    array([0.0889])
    """
    with np.errstate(all="ignore"):
        return np.sqrt(((n_t - 1.0) * var_t + (n_c - 1.0) * var_c) / (n_t + n_c - 2.0))


def set_improvement(rows: RowsBuilder, difference: np.ndarray, mean_c: np.ndarray) -> None:
    """``100 * difference / mean_control``; null with a note when the control mean is 0."""
    zero = (mean_c == 0.0) & np.isfinite(difference)
    with np.errstate(all="ignore"):
        rows.set("improvement_percentage", np.where(zero, np.nan, 100.0 * difference / mean_c))
    rows.warn(zero, "mean_control is 0: improvement_percentage undefined", invalid=False)


def _set_inference(rows: RowsBuilder, inference: dict[str, np.ndarray], dof: np.ndarray, ci_method: str) -> None:
    rows.set("dof", dof)
    for name, values in inference.items():
        rows.set(name, values)
    rows.set("ci_method", ci_method)


def _set_effect_sizes(
    rows: RowsBuilder,
    *,
    d: np.ndarray,
    t: np.ndarray,
    df: np.ndarray,
    scale: np.ndarray,
    confidence: float,
    d_type: str,
) -> None:
    rows.set("cohens_d", d)
    rows.set("hedges_g", hedges_correction(df) * d)
    rows.warn((df < 2) & rows.ok, "Hedges' g undefined with 1 degree of freedom", invalid=False)
    low, high = d_confidence_interval(np.where(rows.ok, t, np.nan), df, scale, confidence)
    rows.set("d_ci_low", low)
    rows.set("d_ci_high", high)
    rows.set("d_type", d_type)


def independent_rows(
    *,
    n_t: np.ndarray,
    mean_t: np.ndarray,
    var_t: np.ndarray,
    n_c: np.ndarray,
    mean_c: np.ndarray,
    var_c: np.ndarray,
    test: SummaryTest,
    alpha: float,
    confidence: float,
    names: tuple[str, str],
) -> Rows:
    """Every column of independent-samples rows from each system's (n, mean, variance)."""
    rows = RowsBuilder(n_t.size)
    treatment, control = names
    rows.set("test", test)
    rows.set("n_treatment", n_t)
    rows.set("n_control", n_c)
    rows.set("mean_treatment", np.where(n_t > 0, mean_t, np.nan))
    rows.set("mean_control", np.where(n_c > 0, mean_c, np.nan))
    with np.errstate(all="ignore"):
        rows.set("std_treatment", np.sqrt(var_t))
        rows.set("std_control", np.sqrt(var_c))
        difference = mean_t - mean_c
    rows.set("difference", difference)
    set_improvement(rows, difference, mean_c)

    rows.warn(n_t == 0, f"no values for {treatment!r} in this group")
    rows.warn(n_c == 0, f"no values for {control!r} in this group")
    few = ((n_t == 1) | (n_c == 1)) & rows.ok
    rows.warn(few, lambda r: f"fewer than 2 values (n_treatment={n_t[r]:.0f}, n_control={n_c[r]:.0f})")
    finite = np.isfinite(mean_t) & np.isfinite(mean_c) & np.isfinite(var_t) & np.isfinite(var_c)
    rows.warn(~finite & rows.ok, "non-finite values (inf) in the data")
    flat = zero_sd(var_t, mean_t, mean_c) & zero_sd(var_c, mean_t, mean_c) & rows.ok
    rows.warn(flat, "zero variance in both systems: the test and d are undefined")

    sd = pooled_sd(n_t, var_t, n_c, var_c)
    with np.errstate(all="ignore"):
        df_pooled = n_t + n_c - 2.0
        if test == "welch":
            se = np.sqrt(var_t / n_t + var_c / n_c)
            dof = welch_dof(var_t, n_t, var_c, n_c)
        else:
            se = sd * np.sqrt(1.0 / n_t + 1.0 / n_c)
            dof = df_pooled
        d = difference / sd
        scale = np.sqrt(n_t * n_c / (n_t + n_c))
    inference = t_inference(difference, se, dof, confidence)
    _set_inference(rows, inference, dof, test)
    rows.set("standard_error", se)
    # The CI of d inverts the Student statistic d * scale, also on Welch rows (d uses the pooled SD).
    _set_effect_sizes(rows, d=d, t=d * scale, df=df_pooled, scale=scale, confidence=confidence, d_type="d_s")
    rows.set("power", observed_power(inference["statistic"], dof, alpha))
    return rows.build()


def paired_rows(*, stats: dict[str, np.ndarray], alpha: float, confidence: float, names: tuple[str, str]) -> Rows:
    """Every column of paired rows from the statistics of the per-case differences (see summaries)."""
    n = stats["n_pairs"]
    mean_d, var_d = stats["mean_d"], stats["var_d"]
    mean_t, var_t, mean_c, var_c = stats["mean_t"], stats["var_t"], stats["mean_c"], stats["var_c"]
    treatment, control = names
    rows = RowsBuilder(n.size)
    rows.set("test", "paired")
    rows.set("n_treatment", stats["runs_t"])
    rows.set("n_control", stats["runs_c"])
    rows.set("n_pairs", n)
    rows.set("mean_treatment", mean_t)
    rows.set("mean_control", mean_c)
    with np.errstate(all="ignore"):
        rows.set("std_treatment", np.sqrt(var_t))
        rows.set("std_control", np.sqrt(var_c))
    rows.set("difference", mean_d)
    set_improvement(rows, mean_d, mean_c)

    rows.warn(stats["cases_t"] == 0, f"no values for {treatment!r} in this group")
    rows.warn(stats["cases_c"] == 0, f"no values for {control!r} in this group")
    unpaired = stats["unpaired"]
    rows.warn(unpaired > 0, lambda r: f"{unpaired[r]:.0f} unpaired case(s) left out", invalid=False)
    rows.warn((n < 2) & rows.ok, lambda r: f"fewer than 2 paired cases (n_pairs={n[r]:.0f})")
    finite = np.isfinite(mean_d) & np.isfinite(var_d)
    rows.warn(~finite & rows.ok, "non-finite values (inf) in the data")
    flat = zero_sd(var_d, mean_t, mean_c) & rows.ok
    rows.warn(flat, "every paired difference is equal (zero variance): the test and d_z are undefined")

    with np.errstate(all="ignore"):
        se = np.sqrt(var_d / n)
        dof = n - 1.0
        d_z = mean_d / np.sqrt(var_d)
        # Pearson r of the case means from the three variances: var_d = var_t + var_c - 2 cov.
        correlation = (var_t + var_c - var_d) / (2.0 * np.sqrt(var_t) * np.sqrt(var_c))
    inference = t_inference(mean_d, se, dof, confidence)
    _set_inference(rows, inference, dof, "paired")
    rows.set("standard_error", se)
    _set_effect_sizes(
        rows, d=d_z, t=inference["statistic"], df=dof, scale=np.sqrt(n), confidence=confidence, d_type="d_z"
    )
    rows.set("power", observed_power(inference["statistic"], dof, alpha))
    constant = rows.ok & (zero_sd(var_t, mean_t, mean_c) | zero_sd(var_c, mean_t, mean_c))
    rows.warn(constant, "correlation undefined (one system's case means are constant)", invalid=False)
    rows.set("correlation", np.where(constant, np.nan, np.clip(correlation, -1.0, 1.0)))
    return rows.build()


#: Means are finite numbers; SDs and sizes are also not negative (a size may be fractional, an effective n).
_NUMBER = [Interval(float)]
_NON_NEGATIVE = [Interval(float, 0)]


@validate_params(
    {
        "mean_treatment": _NUMBER,
        "std_treatment": _NON_NEGATIVE,
        "n_treatment": _NON_NEGATIVE,
        "mean_control": _NUMBER,
        "std_control": _NON_NEGATIVE,
        "n_control": _NON_NEGATIVE,
        "test": [Options.of(SummaryTest)],
        "alpha": [PROBABILITY],
        "confidence": [PROBABILITY],
    }
)
def ttest_from_summary(
    mean_treatment: float,
    std_treatment: float,
    n_treatment: float,
    mean_control: float,
    std_control: float,
    n_control: float,
    *,
    test: SummaryTest = "welch",
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> dict[str, Any]:
    r"""Two-sample t test, Cohen's d, Hedges' g and their CIs from summary statistics alone.

    The code :func:`~mas_eval.stats.comparison.compare` runs on every (group, metric) row, for one
    comparison given by its means, sample SDs (ddof = 1) and sizes.

    Parameters
    ----------
    mean_treatment, std_treatment, n_treatment : float
        Treatment (e.g. MAS) mean, sample SD and size (finite; the SD and size not negative).
    mean_control, std_control, n_control : float
        Control (e.g. single-agent) mean, sample SD and size.
    test : {"welch", "student"}
        ``"welch"`` (default; the crisis-MAS evaluation methodology's formula) or ``"student"``
        (pooled variance; preset ``crisis-mas-poc``).
    alpha : float
        Significance level of ``significant`` and of ``power``, in (0, 1).
    confidence : float
        Level of the CIs of the difference and of d, in (0, 1).

    Returns
    -------
    dict
        The :func:`~mas_eval.stats.comparison.compare` columns ``difference``,
        ``improvement_percentage``, ``statistic``, ``dof``, ``p_value``, ``significant``,
        ``ci_low``, ``ci_high``, ``cohens_d``, ``hedges_g``, ``d_ci_low``, ``d_ci_high``,
        ``effect_size``, ``power`` and ``warning`` (None where undefined).

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above.

    Notes
    -----
    Formulas: see :mod:`mas_eval.stats.ttests` and :mod:`mas_eval.stats.effects`. The crisis-MAS
    methodology prints ``t 2.341, d .567, p .0234`` for means .745/.680, SDs .082/.091 and n 10/10;
    its own formulas give Welch t 1.678 (17.8 df), p .111 and pooled-SD d .750.

    Examples
    --------
    >>> out = ttest_from_summary(0.745, 0.082, 10, 0.680, 0.091, 10)
    >>> round(out["statistic"], 3), round(out["p_value"], 3), round(out["cohens_d"], 3), out["effect_size"]
    (1.678, 0.111, 0.75, 'medium')
    """
    rows = independent_rows(
        n_t=np.array([float(n_treatment)]),
        mean_t=np.array([float(mean_treatment)]),
        var_t=np.array([float(std_treatment) ** 2]),
        n_c=np.array([float(n_control)]),
        mean_c=np.array([float(mean_control)]),
        var_c=np.array([float(std_control) ** 2]),
        test=test,
        alpha=alpha,
        confidence=confidence,
        names=("treatment", "control"),
    )
    rows = rows.patched(Patch(columns={"metric": ""}))
    frame = rows.finish(correction="none", alpha=alpha)
    keep = [
        "difference", "improvement_percentage", "statistic", "dof", "p_value", "significant", "ci_low", "ci_high",
        "cohens_d", "hedges_g", "d_ci_low", "d_ci_high", "effect_size", "power", "warning",
    ]  # fmt: skip
    return {name: frame[name][0] for name in keep}
