"""Named parameter sets, and the parameter classes they fill.

Presets: ``"spec"`` (the source documents' formulas) and the reference systems. :class:`Params`
is the base of every family's frozen parameter dataclass, whose fields declare their
constraints (:func:`param`, :mod:`mas_eval.constraints`).

A preset is nothing but a dict of keyword arguments, with one section per metric family (its
parameter class lives with the family, e.g.
:class:`~mas_eval.metrics.decision.params.DecisionParams`) and one for the statistics layer.
A family's section holds only what differs from the spec; every value can be overridden by
keyword (``score(ds, preset="crisis-mas-poc", gt_boost=None)``) or on the command line
(``--set gt_boost=none``).

>>> preset_section("crisis-mas-poc", "statistics")
{'test': 'student', 'sd_ddof': 0}
>>> preset_section("spec", "decision")
{}
"""

from __future__ import annotations

import copy
from dataclasses import asdict, field, fields
from typing import Any, ClassVar, Self

from mas_eval.constraints import Constraint, Options, check_parameter
from mas_eval.errors import InvalidParameterError

__all__ = ["PRESETS", "Params", "as_shipped", "check_preset", "param", "preset_section"]

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "spec": {},
    # kerbgr/crisis_mas_poc (evaluation/metrics.py, decision_framework/): a min–max weighted
    # sum where the docs say TOPSIS, a normalised weighted average where they say ER,
    # consensus 1.0 for a lone agent, entropy over the agent's own alternatives without
    # renormalising, its consensus model's threshold 0.75, its MCDA engine's one-criterion
    # weight sweep; and scipy.stats.ttest_ind's default, Student's pooled-variance t.
    "crisis-mas-poc": {
        "decision": {
            "mcda": "weighted_sum",
            "er": "weighted_average",
            "single_agent_consensus": 1.0,
            "entropy_support": "agent",
            "entropy_renormalise": False,
            "consensus_threshold": 0.75,
            "stability_method": "sweep",
        },
        # The document's t formula is Welch's (the spec's default test); the block's SDs are
        # np.std's, the population SD.
        "statistics": {"test": "student", "sd_ddof": 0},
    },
    # Baglecake/Local-DDx (ddx_evaluator_v6.py, ddx_synthesis_v6.py): CAA on the ground-truth
    # side with can't-miss promotion to TP, TM-SM before AE, CRQ's denominator without TM-SM,
    # and TempoScore counting every mention of the independent round.
    "lddx-v6": {
        "diagnosis": {"label_rules": "lddx-v6", "tempo_count_mentions": True},
    },
    # Baglecake/Local-DDx v8 (v8/Modules/v8_4: ddx_evaluator_v9.py, ddx_synthesis_v6.py,
    # ddx_rounds_v6.py): the deterministic evaluator (no CAA; AE from a mention near a word of
    # consideration anywhere in the transcript; recall over TP + FN), TempoScore counting every
    # diagnosis of the independent round, and Dr. Reed's credibility without the debate, whose
    # responses v8 keys by sub-round where Reed looks them up by the agent's name.
    "lddx-v8": {
        "diagnosis": {"label_rules": "lddx-v8", "tempo_count_mentions": True, "credibility_debate": False},
    },
    # junaidi-ai/MedAISure (bench/evaluation/metrics/clinical.py, commit 25fb74f4): its own
    # normalisation (punctuation deleted), small tables and entity extraction (phrases as
    # substrings, removed once found, then words), substring markers and facts, reasoning on
    # the rationale alone, fact sets from the reference answer first, min(1, f / max(1, n // 2));
    # diagnostic accuracy weighting a specialty's critical diagnoses 1.5, clinical relevance with
    # its keyword boost and threshold adjustment, a missing field an empty text.
    # Reproduces its per-sample numbers exactly (tests/metrics/answers/: test_medaisure.py, test_labels.py).
    "medaisure": {
        "answers": {
            "answers_normalisation": "medaisure",
            "answers_vocabulary": "medaisure",
            "answers_entities": "phrases_then_words",
            "answers_matching": "substring",
            "reasoning_reference_fallback": False,
            "reasoning_prediction_fallback": False,
            "factual_formula": "half_capped",
            "factual_source": "answer",
            "diagnostic_critical_weight": 1.5,
            "unscored_without_reference": False,
            "relevance_boost_per_term": 0.02,
            "relevance_below_threshold_factor": 0.8,
        },
    },
}


#: The presets as this module defines them: what a new process has once it imports ``mas_eval``.
_SHIPPED = copy.deepcopy(PRESETS)


def as_shipped() -> bool:
    """Whether :data:`PRESETS` holds what this module defines.

    A preset added or changed at run time would not exist in a worker process, which would score
    with other parameters.
    """
    return PRESETS == _SHIPPED


def check_preset(preset: object) -> str:
    """Return ``preset`` if it names a preset; else raise :class:`~mas_eval.errors.InvalidParameterError`.

    Examples
    --------
    >>> check_preset("lddx-v6")
    'lddx-v6'
    >>> check_preset("lddx")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: preset='lddx' is invalid; preset must be one of 'spec', 'crisis-mas-poc', ...
    """
    check_parameter("preset", preset, [Options(tuple(PRESETS))])
    return str(preset)


def preset_section(preset: str, section: str) -> dict[str, Any]:
    """Return the values preset ``preset`` sets for ``section`` (a family's name, or ``"statistics"``).

    Examples
    --------
    >>> preset_section("lddx-v6", "diagnosis"), preset_section("spec", "diagnosis")
    ({'label_rules': 'lddx-v6', 'tempo_count_mentions': True}, {})
    """
    return dict(PRESETS[check_preset(preset)].get(section, {}))


def param(default: Any, *constraints: Constraint) -> Any:
    """Declare a dataclass field of a :class:`Params` class with its default and its constraints."""
    return field(default=default, metadata={"constraints": constraints})


class Params:
    """Mixin of the frozen parameter dataclasses: every field is checked against its constraints.

    ``section`` is the section of :data:`PRESETS` the class reads; ``where``
    names the function users pass these parameters to (for the message).
    """

    section: ClassVar[str] = ""
    where: ClassVar[str] = ""

    def __post_init__(self) -> None:
        """Check every field against its constraints."""
        for f in fields(self):  # type: ignore[arg-type]
            constraints = f.metadata.get("constraints")
            if constraints:
                check_parameter(f.name, getattr(self, f.name), constraints, where=self.where or None)

    @classmethod
    def constraints(cls) -> dict[str, tuple[Constraint, ...]]:
        """Every field's constraints, by name."""
        return {f.name: f.metadata.get("constraints", ()) for f in fields(cls)}  # type: ignore[arg-type]

    @classmethod
    def of_preset(cls, preset: str = "spec", **overrides: Any) -> Self:
        """Make the parameters of ``preset`` with ``overrides`` applied; an unknown name is an error."""
        values = {**preset_section(preset, cls.section), **overrides}
        known = cls.constraints()
        unknown = sorted(set(values) - set(known))
        if unknown:
            prefix = f"{cls.where}: " if cls.where else ""
            msg = f"{prefix}unknown parameter(s) {', '.join(unknown)}; the parameters are: {', '.join(sorted(known))}"
            raise InvalidParameterError(msg)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        """Return the parameters as a plain dict (for manifests and reports)."""
        return asdict(self)  # type: ignore[call-overload]
