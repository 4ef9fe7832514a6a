"""The diagnosis family wired together for :func:`mas_eval.score`: labels, scores, rounds, credibility, vote.

Every table arrives keyed by integer codes (:mod:`mas_eval.metrics.codes`): ``run_id`` and the
``agent_id`` of ``ddx`` and ``messages`` are codes, diagnoses and rounds stay strings. The
labelling (:func:`~.labels.classify`) reads run ids and agent names as text (it compares the
agent with ``"team"``), so it gets the run codes as strings and the agents decoded; its output is
turned back into run codes here. Everything else runs on the codes.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.data.vocabulary import DEBATE, VOTING
from mas_eval.metrics.codes import CODE, KeyCodes
from mas_eval.metrics.diagnosis.collaboration import credibility, keyword_scan, round_credibility, tempo_scores
from mas_eval.metrics.diagnosis.equivalence import synonym_table
from mas_eval.metrics.diagnosis.labels import classify, intervention_keywords, label_counts
from mas_eval.metrics.diagnosis.params import DiagnosisParams
from mas_eval.metrics.diagnosis.scores import COUNTS, RULES, score_expressions
from mas_eval.metrics.diagnosis.tables import user_table
from mas_eval.metrics.diagnosis.vote import credibility_vote

__all__ = ["compute"]

Tables = Mapping[str, pl.LazyFrame]


def _as_codes(frame: pl.DataFrame) -> pl.DataFrame:
    """Turn a frame's run codes written as text (what ``classify`` reads) back into codes."""
    return frame.with_columns(pl.col(RUN_KEY).cast(CODE))


def _labels(tables: Tables, params: DiagnosisParams, codes: KeyCodes) -> pl.DataFrame:
    """:func:`~.labels.classify` over the coded tables; its rows keyed by run code, sorted."""
    as_text = pl.col(RUN_KEY).cast(pl.String)
    agents = codes.labels_of({"agent_id": "agent_id"})
    synonyms = user_table(params.synonyms_file, "synonyms_file", ("term", "canonical"), synonym_table)
    treatments = user_table(
        params.interventions_file, "interventions_file", ("keyword", "diagnosis"), intervention_keywords
    )
    labels = classify(
        {
            "runs": tables["runs"].select(as_text, "case_id"),
            "ddx": agents(tables["ddx"]).with_columns(as_text),
            "ground_truth": tables["ground_truth"],
            "messages": tables["messages"].select(as_text, "round", "text"),
            "interventions": tables["interventions"].select(as_text, "text"),
        },
        preset=params.label_rules,
        synonyms=synonyms,
        threshold=params.equivalence_threshold,
        cache_path=params.judge_cache,
        intervention_table=treatments,
        caa_mentions=params.caa_mentions,
    )
    return _as_codes(labels).sort(RUN_KEY, "side", "diagnosis")


def _runs_out(tables: Tables, labels: pl.DataFrame, params: DiagnosisParams) -> pl.LazyFrame:
    """One row per run: label counts and scores; null for a run with no ``ddx`` row and no ground truth."""
    runs = tables["runs"].select(RUN_KEY, "case_id")
    with_truth = runs.join(tables["ground_truth"].select("case_id").unique(), on="case_id", how="semi")
    diagnostic = pl.concat([tables["ddx"].select(RUN_KEY), with_truth.select(RUN_KEY)]).unique()
    counts = label_counts(labels.with_columns(pl.col(RUN_KEY).cast(pl.String)))
    flagged = diagnostic.with_columns(_diagnostic=pl.lit(True))
    return (
        runs.select(RUN_KEY)
        .join(flagged, on=RUN_KEY, how="left")
        .join(_as_codes(counts).lazy(), on=RUN_KEY, how="left")
        .sort(RUN_KEY)
        .with_columns(
            pl.when(pl.col("_diagnostic")).then(pl.col(name).fill_null(0)).cast(pl.UInt32).alias(name)
            for name in COUNTS
        )
        .select(RUN_KEY, *COUNTS, *score_expressions(RULES[params.label_rules]))
    )


def compute(tables: Tables, params: DiagnosisParams, codes: KeyCodes) -> dict[str, pl.LazyFrame | pl.DataFrame]:
    """Every diagnosis metric: ``runs``, ``labels``, ``rounds``, ``agents`` and ``consensus_ddx``.

    ``tables``: ``runs, ddx`` and (empty when absent) ``ground_truth, messages, interventions``,
    keyed by codes.
    """
    # The transcript and the ddx table are read from their files once, and each text scanned for
    # keywords once: the labels, the TempoScores, the credibility and the vote all read these rows.
    messages = keyword_scan(tables["messages"].select(RUN_KEY, "round", "agent_id", "text")).collect().lazy()
    ddx = tables["ddx"].collect().lazy()
    tables = {**tables, "messages": messages, "ddx": ddx}
    labels = _labels(tables, params, codes)
    rounds = tempo_scores(messages, ddx, count_mentions=params.tempo_count_mentions)
    # Read by the agents' table and by the vote: materialised once.
    left_out = () if params.credibility_debate else (DEBATE,)
    agents = credibility(
        round_credibility(messages, ddx, counting=params.keyword_counting, left_out=left_out)
    ).collect()
    votes = ddx.filter(pl.col("round") == VOTING).select(RUN_KEY, "agent_id", "diagnosis", "rank", "mentions")
    vote = credibility_vote(votes, agents.lazy(), keep_share=params.vote_keep_share, at_most=params.vote_at_most).sort(
        RUN_KEY, "rank"
    )
    return {
        "runs": _runs_out(tables, labels, params),
        "labels": labels,
        "rounds": rounds,
        "agents": agents.sort(RUN_KEY, "agent_id"),
        "consensus_ddx": vote.select(RUN_KEY, "rank", "diagnosis", "points"),
    }
