"""TempoScore and credibility (LDDx v6 metrics guide): vectorised == oracle; Local-DDx's recorded values reproduced."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mas_eval.errors import InvalidParameterError
from mas_eval.ingest import ingest_lddx
from mas_eval.metrics.diagnosis.collaboration import (
    KEYWORDS,
    credibility,
    keyword_hits,
    keyword_scan,
    round_credibility,
    tempo_scores,
)
from mas_eval.metrics.diagnosis.vote import credibility_vote
from tests.conftest import LDDX, needs_lddx
from tests.oracles import collaboration as oracle

INDEPENDENT, DEBATE = "team_independent_differentials", "refinement_and_justification"
#: The five files from Local-DDx's archive/previous_versions, scored by its published v6 code.
V6_DATE = "_20250709_"
#: The eleven files of Local-DDx's v8/Transcripts/v8_5, scored by its v8 code.
V8_DATE = "_20250718_"


@pytest.fixture(scope="module")
def fixtures() -> tuple[pl.LazyFrame, pl.LazyFrame, pl.DataFrame]:
    ds = ingest_lddx([LDDX]).dataset
    return ds["messages"], ds["ddx"], ds.collect("reported")


@needs_lddx
def test_recorded_tempo_scores_are_reproduced_for_every_round_of_every_file(fixtures: tuple) -> None:
    messages, ddx, reported = fixtures
    computed = tempo_scores(messages, ddx, count_mentions=True).collect()  # preset lddx-v6: every mention
    recorded = reported.filter(source="tempo").select("run_id", pl.col("name").alias("round"), "value")
    assert recorded.height == 16 * 7
    joined = recorded.join(computed, on=["run_id", "round"], how="left")
    off = joined.filter((pl.col("value") - pl.col("tempo_score")).abs().fill_null(1.0) > 1e-12)
    assert off.height == 0, off


@needs_lddx
def test_recorded_credibility_is_reproduced_for_every_agent_of_the_v6_files(fixtures: tuple) -> None:
    messages, ddx, reported = fixtures
    computed = credibility(round_credibility(messages, ddx, counting="presence")).collect()
    recorded = reported.filter(source="credibility").select("run_id", pl.col("name").alias("agent_id"), "value")
    joined = recorded.join(computed, on=["run_id", "agent_id"], how="left").with_columns(
        reproduced=(pl.col("value") - pl.col("credibility")).abs() <= 1e-6,
        v6=pl.col("run_id").str.contains(V6_DATE, literal=True),
    )
    v6 = joined.filter("v6")
    assert v6.height == 43 and v6["reproduced"].all(), v6.filter(~pl.col("reproduced"))
    # The 11 v8_5 files left the debate out (next test): computed here, not matched.
    v8 = joined.filter(~pl.col("v6"))
    assert v8.height == 93 and v8["credibility"].is_not_null().all() and not v8["reproduced"].any()


@needs_lddx
def test_recorded_credibility_of_the_v8_files_leaves_the_debate_out(fixtures: tuple) -> None:
    # v8 keys its debate responses "<agent>_round<n>" and Dr. Reed looks responses up by the agent's name.
    messages, ddx, reported = fixtures
    computed = credibility(round_credibility(messages, ddx, left_out=(DEBATE,))).collect()
    recorded = reported.filter(source="credibility").filter(pl.col("run_id").str.contains(V8_DATE, literal=True))
    joined = recorded.select("run_id", pl.col("name").alias("agent_id"), "value").join(
        computed, on=["run_id", "agent_id"], how="left"
    )
    off = joined.filter((pl.col("value") - pl.col("credibility")).abs().fill_null(1.0) > 1e-6)
    assert joined.height == 93 and off.height == 0, off


def test_presence_and_occurrence_counting_differ_only_on_repeats() -> None:
    frame = pl.DataFrame({"text": ["consider, consider and weigh", "plain"]})
    both = frame.select(
        keyword_hits(pl.col("text"), ["consider", "weigh"]).alias("presence"),
        keyword_hits(pl.col("text"), ["consider", "weigh"], "occurrences").alias("occurrences"),
    )
    assert both.rows() == [(2, 3), (0, 0)]


def test_the_keyword_scan_finds_what_a_search_of_the_lowercased_text_finds() -> None:
    # Lowercasing turns the Kelvin sign into "k" (and "İ" into "i" and a combining dot), so the
    # lowercased text holds "risk factor" where the text spells it with a Kelvin sign.
    texts = ["RIS\u212a FACTORS", "Risk factor", "EVİDENCE", "evidencevidence, SUPPORT", "**Reasoning**", "", None]
    frame = pl.LazyFrame({"text": texts}, schema={"text": pl.String})
    scanned = keyword_scan(frame).collect()
    lowered = frame.select(pl.col("text").str.to_lowercase()).collect()["text"]
    for i, word in enumerate(KEYWORDS):
        expected = lowered.str.contains(word, literal=True).to_list()
        found = [None if bits is None else bool(bits >> i & 1) for bits in scanned["_keywords"]]
        assert found == expected, word
    assert scanned["_marked"].to_list() == [False, False, False, False, True, False, None]
    assert scanned["_chars"].to_list() == [len(t) if t is not None else None for t in texts]


def test_equal_ranks_give_the_action_score_of_the_diagnosis_that_sorts_first_in_any_row_order() -> None:
    # The agent ranked two diagnoses with evidence both 2nd (its 1st has none, so is not
    # structured): the first-ranked structured one is "Opioid overdose" (2 items, action 20), not
    # "Pneumonia" (1 item, action 10), whichever row comes first.
    rows = [
        ("r", INDEPENDENT, "g", "heart attack", 1, None),
        ("r", INDEPENDENT, "g", "Pneumonia", 2, ["fever"]),
        ("r", INDEPENDENT, "g", "Opioid overdose", 2, ["rales", "fever"]),
    ]
    schema = {"run_id": pl.String, "round": pl.String, "agent_id": pl.String, "diagnosis": pl.String,
              "rank": pl.Int64, "evidence": pl.List(pl.String)}  # fmt: skip
    messages = pl.LazyFrame({"run_id": ["r"], "round": [INDEPENDENT], "agent_id": ["g"], "text": ["I agree."]})
    scored = [
        round_credibility(messages, pl.LazyFrame(order, schema=schema, orient="row")).collect()
        for order in (rows, rows[::-1], [rows[0], rows[2], rows[1]])
    ]
    assert scored[0].select("action", "insight", "synthesis").row(0) == (20.0, 3 * 2 + 2 * 1.5, 4 * 2)
    for other in scored[1:]:
        assert other.equals(scored[0])


words = st.sampled_from(
    [
        "evidence", "support", "challenge", "clinical reasoning", "risk factors", "**Reasoning**", "consider",
        "integrate", "recommend", "plan", "next", "Evidence", "DIAGNOSIS", "findings", "studies", "the", "patient",
        "with", "fever", "and", "question", "alternative", "differential", "weigh", "should", "RIS\u212a FACTOR",
        "EVİDENCE",
    ]
)  # fmt: skip
texts = st.lists(words, min_size=0, max_size=60).map(" ".join)
agents = st.sampled_from(["a", "b", "c", "d"])
rounds = st.sampled_from([INDEPENDENT, DEBATE, "cant_miss"])
diagnoses = st.sampled_from(["flu", "Flu ", "cold", "sepsis", "mi"])


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[tuple[str, str, str]], dict[tuple[str, str], list[tuple[str, list[str]]]]]:
    keys = draw(st.lists(st.tuples(rounds, agents), min_size=1, max_size=10, unique=True))
    messages = [(r, a, draw(texts)) for r, a in keys]
    structured = {}
    for r, a in keys:
        if r == INDEPENDENT and draw(st.booleans()):
            names = draw(st.lists(diagnoses, min_size=1, max_size=4, unique=True))
            structured[(r, a)] = [(n, draw(st.lists(words, max_size=3))) for n in names]
    return messages, structured


def _frames(messages: list, structured: dict) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    message_frame = pl.LazyFrame(
        [("r", r, a, t) for r, a, t in messages], schema=["run_id", "round", "agent_id", "text"], orient="row"
    )
    rows = [
        ("r", r, a, d, rank, 1, evidence)
        for (r, a), items in structured.items()
        for rank, (d, evidence) in enumerate(items, start=1)
    ]
    schema = {
        "run_id": pl.String, "round": pl.String, "agent_id": pl.String, "diagnosis": pl.String, "rank": pl.Int64,
        "mentions": pl.Int64, "evidence": pl.List(pl.String),
    }  # fmt: skip
    return message_frame, pl.LazyFrame(rows, schema=schema, orient="row")


@settings(max_examples=150, deadline=None)
@given(
    run=runs(),
    count_mentions=st.booleans(),
    counting=st.sampled_from(["presence", "occurrences"]),
    left_out=st.sampled_from([(), (DEBATE,), (DEBATE, INDEPENDENT)]),
)
def test_vectorised_equals_oracle(run: tuple, count_mentions: bool, counting: str, left_out: tuple) -> None:
    messages, structured = run
    message_frame, ddx = _frames(messages, structured)
    computed = tempo_scores(message_frame, ddx, count_mentions=count_mentions).collect()
    mentions = [d for (r, _), items in structured.items() if r == INDEPENDENT for d, _ in items]
    expected = oracle.tempo(messages, mentions, independent=INDEPENDENT, debate=DEBATE, count_mentions=count_mentions)
    assert dict(computed.select("round", "tempo_score").iter_rows()) == pytest.approx(expected, rel=1e-12)
    scores = credibility(
        round_credibility(message_frame, ddx, counting=counting, left_out=left_out)  # type: ignore[arg-type]
    ).collect()
    expected_credibility = oracle.credibility(
        messages, structured, structured_round=INDEPENDENT, counting=counting, left_out=left_out
    )
    got = dict(scores.select("agent_id", "credibility").iter_rows())
    assert got.keys() == expected_credibility.keys()
    for agent, value in expected_credibility.items():
        assert math.isclose(got[agent], value, rel_tol=1e-12, abs_tol=1e-12), agent


@st.composite
def ballots(draw: st.DrawFn) -> tuple[dict[str, list[str]], dict[str, float]]:
    names = ["flu", "cold", "sepsis", "mi", "pe", "dvt", "gout", "uti", "copd", "ckd", "aki", "dka"]
    voters = draw(st.lists(agents, min_size=1, max_size=4, unique=True))
    rankings = {a: draw(st.lists(st.sampled_from(names), min_size=1, max_size=12, unique=True)) for a in voters}
    weights = st.one_of(st.integers(0, 40).map(float), st.floats(0, 40, allow_nan=False))
    credibility = {a: draw(weights) for a in voters if draw(st.booleans())}
    return rankings, credibility


@settings(max_examples=150, deadline=None)
@given(ballot=ballots(), keep_share=st.sampled_from([0.0, 0.3, 0.75, 1.0]), at_most=st.integers(1, 12))
def test_vote_equals_oracle(ballot: tuple, keep_share: float, at_most: int) -> None:
    rankings, weights = ballot
    votes = pl.LazyFrame(
        [("r", a, d, p) for a, ranking in rankings.items() for p, d in enumerate(ranking, start=1)],
        schema=["run_id", "agent_id", "diagnosis", "rank"],
        orient="row",
    )
    credibility_frame = pl.LazyFrame(
        {"run_id": ["r"] * len(weights), "agent_id": list(weights), "credibility": list(weights.values())},
        schema={"run_id": pl.String, "agent_id": pl.String, "credibility": pl.Float64},
    )
    got = credibility_vote(votes, credibility_frame, keep_share=keep_share, at_most=at_most).collect()
    expected = oracle.vote(rankings, weights, keep_share, at_most)
    assert got["diagnosis"].to_list() == [d for d, _ in expected]
    assert got["points"].to_list() == pytest.approx([p for _, p in expected], rel=1e-12)
    assert got["rank"].to_list() == list(range(1, len(expected) + 1))


@pytest.mark.parametrize(("keep_share", "at_most"), [(-0.1, 10), (1.5, 10), (0.3, 0), (0.3, True)])
def test_vote_refuses_bad_parameters(keep_share: float, at_most: int) -> None:
    empty = pl.LazyFrame(schema={"run_id": pl.String, "agent_id": pl.String, "diagnosis": pl.String, "rank": pl.Int64})
    with pytest.raises(InvalidParameterError, match="credibility_vote: "):
        credibility_vote(empty, empty, keep_share=keep_share, at_most=at_most)
