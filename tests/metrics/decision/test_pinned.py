"""Decision metrics pinned to independent published values, the crisis-MAS methodology's examples, and edge cases."""

from __future__ import annotations

import math

import polars as pl
import pytest

import mas_eval  # noqa: F401  (registers the `mas` namespace)
from mas_eval import DataError
from tests.decision_helpers import column_by, one_run, run_row

# -- TOPSIS ------------------------------------------------------------------------------------

# Hwang & Yoon (1981), Multiple Attribute Decision Making, fighter-aircraft example: max speed,
# ferry range, max payload, purchasing cost (cost), reliability, maneuverability.
AIRCRAFT = {
    "A1": [2.0, 1500, 20000, 5.5, 5, 9],
    "A2": [2.5, 2700, 18000, 6.5, 3, 5],
    "A3": [1.8, 2000, 21000, 4.5, 7, 7],
    "A4": [2.2, 1800, 20000, 5.0, 5, 5],
}
AIRCRAFT_WEIGHTS = [0.2, 0.1, 0.1, 0.1, 0.2, 0.3]
AIRCRAFT_KINDS = ["benefit", "benefit", "benefit", "cost", "benefit", "benefit"]


def _topsis(matrix: dict[str, list[float]], weights: list[float], kinds: list[str]) -> pl.DataFrame:
    names = [f"c{j}" for j in range(len(weights))]
    return one_run(
        scores={a: dict(zip(names, row, strict=True)) for a, row in matrix.items()},
        criteria={c: {"weight": w, "kind": k, "scale": "raw"} for c, w, k in zip(names, weights, kinds, strict=True)},
    ).alternatives


def test_topsis_hwang_yoon_fighter_aircraft() -> None:
    alts = _topsis(AIRCRAFT, AIRCRAFT_WEIGHTS, AIRCRAFT_KINDS)
    closeness = column_by(alts, "alternative", "topsis_closeness")
    # The book prints 0.643, 0.268, 0.613, 0.312 from separations rounded to 4 decimals
    # (A3: .0920/(.0580+.0920) = .6133); at full precision A3 is 0.61354.
    for alt, published in {"A1": 0.643, "A2": 0.268, "A3": 0.613, "A4": 0.312}.items():
        assert closeness[alt] == pytest.approx(published, abs=1e-3)
    # The book's separations, to its 4 decimals.
    d_best = column_by(alts, "alternative", "topsis_distance_best")
    d_worst = column_by(alts, "alternative", "topsis_distance_worst")
    for alt, (plus, minus) in {"A1": (0.0545, 0.0983), "A2": (0.1197, 0.0439), "A3": (0.0580, 0.0920),
                               "A4": (0.1009, 0.0458)}.items():  # fmt: skip
        assert d_best[alt] == pytest.approx(plus, abs=1e-4)
        assert d_worst[alt] == pytest.approx(minus, abs=1e-4)
    assert column_by(alts, "alternative", "topsis_rank") == {"A1": 1, "A3": 2, "A4": 3, "A2": 4}


def test_topsis_tzeng_huang_2011() -> None:
    # Tzeng & Huang (2011), Multiple Attribute Decision Making: Methods and Applications, CRC
    # Press; the same example is pinned in scikit-criteria's test_TOPSIS_tzeng2011multiple.
    matrix = {"A1": [5, 8, 4], "A2": [7, 6, 8], "A3": [8, 8, 6], "A4": [7, 4, 6]}
    alts = _topsis(matrix, [0.3, 0.4, 0.3], ["benefit"] * 3)
    closeness = column_by(alts, "alternative", "topsis_closeness")
    for alt, published in {"A1": 0.5037, "A2": 0.6581, "A3": 0.7482, "A4": 0.3340}.items():
        assert closeness[alt] == pytest.approx(published, abs=1e-4)
    assert column_by(alts, "alternative", "topsis_rank") == {"A3": 1, "A2": 2, "A1": 3, "A4": 4}


