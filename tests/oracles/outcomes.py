"""The outcomes family, run by run in plain Python (SPEC §3b), to read next to mas_eval/metrics/outcomes/.

A run is a dict of its ``runs`` row; its usage and outcome rows are lists of dicts of those tables.
"""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]


def score_columns(outcomes: list[Row], pass_fail: set[str]) -> dict[str, Any]:
    """The run's score of each name it has: ``passed`` (a bool) for a pass/fail name, else ``value``."""
    return {row["name"]: row["passed"] if row["name"] in pass_fail else row["value"] for row in outcomes}


def _row_tokens(row: Row) -> int | None:
    if row["input_tokens"] is None and row["output_tokens"] is None:
        return None
    return (row["input_tokens"] or 0) + (row["output_tokens"] or 0)


def _sum(values: list[Any]) -> Any:
    """The sum of the recorded values, in the order given; None when none is recorded."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = present[0]
    for v in present[1:]:
        total += v
    return total


def _in_key_order(usage: list[Row]) -> list[Row]:
    return sorted(usage, key=lambda row: (row["agent_id"], row["model"]))


def _is_evaluator(row: Row) -> bool:
    return row.get("evaluator") is True


def run_usage(run: Row, usage: list[Row]) -> Row:
    """``run_tokens``: tokens, else input + output (both recorded), else Σ tokens of the usage rows that
    are not an evaluator's; cost and calls alike. ``evaluator_tokens`` and ``evaluator_cost_usd``:
    the sums of the evaluator's rows (None when it has none)."""
    judged = _in_key_order([r for r in usage if _is_evaluator(r)])
    rows = _in_key_order([r for r in usage if not _is_evaluator(r)])
    split = (
        None
        if run["input_tokens"] is None or run["output_tokens"] is None
        else run["input_tokens"] + run["output_tokens"]
    )
    tokens = (
        run["tokens"]
        if run["tokens"] is not None
        else split
        if split is not None
        else _sum([_row_tokens(r) for r in rows])
    )
    cost = run["cost_usd"] if run["cost_usd"] is not None else _sum([r["cost_usd"] for r in rows])
    calls = run["api_calls"] if run["api_calls"] is not None else _sum([r["calls"] for r in rows])
    return {
        "run_tokens": tokens,
        "run_cost_usd": cost,
        "run_calls": calls,
        "evaluator_tokens": _sum([_row_tokens(r) for r in judged]),
        "evaluator_cost_usd": _sum([r["cost_usd"] for r in judged]),
    }


def agent_shares(usage: list[Row]) -> dict[tuple[str, str], Row]:
    """Per (agent, model) of one run: its tokens and its shares of the run's usage tokens, calls and cost,
    the totals being of the system's rows; an evaluator's row has its tokens and no shares."""
    rows = _in_key_order(usage)
    system = [r for r in rows if not _is_evaluator(r)]
    totals = {
        "tokens": _sum([_row_tokens(r) for r in system]),
        "calls": _sum([r["calls"] for r in system]),
        "cost_usd": _sum([r["cost_usd"] for r in system]),
    }

    def share(part: Any, total: Any, row: Row) -> float | None:
        if _is_evaluator(row) or part is None or total is None or total <= 0:
            return None
        return part / total

    return {
        (r["agent_id"], r["model"]): {
            "tokens": _row_tokens(r),
            "token_share": share(_row_tokens(r), totals["tokens"], r),
            "call_share": share(r["calls"], totals["calls"], r),
            "cost_share": share(r["cost_usd"], totals["cost_usd"], r),
        }
        for r in rows
    }
