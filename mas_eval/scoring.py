"""``score``: every decision metric of seed 004 for every run, as Polars frames.

>>> import mas_eval
>>> ds = mas_eval.simulate(200, seed=1)
>>> scores = mas_eval.score(ds)
>>> scores.runs.height, scores.runs["dqs_method"].unique().to_list()
(200, ['criteria'])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.dataset import Dataset, atomic_directory
from mas_eval.errors import SchemaError
from mas_eval.metrics.beliefs import (
    agent_beliefs,
    agent_entropy,
    alternative_beliefs,
    check_agent_masses,
    run_beliefs,
)
from mas_eval.metrics.codes import KeyCodes, label_of, pack, run_of
from mas_eval.metrics.common import gini_of_sorted, with_descending_ranks
from mas_eval.metrics.criteria import alternative_criteria
from mas_eval.metrics.efficiency import efficiency
from mas_eval.presets import DecisionParams, resolve
from mas_eval.schema import AGENT_KEY, TABLES

__all__ = ["RUN_ID_COLUMNS", "Scores", "score"]

#: Every output row carries these, so that results can be grouped without a join.
RUN_ID_COLUMNS = ["run_id", "system", "case_id", "task", "variant"]

_RA = ["run_id", "alternative"]
_PAIR_KEY = ["run_id", "agent_a", "agent_b"]
#: Output columns that hold codes until the end, and the kind of label each decodes to.
OUTPUT_LABELS = {
    "agent_id": "agent_id",
    "alternative": "alternative",
    "top_choice": "alternative",
    "top_preference": "alternative",
    "agent_a": "agent_id",
    "agent_b": "agent_id",
}
Tables = Mapping[str, pl.LazyFrame]

RUN_COLUMNS = [
    "dqs", "dqs_raw", "dqs_method", "gt_match",
    "consensus_level", "agreement_percentage", "top_preference", "num_agents",
    "decision_confidence", "average_confidence", "uncertainty", "confidence_variance", "confidence_std",
    "min_confidence", "max_confidence",
    "balance_score", "gini_coefficient", "diversity_score", "unique_preferences",
    "time_to_consensus", "api_calls_used", "processing_time_seconds", "tokens_used", "cost_usd",
    "iteration_efficiency", "api_efficiency", "time_efficiency", "efficiency_score",
    "er_unassigned",
]  # fmt: skip
AGENT_COLUMNS = ["contribution", "normalized_entropy", "confidence", "top_choice"]
ALTERNATIVE_COLUMNS = [
    "topsis_closeness", "topsis_distance_best", "topsis_distance_worst", "topsis_rank",
    "weighted_sum", "mcda_score", "mcda_rank", "er_belief", "er_rank", "criteria_satisfaction",
]  # fmt: skip
MANIFEST = "_scores.json"


@dataclass
class Scores:
    """The metrics of every run (``runs``), agent (``agents``) and alternative (``alternatives``).

    ``pairwise`` holds the agents' pairwise belief similarities when asked for. ``params``
    records the resolved parameters and ``preset`` the preset they started from.
    """

    runs: pl.DataFrame
    agents: pl.DataFrame
    alternatives: pl.DataFrame
    pairwise: pl.DataFrame | None = None
    preset: str = "spec"
    params: dict[str, Any] | None = None

    def frames(self) -> dict[str, pl.DataFrame]:
        out = {"runs": self.runs, "agents": self.agents, "alternatives": self.alternatives}
        if self.pairwise is not None:
            out["pairwise"] = self.pairwise
        return out

    def write(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write each frame to ``<path>/<name>.parquet`` atomically, with a manifest of parameters."""
        from mas_eval import __version__

        target = Path(path)
        with atomic_directory(target, overwrite=overwrite) as staging:
            for name, frame in self.frames().items():
                frame.write_parquet(staging / f"{name}.parquet")
            manifest = {"mas_eval_version": __version__, "preset": self.preset, "params": self.params}
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        return target

    @classmethod
    def open(cls, path: str | Path) -> Scores:
        """Read what :meth:`write` wrote."""
        root = Path(path)
        if not (root / "runs.parquet").is_file():
            msg = f"{root}: not a Scores folder (no runs.parquet); create one with `mas-eval score`"
            raise SchemaError(msg)
        manifest = json.loads((root / MANIFEST).read_text()) if (root / MANIFEST).is_file() else {}
        pairwise = root / "pairwise.parquet"
        return cls(
            runs=pl.read_parquet(root / "runs.parquet"),
            agents=pl.read_parquet(root / "agents.parquet"),
            alternatives=pl.read_parquet(root / "alternatives.parquet"),
            pairwise=pl.read_parquet(pairwise) if pairwise.is_file() else None,
            preset=manifest.get("preset", "spec"),
            params=manifest.get("params"),
        )