def test_topsis_constant_criterion_adds_no_distance() -> None:
    with_constant = {a: [*row[:3], 7.0] for a, row in {"A1": [5, 8, 4], "A2": [7, 6, 8], "A3": [8, 8, 6]}.items()}
    without = {a: row[:3] for a, row in with_constant.items()}
    got = _topsis(with_constant, [0.25, 0.25, 0.25, 0.25], ["benefit"] * 4)
    ref = _topsis(without, [0.25, 0.25, 0.25], ["benefit"] * 3)
    # Same weights on the varying criteria (0.25 of the total each) and 0 distance on the constant one.
    for column in ("topsis_distance_best", "topsis_distance_worst", "topsis_closeness"):
        assert got[column].to_list() == pytest.approx(
            [x * (0.25 / (1 / 3)) if column != "topsis_closeness" else x for x in ref[column].to_list()], abs=1e-12
        )


def test_topsis_single_alternative_is_both_ideals() -> None:
    alts = _topsis({"only": [3.0, 1.0]}, [0.5, 0.5], ["benefit", "cost"])
    row = alts.row(0, named=True)
    assert (row["topsis_distance_best"], row["topsis_distance_worst"], row["topsis_closeness"]) == (0.0, 0.0, 0.5)
    assert row["topsis_rank"] == 1


# -- Gini --------------------------------------------------------------------------------------


def test_gini_matches_r_ineq() -> None:
    # R: library(ineq); x <- c(541, 1463, 2445, 3438, 4437, 5401, 6392, 8304, 11904, 22261)
    #    Gini(x)  # 0.4620911 (ineq's default corr = FALSE: no n/(n-1) factor)
    x = pl.DataFrame({"x": [541.0, 1463, 2445, 3438, 4437, 5401, 6392, 8304, 11904, 22261]})
    assert x.select(pl.col("x").mas.gini()).item() == pytest.approx(0.4620911, abs=5e-8)


def test_gini_seed_balance_example_uses_the_formula() -> None:
    # The crisis-MAS evaluation methodology prints Gini .077 / balance .923 beside contributions
    # (.75,.68,.82,.71), for which its own formula gives .0389; for these six contributions it gives
    # .0367: Σ(2i-7)w_(i) = 1.0 over n Σw = 6 * 4.54.
    x = pl.DataFrame({"w": [0.75, 0.82, 0.68, 0.78, 0.71, 0.80]})
    assert x.select(pl.col("w").mas.gini()).item() == pytest.approx(1.0 / (6 * 4.54), abs=1e-12)
    balance = 1 - x.select(pl.col("w").mas.gini()).item()
    assert balance == pytest.approx(0.963, abs=5e-4)


def test_gini_crisis_mas_poc_values() -> None:
    # kerbgr/crisis_mas_poc's implementation gives 0.25 and 2/3; all-zero gives NaN there, 0 here.
    for values, expected in (([1.0, 2.0, 3.0, 4.0], 0.25), ([0.0, 0.0, 1.0], 2 / 3), ([0.5, 0.5], 0.0),
                             ([0.0, 0.0], 0.0)):  # fmt: skip
        got = pl.DataFrame({"w": values}).select(pl.col("w").mas.gini()).item()
        assert got == pytest.approx(expected, abs=1e-12)


# -- consensus, confidence, efficiency, DQS: the crisis-MAS methodology's worked examples -------

SEED_BELIEFS = {
    "agent1": {"alt1": 0.6, "alt2": 0.3, "alt3": 0.1},
    "agent2": {"alt1": 0.7, "alt2": 0.2, "alt3": 0.1},
    "agent3": {"alt1": 0.5, "alt2": 0.4, "alt3": 0.1},
}


