"""The decision suite (the crisis-MAS evaluation methodology): which pass feeds which, from encoded tables to outputs.

Each input table is collected once, sorted by its key (:mod:`~.inputs`), and every group
reduction is a segment reduction in row order (:mod:`mas_eval.metrics.segments`): per agent,
per (run, alternative), per (run, criterion) and per run. Output: per agent (``agents``), per
alternative (``alternatives``), per run (``runs``) and, on request, per pair of agents
(``pairwise``); every frame keyed by integer codes and sorted by its key, for
:func:`mas_eval.score` to decode.

Because each group is reduced on its own and in a fixed order, every output is bit-for-bit
the same from call to call, whatever the thread count, and whether the runs are scored
together or shard by shard.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from mas_eval.data.validation import validate
from mas_eval.metrics.arrays import locate, nullable, placed, take, to_series
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.decision import confidence, conflicts, consensus, contribution, evidential, quality, sensitivity
from mas_eval.metrics.decision.beliefs import AgentFrame, BeliefRows, agents_of, alternative_groups
from mas_eval.metrics.decision.criteria import CHECK_COLUMNS, CriteriaRows, alternative_criteria, criteria_rows
from mas_eval.metrics.decision.efficiency import USAGE, efficiency
from mas_eval.metrics.decision.inputs import sorted_table
from mas_eval.metrics.decision.params import DecisionParams
from mas_eval.metrics.ranks import with_descending_ranks
from mas_eval.metrics.segments import Groups, label_of, merged, pack, run_of

__all__ = ["compute"]

Tables = Mapping[str, pl.LazyFrame]
Nullable = tuple[np.ndarray, np.ndarray]

_RUN = {"run_id": "run_id"}
_AGENT = {"run_id": "run_id", "agent_id": "agent_id"}
_ALTERNATIVE = {"run_id": "run_id", "alternative": "alternative"}
_USAGE = ["confidence", "iterations", "api_calls", "seconds", "tokens", "cost_usd"]


class _Beliefs:
    """Everything the belief rows give: per agent, per (run, alternative) and per run."""

    def __init__(self, tables: Tables, params: DecisionParams, codes: KeyCodes) -> None:
        runs = codes.runs.height
        agents = sorted_table("agents", tables["agents"], ["confidence", "weight"], _AGENT, codes.labels_of)
        validate({"agents": agents}, "values", columns=["confidence", "weight"], labels=codes.labels_of(_AGENT))
        beliefs = sorted_table("beliefs", tables["beliefs"], ["mass"], _AGENT | _ALTERNATIVE, codes.labels_of)
        self.table = beliefs
        rows = BeliefRows.of(beliefs)
        self.rows = rows
        agent = agents_of(rows, agents, runs)
        validate({"beliefs": agent.totals()}, "agent masses", labels=codes.labels_of(_AGENT))
        self.agent = agent

        believer = agent.has_beliefs
        row_agent = agent.belief_agent
        norm = np.sqrt(agent.mass_sumsq)
        by_alternative = alternative_groups(rows)
        alternatives_by_run = Groups.sorted_runs(run_of(by_alternative.keys), runs)
        believers_by_run = Groups.sorted_runs(agent.run[believer], runs)
        n_agents = believers_by_run.count()
        self.n_alternatives = alternatives_by_run.count()
        self.with_beliefs = (n_agents > 0) & (self.n_alternatives > 0)
        square = consensus.unit_square(by_alternative, alternatives_by_run, rows.mass, norm[row_agent])
        level, level_valid = consensus.consensus_level(square, n_agents, params.single_agent_consensus)
        self.consensus_level = (level, level_valid & self.with_beliefs)
        combined = evidential.combine(
            params.er,
            rows=by_alternative,
            runs_of_alternatives=alternatives_by_run,
            w=agent.w[row_agent],
            mass=rows.mass,
            total=agent.mass_total[row_agent],
            believers=believers_by_run,
            agent_w=agent.w[believer],
            agent_total=agent.mass_total[believer],
        )
        self.er_unassigned = (combined.unassigned, self.with_beliefs)
        # Each belief row's alternative's place among its run's alternatives.
        slot = by_alternative.index - (np.cumsum(self.n_alternatives) - self.n_alternatives)[rows.run]
        self.conflicts = conflicts.conflicts(
            rows, slot, agent.mass_sumsq[believer], runs, threshold=params.conflict_threshold
        )
        self.alternative_keys = by_alternative.keys
        self.er_belief = combined.belief


def _agents_out(beliefs: _Beliefs, params: DecisionParams) -> tuple[pl.DataFrame, Nullable]:
    """Return the ``agents`` output frame, and each agent's contribution."""
    agent: AgentFrame = beliefs.agent
    outcomes = beliefs.n_alternatives[agent.run] if params.entropy_support == "run" else agent.own_alternatives
    entropy, entropy_valid = contribution.normalized_entropy(
        agent.mass_total, agent.m_log_m, outcomes, renormalise=params.entropy_renormalise
    )
    entropy_valid &= agent.has_beliefs
    share = (agent.confidence + entropy) / 2.0
    share_valid = agent.confidence_valid & entropy_valid
    frame = pl.DataFrame(
        [
            pl.Series("run_id", agent.run),
            pl.Series("agent_id", agent.agent_id),
            to_series("contribution", share, share_valid),
            to_series("normalized_entropy", entropy, entropy_valid),
            to_series("confidence", agent.confidence, agent.confidence_valid),
            to_series("top_choice", agent.top_choice, agent.has_beliefs),
        ]
    )
    return frame, (share, share_valid)


