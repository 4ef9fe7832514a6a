"""Hypothesis strategies: random decision datasets, as Polars frames and as oracle runs.

``datasets(diagnosis=True)`` adds random differential-diagnosis tables (``ddx``, ``messages``,
``ground_truth``, ``interventions``) for some of the runs, ``datasets(answers=True)`` a random
``answers`` table (benchmark answers, the MedAISure metrics overview) for some of them, and
``datasets(outcomes=True)`` random ``outcomes`` and ``usage`` tables, so that every family runs on
the same draw. :func:`process_tables` draws traces (``messages`` with prompts and tool results
among the turns, ``usage`` with the evaluator's rows, ``tool_calls``) for the process family.

One draw gives both views of the same data, so a test can compare the vectorised metrics
with the per-run oracle. Values come from small grids as well as continuous ranges so that
exact ties (in masses, raw scores, contributions) occur often.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from hypothesis import strategies as st

from mas_eval import Dataset
from tests.oracles.decision import Run

_MASS_GRID = [0.0, 0.1, 0.2, 0.25, 0.3, 0.5]

# Labels drawn in random order, whose sort order (code points: "B" < "a" < "a10" < "a2" < "é")
# is not the order they are created in: tie rules say "the label that sorts first".
_ALTERNATIVE_LABELS = ["a2", "a10", "B", "a", "é", "alt 1", "Ω", "a1"]
_AGENT_LABELS = ["g2", "g10", "G", "g", "ü", "g 1", "g1", "Zed", "agent"]
_CRITERION_LABELS = ["cost", "c10", "c2", "C", "ç", "c"]
_RUN_LABELS = ["r2", "r10", "R", "run é", "r1"]


@dataclass
class Drawn:
    """A drawn dataset: the Polars tables and the oracle's view of every run."""

    frames: dict[str, pl.DataFrame]
    runs: dict[str, Run]

    def dataset(self) -> Dataset:
        return Dataset.from_frames(**self.frames)


def _optional(strategy: st.SearchStrategy, *, none_weight: float = 0.2) -> st.SearchStrategy:
    return st.one_of(st.none(), strategy) if none_weight else strategy


unit = st.floats(0.0, 1.0, allow_nan=False)
tied_unit = st.one_of(st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0]), unit)


def _resolvable(mass: float) -> float:
    """A drawn mass, or 0 when it is below 1e-9.

    The vectorised entropy is a closed form of group sums, log S - (sum m log m) / S, which cannot
    resolve a mass of 1e-300 (m log m is below the sums' rounding), while the oracle's term-by-term
    sum does; the Gini coefficient is scale-free, so two contributions of 0 and 1e-304 give a
    balance of 0.5 against 1.0 for 0 and 0. Masses that small are not data any system logs.
    """
    return 0.0 if mass < 1e-9 else mass


@st.composite
def belief_vector(draw: st.DrawFn, alternatives: list[str]) -> dict[str, float]:
    """Masses on a non-empty subset of the alternatives, positive total, summing to <= 1."""
    chosen = draw(st.lists(st.sampled_from(alternatives), min_size=1, max_size=len(alternatives), unique=True))
    masses = draw(
        st.lists(
            st.one_of(st.sampled_from(_MASS_GRID), st.floats(0.0, 1.0).map(_resolvable)),
            min_size=len(chosen),
            max_size=len(chosen),
        )
    )
    if sum(masses) == 0:
        masses[0] = 0.5
    complete = draw(st.booleans())
    scale = 1.0 if complete else draw(st.sampled_from([0.5, 0.8, 0.95]))
    total = sum(masses)
    # Rounding can push a sum just above 1: validation allows 1e-6 and the metrics renormalise.
    return {a: m / total * scale for a, m in zip(chosen, masses, strict=True)}


