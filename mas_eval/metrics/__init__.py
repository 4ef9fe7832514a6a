"""Metric families and the maths they share.

* :mod:`~mas_eval.metrics.family` — what a family is, and the registered ones;
* :mod:`~mas_eval.metrics.registry` — every output column, once;
* :mod:`~mas_eval.metrics.namespace` — the ``mas`` expression namespace (registered on import);
* :mod:`~mas_eval.metrics.codes`, :mod:`~mas_eval.metrics.ranks` — integer keys, ranks with ties;
* :mod:`~mas_eval.metrics.decision` — the decision family (the crisis-MAS evaluation methodology);
* :mod:`~mas_eval.metrics.diagnosis` — the diagnosis family (the LDDx v6 metrics guide), and :func:`diagnosis_scores`;
* :mod:`~mas_eval.metrics.answers` — the answers family (the MedAISure metrics overview), and :func:`answer_scores`;
* :mod:`~mas_eval.metrics.outcomes` — the outcomes family (logged scores of any benchmark, usage per agent);
* :mod:`~mas_eval.metrics.process` — the process family (how the agents worked together, from any trace).
"""

from mas_eval.metrics import namespace as namespace  # registers the `mas` expression namespace
from mas_eval.metrics.answers import FAMILY as _ANSWERS
from mas_eval.metrics.answers.suite import answer_scores as answer_scores
from mas_eval.metrics.decision import FAMILY as _DECISION
from mas_eval.metrics.diagnosis import FAMILY as _DIAGNOSIS
from mas_eval.metrics.diagnosis.scores import diagnosis_scores as diagnosis_scores
from mas_eval.metrics.family import mark_imported as _mark_imported
from mas_eval.metrics.family import register as _register
from mas_eval.metrics.outcomes import FAMILY as _OUTCOMES
from mas_eval.metrics.process import FAMILY as _PROCESS

# A family is its folder and one line here; the order is the order of their run columns.
_register(_DECISION)
_register(_DIAGNOSIS)
_register(_ANSWERS)
_register(_OUTCOMES)
_register(_PROCESS)
# What a worker process has once it imports mas_eval (family.as_imported).
_mark_imported()
