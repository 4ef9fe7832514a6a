"""The Dataset's tables and columns: the single source of truth.

Every other module takes table names, key columns and dtypes from here; none re-types them.
A table's *key* identifies a row; *required* columns must be present; every other column is
optional and is added as nulls when absent, so that downstream code can rely on the full
column set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from mas_eval.errors import SchemaError

__all__ = [
    "AGENT_KEY",
    "CRITERION_KINDS",
    "CRITERION_SCALES",
    "DDX_STANCES",
    "LABEL_COLUMNS",
    "LABEL_KINDS",
    "RUN_ID_COLUMNS",
    "RUN_KEY",
    "TABLES",
    "Column",
    "Table",
    "required_tables",
    "table",
]

RUN_KEY = "run_id"
AGENT_KEY = ["run_id", "agent_id"]
#: The columns that identify a run: every output row is led by them, so results group without a join.
RUN_ID_COLUMNS = ["run_id", "system", "case_id", "task", "variant"]

#: Per table, its label columns (the key columns besides ``run_id``, and the columns naming an
#: alternative) and the kind of label each holds. Labels of one kind share one code book when
#: scoring encodes keys as integers (:mod:`mas_eval.metrics.codes`, :mod:`mas_eval.storage.stored_codes`).
LABEL_COLUMNS: dict[str, dict[str, str]] = {
    "runs": {"recommended": "alternative", "correct": "alternative"},
    "agents": {"agent_id": "agent_id"},
    "beliefs": {"agent_id": "agent_id", "alternative": "alternative"},
    "criteria": {"criterion": "criterion"},
    "scores": {"alternative": "alternative", "criterion": "criterion"},
    "alt_scores": {"alternative": "alternative"},
    "ddx": {"agent_id": "agent_id"},
    "messages": {"agent_id": "agent_id"},
    "usage": {"agent_id": "agent_id"},
    "tool_calls": {"agent_id": "agent_id"},
}
#: The kinds of label, sorted.
LABEL_KINDS: tuple[str, ...] = tuple(sorted({kind for columns in LABEL_COLUMNS.values() for kind in columns.values()}))

CRITERION_KINDS = ("benefit", "cost")
CRITERION_SCALES = ("satisfaction", "raw")
DDX_STANCES = ("proposed", "excluded", "final", "critical")

#: A belief vector may be incomplete (sum < 1); this much over 1 is tolerated as rounding.
MASS_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Column:
    """One column: its name, dtype, and what it holds."""

    name: str
    dtype: pl.DataType
    doc: str
    required: bool = False
    nonnegative: bool = False
    unit_interval: bool = False
    allowed: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Table:
    """One table: its name, key columns, columns (key first) and description."""

    name: str
    key: tuple[str, ...]
    columns: tuple[Column, ...]
    doc: str
    #: The table whose key this table's ``parent_key`` must reference (referential integrity).
    parent: str | None = "runs"
    parent_key: str = RUN_KEY
    required_table: bool = False
    column_map: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Index the columns by name."""
        object.__setattr__(self, "column_map", {c.name: c for c in self.columns})

    @property
    def names(self) -> list[str]:
        """The column names, in the table's order."""
        return [c.name for c in self.columns]

    @property
    def required(self) -> list[str]:
        """The columns every file of the table must have: the required ones and the key."""
        return [c.name for c in self.columns if c.required or c.name in self.key]

    @property
    def polars_schema(self) -> pl.Schema:
        """The columns and their Polars dtypes."""
        return pl.Schema({c.name: c.dtype for c in self.columns})


_S, _F, _I = pl.String(), pl.Float64(), pl.Int64()


def _key(name: str, doc: str, dtype: pl.DataType = _S) -> Column:
    return Column(name, dtype, doc, required=True)


