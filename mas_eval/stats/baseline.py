"""Output blocks of the crisis-MAS evaluation methodology: "Baseline Comparison", "Statistical Significance Testing"."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mas_eval.constraints import NONE, RUN_METRICS, TEXT, Boolean, Options, Predicate, validate_params
from mas_eval.presets import PRESETS, preset_section
from mas_eval.stats._common import COLUMN_NAME, PROBABILITY
from mas_eval.stats.comparison import compare
from mas_eval.stats.options import SummaryTest

__all__ = ["baseline_comparison"]

#: The test of a preset that sets none: the crisis-MAS methodology's formula, Welch's.
DEFAULT_TEST: SummaryTest = "welch"

#: The SD divisor ``n - ddof`` of a preset that sets none: the sample SD, as ``compare`` reports it.
DEFAULT_SD_DDOF = 1

#: The crisis-MAS methodology's block names and the run-metric column each one reports.
SEED_METRICS: dict[str, str] = {"decision_quality": "dqs", "confidence": "decision_confidence"}


#: Keys of the output beside the blocks: a block may not take their names.
RESERVED = ("improvement", "improvement_percentage", "statistical_significance")


def _blocks(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and k not in RESERVED and isinstance(v, str) for k, v in value.items()
    )


def _sd(sample_sd: float | None, n: int | None, ddof: int) -> float | None:
    r"""Return the SD with divisor :math:`n - \text{ddof}` from the sample SD (divisor :math:`n - 1`).

    That is :math:`s \sqrt{(n - 1)/n}` for ddof 0, and 0 for a single value.
    """
    if ddof == 1 or n is None or n < 1:
        return sample_sd
    if n == 1:
        return 0.0
    return None if sample_sd is None else sample_sd * math.sqrt((n - 1) / n)


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "treatment": [TEXT],
        "control": [TEXT],
        "metrics": [
            Predicate(_blocks, f"a dict of block names (none of {', '.join(RESERVED)}) to metric columns (strings)"),
            NONE,
        ],
        "preset": [Options(tuple(PRESETS))],
        "test": [Options.of(SummaryTest), NONE],
        "alpha": [PROBABILITY],
        "system": [COLUMN_NAME],
        "allow_mixed_methods": [Boolean()],
        "sd_ddof": [Options((0, 1)), NONE],
    }
)
def baseline_comparison(
    run_metrics: Any,
    treatment: str = "mas",
    control: str = "single",
    metrics: Mapping[str, str] | None = None,
    *,
    preset: str = "spec",
    test: SummaryTest | None = None,
    alpha: float = 0.05,
    system: str = "system",
    allow_mixed_methods: bool = False,
    sd_ddof: int | None = None,
) -> dict[str, Any]:
    r"""Return the crisis-MAS evaluation methodology's baseline-comparison and significance JSON, for all runs.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run (``Scores.runs``).
    treatment, control : str
        The multi-agent and the single-agent system (values of ``system``).
    metrics : dict, optional
        Block name -> column; default ``{"decision_quality": "dqs", "confidence":
        "decision_confidence"}`` as in the crisis-MAS methodology.
    preset : str
        A preset of :mod:`mas_eval.presets`, whose ``"statistics"`` section sets the test:
        ``"spec"`` (Welch, the document's formula) or ``"crisis-mas-poc"`` (Student's t, as
        ``scipy.stats.ttest_ind`` by default).
    test : {"welch", "student"} or None
        Overrides the preset's test.
    alpha : float
        Significance level, in (0, 1).
    system : str
        The system column.
    allow_mixed_methods : bool
        As in :func:`~mas_eval.stats.comparison.compare` (the ``dqs_method`` guard).
    sd_ddof : {0, 1} or None
        Divisor ``n - sd_ddof`` of the block's ``multi_agent_std`` and ``single_agent_std``:
        1 (the sample SD; preset ``"spec"``) or 0 (the population SD, as crisis_mas_poc's
        ``np.std``; preset ``"crisis-mas-poc"``). None: the preset's. The t test and Cohen's d
        are unaffected (both use the sample variances).

    Returns
    -------
    dict
        One block per metric with ``multi_agent``, ``single_agent`` (means), ``improvement``
        (treatment - control) and ``improvement_percentage`` (``100 * improvement /
        single_agent``, None when that is 0), plus ``statistical_significance``: per metric
        the methodology's keys ``t_statistic``, ``p_value``, ``significant``, ``alpha``,
        ``cohens_d``, ``effect_size``, ``multi_agent_mean``, ``single_agent_mean``,
        ``multi_agent_std``, ``single_agent_std``, ``n_multi``, ``n_single``, and ``test``
        and ``warning``. Top-level ``improvement``: the mean of the blocks' ``improvement``
        (crisis_mas_poc: of the DQS and confidence blocks, the default ones), and
        ``improvement_percentage``: 100 × that mean (percentage points, not relative to a
        baseline, unlike the blocks'). Unrounded; None where undefined.

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above (as well as :func:`~mas_eval.stats.comparison.compare`'s errors).

    Notes
    -----
    The methodology prints ``t 2.341, p .0234, d .567`` for means .745/.680, SDs .082/.091 and n
    10/10; its own formulas give Welch t 1.678, p .111, d .750 (pinned in the tests). No
    multiple-comparison correction is applied, as in the methodology.

    The overall ``improvement`` is crisis_mas_poc's (``evaluation/metrics.py``,
    ``MetricsEvaluator.compare_to_baseline``): ``np.mean`` of the decision-quality and
    confidence improvements present, and ``improvement_percentage = improvement * 100``. A block
    whose improvement is undefined is left out of the mean (crisis_mas_poc leaves out a block it
    has no results for); with none left both are None (crisis_mas_poc: 0.0, and no percentage).

    Examples
    --------
    The methodology's own "Baseline Comparison" block: DQS .720 vs .850 (-.130, -15.3%), confidence
    .760 vs .820 (-.060, -7.3%), here with two runs per system. Welch's t of the DQS is
    :math:`-0.13 / \sqrt{0.0008/2 + 0.0002/2} = -0.13 / \sqrt{0.0005} = -5.8138`:

    >>> import polars as pl
    >>> runs = pl.DataFrame({
    ...     "system": ["mas", "mas", "single", "single"],
    ...     "dqs": [0.70, 0.74, 0.84, 0.86],
    ...     "decision_confidence": [0.75, 0.77, 0.81, 0.83],
    ... })
    >>> out = baseline_comparison(runs)
    >>> {k: round(v, 3) for k, v in out["decision_quality"].items()}
    {'multi_agent': 0.72, 'single_agent': 0.85, 'improvement': -0.13, 'improvement_percentage': -15.294}
    >>> round(out["confidence"]["improvement_percentage"], 1)
    -7.3
    >>> sig = out["statistical_significance"]["decision_quality"]
    >>> round(sig["t_statistic"], 4), sig["test"], sig["n_multi"], sig["n_single"]
    (-5.8138, 'welch', 2, 2)

    Overall, the mean of the two differences, (-.130 - .060) / 2:

    >>> round(out["improvement"], 3), round(out["improvement_percentage"], 1)
    (-0.095, -9.5)
    """
    section = preset_section(preset, "statistics")
    chosen = test or section.get("test", DEFAULT_TEST)
    ddof = section.get("sd_ddof", DEFAULT_SD_DDOF) if sd_ddof is None else sd_ddof
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
    # Two summary rows (DQS and confidence) become the methodology's JSON blocks: not a loop over runs.
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
            "multi_agent_std": _sd(row["std_treatment"], row["n_treatment"], ddof),
            "single_agent_std": _sd(row["std_control"], row["n_control"], ddof),
            "n_multi": row["n_treatment"],
            "n_single": row["n_control"],
            "test": row["test"],
            "warning": row["warning"],
        }
    # crisis_mas_poc's overall figure: the mean of the blocks' differences (two numbers, not runs).
    differences = [block["improvement"] for block in out.values() if block["improvement"] is not None]
    overall = math.fsum(differences) / len(differences) if differences else None
    out["improvement"] = overall
    out["improvement_percentage"] = None if overall is None else 100 * overall
    out["statistical_significance"] = significance
    return out
