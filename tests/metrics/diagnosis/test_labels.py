"""Diagnosis labels: vectorised ``classify`` against the per-run oracle, partitions, examples, errors."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.metrics.diagnosis.labels import (
    CONSIDERATION_WINDOW,
    CONSIDERATION_WORDS,
    DEFAULT_PATTERNS,
    LDDX_V6_PATTERNS,
    classify,
    intervention_keywords,
    label_counts,
)
from tests.conftest import LDDX, needs_lddx
from tests.oracles import equivalence as eq_oracle
from tests.oracles import labels as oracle

SHIPPED = eq_oracle.resolve(eq_oracle.read_synonyms())
TABLE = intervention_keywords().rows()
VOCABULARY = [
    "Myocardial infarction", "heart attack", "MI", "Acute kidney injury", "AKI", "chronic kidney disease",
    "Pneumonia", "pneumothorax", "Dehydration", "hypovolemia", "Sepsis", "suspected sepsis",
    "Pulmonary embolism", "Diabetic ketoacidosis", "hypoglycemia", "Acute pancreatitis",
    "chronic pancreatitis", "Opioid overdose", "acute MI", "Lupus (SLE)",
]  # fmt: skip
SENTENCES = [
    "We can exclude {x} given the labs.", "{x} seems unlikely.", "Rule out {x} first.", "{x} is LESS likely",
    "I favour {x}.", "unlikely\n{x}", "{x}\nless likely overall", "Tier 4: {x}", "{x} belongs in tier 4",
]  # fmt: skip
#: Messages of other rounds: a word of consideration just inside or just outside the window, before or after.
NEAR = [
    "{x} is a possible cause", "discussed: {x}", "{x} (tier 2)", "nothing to say about {x}",
    "considered" + "." * 90 + "{x}", "considered" + "." * 91 + "{x}", "{x}" + "." * 91 + "candidate",
    "{x}" + "." * 92 + "candidate", "{x} and later {x}" + "." * 95 + "unlikely",
]  # fmt: skip
PRESETS = ["spec", "lddx-v6", "lddx-v8"]
INTERVENTIONS = [
    "Give IV fluids",
    "Start broad-spectrum antibiotics",
    "insulin drip",
    "Supplemental oxygen",
    "reassure",
]


def frames(runs: list[tuple[str, oracle.Run]]) -> dict[str, pl.DataFrame]:
    ddx_rows = []
    for rid, run in runs:
        ddx_rows += [(rid, "final", "team", d, "final", None, None, None) for d in run.final]
        ddx_rows += [(rid, "cant_miss", a, d, "critical", m, e, r) for a, d, m, e, r in run.critical]
        ddx_rows += [(rid, "refinement_and_justification", "a1", d, "excluded", None, None, None) for d in run.excluded]
    ddx_schema = {
        "run_id": pl.String, "round": pl.String, "agent_id": pl.String, "diagnosis": pl.String, "stance": pl.String,
        "mentions": pl.Int64, "evidence": pl.List(pl.String), "rank": pl.Int64,
    }  # fmt: skip
    return {
        "runs": pl.DataFrame({"run_id": [r for r, _ in runs], "case_id": [f"case-{r}" for r, _ in runs]}),
        "ground_truth": pl.DataFrame(
            [(f"case-{r}", d) for r, run in runs for d in run.truth], schema=["case_id", "diagnosis"], orient="row"
        ),
        "ddx": pl.DataFrame(ddx_rows, schema=ddx_schema, orient="row"),
        "messages": pl.DataFrame(
            [(r, "refinement_and_justification", t) for r, run in runs for t in run.debate]
            + [(r, "post_debate_voting", t) for r, run in runs for t in run.others],
            schema=["run_id", "round", "text"],
            orient="row",
        ),
        "interventions": pl.DataFrame(
            [(r, t) for r, run in runs for t in run.interventions], schema=["run_id", "text"], orient="row"
        ),
    }


def got_by_run(labels: pl.DataFrame) -> dict[str, set]:
    out: dict[str, set] = {}
    for row in labels.with_columns(pl.col("side", "label", "tier").cast(pl.String)).iter_rows(named=True):
        score = None if row["score"] is None else round(row["score"], 9)
        key = (row["side"], row["diagnosis"], row["label"], row["matched_to"], row["tier"], score)
        out.setdefault(row["run_id"], set()).add(key)
    return out


def expected(run: oracle.Run, preset: str) -> set:
    patterns = DEFAULT_PATTERNS if preset == "spec" else LDDX_V6_PATTERNS
    rows = oracle.labels(
        run, preset=preset, synonyms=SHIPPED, patterns=patterns, table=TABLE,
        words=CONSIDERATION_WORDS, window=CONSIDERATION_WINDOW,
    )  # fmt: skip
    return {(*r[:5], None if r[5] is None else round(r[5], 9)) for r in rows}


dx = st.sampled_from(VOCABULARY)
critical = st.tuples(
    st.sampled_from(["team", "a1"]),
    dx,
    st.one_of(st.none(), st.integers(1, 5)),
    st.one_of(st.none(), st.lists(st.sampled_from(["fever", "rales"]), max_size=2)),
    st.one_of(st.none(), st.integers(1, 4)),
)
one_run = st.builds(
    oracle.Run,
    final=st.lists(dx, max_size=4),
    truth=st.lists(dx, max_size=4),
    critical=st.lists(critical, max_size=4),
    debate=st.lists(st.tuples(st.sampled_from(SENTENCES), dx).map(lambda p: p[0].format(x=p[1])), max_size=3),
    excluded=st.lists(dx, max_size=2),
    interventions=st.lists(st.sampled_from(INTERVENTIONS), max_size=2),
    others=st.lists(st.tuples(st.sampled_from(NEAR), dx).map(lambda p: p[0].format(x=p[1])), max_size=3),
)
many_runs = st.lists(one_run, min_size=1, max_size=4).map(lambda rs: [(f"r{i}", r) for i, r in enumerate(rs)])
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(many_runs, st.sampled_from(PRESETS))
def test_classify_matches_oracle(runs, preset):
    got = got_by_run(classify(frames(runs), preset=preset))
    for rid, run in runs:
        assert got.get(rid, set()) == expected(run, preset), rid


@SETTINGS
@given(many_runs, st.sampled_from(PRESETS))
def test_partitions(runs, preset):
    labels = classify(frames(runs), preset=preset)
    counts = {r["run_id"]: r for r in label_counts(labels, frames(runs)["runs"]).iter_rows(named=True)}
    for rid, run in runs:
        c, n_final, n_truth = counts[rid], len(set(run.final)), len(set(run.truth))
        system_tp = labels.filter((pl.col("run_id") == rid) & (pl.col("side") == "system") & (pl.col("label") == "TP"))
        if preset == "spec":
            assert c["tp"] + c["fp"] + c["caa"] == n_final
            assert c["tp"] + c["fn"] + c["ae"] + c["tm_sm"] == n_truth
            assert system_tp.height == c["tp"]
        else:
            assert system_tp.height + c["fp"] == n_final
            assert c["tp"] + c["fn"] + c["ae"] + c["caa"] + c["tm_sm"] == n_truth
        if preset == "lddx-v8":
            assert c["caa"] == 0 and system_tp.height == c["tp"]


@settings(max_examples=5, deadline=None)
@given(many_runs, st.randoms(use_true_random=False), st.sampled_from(PRESETS))
def test_row_order_does_not_matter(runs, rnd, preset):
    tables = frames(runs)
    shuffled = {k: v.sample(fraction=1.0, shuffle=True, seed=rnd.randint(0, 999)) for k, v in tables.items()}
    assert classify(tables, preset=preset).equals(classify(shuffled, preset=preset))


# --- one example per label ------------------------------------------------------------------------------


def example() -> dict[str, pl.DataFrame]:
    run = oracle.Run(
        final=["Heart attack", "Pulmonary embolism", "Gastritis"],
        truth=["Myocardial infarction", "Sepsis", "Dehydration", "Pneumothorax", "Pancreatitis", "Lupus"],
        critical=[
            ("team", "Pulmonary embolism", 1, ["hypoxia"], 1),
            ("team", "Pancreatitis", 4, ["lipase"], 2),
            ("team", "Lupus", 1, ["rash"], 3),
        ],
        debate=["After review, sepsis is unlikely.", "We should rule out\npneumothorax"],
        interventions=["[Thirst]: intravenous fluids, 1 L"],
    )
    return frames([("r1", run)])


def labels_of(preset: str) -> dict[str, str]:
    out = classify(example(), preset=preset)
    return {d: str(lbl) for d, lbl in out.select("diagnosis", "label").iter_rows()}


def test_each_label_spec():
    assert labels_of("spec") == {
        "Heart attack": "TP", "Myocardial infarction": "TP",
        "Pulmonary embolism": "CAA",  # not in the ground truth; can't-miss with evidence
        "Gastritis": "FP",
        "Sepsis": "AE",  # "sepsis is unlikely", one line
        "Dehydration": "TM-SM",  # intravenous fluids
        "Pneumothorax": "FN",  # "rule out" and the name are on different lines
        "Pancreatitis": "FN", "Lupus": "FN",
    }  # fmt: skip


def test_each_label_lddx_v6():
    assert labels_of("lddx-v6") == {
        "Heart attack": "TP", "Myocardial infarction": "TP",
        "Pulmonary embolism": "FP", "Gastritis": "FP",
        "Pancreatitis": "TP",  # can't-miss, 4 mentions >= 3: promoted
        "Lupus": "CAA",  # can't-miss, 1 mention
        "Sepsis": "AE", "Dehydration": "TM-SM", "Pneumothorax": "FN",
    }  # fmt: skip
    counts = label_counts(classify(example(), preset="lddx-v6")).row(0, named=True)
    assert counts == {"run_id": "r1", "tp": 2, "fp": 2, "fn": 1, "caa": 1, "ae": 1, "tm_sm": 1}


def test_each_label_lddx_v8():
    # Local-DDx v8: no CAA, and any mention near a word of consideration (in any round) is AE.
    tables = example()
    considered = pl.DataFrame(
        {"run_id": ["r1"], "round": ["post_debate_voting"], "text": ["Pancreatitis remains a potential concern."]}
    )
    tables["messages"] = pl.concat([tables["messages"], considered])
    got = {d: str(lbl) for d, lbl in classify(tables, preset="lddx-v8").select("diagnosis", "label").iter_rows()}
    assert got == {
        "Heart attack": "TP", "Myocardial infarction": "TP",
        "Pulmonary embolism": "FP", "Gastritis": "FP",
        "Sepsis": "AE",  # "unlikely" a few characters after the mention
        "Pancreatitis": "AE",  # "potential", in the voting round
        "Dehydration": "TM-SM", "Pneumothorax": "FN", "Lupus": "FN",
    }  # fmt: skip
    counts = label_counts(classify(tables, preset="lddx-v8")).row(0, named=True)
    assert counts == {"run_id": "r1", "tp": 1, "fp": 2, "fn": 2, "caa": 0, "ae": 2, "tm_sm": 1}


def test_excluded_stance_is_ae_under_spec_only():
    tables = example()
    extra = (
        tables["ddx"]
        .head(1)
        .with_columns(
            round=pl.lit("refinement_and_justification"), stance=pl.lit("excluded"), diagnosis=pl.lit("Pancreatitis")
        )
    )
    tables["ddx"] = pl.concat([tables["ddx"], extra])
    out = classify(tables).filter(pl.col("diagnosis") == "Pancreatitis")
    assert out["label"].cast(pl.String).to_list() == ["AE"]


def test_label_counts_keeps_runs_without_labels():
    runs = pl.DataFrame({"run_id": ["r1", "zz"]})
    out = label_counts(classify(example()), runs)
    assert out["run_id"].to_list() == ["r1", "zz"]
    assert out.row(1)[1:] == (0, 0, 0, 0, 0, 0)


# --- bad inputs -----------------------------------------------------------------------------------------


def test_missing_column_names_table_and_column():
    tables = example()
    tables["ground_truth"] = tables["ground_truth"].drop("case_id")
    with pytest.raises(SchemaError, match=r"'ground_truth'.*case_id"):
        classify(tables)


def test_missing_table_is_named():
    tables = example()
    del tables["ddx"]
    with pytest.raises(SchemaError, match="'ddx'"):
        classify(tables)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"preset": "lddx"},
        {"threshold": 0.0},
        {"threshold": 1.5},
        {"caa_mentions": 0},
        {"exclusion_patterns": ["no placeholder"]},
        {"exclusion_patterns": ["({dx}"]},
        {
            "intervention_table": pl.DataFrame(
                {"keyword": ["x"], "diagnosis": [None]}, schema_overrides={"diagnosis": pl.String}
            )
        },
    ],
)
def test_bad_parameters(kwargs):
    with pytest.raises((InvalidParameterError, DataError)):
        classify(example(), **kwargs)


# --- the Local-DDx fixtures -----------------------------------------------------------------------------


@needs_lddx
def test_fixture_reproduction_report(capsys):
    from mas_eval.ingest import ingest_lddx

    ds = ingest_lddx([LDDX]).dataset
    counts = label_counts(classify(ds, preset="lddx-v6"), ds.collect("runs"))
    names = ("tp", "fp", "fn", "caa", "ae")
    recorded = (
        ds.collect("reported")
        .filter((pl.col("source") == "evaluation") & pl.col("name").is_in([f"{n}_count" for n in names]))
        .pivot("name", index="run_id", values="value")
    )
    joined = counts.join(recorded, on="run_id")
    with capsys.disabled():
        shown = ", ".join(f"{n} {(joined[n] == joined[f'{n}_count']).sum()}/{joined.height}" for n in names)
        print(f"\nlddx-v6 recorded counts reproduced exactly: {shown}")
    assert joined.height == counts.height