@st.composite
def one_run(draw: st.DrawFn, run_id: str) -> Run:
    n_alts = draw(st.integers(1, 7))
    n_agents = draw(st.integers(0, 8))
    n_crit = draw(st.integers(1, 5))
    alternatives = draw(st.permutations(_ALTERNATIVE_LABELS))[:n_alts]
    criteria = draw(st.permutations(_CRITERION_LABELS))[:n_crit]
    agents = draw(st.permutations(_AGENT_LABELS))[:n_agents]
    run = Run(run_id=run_id)
    identical = draw(st.booleans()) and n_agents > 1
    shared = draw(belief_vector(alternatives)) if identical else None
    for agent in agents:
        run.agent_confidence[agent] = draw(_optional(tied_unit, none_weight=0.1))
        run.agent_weight[agent] = draw(_optional(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]), none_weight=0.15))
        if draw(st.integers(0, 11)) == 0:
            continue  # an agent who voiced no beliefs: it counts for confidence, not for consensus
        run.beliefs[agent] = dict(shared) if shared else draw(belief_vector(alternatives))
    for criterion in criteria:
        run.criteria[criterion] = {
            "weight": draw(_optional(st.sampled_from([0.0, 0.1, 0.25, 0.4, 1.0, 3.0]), none_weight=0.15)),
            "kind": draw(st.sampled_from(["benefit", "cost", None])),
            "scale": draw(st.sampled_from(["satisfaction", "raw", None])),
        }
    scored = draw(st.lists(st.sampled_from(alternatives), unique=True, max_size=n_alts))
    for alternative in scored:
        row = {}
        for criterion in criteria:
            if draw(st.integers(0, 9)) == 0:  # occasionally an alternative lacks a criterion
                continue
            if run.criteria[criterion]["scale"] == "raw":
                row[criterion] = draw(st.one_of(st.sampled_from([0.0, 5.0, 10.0]), st.floats(-50.0, 200.0)))
            else:
                row[criterion] = draw(tied_unit)
        if row:
            run.scores[alternative] = row
    for alternative in draw(st.lists(st.sampled_from(alternatives), unique=True, max_size=n_alts)):
        run.mcda[alternative] = draw(_optional(unit))
        run.final[alternative] = draw(_optional(unit))
    run.recommended = draw(_optional(st.sampled_from(alternatives), none_weight=0.1))
    run.correct = draw(_optional(st.sampled_from(alternatives), none_weight=0.4))
    run.confidence = draw(_optional(unit, none_weight=0.5))
    run.iterations = draw(_optional(st.integers(0, 10), none_weight=0.1))
    run.api_calls = draw(_optional(st.integers(0, 40), none_weight=0.1))
    run.seconds = draw(_optional(st.floats(0.0, 300.0), none_weight=0.1))
    run.tokens = draw(_optional(st.integers(0, 10**6), none_weight=0.2))
    run.cost_usd = draw(_optional(st.floats(0.0, 5.0), none_weight=0.2))
    return run


@st.composite
def datasets(
    draw: st.DrawFn, *, max_runs: int = 4, diagnosis: bool = False, answers: bool = False, outcomes: bool = False
) -> Drawn:
    """A Dataset of 1..max_runs random runs, with the oracle's view of each (and diagnosis, answers and
    outcomes tables: :func:`outcome_tables`)."""
    n = draw(st.integers(1, max_runs))
    ids = draw(st.permutations(_RUN_LABELS))[:n]
    runs = {run_id: draw(one_run(run_id)) for run_id in ids}
    frames = _frames(runs)
    if diagnosis:
        frames |= draw(
            diagnosis_tables(frames["runs"], {run_id: list(run.agent_confidence) for run_id, run in runs.items()})
        )
    if answers:
        frames["answers"] = draw(answer_table(frames["runs"]))
    if outcomes:
        frames |= draw(outcome_tables(frames["runs"]))
    return Drawn(frames=frames, runs=runs)


_ANSWER_PIECES = [
    "Sepsis", "give IV fluids", "insulin", "MI", "heart attack", "heart failure", "SOB", "Tylenol", "pneumonia",
    "antibiotics", "x-ray", "CT", "lactate", "fever", "because", "therefore", "first", "labs", "everyone knows",
    "post hoc", "the patient", "Crohn's disease", "500 mg", "é", "",
]  # fmt: skip
_ANSWER_GLUE = [" ", ", ", "; ", ". ", "-", "\n", "'s "]


@st.composite
def answer_text(draw: st.DrawFn) -> str | None:
    """A short answer text from pieces that hold lexicon terms, synonyms, markers and punctuation; or null."""
    if draw(st.integers(0, 5)) == 0:
        return None
    pieces = draw(st.lists(st.tuples(st.sampled_from(_ANSWER_PIECES), st.sampled_from(_ANSWER_GLUE)), max_size=6))
    return "".join(piece + glue for piece, glue in pieces)


