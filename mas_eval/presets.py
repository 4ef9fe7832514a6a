"""Named parameter sets: ``"spec"`` (the seed documents' formulas) and the reference systems.

A preset is nothing but a dict of keyword arguments (SPEC.md, preamble), with one section per
metric family (its parameter class lives with the family, e.g.
:class:`~mas_eval.metrics.decision.params.DecisionParams`) and one for the statistics layer.
A family's section holds only what differs from the spec; every value can be overridden by
keyword (``score(ds, preset="crisis-mas-poc", gt_boost=None)``) or on the command line
(``--set gt_boost=none``).

>>> preset_section("crisis-mas-poc", "statistics")
{'test': 'student'}
>>> preset_section("spec", "decision")
{}
"""

from __future__ import annotations

from typing import Any

from mas_eval.errors import InvalidParameterError

__all__ = ["PRESETS", "check_preset", "preset_section"]

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "spec": {},
    # kerbgr/crisis_mas_poc (evaluation/metrics.py, decision_framework/): a min–max weighted
    # sum where the docs say TOPSIS, a normalised weighted average where they say ER,
    # consensus 1.0 for a lone agent, entropy over the agent's own alternatives without
    # renormalising; and scipy.stats.ttest_ind's default, Student's pooled-variance t.
    "crisis-mas-poc": {
        "decision": {
            "mcda": "weighted_sum",
            "er": "weighted_average",
            "single_agent_consensus": 1.0,
            "entropy_support": "agent",
            "entropy_renormalise": False,
        },
        # The document's t formula is Welch's (the spec's default test).
        "statistics": {"test": "student"},
    },
}


def check_preset(preset: object) -> str:
    """``preset`` if it names a preset; else :class:`~mas_eval.errors.InvalidParameterError`."""
    if not isinstance(preset, str) or preset not in PRESETS:
        msg = f"preset={preset!r} is invalid; preset must be one of {', '.join(map(repr, PRESETS))}"
        raise InvalidParameterError(msg)
    return preset


def preset_section(preset: str, section: str) -> dict[str, Any]:
    """The values preset ``preset`` sets for ``section`` (a family's name, or ``"statistics"``)."""
    return dict(PRESETS[check_preset(preset)].get(section, {}))
