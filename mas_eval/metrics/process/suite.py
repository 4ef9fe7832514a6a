"""The process family for :func:`mas_eval.score`: activity, balance, redundancy, tool use and spending together."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.process.activity import agent_activity, gini_columns, run_activity, traced_runs
from mas_eval.metrics.process.columns import AGENT_TABLE, COLUMNS
from mas_eval.metrics.process.params import ProcessParams
from mas_eval.metrics.process.redundancy import no_redundancy, redundancy
from mas_eval.metrics.process.spending import spending, tool_use
from mas_eval.metrics.process.trace import agent_messages, system_usage

__all__ = ["compute"]


def compute(
    tables: Mapping[str, pl.LazyFrame], params: ProcessParams, codes: KeyCodes
) -> dict[str, pl.LazyFrame | pl.DataFrame]:
    """Compute ``runs`` (the family's run columns, one row per run in run order) and ``agent_process``.

    ``tables``: ``runs``, ``messages``, ``usage`` and ``tool_calls`` (empty when absent) keyed by codes.
    """
    # Labels stay codes until score() decodes them.
    runs, messages = tables["runs"], tables["messages"]
    turns = agent_messages(messages)
    usage = system_usage(tables["usage"])
    traced = traced_runs(messages, usage)
    tools = tool_use(runs, tables["tool_calls"], traced)
    agents_query = agent_activity(messages, turns, usage, tables["tool_calls"], tools)
    activity, agents, tool_columns, spent = pl.collect_all(
        [run_activity(runs, messages, turns, agents_query, traced), agents_query, tools, spending(runs, usage, turns)]
    )
    n = codes.runs.height
    frame = pl.concat([activity, tool_columns.drop(RUN_KEY), spent.drop(RUN_KEY)], how="horizontal").with_columns(
        *gini_columns(agents, n), redundancy(turns, n) if params.redundancy else no_redundancy(n)
    )
    columns = [m.name for m in COLUMNS if m.table == "runs"]
    return {"runs": frame.select(RUN_KEY, *columns), AGENT_TABLE: agents}
