"""The decision family (the crisis-MAS evaluation methodology): a MAS decision against a single agent's.

One module per concept: :mod:`~.quality` (DQS cascade, ground-truth boost),
:mod:`~.consensus`, :mod:`~.conflicts` (consensus reached, conflicts between agents),
:mod:`~.confidence`, :mod:`~.contribution` (entropy, contribution, Gini, balance, diversity),
:mod:`~.criteria` (satisfaction, weighted sum, TOPSIS), :mod:`~.evidential`, :mod:`~.efficiency`,
:mod:`~.sensitivity` (the MCDA ranking's stability when the weights move); :mod:`~.beliefs`
fuses their passes over the belief rows and :mod:`~.suite` wires them together. Parameters:
:class:`~.params.DecisionParams`.
"""

from __future__ import annotations

from mas_eval.metrics.decision.columns import COLUMNS, TABLES
from mas_eval.metrics.decision.params import DecisionParams
from mas_eval.metrics.decision.suite import compute
from mas_eval.metrics.family import Family

__all__ = ["FAMILY", "DecisionParams"]

FAMILY = Family(
    name="decision",
    needs=("runs",),
    reads=("agents", "beliefs", "criteria", "scores", "alt_scores"),
    params=DecisionParams,
    compute=compute,
    description="Decision quality, consensus, confidence, contribution, TOPSIS and ER (the crisis-MAS methodology).",
    columns=COLUMNS,
    output_tables=TABLES,
    headline=(
        "dqs",
        "gt_match",
        "decision_confidence",
        "consensus_level",
        "agreement_percentage",
        "balance_score",
        "efficiency_score",
        "er_unassigned",
        "cost_usd",
    ),
    compared=("dqs", "decision_confidence"),
)
