"""Parameters of the decision family (the crisis-MAS evaluation methodology), each with what it accepts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from mas_eval.constraints import NONE, Boolean, Interval, Options, Predicate
from mas_eval.errors import InvalidParameterError
from mas_eval.presets import Params, param

__all__ = ["ER", "MCDA", "DecisionParams", "EntropySupport", "StabilityMethod"]

#: What ``mcda_score`` holds per alternative.
MCDA = Literal["topsis", "weighted_sum"]
#: How the agents' beliefs are aggregated per alternative.
ER = Literal["yang_xu", "weighted_average"]
#: N in ``H / ln N``.
EntropySupport = Literal["run", "agent"]
#: How ``ranking_stability`` moves the criteria weights.
StabilityMethod = Literal["random", "sweep"]

_UNIT = Interval(float, 0, 1)
_POSITIVE = Interval(float, 0, None, closed="neither")


@dataclass(frozen=True)
class DecisionParams(Params):
    """Parameters of the decision-metric suite (the crisis-MAS evaluation methodology).

    Attributes
    ----------
    dqs_weighted
        Weight the criteria satisfactions by ``criteria.weight`` when every scored criterion
        of the run has a weight (else the plain mean).
    gt_boost
        ``dqs = max(dqs_raw, gt_boost)`` when the recommendation matches ground truth;
        ``None`` disables the boost.
    consensus_weight
        Weight of the consensus level in the MAS decision confidence
        ``w * CL + (1 - w) * mean(c_i)`` (the methodology's: 0.6).
    single_agent_consensus
        Consensus level of a run with fewer than two agents: ``None`` (spec: undefined) or a
        number (crisis_mas_poc reports 1.0).
    entropy_support
        N in ``H / ln N``: ``"run"`` (distinct alternatives in the run's beliefs; spec) or
        ``"agent"`` (the agent's own alternatives; crisis_mas_poc).
    entropy_renormalise
        Renormalise an agent's masses to sum 1 before the entropy (spec) or use them as given
        (crisis_mas_poc).
    baseline_iterations, baseline_api_calls, baseline_seconds
        Efficiency baselines: ``1 / (1 + x / baseline)`` (the methodology's: 1, 3, 5).
    mcda
        What ``mcda_score`` holds per alternative: ``"topsis"`` closeness (spec) or the
        ``"weighted_sum"`` of criteria satisfactions (crisis_mas_poc's MCDA engine).
    er
        Belief aggregation: ``"yang_xu"`` (the analytical ER algorithm; spec) or
        ``"weighted_average"`` (crisis_mas_poc: each agent's beliefs renormalised, averaged
        with normalised weights, renormalised again; unassigned belief 0).
    pairwise
        Also produce the ``pairwise`` table of the agents' belief similarities (a self-join
        per run: off by default).
    consensus_threshold
        ``consensus_reached`` is ``consensus_level >= consensus_threshold``. Spec: 0.8, where
        the methodology's "strong consensus" band begins (``CL > 0.80``); crisis_mas_poc's
        consensus model: 0.75.
    conflict_threshold
        Two agents with different top choices are in conflict when the mean of how much more
        each believes its own top choice than the other's reaches this (crisis_mas_poc's
        consensus model: 0.3).
    stability_draws
        Weight perturbations per run behind ``ranking_stability``; 0 (the default) leaves it
        null. Each weighting costs a pass over the score rows (100 draws take about twice as
        long as the rest of the suite), so it is asked for, as crisis_mas_poc's optional
        sensitivity analysis is.
    stability_perturbation
        Each criterion weight is multiplied by ``1 + d * (2u - 1)``, ``u`` uniform in [0, 1):
        ``d`` is the largest relative change.
    stability_seed
        Seed of the perturbations; a run's draws depend only on it and the run's ``run_id``.
    stability_method
        ``"random"`` (spec): every weight perturbed at once, ``ranking_stability`` the share of
        weightings that keep the top alternative. ``"sweep"`` (crisis_mas_poc's MCDA engine's
        ``sensitivity_analysis``): criterion ``stability_criterion``'s weight takes
        ``stability_draws`` evenly spaced values from ``stability_sweep_low`` to
        ``stability_sweep_high``, the others rescaled to sum to 1 minus it,
        ``ranking_stability`` is ``1 - (distinct top alternatives - 1) / stability_draws``, and
        ``num_winner_changes`` counts the steps whose top alternative differs from the step
        before's (null under ``"random"``: its weightings have no order).
    stability_criterion
        The criterion a sweep varies (a run without a score on it: null).
    stability_sweep_low, stability_sweep_high
        The weights a sweep runs through (crisis_mas_poc's defaults: 0 to 1).

    Examples
    --------
    >>> DecisionParams.of_preset("crisis-mas-poc", gt_boost=None).mcda
    'weighted_sum'
    >>> from mas_eval.errors import InvalidParameterError
    >>> try:
    ...     DecisionParams(gt_boost="high")
    ... except InvalidParameterError as error:
    ...     print(error)
    score: gt_boost='high' is invalid; gt_boost must be a number in [0, 1] or None
    """

    section: ClassVar[str] = "decision"
    where: ClassVar[str] = "score"

    dqs_weighted: bool = param(True, Boolean())
    gt_boost: float | None = param(0.9, _UNIT, NONE)
    consensus_weight: float = param(0.6, _UNIT)
    single_agent_consensus: float | None = param(None, _UNIT, NONE)
    entropy_support: EntropySupport = param("run", Options.of(EntropySupport))
    entropy_renormalise: bool = param(True, Boolean())
    baseline_iterations: float = param(1.0, _POSITIVE)
    baseline_api_calls: float = param(3.0, _POSITIVE)
    baseline_seconds: float = param(5.0, _POSITIVE)
    mcda: MCDA = param("topsis", Options.of(MCDA))
    er: ER = param("yang_xu", Options.of(ER))
    pairwise: bool = param(False, Boolean())
    consensus_threshold: float = param(0.8, _UNIT)
    conflict_threshold: float = param(0.3, _UNIT)
    stability_draws: int = param(0, Interval(int, 0, 100_000))
    stability_perturbation: float = param(0.2, Interval(float, 0, 1, closed="right"))
    stability_seed: int = param(0, Interval(int, 0, None))
    stability_method: StabilityMethod = param("random", Options.of(StabilityMethod))
    stability_criterion: str | None = param(
        None, Predicate(lambda v: isinstance(v, str) and v != "", "a criterion"), NONE
    )
    stability_sweep_low: float = param(0.0, _UNIT)
    stability_sweep_high: float = param(1.0, _UNIT)

    def __post_init__(self) -> None:
        """Check each field, then that a sweep names the criterion it varies."""
        super().__post_init__()
        if self.stability_method == "sweep" and self.stability_draws > 0 and self.stability_criterion is None:
            msg = (
                f"{self.where}: stability_method='sweep' varies one criterion's weight: "
                "give stability_criterion (e.g. --set stability_criterion=safety)"
            )
            raise InvalidParameterError(msg)