def test_consensus_seed_example_uses_the_formula() -> None:
    # The crisis-MAS methodology prints pairs .987/.954/.921 and CL .954; its own cosine formula
    # gives .9832/.9783/.9239 and CL .9618.
    scores = one_run(beliefs=SEED_BELIEFS, pairwise=True)
    assert run_row(scores)["consensus_level"] == pytest.approx(0.9617827211, abs=1e-9)
    pairs = {(r["agent_a"], r["agent_b"]): r["similarity"] for r in scores.pairwise.to_dicts()}
    dot = lambda u, v: sum(a * b for a, b in zip(u, v, strict=True))  # noqa: E731
    a1, a2 = (0.6, 0.3, 0.1), (0.7, 0.2, 0.1)
    cos = lambda u, v: dot(u, v) / math.sqrt(dot(u, u) * dot(v, v))  # noqa: E731
    assert pairs[("agent1", "agent2")] == pytest.approx(cos(a1, a2), abs=1e-12)
    assert [round(pairs[p], 4) for p in sorted(pairs)] == [0.9832, 0.9783, 0.9239]
    row = run_row(scores)
    assert (row["top_preference"], row["agreement_percentage"], row["num_agents"]) == ("alt1", 1.0, 3)


def test_confidence_seed_example_uses_the_formula() -> None:
    # The crisis-MAS methodology prints variance .032 / std .179 for (.82, .78, .88, .71); its own
    # population variance is .00381875 and std .0618.
    confidences = {"a1": 0.82, "a2": 0.78, "a3": 0.88, "a4": 0.71}
    row = run_row(one_run(confidences=confidences))
    assert row["average_confidence"] == pytest.approx(0.7975, abs=1e-12)
    assert row["confidence_variance"] == pytest.approx(0.00381875, abs=1e-12)
    assert row["confidence_std"] == pytest.approx(math.sqrt(0.00381875), abs=1e-12)
    assert (row["min_confidence"], row["max_confidence"]) == (0.71, 0.88)


def test_mas_decision_confidence_is_weighted_consensus_and_confidence() -> None:
    conf = {"agent1": 0.8, "agent2": 0.6, "agent3": 0.9}
    row = run_row(one_run(beliefs=SEED_BELIEFS, confidences=conf, run={"confidence": 0.1}))
    expected = 0.6 * 0.9617827211 + 0.4 * (0.8 + 0.6 + 0.9) / 3
    assert row["decision_confidence"] == pytest.approx(expected, abs=1e-9)
    assert row["uncertainty"] == pytest.approx(1 - expected, abs=1e-9)


def test_efficiency_seed_example_uses_the_formula() -> None:
    # The crisis-MAS methodology prints .750/.424 and score .891 for I=1, A=4, T=12.4; its own
    # formula gives .500/.429/.287 and .405.
    row = run_row(one_run(run={"iterations": 1, "api_calls": 4, "seconds": 12.4}))
    assert row["iteration_efficiency"] == pytest.approx(0.5, abs=1e-12)
    assert row["api_efficiency"] == pytest.approx(3 / 7, abs=1e-12)
    assert row["time_efficiency"] == pytest.approx(1 / 3.48, abs=1e-12)
    assert row["efficiency_score"] == pytest.approx((0.5 + 3 / 7 + 1 / 3.48) / 3, abs=1e-12)
    assert round(row["efficiency_score"], 3) == 0.405


def test_dqs_seed_example() -> None:
    # The crisis-MAS methodology, "Single-Agent DQS": (0.90 + 0.50 + 0.95) / 3 = 0.783 (the document agrees).
    scores = {"alt1": {"safety": 0.90, "cost": 0.50, "speed": 0.95}, "alt2": {"safety": 0.85, "cost": 0.80,
              "speed": 0.90}}  # fmt: skip
    row = run_row(one_run(scores=scores, run={"recommended": "alt1"}))
    assert row["dqs"] == pytest.approx(2.35 / 3, abs=1e-12)
    assert round(row["dqs"], 3) == 0.783
    assert (row["dqs_method"], row["gt_match"]) == ("criteria", None)


