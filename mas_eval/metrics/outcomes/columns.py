"""The outcomes family's output columns and tables, with their declared properties (the registry's entries)."""

from __future__ import annotations

from mas_eval.metrics.registry import Metric, NamedColumns, OutputTable

__all__ = ["COLUMNS", "NAMED", "TABLES"]

TABLES = (
    OutputTable(
        "agent_usage",
        (("agent_id", "agent_id"), ("model", None)),
        "One row per agent and model of a run's usage: its share of the run's tokens, calls and cost.",
    ),
)

#: One run column per score name in ``outcomes.name`` (``score(ds).runs["match"]``).
NAMED = (
    NamedColumns(
        "outcomes.name",
        "The run's value of the score of that name: Boolean for a pass/fail score (outcomes.passed; compare "
        "reads it as 0/1), Float64 (outcomes.value) for any other; null for a run without it.",
    ),
)

COLUMNS = (
    Metric(
        "run_tokens",
        "runs",
        "The system's tokens of the run: runs.tokens, else runs.input_tokens + output_tokens, else Σ input + output "
        "tokens of the usage rows that are not an evaluator's (a judge's rows, usage.evaluator, are left out).",
        0,
        None,
    ),
    Metric(
        "run_cost_usd",
        "runs",
        "The system's cost of the run in USD: runs.cost_usd, else Σ usage.cost_usd of the rows not an evaluator's.",
        0,
        None,
    ),
    Metric(
        "run_calls",
        "runs",
        "The system's model calls of the run: runs.api_calls, else Σ usage.calls of the rows not an evaluator's.",
        0,
        None,
    ),
    Metric(
        "evaluator_tokens",
        "runs",
        "The evaluator's (a judge model grading the run) tokens: Σ input + output tokens of the run's usage rows with "
        "evaluator true; null when it has none. Not in run_tokens.",
        0,
        None,
    ),
    Metric(
        "evaluator_cost_usd",
        "runs",
        "The evaluator's cost in USD: Σ usage.cost_usd of the run's rows with evaluator true. Not in run_cost_usd.",
        0,
        None,
    ),
    Metric("tokens", "agent_usage", "The agent's tokens with the model: input + output (a null one as 0).", 0, None),
    Metric(
        "token_share",
        "agent_usage",
        "tokens / Σ tokens of the run's usage rows that are the system's (null when that is 0, and for an "
        "evaluator's row).",
        0,
        1,
    ),
    Metric(
        "call_share",
        "agent_usage",
        "calls / Σ calls of the run's system usage rows (null when that is 0, and for an evaluator's row).",
        0,
        1,
    ),
    Metric(
        "cost_share",
        "agent_usage",
        "cost_usd / Σ cost_usd of the run's system usage rows (null when that is 0, and for an evaluator's row).",
        0,
        1,
    ),
)
