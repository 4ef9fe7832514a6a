"""The report's "How the agents worked" section: the process family's measures per system, overhead, agents' shares.

:func:`process_section` is what :func:`mas_eval.report.build` adds when the process family ran
(the Dataset has messages, usage or tool calls). It holds, per system with 95% intervals
(:func:`~mas_eval.stats.describe`): agents active, turns, rounds, messages per agent and round,
the balance of the agents' tokens, turns and tool calls (1 − Gini), the redundancy between agents'
turns, the tool-error rate and what the system spent; each run's spending over the control's mean
on the same case (:func:`~mas_eval.stats.overhead`); and each agent's share of its system's tokens,
turns and tool calls (:func:`~mas_eval.stats.agent_shares`). Two figures lead:
:func:`~mas_eval.plots.system_profile` of the measures and :func:`~mas_eval.plots.agent_shares`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from mas_eval.errors import MasEvalError
from mas_eval.metrics.process.columns import AGENT_TABLE, SPENDING
from mas_eval.report.parts import ReportFigure, ReportTable, Section
from mas_eval.report.tables import has_values, repeats_cases

if TYPE_CHECKING:
    from mas_eval.scoring.scores import Scores

__all__ = ["DRAWN", "MEASURES", "OVERHEADS", "process_section"]

#: The process family's run columns the section summarises, in its order.
MEASURES = (
    "agents_active", "turns", "rounds", "message_density", "token_balance", "turn_balance", "tool_call_balance",
    "redundancy", "tool_calls", "tool_error_rate", *SPENDING,
)  # fmt: skip
#: The spending divided by the control's on the same case: what a team's overhead is usually told in.
OVERHEADS = ("system_tokens", "system_cost_usd")
#: Those its figure draws (the overheads after them), and how a panel names them.
DRAWN = {
    "agents_active": "Agents active",
    "turns": "Turns",
    "token_balance": "Token balance (1 − Gini)",
    "turn_balance": "Turn balance (1 − Gini)",
    "redundancy": "Redundancy (Jaccard)",
    "tool_error_rate": "Tool-error rate",
    "system_tokens_overhead": "Tokens ÷ control's on the case",
    "system_cost_usd_overhead": "Cost ÷ control's on the case",
}

KEY, TITLE = "process", "How the agents worked"

_ABOUT = (
    "From the runs' traces (messages, usage, tool calls): agents_active counts the agents with a turn, a model call "
    "or a tool call; turns the messages they generated; message_density the turns per speaking agent and round; a "
    "balance is 1 − the Gini coefficient of the active agents' tokens (turns, tool calls), 1 when every agent does "
    "an equal part; redundancy the mean word-set Jaccard similarity between different agents' turns of a round; "
    "tool_error_rate the share of tool calls that failed; system_* what the system spent, an evaluator's calls "
    "left out. Means per system with 95% intervals ({how})."
)


def _overheads(runs: pl.DataFrame, control: str) -> tuple[pl.DataFrame, pl.DataFrame | None, str | None]:
    """Return ``runs`` with ``<spending>_overhead`` columns and the per-system summary, or why there is none.

    A run's overhead is its spending over the control's mean on its case.
    """
    from mas_eval import stats

    spending = [name for name in OVERHEADS if has_values(runs, name)]
    if not spending:
        return runs, None, "no overhead against the control: the runs record no spending (system_tokens, ...)"
    if control not in set(runs["system"].unique().to_list()):
        return runs, None, f"no overhead against the control: the runs have no {control} runs"
    try:
        per_run = stats.overhead(runs, spending, control=control)
        summary = stats.overhead(runs, spending, control=control, level="system")
    except MasEvalError as exc:
        return runs, None, f"no overhead against the control: {exc}"
    wide = per_run.pivot("metric", index="run_id", values="ratio", aggregate_function=None)
    wide = wide.rename({name: f"{name}_overhead" for name in spending if name in wide.columns})
    return runs.join(wide, on="run_id", how="left"), summary, None


def process_section(scores: Scores, control: str) -> Section:
    """Make the "How the agents worked" section of ``scores``; omitted, with why, when no measure has a value."""
    from mas_eval import plots, stats

    runs = scores.runs
    measures = [name for name in MEASURES if has_values(runs, name)]
    if not measures:
        return Section(KEY, TITLE, omitted="the runs have no messages, usage or tool calls to read how agents worked")
    missing: list[str] = []
    runs, overhead, why = _overheads(runs, control)
    if why:
        missing.append(why)
    ratios = [f"{name}_overhead" for name in OVERHEADS if has_values(runs, f"{name}_overhead")]
    cluster = "case_id" if repeats_cases(runs) else None
    how = "cluster-robust over cases" if cluster else "the t interval; Wilson's for a rate of runs"
    table = stats.describe(runs, [*measures, *ratios], cluster=cluster)
    text = [_ABOUT.format(how=how)]
    if overhead is not None:
        text.append(
            f"An overhead is a run's spending divided by the mean of {control}'s runs of the same case (the case's "
            f"difficulty cancels); {control}'s own runs spread around 1."
        )
    drawn = [name for name in DRAWN if name in set(table["metric"].to_list())]
    figures = [
        ReportFigure(
            "process_profile",
            f"How each system worked: the mean of each measure per system with its 95% interval ({how}).",
            plots.system_profile(table, drawn, labels=DRAWN),
        )
    ]
    agents = scores.get(AGENT_TABLE)
    if agents is not None and agents.height:
        shares = stats.agent_shares(agents)
        if any(shares[name].drop_nulls().len() for name in ("token_share", "turn_share", "tool_call_share")):
            figures.append(
                ReportFigure(
                    "process_agent_shares",
                    "Each agent's share of its system's tokens, turns and tool calls, pooled over the system's runs "
                    "(the most active agents; the rest as one bar).",
                    plots.agent_shares(shares),
                    data=shares,
                )
            )
    else:
        missing.append("no agent's share: the scores have no agent_process table")
    tables = [ReportTable("process_profile", "How each system worked: mean per system with its 95% interval", table)]
    if overhead is not None:
        caption = f"Each system's spending over {control}'s on the same case: ratios per run, summarised"
        tables.append(ReportTable("process_overhead", caption, overhead))
    return Section(KEY, TITLE, text=text, tables=tables, figures=figures, missing=missing)