def test_dqs_weighted_and_ground_truth_boost() -> None:
    scores = {"alt1": {"safety": 0.9, "cost": 0.5}, "alt2": {"safety": 0.2, "cost": 0.4}}
    criteria = {"safety": {"weight": 0.4}, "cost": {"weight": 0.6}}
    row = run_row(one_run(scores=scores, criteria=criteria, run={"recommended": "alt1", "correct": "alt1"}))
    assert row["dqs_raw"] == pytest.approx(0.4 * 0.9 + 0.6 * 0.5, abs=1e-12)
    assert (row["dqs"], row["gt_match"]) == (0.9, True)
    unboosted = run_row(one_run(scores=scores, criteria=criteria, gt_boost=None,
                                run={"recommended": "alt1", "correct": "alt1"}))  # fmt: skip
    assert unboosted["dqs"] == pytest.approx(0.66, abs=1e-12)


def test_missing_criteria_weights_are_equal() -> None:
    scores = {"alt1": {"safety": 0.9, "cost": 0.5, "speed": 0.1}}
    criteria = {"safety": {"weight": 3.0}, "cost": {"weight": None}, "speed": {"weight": 1.0}}
    row = run_row(one_run(scores=scores, criteria=criteria, run={"recommended": "alt1"}))
    assert row["dqs"] == pytest.approx(0.5, abs=1e-12)


def test_missing_ground_truth_gives_null_match() -> None:
    row = run_row(one_run(scores={"alt1": {"q": 0.4}}, run={"recommended": "alt1"}))
    assert row["gt_match"] is None
    assert row["dqs"] == pytest.approx(0.4)


# -- evidential reasoning ----------------------------------------------------------------------


def test_er_two_attribute_example_worked_by_hand() -> None:
    # Two agents, equal weights w = .5; agent 1 complete (A .8, B .2), agent 2 incomplete
    # (A .4, B .4, 0.2 unassigned).
    #   m̄_H = (.5, .5); m̃_H = (.5·0, .5·.2) = (0, .1); m_H = (.5, .6)
    #   P_A = (.5·.8 + .5)(.5·.4 + .6) = .9 · .8 = .72;  P_B = (.1 + .5)(.2 + .6) = .48
    #   Π m_H = .30;  Π m̄_H = .25;  k = 1 / (.72 + .48 − (2 − 1)·.30) = 1/.9
    #   1 − k Π m̄_H = .65/.9
    #   β_A = (.72 − .30)/.65 = .42/.65;  β_B = .18/.65;  β_H = (.30 − .25)/.65 = .05/.65
    scores = one_run(beliefs={"g1": {"A": 0.8, "B": 0.2}, "g2": {"A": 0.4, "B": 0.4}})
    belief = column_by(scores.alternatives, "alternative", "er_belief")
    assert belief["A"] == pytest.approx(0.42 / 0.65, abs=1e-12)
    assert belief["B"] == pytest.approx(0.18 / 0.65, abs=1e-12)
    assert run_row(scores)["er_unassigned"] == pytest.approx(0.05 / 0.65, abs=1e-12)
    assert column_by(scores.alternatives, "alternative", "er_rank") == {"A": 1, "B": 2}


def test_er_consensus_and_no_support_axioms() -> None:
    # Yang & Xu (2002), axioms 1-2: every attribute precisely assessed to one grade gives that
    # grade belief 1; a grade no attribute supports gets belief 0.
    unanimous = {"A": 1.0, "B": 0.0}
    scores = one_run(
        beliefs={"g1": unanimous, "g2": unanimous, "g3": unanimous}, weights={"g1": 1.0, "g2": 2.0, "g3": 0.5}
    )
    belief = column_by(scores.alternatives, "alternative", "er_belief")
    assert belief == pytest.approx({"A": 1.0, "B": 0.0}, abs=1e-12)
    assert run_row(scores)["er_unassigned"] == pytest.approx(0.0, abs=1e-12)
    split = one_run(beliefs={"g1": {"A": 0.6, "B": 0.4, "C": 0.0}, "g2": {"A": 0.3, "B": 0.7, "C": 0.0}})
    assert column_by(split.alternatives, "alternative", "er_belief")["C"] == pytest.approx(0.0, abs=1e-12)


