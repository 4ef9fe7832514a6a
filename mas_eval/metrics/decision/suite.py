"""The decision suite (seed 004): which pass feeds which, from encoded tables to the family's outputs.

Per agent (``agents``), per alternative (``alternatives``), per run (``runs``) and, on request,
per pair of agents (``pairwise``); every frame keyed by integer codes and sorted by its key,
for :func:`mas_eval.score` to decode.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.metrics.codes import KeyCodes, label_of, pack, run_of
from mas_eval.metrics.decision import confidence, consensus, contribution, quality
from mas_eval.metrics.decision.beliefs import agent_pass, alternative_pass, run_pass
from mas_eval.metrics.decision.criteria import CHECK_COLUMNS, alternative_criteria
from mas_eval.metrics.decision.efficiency import efficiency
from mas_eval.metrics.decision.params import DecisionParams
from mas_eval.metrics.ranks import with_descending_ranks
from mas_eval.schema import AGENT_KEY
from mas_eval.validation import check_agent_masses, check_alternative_inputs, check_values

__all__ = ["compute"]

_RA = ["run_id", "alternative"]
Tables = Mapping[str, pl.LazyFrame]


def _agent_frame(beliefs: pl.LazyFrame, agents: pl.LazyFrame, codes: KeyCodes) -> pl.DataFrame:
    """Per-agent belief sums joined with the agents table, sorted by agent key; materialised, as
    three passes read it.

    Sorted once here (0.7 s at 3M agents) because the output needs that order anyway, and
    per-run aggregations of a frame sorted by run take Polars' sorted fast path (the agents'
    per-run aggregates: 2.3 s unsorted, 1.3 s sorted).
    """
    # Sorted by the packed key is sorted by (run, agent): the run flag lets Polars know it.
    frame = agent_pass(beliefs, agents).sort("agent").with_columns(pl.col("run_id").set_sorted()).collect()
    labels = codes.labels_of({"run_id": "run_id", "agent_id": "agent_id"})
    check_agent_masses(frame.lazy(), labels=labels)
    check_values("agents", frame.lazy(), ["confidence", "weight"], labels=labels)
    return frame


def _belief_runs_and_alternatives(
    beliefs: pl.LazyFrame, agent_frame: pl.DataFrame, params: DecisionParams
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Consensus and ER per run, and the ER belief per alternative, materialised: three later
    queries read them, and a lazy frame would be recomputed by each.

    The per-alternative sums (4M rows at 1M runs) live only inside this function, so they are
    freed before the alternatives are assembled: held a stage longer, they raised the peak RSS
    of scoring 1M runs from 2.47 to 2.62 GB (medians of 6).
    """
    per_alternative = alternative_pass(beliefs, agent_frame.lazy(), er=params.er).collect()
    queries = run_pass(
        agent_frame.lazy(), per_alternative.lazy(), er=params.er, single_agent_consensus=params.single_agent_consensus
    )
    runs, alternatives = pl.collect_all(queries)
    return runs.lazy(), alternatives.lazy()


def _agents_out(agent_frame: pl.DataFrame, belief_runs: pl.LazyFrame, params: DecisionParams) -> pl.LazyFrame:
    entropy = contribution.normalized_entropy(support=params.entropy_support, renormalise=params.entropy_renormalise)
    return (
        agent_frame.lazy()
        .join(belief_runs.select("run_id", "n_alternatives"), on="run_id", how="left", maintain_order="left")
        .with_columns(normalized_entropy=pl.when("has_beliefs").then(entropy))
        .select(
            # Still in the agent frame's order: the flag keeps per-run aggregations on the sorted path.
            pl.col("run_id").set_sorted(),
            "agent_id",
            contribution=contribution.contribution(),
            normalized_entropy=pl.col("normalized_entropy"),
            confidence=pl.col("confidence"),
            top_choice=pl.col("top_choice"),
        )
    )


def _agent_run_aggregates(agents_out: pl.LazyFrame) -> pl.LazyFrame:
    """Per run, one pass over its agents: confidence statistics, contribution balance, agreement."""
    per_run = agents_out.group_by("run_id").agg(
        num_agents=pl.len(), **confidence.run_terms(), **contribution.run_terms(), **consensus.run_choice_terms()
    )
    return (
        per_run.join(consensus.top_preference(agents_out), on="run_id", how="left")
        .with_columns(gini_coefficient=contribution.gini())
        .with_columns(**contribution.run_metrics(), agreement_percentage=consensus.agreement())
        .drop("contributions")
    )


