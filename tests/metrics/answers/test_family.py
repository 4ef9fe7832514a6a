"""The answers family inside ``score()``: the items table, run means, compare on items, and bad parameters."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal, assert_series_equal

import mas_eval
from mas_eval import Dataset, InvalidParameterError, Scores
from mas_eval.data.schema import RUN_ID_COLUMNS
from mas_eval.errors import DataError, SchemaError
from mas_eval.metrics.answers import answer_scores
from mas_eval.metrics.answers.columns import ITEM_METRICS
from mas_eval.metrics.family import parse_override

METRICS = [m.name for m in ITEM_METRICS]


def benchmark() -> Dataset:
    """Two cases; a MAS and a single agent answer the same items; r5 has no answers."""
    runs = pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r3", "r4", "r5"],
            "system": ["mas", "single", "mas", "single", "mas"],
            "case_id": ["c1", "c1", "c2", "c2", "c3"],
            "task": ["bench", "bench", "bench", "bench", "bench"],
            "variant": ["v1", "v1", "v1", "v1", "v1"],
        }
    )
    good, poor = "Sepsis: give IV fluids and antibiotics; check lactate.", "Viral illness; rest."
    reference = "Sepsis. IV fluids, antibiotics, lactate."
    rows = []
    for run, answer in (("r1", good), ("r2", poor), ("r3", good), ("r4", poor)):
        for item, task in (("q1", "diagnosis"), ("q2", None), ("q3", "treatment")):
            rows.append(
                {
                    "run_id": run,
                    "item_id": item,
                    "task": task,
                    "prediction": answer if item != "q3" else f"{answer} Item three.",
                    "rationale": "Because the lactate is high, therefore sepsis." if answer is good else None,
                    "reference": reference,
                    "reference_rationale": "Lactate is high: sepsis.",
                    "reference_diagnosis": "sepsis",
                }
            )
    return Dataset.from_frames(runs=runs, answers=pl.DataFrame(rows))


@pytest.fixture(scope="module")
def scores() -> Scores:
    return mas_eval.score(benchmark())


def test_items_rows_are_led_by_the_run_ids_and_hold_every_component(scores: Scores) -> None:
    items = scores["items"]
    assert items.columns == [*RUN_ID_COLUMNS, "item_id", *METRICS]
    assert items.height == 12 and scores.ran == ["decision", "answers"]
    assert items.select("run_id", "item_id").rows()[:3] == [("r1", "q1"), ("r1", "q2"), ("r1", "q3")]
    assert set(items["system"]) == {"mas", "single"} and set(items["case_id"]) == {"c1", "c2"}


def test_an_items_task_is_the_answers_own_else_the_runs(scores: Scores) -> None:
    tasks = dict(zip(scores["items"]["item_id"], scores["items"]["task"], strict=False))
    assert tasks == {"q1": "diagnosis", "q2": "bench", "q3": "treatment"}
    # The run table keeps the run's task.
    assert set(scores.runs["task"]) == {"bench"}


def test_items_equal_answer_scores_of_the_answers_table(scores: Scores) -> None:
    answers = benchmark().collect("answers").sort("run_id", "item_id")
    direct = answer_scores(answers.drop("task"))
    assert_frame_equal(scores["items"].select("run_id", "item_id", *METRICS), direct)


def test_run_columns_are_the_means_of_the_items(scores: Scores) -> None:
    means = (
        scores["items"]
        .group_by("run_id")
        .agg(
            pl.col("clinical_accuracy").mean(), pl.col("reasoning_quality").mean(), pl.len().cast(pl.UInt32).alias("n")
        )
    )
    runs = scores.runs.join(means, on="run_id", how="left", suffix="_items")
    assert runs.filter(pl.col("run_id") != "r5").select(
        (pl.col("clinical_accuracy") - pl.col("clinical_accuracy_items")).abs().max(),
        (pl.col("reasoning_quality") - pl.col("reasoning_quality_items")).abs().max(),
        (pl.col("num_items") == pl.col("n")).all(),
    ).row(0) == (0.0, 0.0, True)
    # A run without answers: its answer columns are null.
    r5 = scores.runs.filter(run_id="r5").row(0, named=True)
    assert (r5["clinical_accuracy"], r5["reasoning_quality"], r5["num_items"]) == (None, None, None)


def test_compare_on_items_pairs_the_systems_item_by_item_per_task(scores: Scores) -> None:
    table = mas_eval.compare(scores.items, ["clinical_accuracy", "reasoning_quality"], by="task", pair_on="item_id")
    assert sorted(set(table["task"])) == ["bench", "diagnosis", "treatment"]
    assert table.height == 6 and set(table["test"]) == {"paired"}
    # The MAS's answers hold the reference's entities; the single agent's none of them.
    accuracy = table.filter(pl.col("metric") == "clinical_accuracy")
    assert (accuracy["difference"] > 0.5).all()


def test_scores_items_is_the_table_and_still_the_mapping_method(scores: Scores, tmp_path: Path) -> None:
    assert isinstance(scores.items, pl.DataFrame)
    assert_frame_equal(scores.items, scores["items"])
    assert [name for name, _ in scores.items()] == scores.names
    back = Scores.open(scores.write(tmp_path / "scores"))
    assert_frame_equal(back.items, scores["items"])
    without = Scores(tables={"runs": scores.runs})
    assert list(without.items()) == [("runs", scores.runs)]
    with pytest.raises(TypeError, match=r"call \.items\(\) on the Scores"):
        scores.items.head(2)()  # a frame derived from the table is only a table


def test_parameters_reach_the_family() -> None:
    changed = mas_eval.score(benchmark(), answers_matching="substring", reasoning_weight_f1=0.0)
    assert (changed.params["answers_matching"], changed.params["reasoning_weight_f1"]) == ("substring", 0.0)
    default = mas_eval.score(benchmark())
    f1_part = 0.4 * default["items"]["token_f1"]
    assert_series_equal(
        changed["items"]["reasoning_quality"], (default["items"]["reasoning_quality"] - f1_part).clip(0, 1)
    )
    assert parse_override("answers_matching=substring") == ("answers_matching", "substring")
    assert parse_override("accuracy_weight_labs=0.5") == ("accuracy_weight_labs", 0.5)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"answers_matching": "fuzzy"}, "answers_matching='fuzzy' is invalid; answers_matching must be one of"),
        ({"accuracy_weight_labs": -1.0}, "accuracy_weight_labs=-1.0 is invalid; accuracy_weight_labs must be a num"),
        ({"reasoning_weight_f1": float("nan")}, "reasoning_weight_f1=nan is invalid"),
        ({"reasoning_reference_fallback": "yes"}, "reasoning_reference_fallback='yes' is invalid"),
        (
            dict.fromkeys(
                ["accuracy_weight_diagnoses", "accuracy_weight_treatments", "accuracy_weight_medications",
                 "accuracy_weight_symptoms", "accuracy_weight_labs"],
                0.0,
            ),
            "the category weights .* are all 0; give at least one a positive weight",
        ),
        ({"answers_lexicon_file": ""}, "answers_lexicon_file='' is invalid; answers_lexicon_file must be a file path"),
    ],
)  # fmt: skip
def test_bad_parameters_are_clear_errors(overrides: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        mas_eval.score(benchmark(), **overrides)


def test_user_tables_extend_the_shipped_ones(tmp_path: Path) -> None:
    lexicon = tmp_path / "lexicon.csv"
    lexicon.write_text("term,category\nviral illness,diagnoses\n", encoding="utf-8")
    synonyms = tmp_path / "synonyms.csv"
    synonyms.write_text("term,canonical\nviral syndrome,viral illness\n", encoding="utf-8")
    scores = mas_eval.score(benchmark(), answers_lexicon_file=str(lexicon), answers_synonyms_file=str(synonyms))
    single = scores["items"].filter(run_id="r2", item_id="q1").row(0, named=True)
    # P = {viral illness}, R = {sepsis; iv fluids, antibiotics; lactate}: still disjoint, but now counted.
    assert single["entity_jaccard_diagnoses"] == 0.0
    assert single["clinical_accuracy"] == 0.0


@pytest.mark.parametrize(
    ("parameter", "content", "error", "message"),
    [
        ("answers_lexicon_file", "term,category\nsepsis,diseases\n", DataError,
         r"answers_lexicon_file=.*1 row\(s\) with an unknown category: \(row=0, category='diseases'\); category must "
         r"be one of diagnoses, treatments, medications, symptoms, labs"),
        ("answers_lexicon_file", "word,category\nsepsis,diagnoses\n", SchemaError, r"no column 'term'"),
        ("answers_markers_file", "kind,marker\nstyle,because\n", DataError, "unknown kind.*must be one of structure"),
        ("answers_facts_file", "diagnosis,fact\nsepsis,lactate|;\n", DataError, "whose fact has no words"),
        ("answers_synonyms_file", "term,canonical\nsepsis,blood poisoning\n", DataError, "lead back to themselves"),
        ("answers_synonyms_file", "term,canonical\nflu,influenza\nflu,grippe\n", DataError,
         "mapped to different canonical names"),
    ],
)  # fmt: skip
def test_bad_user_tables_name_the_parameter_the_rows_and_the_fix(
    tmp_path: Path, parameter: str, content: str, error: type, message: str
) -> None:
    file = tmp_path / "table.csv"
    file.write_text(content, encoding="utf-8")
    with pytest.raises(error, match=message) as caught:
        mas_eval.score(benchmark(), **{parameter: str(file)})
    assert parameter in str(caught.value)


def test_a_missing_user_file_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"answers_facts_file='nowhere\.csv': no such file"):
        mas_eval.score(benchmark(), answers_facts_file="nowhere.csv")


def test_answer_scores_refuses_bad_input_clearly() -> None:
    with pytest.raises(SchemaError, match="no column 'reference'"):
        answer_scores(pl.DataFrame({"prediction": ["x"]}))
    with pytest.raises(SchemaError, match=r"column 'prediction' must hold strings, not Int64; cast it"):
        answer_scores(pl.DataFrame({"prediction": [1], "reference": ["x"]}))
    with pytest.raises(InvalidParameterError, match="category_weights has unknown key"):
        answer_scores(pl.DataFrame({"prediction": ["x"], "reference": ["x"]}), category_weights={"drugs": 1.0})
    for weight in (-1.0, float("inf"), True):
        with pytest.raises(InvalidParameterError, match=r"answer_scores: category_weights\['labs'\]=.* is invalid"):
            answer_scores(pl.DataFrame({"prediction": ["x"], "reference": ["x"]}), category_weights={"labs": weight})
    with pytest.raises(InvalidParameterError, match="matching='fuzzy' is invalid"):
        answer_scores(pl.DataFrame({"prediction": ["x"], "reference": ["x"]}), matching="fuzzy")
    with pytest.raises(InvalidParameterError, match="answers must be a polars DataFrame"):
        answer_scores({"prediction": ["x"]})  # type: ignore[arg-type]