def _agent_run_terms(beliefs: _Beliefs, share: Nullable, runs: int) -> dict[str, Nullable]:
    """Per run, over its agents: counts, confidence statistics, balance, agreement and diversity."""
    agent = beliefs.agent
    by_run = Groups.sorted_runs(agent.run, runs)
    num_agents = by_run.count()
    terms = confidence.run_terms(by_run, agent.confidence, agent.confidence_valid)
    gini, gini_valid = contribution.balance(agent.run, share[0], share[1], runs)
    top = consensus.top_preference(agent.run, agent.top_choice, agent.has_beliefs, runs)
    chose = top["n_tops"] > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = top["top_votes"] / top["n_tops"]
        diversity = top["unique_preferences"] / num_agents
    everywhere = np.ones(runs, dtype=bool)
    return terms | {
        "num_agents": (num_agents, everywhere),
        "gini_coefficient": (gini, gini_valid),
        "balance_score": (1.0 - gini, gini_valid),
        "top_preference": (top["top_preference"], chose),
        "agreement_percentage": (agreement, chose),
        "diversity_score": (diversity, chose),
        "unique_preferences": (top["unique_preferences"], everywhere),
    }


def _alternatives_out(
    tables: Tables, beliefs: _Beliefs, params: DecisionParams, codes: KeyCodes
) -> tuple[pl.DataFrame, CriteriaRows]:
    """Return the metrics of each alternative scored or believed in, and the score rows they came from.

    The metrics are the criteria metrics, ER belief, MCDA score and the ranks.
    """
    scores = sorted_table(
        "scores", tables["scores"], ["score"], _ALTERNATIVE | {"criterion": "criterion"}, codes.labels_of
    )
    criterion_key = {"run_id": "run_id", "criterion": "criterion"}
    criteria = sorted_table(
        "criteria",
        tables["criteria"],
        [
            "weight",
            (pl.col("kind") == "cost").fill_null(False).alias("cost"),
            (pl.col("scale") == "raw").fill_null(False).alias("raw"),
        ],
        criterion_key,
        codes.labels_of,
    )
    # A NaN weight would make the run's weights count as not given (so DQS silently changes),
    # an infinite one makes every satisfaction NaN: the weights are checked before they are used.
    validate({"criteria": criteria}, "values", columns=["weight"], labels=codes.labels_of(criterion_key))
    rows = criteria_rows(scores, criteria)
    per_criteria = alternative_criteria(rows, weighted=params.dqs_weighted)
    scored = pack(per_criteria["run_id"].to_numpy(), per_criteria["alternative"].to_numpy())
    keys, scored_at, believed_at = merged(scored, beliefs.alternative_keys)
    columns = [pl.Series("run_id", run_of(keys)), pl.Series("alternative", label_of(keys))]
    for name in per_criteria.columns[2:]:
        values, valid = nullable(per_criteria[name])
        columns.append(to_series(name, *placed(scored_at, len(keys), values, valid)))
    columns.append(to_series("er_belief", *placed(believed_at, len(keys), beliefs.er_belief)))
    frame = pl.DataFrame(columns)
    validate({"scores": frame}, "alternative inputs", labels=codes.labels_of(_ALTERNATIVE))
    mcda = "topsis_closeness" if params.mcda == "topsis" else "weighted_sum"
    frame = frame.drop(CHECK_COLUMNS).with_columns(pl.col("run_id").set_sorted(), mcda_score=pl.col(mcda))
    ranked = {"topsis_rank": "topsis_closeness", "er_rank": "er_belief", "mcda_rank": "mcda_score"}
    return with_descending_ranks(frame, ranked, group="run_id"), rows


