"""Datasets for the case viewer's tests and benchmark: known discordant cases, hostile transcripts, 10,000 cases.

:func:`paired_outcomes` makes a Dataset of two systems ("mas", "single") each run once per case,
whose pass/fail score ``match`` is given case by case, with a short transcript per run (its
messages, a tool call with an error) and the scorer's answer and explanation. :func:`hostile_dataset`
adds a run whose every text is an attack on a page that would show it as markup: a script, an
image whose error handler runs one, a Markdown table, right-to-left text and a bidirectional
override, ``</script>`` to close the element the data sit in. :func:`many_cases` makes the large
page: ``cases`` cases of ``messages`` messages each (half per system), built column by column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from mas_eval.storage.dataset import Dataset

__all__ = ["HOSTILE", "HOSTILE_CASE", "RTL", "hostile_dataset", "many_cases", "paired_outcomes"]

#: Text that runs script when a page inserts it as markup, and closes a <script> element it sits in.
HOSTILE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    "</script><script>window.__pwned = 3</script><!-- not a comment -->"
)
#: Right-to-left text (Hebrew and Arabic), a bidirectional override and a Markdown table.
RTL = "שלום עולם — مرحبا بالعالم"
MARKDOWN = "| a | b |\n|---|---|\n| **1** | [x](javascript:window.__pwned=4) |"
#: The case whose runs hold the hostile text; its id is hostile too.
HOSTILE_CASE = "<b>case</b>\"'&<script>window.__pwned=5</script>"


#: Sentences the messages are made of (a message is two of them, by its run and turn).
SENTENCES = (
    "I think the answer is yes, since the premise holds for every case we checked.",
    "I disagree: the second condition fails when the input is empty, so the answer is no.",
    "Let us check the arithmetic again before we commit to an answer.",
    "The evidence from the first round supports the proposer's reading of the question.",
    "A counterexample would settle it; I could not find one after trying small values.",
    "Final answer: yes.",
    "Final answer: no.",
)


def _transcript(run_ids: list[str], systems: list[str], messages: int) -> pl.DataFrame:
    """``messages`` messages per run: the question, then the agents' turns (the MAS has two agents)."""
    n = len(run_ids)
    run = np.repeat(np.arange(n), messages)
    turn = np.tile(np.arange(1, messages + 1), n)
    system = np.array(systems)[run]
    agent = np.where(
        turn == 1, "user", np.where(system == "mas", np.where(turn % 2 == 0, "proposer", "critic"), "solo")
    )
    sentences = pl.Series(SENTENCES)
    frame = pl.DataFrame(
        {
            "run_id": np.array(run_ids)[run],
            "round": ((turn + 1) // 4 + 1).astype(str),
            "agent_id": agent,
            "turn": turn,
            "first": sentences.gather((run + turn) % len(SENTENCES)),
            "second": sentences.gather((3 * run + 2 * turn) % len(SENTENCES)),
            "role": np.where(turn == 1, "user", "assistant"),
            "source": np.where(turn == 1, "input", "generate"),
            "input_tokens": np.where(turn == 1, 0, 20 + turn),
            "output_tokens": np.where(turn == 1, 0, 3 + turn % 40),
        }
    )
    question = pl.format("Question of {}: is the claim true?", "run_id")
    text = (
        pl.when(pl.col("turn") == 1)
        .then(question)
        .otherwise(pl.format("({} of {}) {} {}", "turn", "run_id", "first", "second"))
    )
    return frame.with_columns(
        text=text,
        input_tokens=pl.when(pl.col("turn") > 1).then("input_tokens"),
        output_tokens=pl.when(pl.col("turn") > 1).then("output_tokens"),
    ).drop("first", "second")


def paired_outcomes(passes: Sequence[tuple[bool | None, bool | None]], *, messages: int = 3) -> Dataset:
    """Cases ``c000``, ``c001``, ... each run once by "mas" and "single", whose ``match`` is ``passes[i]``
    (``None``: that system did not run the case)."""
    rows = [
        (f"{system}-{i:03d}", system, f"c{i:03d}", value)
        for i, pair in enumerate(passes)
        for system, value in zip(("mas", "single"), pair, strict=True)
        if value is not None
    ]
    run_ids = [r[0] for r in rows]
    systems = [r[1] for r in rows]
    runs = pl.DataFrame(
        {
            "run_id": run_ids,
            "system": systems,
            "case_id": [r[2] for r in rows],
            "task": "yes_no",
            "epoch": 1,
            "tokens": [400 if s == "mas" else 100 for s in systems],
            "cost_usd": [0.004 if s == "mas" else 0.001 for s in systems],
            "target": "yes",
        }
    )
    outcomes = pl.DataFrame(
        {
            "run_id": run_ids,
            "name": "match",
            "value": [float(r[3]) for r in rows],
            "passed": [bool(r[3]) for r in rows],
            "answer": ["yes" if r[3] else "no" for r in rows],
            "explanation": [f"the run answered {'yes' if r[3] else 'no'}; the target is yes" for r in rows],
        }
    )
    tool_calls = pl.DataFrame(
        {
            "run_id": run_ids,
            "agent_id": ["proposer" if s == "mas" else "solo" for s in systems],
            "turn": 1,
            "tool": "calculator",
            "arguments": '{"expression": "1 + 1"}',
            "error": [None if s == "mas" else "timeout after 30 s" for s in systems],
            "message_turn": 2,
        }
    )
    return Dataset.from_frames(
        runs=runs, messages=_transcript(run_ids, systems, messages), outcomes=outcomes, tool_calls=tool_calls
    )


def hostile_dataset() -> Dataset:
    """:func:`paired_outcomes` of 6 cases (2 where only the MAS passed, 1 the reverse), whose first
    case is :data:`HOSTILE_CASE` and its MAS run's messages, agent, tool call and scorer are hostile,
    and every run has a second score named :data:`HOSTILE`."""
    ds = paired_outcomes([(True, False), (True, False), (False, True), (True, True), (False, False), (True, True)])
    frames = {name: ds.collect(name) for name in ds.table_names}
    first = "mas-000"

    def hostile(frame: pl.DataFrame, **columns: str) -> pl.DataFrame:
        mine = pl.col("run_id") == first
        return frame.with_columns(
            pl.when(mine).then(pl.lit(v)).otherwise(pl.col(k)).alias(k) for k, v in columns.items()
        )

    frames["runs"] = frames["runs"].with_columns(
        pl.when(pl.col("case_id") == "c000").then(pl.lit(HOSTILE_CASE)).otherwise(pl.col("case_id")).alias("case_id"),
        pl.when(pl.col("run_id") == first).then(pl.lit(HOSTILE)).otherwise(pl.col("target")).alias("target"),
    )
    messages = frames["messages"]
    text = pl.when(pl.col("turn") == 2).then(pl.lit(HOSTILE)).when(pl.col("turn") == 3).then(pl.lit(MARKDOWN))
    text = text.otherwise(pl.lit(RTL + " \u202eevil\u202c"))
    frames["messages"] = messages.with_columns(
        pl.when(pl.col("run_id") == first).then(text).otherwise(pl.col("text")).alias("text"),
        pl.when((pl.col("run_id") == first) & (pl.col("turn") == 2))
        .then(pl.lit("<i>proposer</i>"))
        .otherwise(pl.col("agent_id"))
        .alias("agent_id"),
    )
    frames["tool_calls"] = hostile(
        frames["tool_calls"], agent_id="<i>proposer</i>", arguments=HOSTILE, error=HOSTILE, tool="<svg onload=x>"
    )
    frames["outcomes"] = hostile(frames["outcomes"], answer=HOSTILE, explanation=MARKDOWN + "\n" + RTL)
    # A score whose name is hostile: a run column of that name in the scores.
    named = frames["outcomes"].with_columns(name=pl.lit(HOSTILE), value=pl.lit(0.5), passed=pl.lit(None, pl.Boolean))
    frames["outcomes"] = pl.concat([frames["outcomes"], named])
    return Dataset.from_frames(**frames)


def many_cases(cases: int, messages: int, *, seed: int = 0) -> Dataset:
    """``cases`` cases run once by each system, ``messages`` messages per case (half in each run), and a
    pass/fail ``match`` drawn with pass rates 0.7 (mas) and 0.6 (single), seeded."""
    rng = np.random.default_rng(seed)
    case = np.repeat(np.arange(cases), 2)
    systems = np.tile(np.array(["mas", "single"]), cases)
    run_ids = [f"{s}-{c:06d}" for s, c in zip(systems.tolist(), case.tolist(), strict=True)]
    passed = rng.random(case.size) < np.where(systems == "mas", 0.7, 0.6)
    runs = pl.DataFrame(
        {
            "run_id": run_ids,
            "system": systems,
            "case_id": [f"case{c:06d}" for c in case.tolist()],
            "task": [f"task{c % 5}" for c in case.tolist()],
            "epoch": 1,
            "tokens": rng.integers(100, 5000, case.size),
            "cost_usd": rng.random(case.size) / 100,
            "target": "yes",
        }
    )
    outcomes = pl.DataFrame(
        {"run_id": run_ids, "name": "match", "value": passed.astype(float), "passed": passed, "answer": "yes"}
    )
    return Dataset.from_frames(
        runs=runs, outcomes=outcomes, messages=_transcript(run_ids, systems.tolist(), max(1, messages // 2))
    )
