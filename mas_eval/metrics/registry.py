"""Every output column of every metric family, once, with its declared properties.

The registry is the single list of what :func:`mas_eval.score` produces: the families take
their output columns from it, the CLI and README document them from it, and one
parametrised test suite checks each declared property (range, row-order invariance) on
random datasets, as scikit-learn does for its metrics. A family adds its columns (and any
table of its own) with :func:`register`.

>>> from mas_eval.metrics.registry import columns, metric
>>> columns("agents", "decision")
['contribution', 'normalized_entropy', 'confidence', 'top_choice']
>>> columns("agents", "diagnosis")
['insight', 'synthesis', 'action', 'valence', 'credibility']
>>> metric("runs", "consensus_level").high
1
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["METRICS", "OUTPUT_TABLES", "Metric", "OutputTable", "columns", "metric", "register", "unregister"]


@dataclass(frozen=True)
class Metric:
    """One output column.

    Attributes
    ----------
    name, table
        Column name and the :class:`~mas_eval.scoring.pipeline.Scores` table holding it.
    description
        What it measures, and where its formula comes from.
    low, high
        Documented range (inclusive); ``None`` for unbounded.
    family
        The metric family that computes it.
    codes
        For a column of labels: the kind of label (``"alternative"``, ``"agent_id"``) it holds
        as integer codes until the output is decoded (:mod:`mas_eval.metrics.codes`).
    order_invariant
        Unchanged when the rows of the input tables are shuffled.
    """

    name: str
    table: str
    description: str
    low: float | None = None
    high: float | None = None
    family: str = "decision"
    codes: str | None = None
    order_invariant: bool = True


@dataclass(frozen=True)
class OutputTable:
    """One table of :class:`~mas_eval.scoring.pipeline.Scores`.

    Every row is led by the run's identifying columns (``schema.RUN_ID_COLUMNS``), then
    ``key``: the columns that, with ``run_id``, identify the row, each with the kind of label
    it holds as a code (:mod:`mas_eval.metrics.codes`), or ``None`` for a column of plain
    labels. ``family`` is the family that produces it; ``None`` for ``runs``, to which every
    family may add columns. A family's frame may carry an identifying column of its own (the
    answers family's ``items`` carry each answer's ``task``): its values, where not null,
    replace the run's.
    """

    name: str
    key: tuple[tuple[str, str | None], ...]
    description: str
    family: str | None = None

    @property
    def key_columns(self) -> list[str]:
        return [column for column, _ in self.key]


def _d(table: str, name: str, description: str, low: float | None = None, high: float | None = None,
       codes: str | None = None) -> Metric:  # fmt: skip
    return Metric(name, table, description, low, high, family="decision", codes=codes)


_OUTPUT_TABLES: dict[str, OutputTable] = {
    t.name: t
    for t in (
        OutputTable("runs", (), "One row per run: every family's run-level metrics."),
        OutputTable("agents", (("agent_id", "agent_id"),), "One row per agent of a run.", "decision"),
        OutputTable("alternatives", (("alternative", "alternative"),), "One row per alternative of a run.", "decision"),
        OutputTable(
            "pairwise",
            (("agent_a", "agent_id"), ("agent_b", "agent_id")),
            "One row per pair of agents of a run with beliefs (agent_a < agent_b), on request.",
            "decision",
        ),
    )
}

_METRICS: list[Metric] = [
    _d("runs", "dqs", "Decision quality score after the ground-truth boost (the crisis-MAS methodology).", 0, 1),
    _d("runs", "dqs_raw", "DQS before the boost: criteria satisfaction, else MCDA, else final score of a*."),
    _d("runs", "dqs_method", "Which step of the cascade gave the DQS: criteria, mcda or final."),
    _d("runs", "gt_match", "Recommended == correct; null without ground truth."),
    _d("runs", "consensus_level", "Mean pairwise cosine of the agents' belief vectors (closed form).", 0, 1),
    _d("runs", "agreement_percentage", "Share of agents whose top choice is the top preference.", 0, 1),
    _d("runs", "top_preference", "Most frequent top choice; ties to the id that sorts first.", codes="alternative"),
    _d("runs", "num_agents", "Agents in the run (agents ∪ beliefs tables).", 0, None),
    _d("runs", "decision_confidence", "0.6·CL + 0.4·mean(c_i) with ≥2 agents, else self-reported.", 0, 1),
    _d("runs", "average_confidence", "Mean agent confidence.", 0, 1),
    _d("runs", "uncertainty", "1 − decision_confidence.", 0, 1),
    _d("runs", "confidence_variance", "Population variance of agent confidences (ddof=0).", 0, 0.25),
    _d("runs", "confidence_std", "Population standard deviation of agent confidences.", 0, 0.5),
    _d("runs", "min_confidence", "Lowest agent confidence.", 0, 1),
    _d("runs", "max_confidence", "Highest agent confidence.", 0, 1),
    _d("runs", "balance_score", "1 − Gini of the agents' contributions.", 0, 1),
    _d("runs", "gini_coefficient", "Gini of contributions as the crisis-MAS methodology writes it, uncorrected.", 0, 1),
    _d("runs", "diversity_score", "Distinct top choices / agents.", 0, 1),
    _d("runs", "unique_preferences", "Distinct top choices.", 0, None),
    _d("runs", "time_to_consensus", "Deliberation iterations (runs.iterations).", 0, None),
    _d("runs", "api_calls_used", "API calls (runs.api_calls).", 0, None),
    _d("runs", "processing_time_seconds", "Wall-clock seconds (runs.seconds).", 0, None),
    _d("runs", "tokens_used", "Tokens (runs.tokens).", 0, None),
    _d("runs", "cost_usd", "Cost in USD (runs.cost_usd).", 0, None),
    _d("runs", "iteration_efficiency", "1 / (1 + iterations / 1).", 0, 1),
    _d("runs", "api_efficiency", "1 / (1 + api_calls / 3).", 0, 1),
    _d("runs", "time_efficiency", "1 / (1 + seconds / 5).", 0, 1),
    _d("runs", "efficiency_score", "Mean of the three efficiencies.", 0, 1),
    _d("runs", "er_unassigned", "Belief left unassigned by evidential reasoning (β_H).", 0, 1),
    _d("agents", "contribution", "(c_i + H_norm(m_i)) / 2.", 0, 1),
    _d("agents", "normalized_entropy", "Entropy of the agent's beliefs / ln N.", 0, 1),
    _d("agents", "confidence", "The agent's confidence.", 0, 1),
    _d("agents", "top_choice", "The agent's highest-mass alternative; ties to the first id.", codes="alternative"),
    _d("alternatives", "topsis_closeness", "TOPSIS relative closeness d⁻/(d⁺+d⁻).", 0, 1),
    _d("alternatives", "topsis_distance_best", "Euclidean distance to the ideal solution.", 0, None),
    _d("alternatives", "topsis_distance_worst", "Euclidean distance to the anti-ideal solution.", 0, None),
    _d("alternatives", "topsis_rank", "1 = highest closeness; ties to the first id.", 1, None),
    _d("alternatives", "weighted_sum", "Σ w·s / Σ w of criteria satisfactions (crisis_mas_poc's MCDA).", 0, 1),
    _d("alternatives", "mcda_score", "The preset's MCDA score: TOPSIS closeness or weighted sum.", 0, 1),
    _d("alternatives", "mcda_rank", "1 = highest mcda_score; ties to the first id.", 1, None),
    _d("alternatives", "er_belief", "Combined belief in the alternative (evidential reasoning).", 0, 1),
    _d("alternatives", "er_rank", "1 = highest er_belief; ties to the first id.", 1, None),
    _d(
        "alternatives",
        "criteria_satisfaction",
        "Mean (or weighted mean) criteria satisfaction: what DQS averages.",
        0,
        1,
    ),
    _d("pairwise", "similarity", "Cosine similarity of the two agents' belief vectors.", 0, 1),
]


#: Every registered output column (a live view: registered families' columns appear here).
METRICS: list[Metric] = _METRICS
#: Every registered output table, by name (a live view).
OUTPUT_TABLES: dict[str, OutputTable] = _OUTPUT_TABLES


def columns(table: str, family: str | None = None) -> list[str]:
    """The registered columns of output table ``table`` (of one ``family``), in registry order."""
    return [m.name for m in _METRICS if m.table == table and (family is None or m.family == family)]


def metric(table: str, name: str) -> Metric:
    """The registry entry of column ``name`` in table ``table``."""
    for m in _METRICS:
        if (m.table, m.name) == (table, name):
            return m
    msg = f"no registered column {name!r} in table {table!r}"
    raise KeyError(msg)


def register(metrics: Iterable[Metric], tables: Iterable[OutputTable] = ()) -> None:
    """Add a family's output tables and columns; a name taken by another entry is an error."""
    tables, metrics = list(tables), list(metrics)
    for table in tables:
        if table.name in _OUTPUT_TABLES:
            msg = f"output table {table.name!r} is already registered (by {_OUTPUT_TABLES[table.name].family!r})"
            raise ValueError(msg)
    known = {(m.table, m.name) for m in _METRICS}
    table_names = set(_OUTPUT_TABLES) | {t.name for t in tables}
    for m in metrics:
        if (m.table, m.name) in known:
            msg = f"column {m.name!r} of table {m.table!r} is already registered"
            raise ValueError(msg)
        if m.table not in table_names:
            msg = f"column {m.name!r}: no output table {m.table!r}; register the table with it"
            raise ValueError(msg)
        known.add((m.table, m.name))
    _OUTPUT_TABLES.update({t.name: t for t in tables})
    _METRICS.extend(metrics)


def unregister(family: str) -> None:
    """Remove everything ``family`` registered (its columns, and the tables it owns)."""
    _METRICS[:] = [m for m in _METRICS if m.family != family]
    for name in [name for name, t in _OUTPUT_TABLES.items() if t.family == family]:
        del _OUTPUT_TABLES[name]