@st.composite
def answer_table(draw: st.DrawFn, runs: pl.DataFrame) -> pl.DataFrame:
    """Random ``answers`` rows (items ``q0``, ``q1``, ... with random texts) for some of ``runs``;
    an item's task is its own, or null (the run's)."""
    rows = []
    texts = ("prediction", "rationale", "reference", "reference_rationale", "reference_diagnosis")
    for run_id in runs["run_id"]:
        for item in range(draw(st.integers(0, 3))):
            task = draw(st.sampled_from([None, "qa", "dx"]))
            rows.append(
                {"run_id": run_id, "item_id": f"q{item}", "task": task} | {c: draw(answer_text()) for c in texts}
            )
    schema = {"run_id": pl.String, "item_id": pl.String, "task": pl.String, **dict.fromkeys(texts, pl.String)}
    return pl.DataFrame(rows, schema=schema)


_DIAGNOSES = [
    "Myocardial infarction", "heart attack", "MI", "Acute kidney injury", "AKI", "Pneumonia", "Dehydration",
    "Sepsis", "Pulmonary embolism", "Diabetic ketoacidosis", "Opioid overdose", "acute MI",
]  # fmt: skip
_FRAGMENTS = [
    "The evidence and clinical findings support this.", "I disagree; consider an alternative.",
    "**Your Position** noted.", "We should rule out {dx}.", "{dx} is unlikely.", "Recommend a plan.",
    "Integrating and weighing the symptoms together.", "Research and guidelines question this challenge.",
    "short", "{dx} remains on the differential given risk factor history.",
]  # fmt: skip
_ROUNDS = ["team_independent_differentials", "refinement_and_justification", "post_debate_voting", "symptom_management"]
_INTERVENTIONS = ["Give IV fluids", "Start broad-spectrum antibiotics", "insulin drip", "reassure", "naloxone"]


@st.composite
def diagnosis_tables(draw: st.DrawFn, runs: pl.DataFrame, agents: dict[str, list[str]]) -> dict[str, pl.DataFrame]:
    """Random ``ddx``, ``messages``, ``ground_truth`` and ``interventions`` rows for some of ``runs``."""
    dx = st.sampled_from(_DIAGNOSES)
    ddx: dict[tuple[str, str, str, str], dict] = {}
    messages, interventions, truth = [], [], set()
    for case in runs["case_id"].unique().sort():
        truth |= {(case, d) for d in draw(st.lists(dx, max_size=3))}
    for run_id in runs["run_id"]:
        if not draw(st.booleans()):
            continue  # a run without diagnosis rows: its diagnosis columns stay null
        speakers = (agents.get(run_id) or ["g"]) + draw(st.lists(st.sampled_from(["extra", "g"]), max_size=1))
        for round_name in draw(st.lists(st.sampled_from(_ROUNDS), min_size=1, max_size=4, unique=True)):
            for turn, agent in enumerate(draw(st.lists(st.sampled_from(speakers), min_size=1, max_size=3))):
                parts = draw(st.lists(st.tuples(st.sampled_from(_FRAGMENTS), dx), max_size=4))
                text = " ".join(f.format(dx=d) for f, d in parts)
                messages.append({"run_id": run_id, "round": round_name, "agent_id": agent, "turn": turn, "text": text})
        for agent in speakers:
            for rank, d in enumerate(draw(st.lists(dx, max_size=3, unique=True)), start=1):
                evidence = draw(st.one_of(st.none(), st.lists(st.sampled_from(["fever", "rales"]), max_size=2)))
                key = (run_id, "team_independent_differentials", agent, d)
                ddx[key] = {"stance": "proposed", "rank": rank, "mentions": draw(st.sampled_from([None, 1, 2])),
                            "evidence": evidence}  # fmt: skip
            for rank, d in enumerate(draw(st.lists(dx, max_size=3, unique=True)), start=1):
                ddx[(run_id, "post_debate_voting", agent, d)] = {"stance": "proposed", "rank": rank}
            for d in draw(st.lists(dx, max_size=1)):
                stance = draw(st.sampled_from(["proposed", "excluded"]))
                ddx[(run_id, "refinement_and_justification", agent, d)] = {"stance": stance}
        for rank, d in enumerate(draw(st.lists(dx, max_size=2, unique=True)), start=1):
            mentions = draw(st.integers(1, 4))
            ddx[(run_id, "cant_miss", "team", d)] = {"stance": "critical", "rank": rank, "mentions": mentions,
                                                     "evidence": ["x"]}  # fmt: skip
        for rank, d in enumerate(draw(st.lists(dx, max_size=4, unique=True)), start=1):
            ddx[(run_id, "final", "team", d)] = {"stance": "final", "rank": rank}
        interventions += [{"run_id": run_id, "text": t} for t in draw(st.lists(st.sampled_from(_INTERVENTIONS),
                                                                                max_size=2, unique=True))]  # fmt: skip
    ddx_schema = {
        "run_id": pl.String, "round": pl.String, "agent_id": pl.String, "diagnosis": pl.String, "stance": pl.String,
        "rank": pl.Int64, "mentions": pl.Int64, "evidence": pl.List(pl.String),
    }  # fmt: skip
    keys = ("run_id", "round", "agent_id", "diagnosis")
    return {
        "ddx": pl.DataFrame([dict(zip(keys, k, strict=True)) | v for k, v in ddx.items()], schema=ddx_schema),
        "messages": pl.DataFrame(
            messages,
            schema={
                "run_id": pl.String,
                "round": pl.String,
                "agent_id": pl.String,
                "turn": pl.Int64,
                "text": pl.String,
            },
        ).unique(["run_id", "round", "agent_id", "turn"], keep="first", maintain_order=True),
        "ground_truth": pl.DataFrame(sorted(truth), schema=["case_id", "diagnosis"], orient="row"),
        "interventions": pl.DataFrame(interventions, schema={"run_id": pl.String, "text": pl.String}),
    }