_RUN_ID = _key("run_id", "Identifier of the run; unique in `runs`.")

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table(
            "runs",
            ("run_id",),
            (
                _RUN_ID,
                Column("system", _S, 'System that produced the run, e.g. "mas" or "single".', required=True),
                Column("case_id", _S, "The unit both systems ran: pairs runs and clusters them.", required=True),
                Column("task", _S, "Task or scenario family."),
                Column("variant", _S, "Configuration variant (model, prompt, team size ...)."),
                Column("seed", _I, "Random seed of the run, if any."),
                Column(
                    "epoch",
                    _I,
                    "Which repeat of its case by its system the run is (1 = first), when a case was run several "
                    "times (inspect_ai's epochs, lm-eval's repeats); a run is still one row.",
                    nonnegative=True,
                ),
                Column("cluster", _S, "Cluster for cluster-robust errors (defaults to case_id downstream)."),
                Column("recommended", _S, "Alternative the system recommended."),
                Column("correct", _S, "Correct alternative (decision ground truth), when known."),
                Column(
                    "confidence",
                    _F,
                    "Self-reported confidence of the decision, in [0, 1].",
                    unit_interval=True,
                ),
                Column("iterations", _I, "Deliberation iterations until consensus.", nonnegative=True),
                Column("api_calls", _I, "LLM API calls made.", nonnegative=True),
                Column("seconds", _F, "Wall-clock processing time in seconds.", nonnegative=True),
                Column("tokens", _I, "Tokens consumed.", nonnegative=True),
                Column(
                    "input_tokens",
                    _I,
                    "Tokens sent to the models (prompts), when the log splits them.",
                    nonnegative=True,
                ),
                Column("output_tokens", _I, "Tokens the models generated, when the log splits them.", nonnegative=True),
                Column("cost_usd", _F, "Estimated cost in US dollars.", nonnegative=True),
                Column("tool_calls", _I, "Tool calls the agents made.", nonnegative=True),
                Column("tool_errors", _I, "Tool calls that ended in an error.", nonnegative=True),
                Column("target", _S, "The answer the benchmark expected (inspect_ai's sample target), as text."),
                Column("metadata", _S, "The case's metadata as the log recorded it, as JSON text."),
            ),
            "One row per logged run of a system on a case.",
            parent=None,
            required_table=True,
        ),
        Table(
            "agents",
            ("run_id", "agent_id"),
            (
                _RUN_ID,
                _key("agent_id", "Agent within the run."),
                Column("confidence", _F, "The agent's confidence, in [0, 1].", unit_interval=True),
                Column("role", _S, "The agent's role or expertise."),
                Column(
                    "weight",
                    _F,
                    "Importance weight of the agent (ER attribute weight), >= 0.",
                    nonnegative=True,
                ),
            ),
            "One row per agent taking part in a run.",
        ),
        Table(
            "beliefs",
            ("run_id", "agent_id", "alternative"),
            (
                _RUN_ID,
                _key("agent_id", "Agent holding the belief."),
                _key("alternative", "Alternative the mass is assigned to."),
                Column(
                    "mass",
                    _F,
                    "Belief mass, >= 0; an agent's masses sum to <= 1.",
                    required=True,
                    nonnegative=True,
                ),
            ),
            "Belief distribution of each agent over the alternatives (may be incomplete).",
        ),
        Table(
            "criteria",
            ("run_id", "criterion"),
            (
                _RUN_ID,
                _key("criterion", "Decision criterion."),
                Column("weight", _F, "Criterion weight, >= 0 (equal weights when null).", nonnegative=True),
                Column("kind", _S, 'Direction: "benefit" (more is better) or "cost".', allowed=CRITERION_KINDS),
                Column(
                    "scale",
                    _S,
                    'How to read `scores`: "satisfaction" in [0, 1] (default) or "raw".',
                    allowed=CRITERION_SCALES,
                ),
            ),
            "The decision criteria of a run.",
        ),
        Table(
            "scores",
            ("run_id", "alternative", "criterion"),
            (
                _RUN_ID,
                _key("alternative", "Alternative scored."),
                _key("criterion", "Criterion it is scored on."),
                Column("score", _F, "Score of the alternative on the criterion.", required=True),
            ),
            "Per-alternative criteria scores of a run.",
        ),
        Table(
            "alt_scores",
            ("run_id", "alternative"),
            (
                _RUN_ID,
                _key("alternative", "Alternative."),
                Column("mcda", _F, "MCDA score as logged by the system."),
                Column("final", _F, "Final combined score as logged by the system."),
            ),
            "Scores of each alternative as the system logged them.",
        ),
        Table(
            "ddx",
            ("run_id", "round", "agent_id", "diagnosis"),
            (
                _RUN_ID,
                _key("round", "Round of the diagnostic sequence."),
                _key("agent_id", "Agent that stated the diagnosis."),
                _key("diagnosis", "Diagnosis as written."),
                Column("stance", _S, 'One of "proposed", "excluded", "final", "critical".', allowed=DDX_STANCES),
                Column("rank", _I, "Position in the agent's list (1 = first).", nonnegative=True),
                Column("mentions", _I, "Times the diagnosis was mentioned in the round.", nonnegative=True),
                Column("evidence", pl.List(pl.String()), "Evidence items cited for it."),
            ),
            "Differential-diagnosis lists by round and agent (LDDx).",
        ),
        Table(
            "ground_truth",
            ("case_id", "diagnosis"),
            (
                _key("case_id", "Case the diagnosis belongs to (ground truth is keyed by case, not run)."),
                _key("diagnosis", "A ground-truth diagnosis."),
            ),
            "Ground-truth diagnoses per case.",
            parent=None,
        ),
        Table(
            "messages",
            ("run_id", "round", "agent_id", "turn"),
            (
                _RUN_ID,
                _key("round", "Round of the conversation."),
                _key("agent_id", "Speaker."),
                _key("turn", "Turn number within the round.", _I),
                Column("text", _S, "What the agent said."),
                Column(
                    "source",
                    _S,
                    'Where the message came from, as inspect_ai records it: "input" (the prompt) or "generate".',
                ),
                Column("role", _S, 'The speaker\'s role in the chat: "system", "user", "assistant" or "tool".'),
                Column("model", _S, "The model that generated the message, when a model did."),
                Column("input_tokens", _I, "Tokens sent in the model call that generated it.", nonnegative=True),
                Column("output_tokens", _I, "Tokens generated in that call.", nonnegative=True),
                Column("seconds", _F, "Time that call took, in seconds.", nonnegative=True),
            ),
            "Transcript of a run.",
        ),
        Table(
            "interventions",
            ("run_id", "text"),
            (_RUN_ID, _key("text", "An intervention recommended in the symptom-management round.")),
            "Interventions proposed in a run (LDDx TM-SM).",
        ),
        Table(
            "answers",
            ("run_id", "item_id"),
            (
                _RUN_ID,
                _key("item_id", "Benchmark item."),
                Column("task", _S, "Benchmark task of the item."),
                Column("prediction", _S, "The system's answer."),
                Column(
                    "predicted_diagnosis",
                    _S,
                    "The system's diagnosis label, if it gives one apart from its answer (diagnostic accuracy).",
                ),
                Column("rationale", _S, "The system's reasoning."),
                Column("reference", _S, "Reference answer."),
                Column("reference_rationale", _S, "Reference reasoning."),
                Column("reference_diagnosis", _S, "Reference diagnosis (factual consistency, diagnostic accuracy)."),
                Column("note", _S, "The clinical note a summary answer is scored against (clinical relevance)."),
                Column("specialty", _S, "Clinical specialty of the item, e.g. cardiology (MedAISure's tables)."),
            ),
            "Benchmark answers (MedAISure-style).",
        ),
        Table(
            "usage",
            ("run_id", "agent_id", "model"),
            (
                _RUN_ID,
                _key("agent_id", "Agent (a role, in inspect_ai's terms) that made the calls."),
                _key("model", "Model the calls went to."),
                Column("calls", _I, "Model calls made.", nonnegative=True),
                Column("input_tokens", _I, "Tokens sent to the model.", nonnegative=True),
                Column("output_tokens", _I, "Tokens the model generated.", nonnegative=True),
                Column("cost_usd", _F, "Cost of the calls in US dollars.", nonnegative=True),
                Column("seconds", _F, "Time spent in the calls, in seconds.", nonnegative=True),
                Column(
                    "evaluator",
                    pl.Boolean(),
                    "Whether the calls are the evaluator's (a scorer or judge model grading the run), not the "
                    "system's: they are not the system's cost. Null is read as the system's.",
                ),
            ),
            "Per-agent (and per-model) usage of a run: calls, tokens, cost and time.",
        ),
        Table(
            "tool_calls",
            ("run_id", "agent_id", "turn"),
            (
                _RUN_ID,
                _key("agent_id", "Agent that called the tool."),
                _key("turn", "Position of the call in the run (1 = first), over all its agents.", _I),
                Column("tool", _S, "The tool's name.", required=True),
                Column("arguments", _S, "The arguments, as JSON text."),
                Column("error", _S, "What the tool reported as its error; null when the call succeeded."),
                Column("seconds", _F, "Time the call took, in seconds.", nonnegative=True),
                Column("message_turn", _I, "`messages.turn` of the message that asked for the call.", nonnegative=True),
                Column("call_id", _S, "The call's id as the log names it."),
            ),
            "Tool calls the agents made in a run.",
        ),
        Table(
            "outcomes",
            ("run_id", "name"),
            (
                _RUN_ID,
                _key(
                    "name", 'The score\'s name, e.g. "match" or "exact_match": a run column of that name in the Scores.'
                ),
                Column("value", _F, "The run's value of the score (for a pass/fail score, 1 = passed).", required=True),
                Column(
                    "passed",
                    pl.Boolean(),
                    "For a pass/fail score, whether the run passed (value 1) or failed (value 0); null for a score "
                    "of other values. A score is pass/fail in every run or in none.",
                ),
                Column("answer", _S, "The answer the scorer extracted from the run's output."),
                Column("explanation", _S, "The scorer's explanation of its value (a judge's reasoning)."),
            ),
            "Each scorer's result for the run, as the evaluation tool recorded it.",
        ),
        Table(
            "reported",
            ("run_id", "source", "name", "item"),
            (
                _RUN_ID,
                _key("source", 'Where in the log the value was recorded, e.g. "evaluation", "label", "tempo".'),
                _key("name", 'What the value is within its source, e.g. "tp_count", "TP", an agent or a round.'),
                Column(
                    "item",
                    _I,
                    "Position in the recorded list the row comes from (1 = first), 0 for a value not in a list.",
                    required=True,
                    nonnegative=True,
                ),
                Column("value", _F, "The recorded number (booleans as 1.0 / 0.0), else null."),
                Column("text", _S, "The recorded text (a label's pair as JSON), else null."),
            ),
            "What a run's own log recorded (its scores, counts, labels ...), kept to check reproductions against.",
        ),
        Table(
            "annotations",
            ("run_id", "mode", "annotator"),
            (
                _RUN_ID,
                _key("mode", 'The failure mode annotated, e.g. MAST\'s "1.1 Disobey task specification".'),
                _key("annotator", "Who annotated (a person, or a judge model)."),
                Column("agent_id", _S, "The agent the annotation is of; null when it is of the whole run."),
                Column("round", _S, "The round the annotation is of; null when it is of the whole run."),
                Column(
                    "category", _S, "The mode's category in its taxonomy, e.g. MAST's \"Inter-agent misalignment\"."
                ),
                Column(
                    "present", pl.Boolean(), "Whether the annotator found the failure mode in the run.", required=True
                ),
            ),
            "Failure-mode annotations of runs (a taxonomy such as MAST's), one row per run, mode and annotator.",
        ),
    )
}


def required_tables() -> list[str]:
    """Return the tables every Dataset must have (``required_table``).

    Examples
    --------
    >>> required_tables()
    ['runs']
    """
    return [name for name, spec in TABLES.items() if spec.required_table]


def table(name: str) -> Table:
    """Return the :class:`Table` called ``name``; a :class:`~mas_eval.errors.SchemaError` names the known ones.

    Examples
    --------
    >>> agents = table("agents")
    >>> agents.key, agents.required, agents.parent
    (('run_id', 'agent_id'), ['run_id', 'agent_id'], 'runs')
    """
    try:
        return TABLES[name]
    except KeyError:
        msg = f"unknown table {name!r}; the Dataset's tables are: {', '.join(TABLES)}"
        raise SchemaError(msg) from None