def test_er_completeness_and_incompleteness_axioms() -> None:
    complete = one_run(beliefs={"g1": {"A": 0.7, "B": 0.3}, "g2": {"B": 1.0}, "g3": {"A": 0.1, "C": 0.9}})
    assert run_row(complete)["er_unassigned"] == pytest.approx(0.0, abs=1e-12)
    assert sum(complete.alternatives["er_belief"]) == pytest.approx(1.0, abs=1e-12)
    incomplete = one_run(beliefs={"g1": {"A": 0.7, "B": 0.2}, "g2": {"B": 1.0}, "g3": {"A": 0.1, "C": 0.9}})
    unassigned = run_row(incomplete)["er_unassigned"]
    assert unassigned > 0
    assert sum(incomplete.alternatives["er_belief"]) + unassigned == pytest.approx(1.0, abs=1e-12)


def test_er_single_agent_returns_its_beliefs() -> None:
    scores = one_run(beliefs={"g": {"A": 0.6, "B": 0.3}})
    assert column_by(scores.alternatives, "alternative", "er_belief") == pytest.approx({"A": 0.6, "B": 0.3})
    assert run_row(scores)["er_unassigned"] == pytest.approx(0.1, abs=1e-12)


# -- crisis_mas_poc preset: numbers its code produces -------------------------------------------

CRISIS_AGENTS = {"a": {"A1": 0.7, "A2": 0.2, "A3": 0.1}, "b": {"A1": 0.5, "A2": 0.3, "A3": 0.2},
                 "c": {"A2": 0.6, "A3": 0.4}}  # fmt: skip


def test_crisis_preset_consensus_and_balance() -> None:
    # Inputs -> outputs of kerbgr/crisis_mas_poc evaluation/metrics.py (run on this example).
    scores = one_run(beliefs=CRISIS_AGENTS, confidences={"a": 0.8, "b": 0.6, "c": 0.9}, preset="crisis-mas-poc")
    row = run_row(scores)
    assert row["consensus_level"] == pytest.approx(0.6120287945, abs=1e-9)
    assert row["agreement_percentage"] == pytest.approx(2 / 3, abs=1e-12)
    assert row["top_preference"] == "A1"
    contribution = column_by(scores.agents, "agent_id", "contribution")
    assert contribution == pytest.approx({"a": 0.7649233496, "b": 0.7686152816, "c": 0.9354752972}, abs=1e-9)
    assert row["gini_coefficient"] == pytest.approx(0.0460512989, abs=1e-9)
    assert row["balance_score"] == pytest.approx(0.9539487011, abs=1e-9)
    assert row["diversity_score"] == pytest.approx(2 / 3, abs=1e-12)


def test_crisis_preset_weighted_average_beliefs() -> None:
    # crisis_mas_poc tests/test_evidential_reasoning.py: weights .55/.45 -> {A1 .61, A2 .245, A3 .145}.
    two = one_run(beliefs={"x": {"A1": 0.7, "A2": 0.2, "A3": 0.1}, "y": {"A1": 0.5, "A2": 0.3, "A3": 0.2}},
                  weights={"x": 0.55, "y": 0.45}, preset="crisis-mas-poc")  # fmt: skip
    assert column_by(two.alternatives, "alternative", "er_belief") == pytest.approx(
        {"A1": 0.61, "A2": 0.245, "A3": 0.145}, abs=1e-12
    )
    three = one_run(beliefs={"x": {"A1": 0.7, "A2": 0.3}, "y": {"A2": 0.4, "A3": 0.6}, "z": {"A1": 0.5, "A3": 0.5}},
                    weights={"x": 0.4, "y": 0.3, "z": 0.3}, preset="crisis-mas-poc")  # fmt: skip
    assert column_by(three.alternatives, "alternative", "er_belief") == pytest.approx(
        {"A1": 0.43, "A2": 0.24, "A3": 0.33}, abs=1e-12
    )


