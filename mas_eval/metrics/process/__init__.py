"""The process family: how the agents of a run worked together, from any trace (messages, usage, tool calls).

* :mod:`~mas_eval.metrics.process.trace` — which messages are turns (an agent generated them),
  which usage rows are the system's (not the evaluator's), what the words of a message are;
* :mod:`~mas_eval.metrics.process.activity` — agents active, turns, rounds, message density, each
  agent's share of the run's tokens, turns and tool calls (``agent_process``) and the Gini and
  balance of each share vector;
* :mod:`~mas_eval.metrics.process.redundancy` — the word-set Jaccard between different agents'
  turns of a round;
* :mod:`~mas_eval.metrics.process.spending` — the system's tokens, calls, seconds and cost, and
  its tool calls and errors;
* :mod:`~mas_eval.metrics.process.suite` — all of it for :func:`mas_eval.score` (:data:`FAMILY`);
  output columns :mod:`~mas_eval.metrics.process.columns`.

Overhead against a control system: :func:`mas_eval.stats.overhead`
----------------------------------------------------------------------

"This run spent 5x the tokens of the single agent on the same case" compares a run with other
runs: the control system's runs of its case. A family column cannot do that soundly. Scoring is
shard by shard (runs dealt to shards by ``hash(run_id) % N``, :mod:`mas_eval.storage.sharding`),
and a family sees one shard, where the control's runs of a case may not be; and a Scores row is
a function of its own run's rows, which is what lets shards be scored in any order, on any
worker, and written as they finish, with the tables of scoring the Dataset whole, bit for bit.
A column filled in after the shards are joined would break that contract (a run's row would
change when other runs are added) and cost a second pass rewriting every shard's ``runs`` file.

So the family computes what each run spent (``system_tokens``, ``system_calls``,
``system_seconds``, ``system_cost_usd``), shard-local like every other column, and the ratio to
the control's mean on the same case is a statistic over the scored runs, where every run of
every shard meets: :func:`mas_eval.stats.overhead` (``control="single"`` is its parameter, as
it is :func:`~mas_eval.stats.compare`'s). The same Scores then give the overhead against any
control without scoring again, and the overhead of a sharded scoring is that of an unsharded
one because their Scores are equal.
"""

from mas_eval.metrics.family import Family
from mas_eval.metrics.process.columns import COLUMNS, TABLES
from mas_eval.metrics.process.params import ProcessParams
from mas_eval.metrics.process.suite import compute

FAMILY = Family(
    name="process",
    needs=("runs", ("messages", "usage", "tool_calls")),
    reads=("messages", "usage", "tool_calls"),
    params=ProcessParams,
    compute=compute,
    description="How the agents worked together: activity, balance, redundancy, tool use and spending.",
    columns=COLUMNS,
    output_tables=TABLES,
    # How a system worked, per system: the report's "How the agents worked" section holds the rest. It compares
    # nothing by default: a single agent has one active agent and no balance by construction, so a test of these
    # between a team and one agent restates the design; what it costs is stats.overhead's and the cost section's
    # (and the outcomes family's run_tokens headline it).
    headline=("agents_active", "turns", "tool_error_rate"),
)

__all__ = ["FAMILY", "ProcessParams"]