def _frames(runs: dict[str, Run]) -> dict[str, pl.DataFrame]:
    ids = list(runs)
    frames = {
        "runs": pl.DataFrame(
            {
                "run_id": ids,
                "system": ["mas" if len(r.agents) > 1 else "single" for r in runs.values()],
                "case_id": [f"case{i % 2}" for i in range(len(ids))],
                "task": "t",
                "recommended": [r.recommended for r in runs.values()],
                "correct": [r.correct for r in runs.values()],
                "confidence": [r.confidence for r in runs.values()],
                "iterations": [r.iterations for r in runs.values()],
                "api_calls": [r.api_calls for r in runs.values()],
                "seconds": [r.seconds for r in runs.values()],
                "tokens": [r.tokens for r in runs.values()],
                "cost_usd": [r.cost_usd for r in runs.values()],
            },
            schema_overrides={
                "confidence": pl.Float64,
                "seconds": pl.Float64,
                "recommended": pl.String,
                "correct": pl.String,
                "iterations": pl.Int64,
                "api_calls": pl.Int64,
                "tokens": pl.Int64,
                "cost_usd": pl.Float64,
            },
        )
    }
    rows: dict[str, list[dict]] = {t: [] for t in ("agents", "beliefs", "criteria", "scores", "alt_scores")}
    for run_id, run in runs.items():
        for agent in run.agent_confidence:
            rows["agents"].append(
                {
                    "run_id": run_id,
                    "agent_id": agent,
                    "confidence": run.agent_confidence[agent],
                    "weight": run.agent_weight[agent],
                }
            )
        for agent, masses in run.beliefs.items():
            rows["beliefs"] += [
                {"run_id": run_id, "agent_id": agent, "alternative": a, "mass": m} for a, m in masses.items()
            ]
        for criterion, spec in run.criteria.items():
            rows["criteria"].append({"run_id": run_id, "criterion": criterion, **spec})
        for alternative, row in run.scores.items():
            rows["scores"] += [
                {"run_id": run_id, "alternative": alternative, "criterion": c, "score": s} for c, s in row.items()
            ]
        for alternative in run.mcda:
            rows["alt_scores"].append(
                {
                    "run_id": run_id,
                    "alternative": alternative,
                    "mcda": run.mcda[alternative],
                    "final": run.final[alternative],
                }
            )
    schemas = {
        "agents": {"run_id": pl.String, "agent_id": pl.String, "confidence": pl.Float64, "weight": pl.Float64},
        "beliefs": {"run_id": pl.String, "agent_id": pl.String, "alternative": pl.String, "mass": pl.Float64},
        "criteria": {"run_id": pl.String, "criterion": pl.String, "weight": pl.Float64, "kind": pl.String,
                     "scale": pl.String},
        "scores": {"run_id": pl.String, "alternative": pl.String, "criterion": pl.String, "score": pl.Float64},
        "alt_scores": {"run_id": pl.String, "alternative": pl.String, "mcda": pl.Float64, "final": pl.Float64},
    }  # fmt: skip
    for table, table_rows in rows.items():
        frames[table] = pl.DataFrame(table_rows, schema=schemas[table])
    return frames


