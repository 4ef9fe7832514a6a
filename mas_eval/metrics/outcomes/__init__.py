"""The outcomes family (the specification's "Outcomes of any benchmark"): each logged score as a run column, usage.

* :mod:`~mas_eval.metrics.outcomes.scores` — one run column per score name of ``outcomes``
  (:func:`score_columns`): Boolean for a pass/fail score, else its value;
* :mod:`~mas_eval.metrics.outcomes.usage` — a run's tokens, cost and calls (``run_tokens``,
  ``run_cost_usd``, ``run_calls``) and each agent's share of them (``agent_usage``);
* :mod:`~mas_eval.metrics.outcomes.suite` — both for :func:`mas_eval.score` (:data:`FAMILY`);
  output columns :mod:`~mas_eval.metrics.outcomes.columns`.

Scores.runs also carries each run's ``epoch`` (:data:`~mas_eval.metrics.registry.CARRIED`),
which statistics over a case's repeats (pass@k, majority vote) group by.
"""

from mas_eval.metrics.family import NAMED, Family
from mas_eval.metrics.outcomes.columns import COLUMNS, TABLES
from mas_eval.metrics.outcomes.columns import NAMED as NAMED_COLUMNS
from mas_eval.metrics.outcomes.params import OutcomesParams
from mas_eval.metrics.outcomes.scores import score_columns
from mas_eval.metrics.outcomes.suite import compute
from mas_eval.metrics.outcomes.usage import agent_shares, run_usage, usage_totals

FAMILY = Family(
    name="outcomes",
    needs=("runs", "outcomes"),
    reads=("usage",),
    params=OutcomesParams,
    compute=compute,
    description="Each logged score as a run column, a run's tokens, cost and calls, each agent's share.",
    columns=COLUMNS,
    output_tables=TABLES,
    # Its scores lead the report and are compared by default (McNemar and Newcombe's interval for a
    # pass/fail one run once per case, the paired t on case means otherwise); then what a run spent.
    headline=(NAMED, "run_tokens", "run_cost_usd"),
    compared=(NAMED,),
    named=NAMED_COLUMNS,
)

__all__ = ["FAMILY", "OutcomesParams", "agent_shares", "run_usage", "score_columns", "usage_totals"]