def _alternatives_out(
    tables: Tables, belief_alternatives: pl.LazyFrame, params: DecisionParams, codes: KeyCodes
) -> pl.DataFrame:
    per_criteria = alternative_criteria(tables["scores"], tables["criteria"], weighted=params.dqs_weighted)
    mcda = "topsis_closeness" if params.mcda == "topsis" else "weighted_sum"

    # Sorted by (run, alternative) so that ordinal ranks break ties by alternative id; each
    # run's rows are consecutive then. Joined and sorted on the packed key (one integer column).
    def keyed(frame: pl.LazyFrame) -> pl.LazyFrame:
        return frame.with_columns(_key=pack(*_RA)).drop(_RA)

    frame = (
        keyed(per_criteria)
        .join(keyed(belief_alternatives), on="_key", how="full", coalesce=True)
        .sort("_key")
        .with_columns(run_id=run_of("_key").set_sorted(), alternative=label_of("_key"), mcda_score=pl.col(mcda))
        .drop("_key")
        .collect()
    )
    check_alternative_inputs(frame.lazy(), labels=codes.labels_of({"run_id": "run_id", "alternative": "alternative"}))
    frame = frame.drop(CHECK_COLUMNS)
    ranked = {"topsis_rank": "topsis_closeness", "er_rank": "er_belief", "mcda_rank": "mcda_score"}
    return with_descending_ranks(frame, ranked, group="run_id")


def _runs_out(
    tables: Tables,
    alternatives: pl.DataFrame,
    belief_runs: pl.LazyFrame,
    agents_out: pl.DataFrame,
    params: DecisionParams,
) -> pl.LazyFrame:
    usage = efficiency(
        baseline_iterations=params.baseline_iterations,
        baseline_api_calls=params.baseline_api_calls,
        baseline_seconds=params.baseline_seconds,
    )
    base = tables["runs"].select("run_id", "confidence", "recommended", "correct", *usage)
    per_run = (
        quality.with_dqs(base, alternatives.lazy(), tables["alt_scores"], gt_boost=params.gt_boost)
        .join(belief_runs, on="run_id", how="left")
        .join(_agent_run_aggregates(agents_out.lazy()), on="run_id", how="left")
        .with_columns(pl.col("num_agents").fill_null(0).cast(pl.Int64))
    )
    return (
        per_run.with_columns(decision_confidence=confidence.decision_confidence(params.consensus_weight))
        .with_columns(
            uncertainty=1.0 - pl.col("decision_confidence"),
            unique_preferences=pl.col("unique_preferences").fill_null(0).cast(pl.Int64),
        )
        .sort("run_id")
    )


def compute(tables: Tables, params: DecisionParams, codes: KeyCodes) -> dict[str, pl.LazyFrame | pl.DataFrame]:
    """Every decision metric: ``runs``, ``agents``, ``alternatives`` (and ``pairwise`` on request).

    ``tables``: ``runs, agents, beliefs, criteria, scores, alt_scores`` keyed by codes, an absent
    one as an empty frame (it leaves its metrics null, with no special case).
    """
    usage = ["confidence", "iterations", "api_calls", "seconds", "tokens", "cost_usd"]
    check_values("runs", tables["runs"].select("run_id", *usage), usage, labels=codes.labels_of({"run_id": "run_id"}))
    # Read by two queries (three with ``pairwise``): materialised once.
    beliefs = tables["beliefs"].select(*AGENT_KEY, "alternative", "mass").collect().lazy()
    agent_frame = _agent_frame(beliefs, tables["agents"], codes)
    belief_runs, belief_alternatives = _belief_runs_and_alternatives(beliefs, agent_frame, params)
    agents_out = _agents_out(agent_frame, belief_runs, params).collect()
    alternatives = _alternatives_out(tables, belief_alternatives, params, codes)
    out: dict[str, pl.LazyFrame | pl.DataFrame] = {
        "runs": _runs_out(tables, alternatives, belief_runs, agents_out, params),
        "agents": agents_out,
        "alternatives": alternatives,
    }
    if params.pairwise:
        out["pairwise"] = consensus.pairwise_similarities(beliefs, agent_frame.lazy())
    return out