_SCORE_NAMES = ["match", "f1", "pass é", "Accuracy", "z"]
_USAGE_AGENTS = ["coordinator", "g2", "g10", "ü"]
_MODELS = ["m-large", "m-small"]
_counts = st.one_of(st.none(), st.integers(0, 50))


@st.composite
def outcome_tables(draw: st.DrawFn, runs: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Random ``outcomes`` and ``usage`` tables for some of ``runs``' runs (the outcomes family's),
    and ``runs`` with epochs 1, 2, ... and random token, cost and call columns where it has none
    (those of a decision draw stay: its oracle reads them)."""
    ids = runs["run_id"].to_list()
    names = draw(st.lists(st.sampled_from(_SCORE_NAMES), max_size=3, unique=True))
    pass_fail = {name: draw(st.booleans()) for name in names}
    outcomes: list[dict] = []
    for run_id in ids:
        for name in draw(st.lists(st.sampled_from(names), unique=True)) if names else []:
            passed = draw(st.booleans()) if pass_fail[name] else None
            value = float(passed) if passed is not None else draw(st.floats(-5, 5, allow_nan=False))
            outcomes.append({"run_id": run_id, "name": name, "value": value, "passed": passed})
    usage: list[dict] = []
    for run_id in ids:
        for agent_id, model in draw(
            st.lists(st.tuples(st.sampled_from(_USAGE_AGENTS), st.sampled_from(_MODELS)), max_size=4, unique=True)
        ):
            usage.append(
                {
                    "run_id": run_id,
                    "agent_id": agent_id,
                    "model": model,
                    "calls": draw(_counts),
                    "input_tokens": draw(_counts),
                    "output_tokens": draw(_counts),
                    "cost_usd": draw(st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.2, 0.3]), st.floats(0, 1))),
                }
            )
    n = len(ids)
    extra = {
        "epoch": list(range(1, n + 1)),
        **{column: [draw(_counts) for _ in ids] for column in ("tokens", "input_tokens", "output_tokens", "api_calls")},
        "cost_usd": [draw(st.one_of(st.none(), st.floats(0, 1))) for _ in ids],
    }
    out_schema = {"run_id": pl.String, "name": pl.String, "value": pl.Float64, "passed": pl.Boolean}
    usage_schema = {"run_id": pl.String, "agent_id": pl.String, "model": pl.String, "calls": pl.Int64,
                    "input_tokens": pl.Int64, "output_tokens": pl.Int64, "cost_usd": pl.Float64}  # fmt: skip
    return {
        "runs": runs.with_columns(
            pl.Series(column, values, dtype=pl.Float64 if column == "cost_usd" else pl.Int64)
            for column, values in extra.items()
            if column not in runs.columns
        ),
        "outcomes": pl.DataFrame(outcomes, schema=out_schema),
        "usage": pl.DataFrame(usage, schema=usage_schema),
    }


_PROCESS_AGENTS = ["coordinator", "g2", "g10", "ü"]
_PROCESS_ROUNDS = ["r1", "r2", "debate"]
_PROCESS_WORDS = ["The", "plan", "evacuate", "Evacuate", "north", "bridge", "é", "Über", "x-ray", "2", "flood_gate"]
_PROCESS_GLUE = [" ", ", ", "! ", "\n", "-"]
_TOOLS = ["search", "map", "calc"]


@st.composite
def _process_text(draw: st.DrawFn) -> str | None:
    if draw(st.integers(0, 4)) == 0:
        return None
    pieces = draw(st.lists(st.sampled_from(_PROCESS_WORDS), max_size=5))
    glue = draw(st.lists(st.sampled_from(_PROCESS_GLUE), min_size=len(pieces), max_size=len(pieces)))
    return "".join(p + g for p, g in zip(pieces, glue, strict=True))


@st.composite
def process_tables(draw: st.DrawFn, runs: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Random ``messages``, ``usage`` and ``tool_calls`` for some of ``runs``' runs (the process family's),
    with prompts, tool results and the sample's input among the messages, evaluator rows among the
    usage, and ``runs`` with random spending and tool counts (null often)."""
    messages: list[dict] = []
    usage: list[dict] = []
    tools: list[dict] = []
    counts = st.one_of(st.none(), st.integers(0, 40))
    seconds = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.25]), st.floats(0, 10))
    for run_id in runs["run_id"]:
        for round_name in draw(st.lists(st.sampled_from(_PROCESS_ROUNDS), max_size=2, unique=True)):
            for turn in range(draw(st.integers(1, 6))):
                role = draw(st.sampled_from([None, "assistant", "assistant", "assistant", "user", "tool", "system"]))
                messages.append({
                    "run_id": run_id, "round": round_name, "turn": turn, "text": draw(_process_text()),
                    "agent_id": draw(st.sampled_from(_PROCESS_AGENTS)) if role != "user" else "user",
                    "source": draw(st.sampled_from([None, "generate", "generate", "input"])), "role": role,
                    "input_tokens": draw(counts), "output_tokens": draw(counts), "seconds": draw(seconds),
                })  # fmt: skip
        for agent, model in draw(
            st.lists(st.tuples(st.sampled_from(_PROCESS_AGENTS), st.sampled_from(_MODELS)), max_size=3, unique=True)
        ):
            usage.append({
                "run_id": run_id, "agent_id": agent, "model": model, "calls": draw(counts),
                "input_tokens": draw(counts), "output_tokens": draw(counts),
                "cost_usd": draw(st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.2]), st.floats(0, 1))),
                "seconds": draw(seconds), "evaluator": draw(st.sampled_from([None, False, True])),
            })  # fmt: skip
        for turn in range(1, draw(st.integers(0, 4)) + 1):
            tools.append({
                "run_id": run_id, "agent_id": draw(st.sampled_from(_PROCESS_AGENTS)), "turn": turn,
                "tool": draw(st.sampled_from(_TOOLS)), "error": draw(st.sampled_from([None, None, "timeout"])),
            })  # fmt: skip
    n = runs.height
    extra = {
        **{c: [draw(counts) for _ in range(n)] for c in ("tokens", "input_tokens", "output_tokens", "api_calls")},
        "tool_calls": [draw(st.one_of(st.none(), st.integers(0, 5))) for _ in range(n)],
        "tool_errors": [draw(st.one_of(st.none(), st.integers(0, 6))) for _ in range(n)],
        "seconds": [draw(seconds) for _ in range(n)],
        "cost_usd": [draw(st.one_of(st.none(), st.floats(0, 1))) for _ in range(n)],
    }
    floats = {"seconds", "cost_usd"}
    message_schema = {"run_id": pl.String, "round": pl.String, "agent_id": pl.String, "turn": pl.Int64,
                      "text": pl.String, "source": pl.String, "role": pl.String, "input_tokens": pl.Int64,
                      "output_tokens": pl.Int64, "seconds": pl.Float64}  # fmt: skip
    usage_schema = {"run_id": pl.String, "agent_id": pl.String, "model": pl.String, "calls": pl.Int64,
                    "input_tokens": pl.Int64, "output_tokens": pl.Int64, "cost_usd": pl.Float64,
                    "seconds": pl.Float64, "evaluator": pl.Boolean}  # fmt: skip
    tool_schema = {"run_id": pl.String, "agent_id": pl.String, "turn": pl.Int64, "tool": pl.String, "error": pl.String}
    return {
        "runs": runs.with_columns(
            pl.Series(c, values, dtype=pl.Float64 if c in floats else pl.Int64) for c, values in extra.items()
        ),
        "messages": pl.DataFrame(messages, schema=message_schema).unique(
            ["run_id", "round", "agent_id", "turn"], keep="first", maintain_order=True
        ),
        "usage": pl.DataFrame(usage, schema=usage_schema),
        "tool_calls": pl.DataFrame(tools, schema=tool_schema),
    }