#: The tables scoring reads.
_SCORED_TABLES = ["runs", "agents", "beliefs", "criteria", "scores", "alt_scores"]


def _encoded_tables(ds: Dataset) -> tuple[KeyCodes, dict[str, pl.LazyFrame]]:
    """Every table scoring reads, keyed by integer codes (:mod:`mas_eval.metrics.codes`).

    An absent table is an empty one of the schema's columns: it flows through the same
    transforms and leaves its metrics null, with no special case.
    """
    tables = {
        name: ds[name] if name in ds else pl.LazyFrame(schema=TABLES[name].polars_schema) for name in _SCORED_TABLES
    }
    codes = KeyCodes.of(tables, RUN_ID_COLUMNS)
    encoded = {name: codes.encode(name, frame) for name, frame in tables.items()}
    # Read by two queries (three with ``pairwise``): encoded once.
    encoded["beliefs"] = encoded["beliefs"].select(*AGENT_KEY, "alternative", "mass").collect().lazy()
    return codes, encoded


def _agent_frame(tables: Tables, codes: KeyCodes) -> pl.DataFrame:
    """Per-agent belief sums joined with the agents table, sorted by agent key; materialised, as
    three passes read it.

    Sorted once here (0.7 s at 3M agents) because the output needs that order anyway, and
    per-run aggregations of a frame sorted by run take Polars' sorted fast path (the agents'
    per-run aggregates: 2.3 s unsorted, 1.3 s sorted).
    """
    # Sorted by the packed key is sorted by (run, agent): the run flag lets Polars know it.
    frame = (
        agent_beliefs(tables["beliefs"], tables["agents"])
        .sort("agent")
        .with_columns(pl.col("run_id").set_sorted())
        .collect()
    )
    check_agent_masses(frame, lambda keys: codes.decode(keys, {"run_id": "run_id", "agent_id": "agent_id"}))
    return frame