def _chosen(tables: Tables, alternatives: pl.DataFrame, recommended: Nullable, codes: KeyCodes) -> dict[str, Nullable]:
    """Per run, the recommended alternative's criteria satisfaction and logged MCDA and final scores."""
    runs = codes.runs.height
    wanted = pack(np.arange(runs, dtype=np.uint32), recommended[0])
    keys = pack(alternatives["run_id"].to_numpy(), alternatives["alternative"].to_numpy())
    at, found = locate(keys, wanted, recommended[1])
    satisfaction, valid = nullable(alternatives["criteria_satisfaction"])
    out = {"criteria_satisfaction": (take(satisfaction, at, found), take(valid, at, found))}
    logged = sorted_table("alt_scores", tables["alt_scores"], ["mcda", "final"], _ALTERNATIVE, codes.labels_of)
    keys = pack(logged["run_id"].to_numpy(), logged["alternative"].to_numpy())
    at, found = locate(keys, wanted, recommended[1])
    for name in ("mcda", "final"):
        values, valid = nullable(logged[name].cast(pl.Float64))
        out[name] = (take(values, at, found), take(valid, at, found))
    return out


def _runs_out(
    tables: Tables,
    beliefs: _Beliefs,
    agent_terms: dict[str, Nullable],
    alternatives: pl.DataFrame,
    stability: Nullable,
    winner_changes: Nullable,
    params: DecisionParams,
    codes: KeyCodes,
) -> pl.DataFrame:
    """Return the ``runs`` output, one row per run in run order.

    Its columns are usage and efficiency, DQS, consensus, ER, the agents' per-run terms and the
    decision's confidence.
    """
    runs = sorted_table("runs", tables["runs"], ["recommended", "correct", *_USAGE], _RUN, codes.labels_of)
    validate({"runs": runs}, "values", columns=_USAGE, labels=codes.labels_of(_RUN))
    if runs.height != codes.runs.height:
        msg = f"the decision family met {runs.height} runs where the code book holds {codes.runs.height}"
        raise RuntimeError(msg)
    recommended = nullable(runs["recommended"])
    correct = nullable(runs["correct"])
    reported = nullable(runs["confidence"].cast(pl.Float64))
    quality_terms = quality.dqs(
        _chosen(tables, alternatives, recommended, codes), recommended, correct, gt_boost=params.gt_boost
    )
    decision, decision_valid = confidence.decision_confidence(
        params.consensus_weight,
        num_agents=agent_terms["num_agents"][0],
        consensus=beliefs.consensus_level,
        average=agent_terms["average_confidence"],
        reported=reported,
        n_confidences=agent_terms["n_confidences"][0],
        only=agent_terms["only_confidence"],
    )
    method, method_valid = quality_terms.pop("dqs_method")
    names = pl.Series([name for name, _ in quality.CASCADE])
    usage = efficiency(
        runs,
        baseline_iterations=params.baseline_iterations,
        baseline_api_calls=params.baseline_api_calls,
        baseline_seconds=params.baseline_seconds,
    )
    computed = {
        **usage,
        **quality_terms,
        **{name: agent_terms[name] for name in _RUN_AGENT_COLUMNS},
        "consensus_level": beliefs.consensus_level,
        "er_unassigned": beliefs.er_unassigned,
        "decision_confidence": (decision, decision_valid),
        "uncertainty": (1.0 - decision, decision_valid),
        "consensus_reached": conflicts.consensus_reached(*beliefs.consensus_level, params.consensus_threshold),
        "num_conflicts": beliefs.conflicts.per_run,
        "ranking_stability": stability,
        "num_winner_changes": winner_changes,
    }
    return (
        runs.select("run_id", *(pl.col(column).alias(name) for column, name in USAGE.items()))
        .with_columns(to_series(name, values, valid) for name, (values, valid) in computed.items())
        .with_columns(
            names.gather(to_series("dqs_method", method, method_valid)).alias("dqs_method"),
            pl.col("num_agents", "unique_preferences", "num_conflicts", "num_winner_changes").cast(pl.Int64),
            pl.col("top_preference").cast(pl.UInt32),
        )
    )


