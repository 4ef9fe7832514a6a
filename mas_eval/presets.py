"""Named parameter sets: ``"spec"`` (the seed documents' formulas) and the reference systems.

A preset is nothing but a dict of keyword arguments (SPEC.md, preamble). Every value can be
overridden by keyword (``score(ds, preset="crisis-mas-poc", gt_boost=None)``) or on the
command line (``--set gt_boost=none``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from mas_eval.errors import MasEvalError

__all__ = ["PRESETS", "DecisionParams", "parse_override", "resolve"]


@dataclass(frozen=True)
class DecisionParams:
    """Parameters of the decision-metric suite (seed 004; SPEC.md §1).

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
        ``w * CL + (1 - w) * mean(c_i)`` (seed: 0.6).
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
        Efficiency baselines: ``1 / (1 + x / baseline)`` (seed: 1, 3, 5).
    mcda
        What ``mcda_score`` holds per alternative: ``"topsis"`` closeness (spec) or the
        ``"weighted_sum"`` of criteria satisfactions (crisis_mas_poc's MCDA engine).
    er
        Belief aggregation: ``"yang_xu"`` (the analytical ER algorithm; spec) or
        ``"weighted_average"`` (crisis_mas_poc: each agent's beliefs renormalised, averaged
        with normalised weights, renormalised again; unassigned belief 0).
    """

    dqs_weighted: bool = True
    gt_boost: float | None = 0.9
    consensus_weight: float = 0.6
    single_agent_consensus: float | None = None
    entropy_support: Literal["run", "agent"] = "run"
    entropy_renormalise: bool = True
    baseline_iterations: float = 1.0
    baseline_api_calls: float = 3.0
    baseline_seconds: float = 5.0
    mcda: Literal["topsis", "weighted_sum"] = "topsis"
    er: Literal["yang_xu", "weighted_average"] = "yang_xu"

    def __post_init__(self) -> None:
        choices = {
            "entropy_support": ("run", "agent"),
            "mcda": ("topsis", "weighted_sum"),
            "er": ("yang_xu", "weighted_average"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                msg = f"parameter {name}={getattr(self, name)!r} is not one of {', '.join(map(repr, allowed))}"
                raise MasEvalError(msg)
        for name in ("baseline_iterations", "baseline_api_calls", "baseline_seconds"):
            if not getattr(self, name) > 0:
                msg = f"parameter {name}={getattr(self, name)!r} must be a positive number"
                raise MasEvalError(msg)
        if not 0 <= self.consensus_weight <= 1:
            msg = f"parameter consensus_weight={self.consensus_weight!r} must lie in [0, 1]"
            raise MasEvalError(msg)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, dict[str, Any]] = {
    "spec": {},
    # kerbgr/crisis_mas_poc (evaluation/metrics.py, decision_framework/): a min–max weighted
    # sum where the docs say TOPSIS, a normalised weighted average where they say ER, and
    # consensus 1.0 for a lone agent.
    "crisis-mas-poc": {
        "mcda": "weighted_sum",
        "er": "weighted_average",
        "single_agent_consensus": 1.0,
        "entropy_support": "agent",
        "entropy_renormalise": False,
    },
}


def resolve(preset: str = "spec", overrides: Mapping[str, Any] | None = None) -> DecisionParams:
    """The parameters of ``preset`` with ``overrides`` applied; unknown names are an error."""
    if preset not in PRESETS:
        msg = f"unknown preset {preset!r}; the presets are: {', '.join(PRESETS)}"
        raise MasEvalError(msg)
    known = {f.name for f in fields(DecisionParams)}
    unknown = sorted(set(overrides or {}) - known)
    if unknown:
        msg = f"unknown parameter(s) {', '.join(unknown)}; the parameters are: {', '.join(sorted(known))}"
        raise MasEvalError(msg)
    return replace(DecisionParams(**PRESETS[preset]), **dict(overrides or {}))


def parse_override(text: str) -> tuple[str, Any]:
    """``"key=value"`` from the command line, with the value typed as the parameter's type.

    >>> parse_override("gt_boost=none")
    ('gt_boost', None)
    >>> parse_override("baseline_seconds=10")
    ('baseline_seconds', 10.0)
    >>> parse_override("dqs_weighted=false")
    ('dqs_weighted', False)
    """
    key, sep, raw = text.partition("=")
    key, raw = key.strip(), raw.strip()
    defaults = DecisionParams()
    if not sep or not hasattr(defaults, key):
        msg = f"--set {text!r}: expected key=value with key one of {', '.join(sorted(defaults.as_dict()))}"
        raise MasEvalError(msg)
    if raw.lower() in ("none", "null"):
        return key, None
    default = getattr(defaults, key)
    if isinstance(default, bool):
        if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
            msg = f"--set {text!r}: {key} takes true or false"
            raise MasEvalError(msg)
        return key, raw.lower() in ("true", "1", "yes")
    if isinstance(default, float) or key == "gt_boost" or key == "single_agent_consensus":
        try:
            return key, float(raw)
        except ValueError:
            msg = f"--set {text!r}: {key} takes a number"
            raise MasEvalError(msg) from None
    return key, raw
