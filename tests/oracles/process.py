"""The process family, run by run in plain Python, to read next to mas_eval/metrics/process/.

A run is a dict of its ``runs`` row; its messages, usage and tool call rows are lists of dicts of
those tables. Sums are taken in the tables' key order, as the family takes them.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

Row = dict[str, Any]

#: messages.role of a message no agent generated, and messages.source of the sample's input.
NOT_AGENT_ROLES = ("system", "user", "tool")
INPUT_SOURCE = "input"


def is_turn(message: Row) -> bool:
    """An agent generated it: not a prompt or tool result by its role, not the sample's input by its source."""
    return message.get("role") not in NOT_AGENT_ROLES and message.get("source") != INPUT_SOURCE


def words(text: str | None) -> set[str]:
    r"""The distinct runs of word characters (``\w+``) of the lower-cased text."""
    return set(re.findall(r"\w+", (text or "").lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def gini(values: list[float]) -> float | None:
    """The crisis-MAS methodology's Gini: ascending, sum((2i - n - 1) w_i) / (n sum w); None without a positive sum."""
    w = sorted(values)
    n, total = len(w), sum(w)
    if n == 0 or total <= 0:
        return None
    return sum((2 * i - n - 1) * x for i, x in enumerate(w, start=1)) / (n * total)


def _tokens(row: Row) -> int | None:
    if row.get("input_tokens") is None and row.get("output_tokens") is None:
        return None
    return (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)


def _sum(values: list[Any]) -> Any:
    """The recorded values added one by one, in the order given; None when none is recorded."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = present[0]
    for v in present[1:]:
        total += v
    return total


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def redundancy(turns: list[Row]) -> float | None:
    """Per round, the mean Jaccard of the word sets over pairs of turns by different agents (turns with
    words); the mean over rounds with such a pair."""
    per_round = []
    for round_name in sorted({t["round"] for t in turns}):
        said = [(t["agent_id"], words(t["text"])) for t in turns if t["round"] == round_name]
        said = [(agent, w) for agent, w in said if w]
        pairs = [jaccard(a[1], b[1]) for a, b in itertools.combinations(said, 2) if a[0] != b[0]]
        if pairs:
            per_round.append(sum(pairs) / len(pairs))
    return sum(per_round) / len(per_round) if per_round else None


def process(run: Row, messages: list[Row], usage: list[Row], tools: list[Row]) -> tuple[Row, dict[str, Row]]:
    """The run's columns and, per active agent, its ``agent_process`` row."""
    messages = sorted(messages, key=lambda m: (m["round"], m["agent_id"], m["turn"]))
    turns = [m for m in messages if is_turn(m)]
    system = sorted((u for u in usage if not u.get("evaluator")), key=lambda u: (u["agent_id"], u["model"]))
    traced = bool(messages) or bool(system)

    if tools:
        tool_calls, tool_errors = len(tools), sum(t.get("error") is not None for t in tools)
    elif run.get("tool_calls") is not None:
        tool_calls, tool_errors = run["tool_calls"], run.get("tool_errors")
    elif traced:
        tool_calls, tool_errors = 0, 0
    else:
        tool_calls = tool_errors = None
    rate = (
        tool_errors / tool_calls
        if tool_calls is not None and tool_calls > 0 and tool_errors is not None and tool_errors <= tool_calls
        else None
    )

    active = sorted({m["agent_id"] for m in turns} | {u["agent_id"] for u in system} | {t["agent_id"] for t in tools})
    tokens_recorded = any(_tokens(u) is not None for u in system)
    agents: dict[str, Row] = {}
    for agent in active:
        own_usage = [u for u in system if u["agent_id"] == agent]
        # An agent without a usage row spent nothing, when the run's usage records tokens at all.
        absent = 0 if tokens_recorded else None
        tokens = _sum([_tokens(u) for u in own_usage]) if own_usage else absent
        agents[agent] = {
            "turns": sum(m["agent_id"] == agent for m in turns) if messages else None,
            "tokens": tokens,
            "tool_calls": sum(t["agent_id"] == agent for t in tools) if tools or tool_calls == 0 else None,
        }
    for quantity, share in (("turns", "turn_share"), ("tokens", "token_share"), ("tool_calls", "tool_call_share")):
        total = sum(a[quantity] for a in agents.values() if a[quantity] is not None)
        for a in agents.values():
            a[share] = a[quantity] / total if a[quantity] is not None and total > 0 else None

    rounds = len({m["round"] for m in turns}) if messages else None
    speakers = len({m["agent_id"] for m in turns})
    out: Row = {
        "agents_active": len(active) if traced or active else None,
        "turns": len(turns) if messages else None,
        "rounds": rounds,
        "message_density": len(turns) / (speakers * rounds) if rounds else None,
    }
    for quantity, prefix in (("tokens", "token"), ("turns", "turn"), ("tool_calls", "tool_call")):
        g = gini([a[quantity] for a in agents.values() if a[quantity] is not None])
        out[f"{prefix}_gini"], out[f"{prefix}_balance"] = g, None if g is None else 1 - g
    out["redundancy"] = redundancy(turns)
    out |= {"tool_calls": tool_calls, "tool_errors": tool_errors, "tool_error_rate": rate}

    split = (
        None
        if run.get("input_tokens") is None or run.get("output_tokens") is None
        else run["input_tokens"] + run["output_tokens"]
    )
    recording = [m for m in turns if _tokens(m) is not None or m.get("seconds") is not None]
    out |= {
        "system_tokens": _first(
            _sum([_tokens(u) for u in system]), run.get("tokens"), split, _sum([_tokens(m) for m in turns])
        ),
        "system_calls": _first(_sum([u.get("calls") for u in system]), run.get("api_calls"), len(recording) or None),
        "system_seconds": _first(
            run.get("seconds"), _sum([u.get("seconds") for u in system]), _sum([m.get("seconds") for m in turns])
        ),
        "system_cost_usd": _first(_sum([u.get("cost_usd") for u in system]), run.get("cost_usd")),
    }
    return out, agents


def overhead(runs: list[Row], metric: str, control: str) -> dict[str, float | None]:
    """Per run id: its value of ``metric`` over the mean of the control's values on its case (values
    that cannot be spending, negative or infinite, set aside); None where either is missing or the mean is 0."""

    def usable(value: Any) -> float | None:
        if value is None or value != value or value < 0 or value == float("inf"):
            return None
        return float(value)

    by_case: dict[Any, list[float]] = {}
    for run in sorted(runs, key=lambda r: r["run_id"]):
        value = usable(run[metric])
        if run["system"] == control and value is not None:
            by_case.setdefault(run["case_id"], []).append(value)
    out: dict[str, float | None] = {}
    for run in runs:
        value, controls = usable(run[metric]), by_case.get(run["case_id"])
        mean = sum(controls) / len(controls) if controls else None
        out[run["run_id"]] = value / mean if value is not None and mean else None
    return out