# -- edge cases with defined results -------------------------------------------------------------


def test_one_agent_has_no_consensus_but_a_balance() -> None:
    row = run_row(one_run(beliefs={"g": {"A": 0.6, "B": 0.4}}, confidences={"g": 0.7}, run={"confidence": 0.9}))
    assert row["consensus_level"] is None
    assert (row["gini_coefficient"], row["balance_score"]) == (0.0, 1.0)
    assert row["decision_confidence"] == 0.9  # self-reported, as the crisis-MAS methodology says for a single agent
    lone = run_row(one_run(beliefs={"g": {"A": 0.6, "B": 0.4}}, confidences={"g": 0.7}))
    assert lone["decision_confidence"] == 0.7  # no self-report: the agent's own confidence


def test_one_alternative() -> None:
    scores = one_run(beliefs={"g1": {"A": 1.0}, "g2": {"A": 0.5}}, confidences={"g1": 0.5, "g2": 0.5})
    row = run_row(scores)
    assert row["consensus_level"] == pytest.approx(1.0)
    assert column_by(scores.agents, "agent_id", "normalized_entropy") == {"g1": 0.0, "g2": 0.0}
    assert (row["top_preference"], row["agreement_percentage"], row["diversity_score"]) == ("A", 1.0, 0.5)


def test_zero_mass_agent_is_an_error() -> None:
    with pytest.raises(DataError, match=r"table 'beliefs', column 'mass': 1 agent\(s\) have all masses zero.*"
                       r"\(run_id='r', agent_id='g2'\)"):  # fmt: skip
        one_run(beliefs={"g1": {"A": 1.0}, "g2": {"A": 0.0, "B": 0.0}})


def test_ties_go_to_the_alternative_that_sorts_first() -> None:
    scores = one_run(beliefs={"g1": {"B": 0.4, "A": 0.4, "C": 0.2}, "g2": {"C": 0.5, "B": 0.5}})
    assert column_by(scores.agents, "agent_id", "top_choice") == {"g1": "A", "g2": "B"}
    row = run_row(scores)
    assert (row["top_preference"], row["agreement_percentage"], row["unique_preferences"]) == ("A", 0.5, 2)


def test_all_contributions_zero_give_gini_zero() -> None:
    row = run_row(one_run(beliefs={"g1": {"A": 1.0}, "g2": {"B": 1.0}}, confidences={"g1": 0.0, "g2": 0.0}))
    assert (row["gini_coefficient"], row["balance_score"]) == (0.0, 1.0)


@pytest.mark.parametrize("n_alternatives", [4, 12])  # 12 > SMALL_GROUP_SIZE: the window-rank path
def test_rank_ties_go_to_the_first_id_for_small_and_large_runs(n_alternatives: int) -> None:
    # One benefit criterion: closeness orders alternatives by score; equal scores tie exactly.
    values = [float(i // 2) for i in range(n_alternatives)]  # pairs of ties: 0,0,1,1,2,2,...
    names = [f"a{i:02d}" for i in range(n_alternatives)]
    alts = _topsis({n: [v] for n, v in zip(names, values, strict=True)}, [1.0], ["benefit"])
    ranks = column_by(alts, "alternative", "topsis_rank")
    expected = sorted(names, key=lambda n: (-values[names.index(n)], n))
    assert ranks == {n: i for i, n in enumerate(expected, start=1)}