def _belief_runs_and_alternatives(
    tables: Tables, agent_frame: pl.DataFrame, params: DecisionParams
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    per_alternative = alternative_beliefs(tables["beliefs"], agent_frame.lazy(), er=params.er).collect()
    return run_beliefs(
        agent_frame.lazy(),
        per_alternative.lazy(),
        er=params.er,
        single_agent_consensus=params.single_agent_consensus,
    )


def _agents_out(agent_frame: pl.DataFrame, belief_runs: pl.LazyFrame, params: DecisionParams) -> pl.LazyFrame:
    entropy = agent_entropy(support=params.entropy_support, renormalise=params.entropy_renormalise)
    return (
        agent_frame.lazy()
        .join(belief_runs.select("run_id", "n_alternatives"), on="run_id", how="left", maintain_order="left")
        .with_columns(normalized_entropy=pl.when("has_beliefs").then(entropy))
        .select(
            # Still in the agent frame's order: the flag keeps per-run aggregations on the sorted path.
            pl.col("run_id").set_sorted(),
            "agent_id",
            contribution=(pl.col("confidence") + pl.col("normalized_entropy")) / 2.0,
            normalized_entropy=pl.col("normalized_entropy"),
            confidence=pl.col("confidence"),
            top_choice=pl.col("top_choice"),
        )
    )


def _agent_run_aggregates(agents_out: pl.LazyFrame) -> pl.LazyFrame:
    """Per run: confidence statistics, contribution balance and top-choice agreement."""
    conf = pl.col("confidence")
    top = pl.col("top_choice")
    per_run = agents_out.group_by("run_id").agg(
        num_agents=pl.len(),
        average_confidence=conf.mean(),
        # Polars gives 0.0, not null, for the variance of a lone null value.
        confidence_variance=pl.when(conf.count() > 0).then(conf.var(ddof=0)),
        confidence_std=pl.when(conf.count() > 0).then(conf.std(ddof=0)),
        min_confidence=conf.min(),
        max_confidence=conf.max(),
        n_confidences=conf.count(),
        only_confidence=conf.drop_nulls().first(),
        contributions=pl.col("contribution").drop_nulls().sort(),
        unique_preferences=top.drop_nulls().n_unique(),
        n_tops=top.count(),
    )
    votes = agents_out.filter(top.is_not_null()).group_by("run_id", "top_choice").agg(votes=pl.len())
    # The most frequent top choice; a tie goes to the alternative id that sorts first.
    top_preference = (
        votes.filter(pl.col("votes") == pl.col("votes").max().over("run_id"))
        .group_by("run_id")
        .agg(top_preference=top.min(), top_votes=pl.col("votes").first())
    )
    return (
        per_run.join(top_preference, on="run_id", how="left")
        .with_columns(gini_coefficient=gini_of_sorted(pl.col("contributions")))
        .with_columns(
            balance_score=1.0 - pl.col("gini_coefficient"),
            diversity_score=pl.when(pl.col("n_tops") > 0).then(pl.col("unique_preferences") / pl.col("num_agents")),
            agreement_percentage=pl.col("top_votes") / pl.col("n_tops"),
        )
        .drop("contributions")
    )


def _alternatives_out(tables: Tables, belief_alternatives: pl.LazyFrame, params: DecisionParams) -> pl.DataFrame:
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
    ranked = {"topsis_rank": "topsis_closeness", "er_rank": "er_belief", "mcda_rank": "mcda_score"}
    return with_descending_ranks(frame, ranked, group="run_id")


def _with_dqs(runs: pl.LazyFrame, alternatives: pl.LazyFrame, tables: Tables, params: DecisionParams) -> pl.LazyFrame:
    r"""Add the DQS cascade of seed 004 (SPEC.md §1) to ``runs``: criteria satisfaction → logged
    MCDA → logged final score of the recommended alternative, then the ground-truth boost.

    The recommended alternative's scores join ``runs`` itself (no per-run frame joined back).
    """
    chosen = (
        runs.with_columns(_key=pack("run_id", "recommended"))
        .join(alternatives.select("criteria_satisfaction", _key=pack(*_RA)), on="_key", how="left")
        .join(tables["alt_scores"].select("mcda", "final", _key=pack(*_RA)), on="_key", how="left")
        .drop("_key")
    )
    cascade = [("criteria", "criteria_satisfaction"), ("mcda", "mcda"), ("final", "final")]
    raw = pl.coalesce(pl.col(c) for _, c in cascade)
    method = pl.when(pl.col(cascade[0][1]).is_not_null()).then(pl.lit(cascade[0][0]))
    for name, column in cascade[1:]:
        method = method.when(pl.col(column).is_not_null()).then(pl.lit(name))
    match = pl.when(pl.col("correct").is_not_null() & pl.col("recommended").is_not_null()).then(
        pl.col("recommended") == pl.col("correct")
    )
    boosted = (
        pl.col("dqs_raw")
        if params.gt_boost is None
        else pl.when(pl.col("gt_match").fill_null(False) & pl.col("dqs_raw").is_not_null())
        .then(pl.max_horizontal("dqs_raw", pl.lit(params.gt_boost)))
        .otherwise("dqs_raw")
    )
    return (
        chosen.with_columns(dqs_raw=raw, dqs_method=method.otherwise(None), gt_match=match)
        .with_columns(dqs=boosted)
        .drop("criteria_satisfaction", "mcda", "final")
    )


def score(ds: Dataset, preset: str = "spec", *, pairwise: bool = False, **overrides: Any) -> Scores:
    """Score every run of ``ds`` with the decision metrics of seed 004.

    Parameters
    ----------
    ds
        The Dataset. ``runs`` is required; belief metrics need ``beliefs`` (and ``agents``
        for confidences and ER weights), criteria metrics need ``scores`` (and ``criteria``).
    preset
        ``"spec"`` (the seed's formulas, default) or ``"crisis-mas-poc"`` (see
        :mod:`mas_eval.presets`).
    pairwise
        Also compute the long table of pairwise agent belief similarities.
    **overrides
        Any parameter of :class:`~mas_eval.presets.DecisionParams`.

    Returns
    -------
    Scores
        ``runs``, ``agents`` and ``alternatives`` frames (and ``pairwise``), each row led by
        ``run_id, system, case_id, task, variant`` and sorted by its key.

    Notes
    -----
    Two calls on the same data give the same rows, labels, counts and ranks, but floating-point
    columns may differ in their last bits: Polars adds a group's terms, and merges partial sums
    across threads, in no fixed order (measured on 50,000 simulated runs: relative differences up
    to 4e-12 in ``er_unassigned``, whose formula subtracts close products, and 2e-13 elsewhere).
    Ranks treat values within ``1e-12 * max(1, |value|)`` as ties, so such noise cannot reorder
    alternatives that the formula ranks equal.
    """
    params = resolve(preset, overrides)
    codes, tables = _encoded_tables(ds)

    agent_frame = _agent_frame(tables, codes)
    # Materialised once: three later queries read them, and a lazy frame would be recomputed by each.
    belief_runs, belief_alternatives = (
        frame.lazy() for frame in pl.collect_all(_belief_runs_and_alternatives(tables, agent_frame, params))
    )
    agents_out = _agents_out(agent_frame, belief_runs, params).collect()
    alternatives = _alternatives_out(tables, belief_alternatives, params)

    usage = efficiency(
        baseline_iterations=params.baseline_iterations,
        baseline_api_calls=params.baseline_api_calls,
        baseline_seconds=params.baseline_seconds,
    )
    base = tables["runs"].select("run_id", "confidence", "recommended", "correct", *usage)
    per_run = (
        _with_dqs(base, alternatives.lazy(), tables, params)
        .join(belief_runs, on="run_id", how="left")
        .join(_agent_run_aggregates(agents_out.lazy()), on="run_id", how="left")
        .with_columns(pl.col("num_agents").fill_null(0).cast(pl.Int64))
    )
    w = params.consensus_weight
    n = pl.col("num_agents")
    decision = (
        pl.when((n >= 2) & pl.col("consensus_level").is_not_null() & pl.col("average_confidence").is_not_null())
        .then(w * pl.col("consensus_level") + (1.0 - w) * pl.col("average_confidence"))
        .when(pl.col("confidence").is_not_null())
        .then(pl.col("confidence"))
        .when((n == 1) & (pl.col("n_confidences") == 1))
        .then(pl.col("only_confidence"))
    )
    run_metrics = (
        per_run.with_columns(decision_confidence=decision)
        .with_columns(
            uncertainty=1.0 - pl.col("decision_confidence"),
            unique_preferences=pl.col("unique_preferences").fill_null(0).cast(pl.Int64),
        )
        .sort("run_id")
    )

    def labelled(frame: pl.LazyFrame, key: list[str], columns: list[str]) -> pl.DataFrame:
        """The rows of ``frame`` (sorted by ``key``) with labels for codes, led by the run's ids."""
        return (
            codes.decode(frame, OUTPUT_LABELS).select(*codes.run_columns(RUN_ID_COLUMNS), *key[1:], *columns).collect()
        )

    # Collected one after another: they share no work, and on 2 cores running them side by
    # side (collect_all) made them contend (measured at 1M runs: 7.3-8.8 s against 6.1-6.5 s).
    return Scores(
        runs=labelled(run_metrics, ["run_id"], RUN_COLUMNS),
        agents=labelled(agents_out.lazy(), AGENT_KEY, AGENT_COLUMNS),
        alternatives=labelled(alternatives.lazy(), _RA, ALTERNATIVE_COLUMNS),
        pairwise=labelled(_pairwise(tables, agent_frame), _PAIR_KEY, ["similarity"]) if pairwise else None,
        preset=preset,
        params=params.as_dict(),
    )


def _pairwise(tables: Tables, agent_frame: pl.DataFrame) -> pl.LazyFrame:
    """Cosine similarity of every pair of agents of a run (agent_a < agent_b): a self-join, on request."""
    norms = agent_frame.lazy().filter("has_beliefs").select(*AGENT_KEY, norm=pl.col("mass_sumsq").sqrt())
    unit = (
        tables["beliefs"]
        .join(norms, on=AGENT_KEY, how="inner")
        .select("run_id", "agent_id", "alternative", u=pl.col("mass") / pl.col("norm"))
    )
    dots = (
        unit.join(unit, on=_RA, how="inner", suffix="_b")
        .filter(pl.col("agent_id") < pl.col("agent_id_b"))
        .group_by("run_id", "agent_id", "agent_id_b")
        .agg(dot=(pl.col("u") * pl.col("u_b")).sum())
    )
    pairs = (
        norms.select(AGENT_KEY)
        .join(norms.select(AGENT_KEY), on="run_id", how="inner", suffix="_b")
        .filter(pl.col("agent_id") < pl.col("agent_id_b"))
    )
    return (
        pairs.join(dots, on=["run_id", "agent_id", "agent_id_b"], how="left")
        .select(
            "run_id",
            agent_a=pl.col("agent_id"),
            agent_b=pl.col("agent_id_b"),
            similarity=pl.col("dot").fill_null(0.0),
        )
        .sort(_PAIR_KEY)
    )