#: The per-run agent terms that are output columns (the others feed decision_confidence).
_RUN_AGENT_COLUMNS = [
    "num_agents",
    "average_confidence",
    "confidence_variance",
    "confidence_std",
    "min_confidence",
    "max_confidence",
    "gini_coefficient",
    "balance_score",
    "top_preference",
    "agreement_percentage",
    "diversity_score",
    "unique_preferences",
]


def _sweep(params: DecisionParams, codes: KeyCodes) -> tuple[int | None, float, float] | None:
    """Return the sweep of :func:`~.sensitivity.ranking_stability`; None for random perturbations.

    The sweep is the criterion's code (None: no run has it) and the weights it runs through.
    """
    if params.stability_method != "sweep":
        return None
    name = params.stability_criterion
    found = (codes.labels["criterion"] == name).arg_true() if name is not None else pl.Series([], dtype=pl.UInt32)
    code = int(found[0]) if len(found) else None
    return code, params.stability_sweep_low, params.stability_sweep_high


def compute(tables: Tables, params: DecisionParams, codes: KeyCodes) -> dict[str, pl.LazyFrame | pl.DataFrame]:
    """Every decision metric: ``runs``, ``agents``, ``alternatives``, ``conflicts`` (and ``pairwise`` on request).

    ``tables``: ``runs, agents, beliefs, criteria, scores, alt_scores`` keyed by codes, an absent
    one as an empty frame (it leaves its metrics null, with no special case).
    """
    # NaN and infinite inputs are reported by the checks, with the keys that hold them; the
    # formulas' own 0/0 cases give what Polars gives (NaN, inf), as the oracle does.
    with np.errstate(all="ignore"):
        beliefs = _Beliefs(tables, params, codes)
        agents_out, share = _agents_out(beliefs, params)
        agent_terms = _agent_run_terms(beliefs, share, codes.runs.height)
        alternatives, criteria_rows_ = _alternatives_out(tables, beliefs, params, codes)
        stability, stable, winner_changes = sensitivity.ranking_stability(
            criteria_rows_,
            codes.runs["run_id"],
            mcda=params.mcda,
            draws=params.stability_draws,
            perturbation=params.stability_perturbation,
            seed=params.stability_seed,
            sweep=_sweep(params, codes),
        )
        # Winner changes are counted along a sweep only: random weightings have no order (null).
        if winner_changes is None:
            changes = (np.zeros(len(stability), dtype=np.int64), np.zeros(len(stability), dtype=bool))
        else:
            changes = (winner_changes, stable)
        runs = _runs_out(tables, beliefs, agent_terms, alternatives, (stability, stable), changes, params, codes)
    out: dict[str, pl.LazyFrame | pl.DataFrame] = {"runs": runs, "agents": agents_out, "alternatives": alternatives}
    if params.pairwise:
        agent = beliefs.agent
        agent_frame = pl.DataFrame(
            {
                "run_id": agent.run,
                "agent_id": agent.agent_id,
                "has_beliefs": agent.has_beliefs,
                "mass_sumsq": agent.mass_sumsq,
            }
        )
        out["pairwise"] = consensus.pairwise_similarities(beliefs.table.lazy(), agent_frame.lazy())
    out["conflicts"] = beliefs.conflicts.frame
    return out
