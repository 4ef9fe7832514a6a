"""Failure modes from annotations (``mas_eval.stats.failures``): rates, paired differences, agreement.

Each function against the plain-Python oracle (``tests/oracles/failures.py``) on random
annotations, its intervals and tests against statsmodels, and on real labels: Who&When's 58
hand-crafted logs (``tests/data/annotations``, MIT).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from mas_eval import Dataset
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.ingest import ingest_annotations
from mas_eval.stats import annotator_agreement, failure_differences, failure_rates
from mas_eval.stats import fleiss_kappa as fleiss
from mas_eval.stats import krippendorff_alpha as alpha
from tests.oracles import failures as oracle

WHO_WHEN = Path(__file__).parents[1] / "data" / "annotations" / "who_when"

CASES = [f"q{i}" for i in range(6)]
RUNS = {f"{system[0]}{i}": (system, case) for system in ("mas", "single") for i, case in enumerate(CASES)}
RUN_FRAME = pl.DataFrame(
    [(run, system, case) for run, (system, case) in RUNS.items()], schema=["run_id", "system", "case_id"], orient="row"
)

labels_strategy = st.lists(
    st.tuples(
        st.sampled_from(sorted(RUNS)),
        st.sampled_from(["1.1 Disobey task specification", "2.3 Task derailment", "3.3 Incorrect verification"]),
        st.sampled_from(["a", "b", "c", "d"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=80,
    unique_by=lambda label: label[:3],
)


def _annotations(labels: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(labels, schema=["run_id", "mode", "annotator", "present"], orient="row")


# -- rates ---------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)  # each example runs a handful of group-bys
@given(labels_strategy, st.sampled_from(["majority", "any", "all"]))
def test_rates_equal_the_oracle_for_every_consensus(labels: list[tuple], consensus: str) -> None:
    got = failure_rates(_annotations(labels), RUN_FRAME, consensus=consensus)  # type: ignore[arg-type]
    want = oracle.rates(labels, {run: system for run, (system, _) in RUNS.items()}, consensus)
    assert {(s, m): (n, x, t) for s, m, n, x, t in got.select("system", "mode", "n", "present", "ties").rows()} == want
    low, high = proportion_confint(got["present"].to_numpy(), got["n"].to_numpy(), method="wilson")
    np.testing.assert_allclose(got["ci_low"].to_numpy(), low, atol=1e-12)
    np.testing.assert_allclose(got["ci_high"].to_numpy(), high, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(labels_strategy)
def test_a_named_annotators_rates_are_its_own_labels(labels: list[tuple]) -> None:
    named = labels[0][2]
    got = failure_rates(_annotations(labels), RUN_FRAME, annotator=named)
    want = oracle.rates(labels, {run: system for run, (system, _) in RUNS.items()}, "majority", named)
    assert {(s, m): (n, x, t) for s, m, n, x, t in got.select("system", "mode", "n", "present", "ties").rows()} == want


def test_who_when_decisive_agents_of_the_hand_crafted_logs() -> None:
    """Who&When's paper (section 4.6, Figure 6): of the hand-crafted Magentic-One logs' decisive errors, the
    most are WebSurfer's ("agent 3"). Here: 31 of 58 (53.4%, Wilson 95% 40.8% to 65.7%), Orchestrator's 18; the
    log also spells WebSurfer "Websurfer" twice, kept as written."""
    ds = ingest_annotations({WHO_WHEN / "Hand-Crafted": "Magentic-One"}).dataset
    rates = failure_rates(ds, by="agent_id").sort("present", descending=True)
    assert rates.select("agent_id", "n", "present").rows() == [
        ("WebSurfer", 58, 31),
        ("Orchestrator", 58, 18),
        ("Assistant", 58, 4),
        ("FileSurfer", 58, 3),
        ("Websurfer", 58, 2),
    ]
    top = rates.row(0, named=True)
    low, high = proportion_confint(31, 58, method="wilson")
    assert (top["ci_low"], top["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert (round(top["rate"], 3), round(top["ci_low"], 3), round(top["ci_high"], 3)) == (0.534, 0.408, 0.657)
    # Every log is a failure its annotators attributed: the mode's rate over the whole run is 1.
    assert failure_rates(ds).select("n", "present", "rate").row(0) == (58, 58, 1.0)


def test_where_a_mode_was_found_takes_a_majority_per_agent() -> None:
    ann = pl.DataFrame(
        {
            "run_id": ["r1"] * 3 + ["r2"] * 3,
            "mode": "decisive error",
            "annotator": ["a", "b", "c"] * 2,
            "present": [True] * 6,
            "agent_id": ["planner", "planner", "coder", "coder", "planner", "tester"],
        }
    )
    runs = pl.DataFrame({"run_id": ["r1", "r2"], "system": "mas"})
    rates = failure_rates(ann, runs, by="agent_id")
    # r1: 2 of 3 annotators blame the planner; r2: no agent has a majority.
    assert rates.select("agent_id", "n", "present").rows() == [("coder", 2, 0), ("planner", 2, 1), ("tester", 2, 0)]


# -- paired differences --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(labels_strategy, st.sampled_from(["majority", "any"]))
def test_paired_tables_equal_the_oracle_and_the_tests_statsmodels(labels: list[tuple], consensus: str) -> None:
    got = failure_differences(_annotations(labels), RUN_FRAME, consensus=consensus)  # type: ignore[arg-type]
    want = oracle.paired_tables(labels, RUNS, "mas", "single", consensus)
    cells = ["both", "treatment_only", "control_only", "neither"]
    assert {row[0]: tuple(row[1:]) for row in got.select("mode", *cells).rows()} == want
    for row in got.iter_rows(named=True):
        if row["n"] == 0:
            assert row["p_value"] is None and row["ci_low"] is None
            continue
        table = [[row["both"], row["treatment_only"]], [row["control_only"], row["neither"]]]
        assert row["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
        assert row["difference"] == pytest.approx((row["treatment_only"] - row["control_only"]) / row["n"])
    tested = got.filter(pl.col("p_value").is_not_null())
    if tested.height:
        holm = multipletests(tested["p_value"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(tested["p_adjusted"].to_numpy(), holm, atol=1e-12)


def test_differences_pair_on_the_case_and_epoch_and_refuse_two_runs_of_one() -> None:
    runs = pl.DataFrame(
        {
            "run_id": ["m1", "m2", "s1", "s2"],
            "system": ["mas", "mas", "single", "single"],
            "case_id": ["q1", "q1", "q1", "q1"],
            "epoch": [1, 2, 1, 2],
        }
    )
    ann = pl.DataFrame({"run_id": runs["run_id"], "mode": "x", "annotator": "a", "present": [True, True, False, True]})
    row = failure_differences(ann, runs, correction="fdr_bh").row(0, named=True)
    assert (row["n"], row["treatment_only"], row["both"], row["correction"]) == (2, 1, 1, "fdr_bh")
    with pytest.raises(DataError, match="several annotated runs of one case_id"):
        failure_differences(ann, runs.drop("epoch"))
    with pytest.raises(DataError, match="no run of system 'debate'"):
        failure_differences(ann, runs, treatment="debate")
    with pytest.raises(InvalidParameterError, match="both 'mas'"):
        failure_differences(ann, runs, control="mas")


# -- agreement -----------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(labels_strategy)
def test_agreement_per_mode_is_the_agreement_functions_per_mode(labels: list[tuple]) -> None:
    ann = _annotations(labels)
    got = annotator_agreement(ann, pooled=False)
    keyed = {"unit": "run_id", "rater": "annotator", "value": "present", "by": "mode"}
    want_alpha = dict(alpha(ann, **keyed).select("mode", "alpha").rows())
    want_fleiss = dict(fleiss(ann, **keyed).select("mode", "kappa").rows())
    ratings = [(mode, run, who, present) for run, mode, who, present in labels]
    for mode, a, f in got.select("mode", "krippendorff_alpha", "fleiss_kappa").rows():
        assert (a, f) == (want_alpha[mode], want_fleiss[mode])
        want = oracle.krippendorff_alpha(ratings)[mode]
        assert (a is None and want is None) or a == pytest.approx(want, abs=1e-12)


def test_agreement_of_two_annotators_has_cohens_kappa_and_a_pooled_row() -> None:
    rng = np.random.default_rng(11)
    labels = [
        (f"r{run}", mode, who, bool(rng.random() < 0.4))
        for run in range(20)
        for mode in ("1.1 x", "2.2 y")
        for who in "ab"
    ]
    got = annotator_agreement(_annotations(labels))
    assert got["mode"].to_list() == ["1.1 x", "2.2 y", None]
    assert got["n_runs"].to_list() == [20, 20, 40] and got["n_annotators"].to_list() == [2, 2, 2]
    assert got["cohen_kappa"].null_count() == 0
    pooled = [("all", (run, mode), who, present) for run, mode, who, present in labels]
    assert got["cohen_kappa"][2] == pytest.approx(oracle.cohen_kappa(pooled)["all"], abs=1e-12)


def test_a_dataset_is_read_with_its_runs_and_bad_inputs_are_named(tmp_path: Path) -> None:
    ds = Dataset.from_frames(runs=RUN_FRAME)
    with pytest.raises(SchemaError, match="the Dataset has no annotations table"):
        failure_rates(ds)
    ann = _annotations([("m0", "1.1", "a", True), ("zz", "1.1", "a", False)])
    with pytest.raises(DataError, match=r"annotations of run\(s\) not in the runs: \(run_id='zz'\)"):
        failure_rates(ann, RUN_FRAME)
    with pytest.raises(InvalidParameterError, match="give the runs"):
        failure_rates(ann)
    with pytest.raises(DataError, match="no annotation by 'z'"):
        failure_rates(ann.filter(pl.col("run_id") != "zz"), RUN_FRAME, annotator="z")
    with pytest.raises(SchemaError, match="'present' has type String"):
        annotator_agreement(ann.with_columns(pl.col("present").cast(pl.String)))
    with pytest.raises(InvalidParameterError, match="consensus"):
        failure_rates(ann, RUN_FRAME, consensus="most")  # type: ignore[arg-type]
