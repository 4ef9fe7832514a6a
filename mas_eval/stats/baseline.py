"""Seed 004's output blocks: "Baseline Comparison" and "Statistical Significance Testing"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from mas_eval.errors import MasEvalError
from mas_eval.stats.comparison import compare

__all__ = ["STATISTICS_PRESETS", "baseline_comparison"]

#: The test each parameter preset uses (SPEC.md §1): the document's formula is Welch's;
#: crisis_mas_poc calls ``scipy.stats.ttest_ind`` with its default, Student's pooled variance.
STATISTICS_PRESETS: dict[str, str] = {"spec": "welch", "crisis-mas-poc": "student"}

#: Seed 004's block names and the run-metric column each one reports.
SEED_METRICS: dict[str, str] = {"decision_quality": "dqs", "confidence": "decision_confidence"}


def baseline_comparison(
    run_metrics: Any,
    treatment: str = "mas",
    control: str = "single",
    metrics: Mapping[str, str] | None = None,
    *,
    preset: str = "spec",
    test: Literal["welch", "student"] | None = None,
    alpha: float = 0.05,
    system: str = "system",
    allow_mixed_methods: bool = False,
) -> dict[str, Any]:
    """Seed 004's baseline-comparison JSON and its significance JSON, for all runs together.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run (``Scores.runs``).
    treatment, control
        The multi-agent and the single-agent system (values of ``system``).
    metrics
        Block name -> column; default ``{"decision_quality": "dqs", "confidence":
        "decision_confidence"}`` as in the seed.
    preset
        ``"spec"`` (Welch, the document's formula) or ``"crisis-mas-poc"`` (Student's t).
    test
        Overrides the preset's test.
    alpha
        Significance level.
    system
        The system column.
    allow_mixed_methods
        As in :func:`~mas_eval.stats.comparison.compare` (the ``dqs_method`` guard).

    Returns
    -------
    dict
        One block per metric with ``multi_agent``, ``single_agent`` (means), ``improvement``
        (treatment - control) and ``improvement_percentage`` (``100 * improvement /
        single_agent``, None when that is 0), plus ``statistical_significance``: per metric
        the seed's keys ``t_statistic``, ``p_value``, ``significant``, ``alpha``,
        ``cohens_d``, ``effect_size``, ``multi_agent_mean``, ``single_agent_mean``,
        ``multi_agent_std``, ``single_agent_std``, ``n_multi``, ``n_single``, and ``test``
        and ``warning``. Unrounded; None where undefined.

    Notes
    -----
    The seed prints ``t 2.341, p .0234, d .567`` for means .745/.680, SDs .082/.091 and n 10/10;
    its own formulas give Welch t 1.678, p .111, d .750 (SPEC.md §4, pinned in the tests). No
    multiple-comparison correction is applied, as in the seed.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({
    ...     "system": ["mas"] * 4 + ["single"] * 4,
    ...     "dqs": [0.82, 0.85, 0.81, 0.84, 0.75, 0.73, 0.76, 0.74],
    ...     "decision_confidence": [0.7, 0.8, 0.75, 0.85, 0.8, 0.82, 0.84, 0.86],
    ... })
    >>> out = baseline_comparison(runs, preset="crisis-mas-poc")
    >>> {k: round(v, 4) for k, v in out["decision_quality"].items()}
    {'multi_agent': 0.83, 'single_agent': 0.745, 'improvement': 0.085, 'improvement_percentage': 11.4094}
    >>> sig = out["statistical_significance"]["decision_quality"]
    >>> round(sig["t_statistic"], 4), sig["significant"], sig["effect_size"], sig["test"]
    (7.6026, True, 'large', 'student')
    """
    if preset not in STATISTICS_PRESETS:
        msg = f"unknown preset {preset!r}; the presets are: {', '.join(STATISTICS_PRESETS)}"
        raise MasEvalError(msg)
    chosen = test or STATISTICS_PRESETS[preset]
    if chosen not in ("welch", "student"):
        msg = f"test={test!r}: the seed's significance block is a 'welch' or 'student' t test"
        raise MasEvalError(msg)
    blocks = dict(metrics or SEED_METRICS)
    table = compare(
        run_metrics,
        list(blocks.values()),
        treatment=treatment,
        control=control,
        test=chosen,
        correction="none",
        alpha=alpha,
        system=system,
        allow_mixed_methods=allow_mixed_methods,
    )
    out: dict[str, Any] = {}
    significance: dict[str, Any] = {}
    # Two summary rows (DQS and confidence) become the seed's JSON blocks: not a loop over runs.
    for name, row in zip(blocks, table.iter_rows(named=True), strict=True):
        out[name] = {
            "multi_agent": row["mean_treatment"],
            "single_agent": row["mean_control"],
            "improvement": row["difference"],
            "improvement_percentage": row["improvement_percentage"],
        }
        significance[name] = {
            "t_statistic": row["statistic"],
            "p_value": row["p_value"],
            "significant": row["significant"],
            "alpha": alpha,
            "cohens_d": row["cohens_d"],
            "effect_size": row["effect_size"],
            "multi_agent_mean": row["mean_treatment"],
            "single_agent_mean": row["mean_control"],
            "multi_agent_std": row["std_treatment"],
            "single_agent_std": row["std_control"],
            "n_multi": row["n_treatment"],
            "n_single": row["n_control"],
            "test": row["test"],
            "warning": row["warning"],
        }
    out["statistical_significance"] = significance
    return out
