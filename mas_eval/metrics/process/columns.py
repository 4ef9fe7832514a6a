"""The process family's output columns and its table ``agent_process``, with their formulas, sources and ranges.

A *turn* is a message an agent generated, the *system's usage* the ``usage`` rows that are not
the evaluator's (:mod:`~mas_eval.metrics.process.trace`); an agent is *active* in a run when it
has a turn, a system usage row or a tool call. The Gini coefficients are the crisis-MAS
methodology's ("Expert Contribution Balance": ascending sort, no n/(n-1) correction), over the
run's active agents.
"""

from __future__ import annotations

from mas_eval.metrics.registry import Metric, OutputTable

__all__ = ["AGENT_TABLE", "COLUMNS", "SPENDING", "TABLES"]

#: The run columns of what the system spent: the quantities :func:`mas_eval.stats.overhead` divides.
SPENDING = ("system_tokens", "system_calls", "system_seconds", "system_cost_usd")
#: The per-agent table: one row per active agent of a run.
AGENT_TABLE = "agent_process"

TABLES = (
    OutputTable(
        AGENT_TABLE,
        (("agent_id", "agent_id"),),
        "One row per active agent of a run: its turns, system tokens and tool calls, and its share of the run's.",
    ),
)


def _gini(what: str) -> tuple[Metric, Metric]:
    return (
        Metric(
            f"{what}_gini",
            "runs",
            f"Gini of the active agents' {what.replace('_', ' ')}s, sum((2i-n-1)w_(i)) / (n sum w) over the ascending "
            f"values (crisis-MAS methodology, no n/(n-1) correction); 0 for one agent; null when the agents' "
            f"{what.replace('_', ' ')}s are not recorded or sum to 0.",
            0,
            1,
        ),
        Metric(f"{what}_balance", "runs", f"1 - {what}_gini: 1 when every active agent has an equal share.", 0, 1),
    )


COLUMNS = (
    Metric(
        "agents_active",
        "runs",
        "Distinct agents with a turn, a system usage row or a tool call; null when the run has no message, "
        "system usage or tool call row.",
        0,
        None,
    ),
    Metric("turns", "runs", "Messages the agents generated (turns); null when the run has no messages row.", 0, None),
    Metric("rounds", "runs", "Distinct messages.round of the turns; null when the run has no messages row.", 0, None),
    Metric(
        "message_density",
        "runs",
        "turns / (agents with a turn x rounds): messages per speaking agent per round; null without a turn.",
        0,
        None,
    ),
    *_gini("token"),
    *_gini("turn"),
    *_gini("tool_call"),
    Metric(
        "redundancy",
        "runs",
        "Per round, the mean word-set Jaccard |A∩B|/|A∪B| over pairs of turns of different agents (turns without "
        "a word left out); the mean over rounds with such a pair. Null when no round has one, and unless asked for "
        "(redundancy=True: it reads every word of the turns).",
        0,
        1,
    ),
    Metric(
        "tool_calls",
        "runs",
        "Tool calls: its tool_calls rows, else runs.tool_calls, else 0 when the run has a message or system usage "
        "row; null without any record.",
        0,
        None,
    ),
    Metric(
        "tool_errors",
        "runs",
        "Tool calls that failed: rows with an error, else runs.tool_errors (with runs.tool_calls), else 0 as "
        "tool_calls is.",
        0,
        None,
    ),
    Metric(
        "tool_error_rate",
        "runs",
        "tool_errors / tool_calls; null without a tool call, or when tool_errors exceeds tool_calls.",
        0,
        1,
    ),
    Metric(
        "system_tokens",
        "runs",
        "The system's tokens: sum of its usage rows' input + output tokens (evaluator excluded), else runs.tokens, "
        "else runs.input_tokens + output_tokens, else the turns' per-call tokens.",
        0,
        None,
    ),
    Metric(
        "system_calls",
        "runs",
        "The system's model calls: sum of its usage rows' calls, else runs.api_calls, else the turns that record "
        "their call (tokens or seconds).",
        0,
        None,
    ),
    Metric(
        "system_seconds",
        "runs",
        "The run's wall-clock seconds (runs.seconds), else the sum of its usage rows' seconds, else of its turns'.",
        0,
        None,
    ),
    Metric(
        "system_cost_usd",
        "runs",
        "The system's cost in USD: sum of its usage rows' cost_usd, else runs.cost_usd.",
        0,
        None,
    ),
    Metric(
        "turns",
        AGENT_TABLE,
        "The agent's turns; null when the run has no messages row.",
        0,
        None,
    ),
    Metric(
        "tokens",
        AGENT_TABLE,
        "The agent's system tokens (usage input + output over its models); 0 without a usage row when the run's "
        "usage records tokens, else null.",
        0,
        None,
    ),
    Metric(
        "tool_calls",
        AGENT_TABLE,
        "The agent's tool_calls rows; null when the run's tool calls are known only from runs.tool_calls (> 0).",
        0,
        None,
    ),
    Metric("turn_share", AGENT_TABLE, "turns / the run's turns (null when that is 0).", 0, 1),
    Metric("token_share", AGENT_TABLE, "tokens / the sum of the run's agents' tokens (null when that is 0).", 0, 1),
    Metric("tool_call_share", AGENT_TABLE, "tool_calls / the run's tool calls in rows (null when that is 0).", 0, 1),
)
