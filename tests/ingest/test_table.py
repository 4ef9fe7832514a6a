"""Ingest of a plain table of per-run results: ingest_table and `mas-eval ingest --format table`.

The tables are written by Polars in the test, as CSV and as Parquet, the way a notebook keeps them.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.cli import main
from mas_eval.errors import IngestError, InvalidParameterError
from mas_eval.ingest import ingest_table
from mas_eval.ingest.table import parse_map, parse_scores

MAP = {"system": "model", "case_id": "question"}


def results() -> pl.DataFrame:
    """Two systems on two questions, the single agent twice on q1; scores of each kind."""
    return pl.DataFrame(
        {
            "model": ["mas", "mas", "single", "single", "single"],
            "question": ["q1", "q2", "q1", "q1", "q2"],
            "correct": [True, False, True, None, False],  # boolean: pass/fail (runs.correct only if mapped)
            "exact": [1, 0, 0, 1, 1],  # 0/1 integers: pass/fail
            "f1": [0.5, 1.0, float("nan"), 0.25, 0.0],  # floats: a number (NaN: missing)
            "steps": [3, 4, 1, 1, 2],  # integers beyond 0/1: a number
            "tokens": [1200, 900, 300, 310, 280],  # named like a runs column: mapped to it
            "notes": ["ok", "", "x", "y", "z"],  # text: a run attribute
        }
    )


@pytest.fixture(params=["csv", "parquet"])
def table_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / f"results.{request.param}"
    frame = results()
    if request.param == "csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)
    return path


def test_rows_become_runs_and_scores_become_outcomes(table_file: Path, tmp_path: Path) -> None:
    result = ingest_table(table_file, tmp_path / "ds", columns=MAP)
    ds = Dataset.open(tmp_path / "ds").validate()
    assert (result.runs, result.files, result.skipped) == (5, (table_file,), ())
    assert ds.table_names == ["runs", "outcomes"]
    runs = ds.collect("runs").select("run_id", "system", "case_id", "tokens").rows()
    notes = ds.collect("runs")["notes"].to_list()  # text that is no score: kept as a run attribute
    assert notes in (["ok", "", "x", "y", "z"], ["ok", None, "x", "y", "z"])  # a CSV's empty cell is null
    # No run_id column: system/case_id/n, n counting a system's rows of the case.
    assert runs == [
        ("mas/q1/1", "mas", "q1", 1200),
        ("mas/q2/1", "mas", "q2", 900),
        ("single/q1/1", "single", "q1", 300),
        ("single/q1/2", "single", "q1", 310),
        ("single/q2/1", "single", "q2", 280),
    ]
    outcomes = {
        (r, n): (v, p) for r, n, v, p in ds.collect("outcomes").select("run_id", "name", "value", "passed").rows()
    }
    assert {n for _, n in outcomes} == {"correct", "exact", "f1", "steps"}
    assert outcomes[("mas/q1/1", "correct")] == (1.0, True)
    assert outcomes[("mas/q2/1", "correct")] == (0.0, False)
    assert ("single/q1/2", "correct") not in outcomes  # a null is no score
    assert outcomes[("single/q1/1", "exact")] == (0.0, False)
    assert outcomes[("single/q2/1", "exact")] == (1.0, True)
    assert outcomes[("mas/q2/1", "f1")] == (1.0, None)
    assert ("single/q1/1", "f1") not in outcomes  # NaN is missing
    assert outcomes[("mas/q2/1", "steps")] == (4.0, None)
    assert len(outcomes) == 5 * 4 - 2
    # No score named: `steps` (whole numbers beyond 0 and 1) was taken as one, with the way to keep it apart.
    assert result.warnings == (
        f"{table_file}: took column(s) 'steps' (whole numbers beyond 0 and 1) as scores; if they describe the runs "
        "(rounds, agents), name the score columns with scores=['SCORE', '...'] and the others are kept as run "
        "attributes",
    )


def test_mapped_run_ids_epochs_and_columns_named_like_runs_columns(tmp_path: Path) -> None:
    frame = results().with_columns(id=pl.format("r{}", pl.int_range(pl.len())), epoch=pl.Series([1, 1, 1, 2, 1]))
    frame.write_parquet(tmp_path / "a.parquet")
    result = ingest_table(tmp_path / "a.parquet", columns={**MAP, "run_id": "id", "seconds": "steps"})
    runs = result.dataset.collect("runs")
    assert runs.select("run_id", "epoch", "seconds").rows()[3] == ("r3", 2, 1.0)
    assert "steps" not in result.dataset.collect("outcomes")["name"].to_list()  # mapped, so not a score
    generated = ingest_table(tmp_path / "a.parquet", columns=MAP).dataset.collect("runs")
    assert generated["run_id"].to_list() == ["mas/q1/1", "mas/q2/1", "single/q1/1", "single/q1/2", "single/q2/1"]
    assert generated["epoch"].to_list() == [1, 1, 1, 2, 1]


def test_two_files_stack_and_a_score_is_pass_fail_only_if_it_is_in_every_file(tmp_path: Path) -> None:
    results().head(2).write_csv(tmp_path / "a.csv")
    results().tail(3).with_columns(exact=pl.Series([0.0, 0.5, 1.0])).write_csv(tmp_path / "b.csv")
    result = ingest_table([tmp_path / "a.csv", tmp_path / "b.csv"], columns=MAP)
    outcomes = result.dataset.collect("outcomes").filter(pl.col("name") == "exact")
    assert outcomes["passed"].null_count() == outcomes.height == 5


# -- errors ------------------------------------------------------------------------------------


def test_a_mapped_column_missing_names_the_file_the_column_and_its_columns(table_file: Path) -> None:
    with pytest.raises(IngestError) as error:
        ingest_table(table_file, columns={**MAP, "case_id": "prompt"})
    assert str(error.value) == (
        f"{table_file}: no column 'prompt' (for runs.case_id); its columns are: model, question, correct, exact, f1, "
        "steps, tokens, notes; name one of them in columns={'case_id': 'COLUMN'}"
    )
    with pytest.raises(IngestError, match=r"no column gives runs\.system"):
        ingest_table(table_file, columns={"case_id": "question"})
    with pytest.raises(InvalidParameterError, match="'model' is not a runs column"):
        ingest_table(table_file, columns={"model": "system"})


def test_a_column_both_mapped_and_a_score(table_file: Path) -> None:
    with pytest.raises(IngestError, match=r"column 'tokens' is named like runs\.tokens, which comes from 'steps'"):
        ingest_table(table_file, columns={**MAP, "tokens": "steps"})


def test_a_run_id_twice_and_bad_values_name_the_row_and_skip_invalid_sets_them_aside(tmp_path: Path) -> None:
    frame = results().with_columns(id=pl.Series(["a", "b", "c", "a", "e"]), epoch=pl.Series(["1", "1", "x", "1", "1"]))
    frame.write_csv(tmp_path / "t.csv")
    columns = {**MAP, "run_id": "id", "epoch": "epoch"}
    with pytest.raises(IngestError) as error:
        ingest_table(tmp_path / "t.csv", columns=columns)
    said = f"{tmp_path / 't.csv'}: row 3: 'epoch' (runs.epoch) holds x, not a whole number; "
    assert str(error.value).startswith(said)
    result = ingest_table(tmp_path / "t.csv", columns=columns, skip_invalid=True)
    assert result.dataset.collect("runs")["run_id"].to_list() == ["a", "b", "e"]
    assert [reason for _, reason in result.skipped] == [
        "row 3: 'epoch' (runs.epoch) holds x, not a whole number",
        f"row 4: run_id 'a' is that of {tmp_path / 't.csv'} row 1 too; give each run its own id (or an epoch)",
    ]
    assert set(result.dataset.collect("outcomes")["run_id"]) == {"a", "b", "e"}


def test_unreadable_and_unknown_files(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"not a \.csv or \.parquet file"):
        ingest_table(tmp_path / "t.txt", columns=MAP)
    (tmp_path / "t.parquet").write_text("not parquet", encoding="utf-8")
    with pytest.raises(IngestError, match="cannot be read as Parquet"):
        ingest_table(tmp_path / "t.parquet", columns=MAP)
    with pytest.raises(IngestError, match="no such file"):
        ingest_table(tmp_path / "missing.csv", columns=MAP)


@pytest.mark.parametrize(
    ("specs", "problem"),
    [
        (["system"], "'system' is not RUNS_COLUMN=SOURCE_COLUMN"),
        (["system=model,=question"], "'=question' is not RUNS_COLUMN=SOURCE_COLUMN"),
        (["system=model", "system=other"], "system is mapped twice ('model' and 'other')"),
    ],
)
def test_map_syntax_errors(specs: list[str], problem: str) -> None:
    with pytest.raises(InvalidParameterError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_map(specs)


def test_map_reads_pairs_over_commas_and_repeats() -> None:
    assert parse_map(["system=model, case_id=question", "tokens=n"]) == {**MAP, "tokens": "n"}


# -- the command line --------------------------------------------------------------------------


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


def test_cli_ingests_a_table_and_errors_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results().write_csv(tmp_path / "t.csv")
    out = tmp_path / "ds"
    assert (
        run_cli(
            "ingest", "--format", "table", tmp_path / "t.csv", "--out", out, "--map", "system=model,case_id=question"
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert printed.startswith(f"ingested 5 runs from 1 table file(s) into {out}:")
    assert "runs 5, outcomes 18" in printed
    assert "warning: " in printed and "'steps'" in printed and "--scores SCORE" in printed
    for args, expected in [
        (["--map", "system=model,case_id"], "error: --map: 'case_id' is not RUNS_COLUMN=SOURCE_COLUMN"),
        (["--map", "system=model,case_id=prompt"], "no column 'prompt' (for runs.case_id)"),
        (
            ["--map", "system=model,case_id=question", "--case-attribute", "x"],
            "--case-attribute applies to --format otlp only",
        ),
        (["--map", "system=model,case_id=question", "--rejects", "r"], "--rejects applies to --format jsonl only"),
    ]:
        assert run_cli("ingest", "--format", "table", tmp_path / "t.csv", "--out", tmp_path / "x", *args) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and expected in error, error
    assert "--map system=COLUMN" in _cli_error(tmp_path, capsys)


def _cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert (
        run_cli("ingest", "--format", "table", tmp_path / "t.csv", "--out", tmp_path / "x", "--map", "case_id=question")
        == 2
    )
    return capsys.readouterr().err


# -- scores named, the rest run attributes -------------------------------------------------------


def design() -> pl.DataFrame:
    """A MAS at 1 and 3 rounds and a single agent on four questions: the design columns are no scores."""
    return pl.DataFrame(
        {
            "model": ["mas"] * 8 + ["single"] * 4,
            "question": [f"q{i}" for i in range(4)] * 3,
            "variant": ["r1"] * 4 + ["r3"] * 4 + [None] * 4,
            "num_rounds": [1] * 4 + [3] * 4 + [1] * 4,
            "n_agents": [3] * 8 + [1] * 4,
            "prompt_style": ["cot"] * 12,
            "correct": [1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 0],
            "f1": [0.5, 0.75, 0.25, 1.0, 0.5, 1.0, 0.75, 1.0, 0.0, 0.5, 0.25, 0.0],
        }
    )


def test_named_scores_are_outcomes_and_the_other_columns_run_attributes(tmp_path: Path) -> None:
    design().write_csv(tmp_path / "runs.csv")
    result = ingest_table(tmp_path / "runs.csv", tmp_path / "ds", columns=MAP, scores=["correct", "f1"])
    assert result.warnings == ()
    ds = Dataset.open(tmp_path / "ds").validate()
    runs = ds.collect("runs")
    assert runs.select("num_rounds", "n_agents", "prompt_style").dtypes == [pl.Int64, pl.Int64, pl.String]
    assert runs.filter(pl.col("run_id") == "mas/q2/r3/1").select("num_rounds", "n_agents").row(0) == (3, 3)
    assert set(ds.collect("outcomes")["name"]) == {"correct", "f1"}
    # Scores.runs carries them, so that the comparison groups by a design column.
    import mas_eval

    scores = mas_eval.score(ds)
    assert {"num_rounds", "n_agents", "prompt_style"} <= set(scores.runs.columns)
    table = mas_eval.compare(scores.runs, "correct", by="n_agents", pair_on=None, test="welch", correction=None)
    assert table.height == 2 and set(table["n_agents"]) == {1, 3}


def test_without_named_scores_a_design_column_is_taken_as_a_score_and_said(tmp_path: Path) -> None:
    design().write_parquet(tmp_path / "runs.parquet")
    result = ingest_table(tmp_path / "runs.parquet", columns=MAP)
    assert set(result.dataset.collect("outcomes")["name"]) == {"num_rounds", "n_agents", "correct", "f1"}
    assert "prompt_style" in result.dataset.collect("runs").columns  # text is never a score: an attribute
    (warning,) = result.warnings
    assert "took column(s) 'num_rounds', 'n_agents' (whole numbers beyond 0 and 1) as scores" in warning


def test_a_named_score_that_is_missing_mapped_or_text_is_refused(tmp_path: Path) -> None:
    design().write_csv(tmp_path / "runs.csv")
    with pytest.raises(IngestError, match=r"no column 'accuracy' \(a score in scores=\['accuracy'\]\)"):
        ingest_table(tmp_path / "runs.csv", columns=MAP, scores=["accuracy"])
    with pytest.raises(IngestError, match=r"score column 'prompt_style' holds String values \(row 1: 'cot'\)"):
        ingest_table(tmp_path / "runs.csv", columns=MAP, scores=["prompt_style"])
    with pytest.raises(InvalidParameterError, match=r"'model' is both a score and mapped to runs\.system"):
        ingest_table(tmp_path / "runs.csv", columns=MAP, scores=["model"])
    with pytest.raises(InvalidParameterError, match="name each score column once"):
        ingest_table(tmp_path / "runs.csv", columns=MAP, scores=["f1", "f1"])
    assert parse_scores(["correct, f1", "cost"]) == ["correct", "f1", "cost"]
    with pytest.raises(InvalidParameterError, match="holds an empty name"):
        parse_scores(["correct,,f1"])


def test_an_attribute_named_like_a_scores_column_is_one_error_when_scored(tmp_path: Path) -> None:
    import mas_eval
    from mas_eval.errors import DataError

    design().rename({"prompt_style": "dqs"}).write_csv(tmp_path / "runs.csv")
    ds = ingest_table(tmp_path / "runs.csv", columns=MAP, scores=["correct"]).dataset
    with pytest.raises(DataError, match=r"column\(s\) 'dqs' of the Dataset's own would be Scores.runs column"):
        mas_eval.score(ds)


# -- a paper's table: one column per system --------------------------------------------------


def paper() -> pl.DataFrame:
    """Shaped like a paper's per-item results table (none with a licence was found to keep): a row per
    task and item, a column per system holding its score, an empty cell where a system did not run."""
    return pl.DataFrame(
        {
            "task": ["gsm8k", "gsm8k", "gsm8k", "mmlu", "mmlu"],
            "item": ["1", "2", "3", "1", "2"],
            "difficulty": ["easy", "hard", "hard", "easy", "hard"],
            "Debate (3 agents)": [1, 1, 0, 1, None],
            "Single agent": [1, 0, 0, 1, 1],
        }
    )


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_wide_table_gives_each_system_its_runs(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"paper.{suffix}"
    paper().write_csv(path) if suffix == "csv" else paper().write_parquet(path)
    result = ingest_table(path, columns={"case_id": "item"}, wide="system", wide_score="accuracy")
    runs = result.dataset.collect("runs").sort("run_id")
    assert runs.height == 9  # 10 cells, one empty
    assert runs.select("run_id", "system", "task", "difficulty").rows()[:2] == [
        ("Debate (3 agents)/1/gsm8k/1", "Debate (3 agents)", "gsm8k", "easy"),
        ("Debate (3 agents)/1/mmlu/1", "Debate (3 agents)", "mmlu", "easy"),
    ]
    outcomes = result.dataset.collect("outcomes").join(runs.select("run_id", "system"), on="run_id")
    assert set(outcomes["name"]) == {"accuracy"} and outcomes["passed"].null_count() == 0  # 0/1 in every column
    means = dict(outcomes.group_by("system").agg(pl.col("value").mean()).rows())
    assert means == {"Debate (3 agents)": 0.75, "Single agent": 0.6}
    # Named scores are the systems' columns; what is left is an attribute.
    only = ingest_table(path, columns={"case_id": "item"}, wide="system", scores=["Single agent"])
    assert set(only.dataset.collect("runs")["system"]) == {"Single agent"}
    assert "Debate (3 agents)" in only.dataset.collect("runs").columns


def test_a_wide_table_refuses_what_would_name_a_system_twice(tmp_path: Path) -> None:
    paper().with_columns(system=pl.lit("x")).write_csv(tmp_path / "paper.csv")
    with pytest.raises(IngestError, match=r"column 'system' would give runs.system, which wide='system' takes"):
        ingest_table(tmp_path / "paper.csv", columns={"case_id": "item"}, wide="system")
    with pytest.raises(InvalidParameterError, match=r"wide='model' is invalid"):
        ingest_table(tmp_path / "paper.csv", columns={"case_id": "item"}, wide="model")
    with pytest.raises(InvalidParameterError, match=r"takes runs\.system from the score columns' names, and columns"):
        ingest_table(tmp_path / "paper.csv", columns={"case_id": "item", "system": "system"}, wide="system")
    paper().write_csv(tmp_path / "p.csv")
    with pytest.raises(IngestError, match=r"is named the system 'mine', and wide='system' takes each run's system"):
        ingest_table({tmp_path / "p.csv": "mine"}, columns={"case_id": "item"}, wide="system")


def test_cli_scores_and_wide(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design().write_csv(tmp_path / "runs.csv")
    args = ["ingest", "--format", "table", tmp_path / "runs.csv", "--map", "system=model,case_id=question"]
    assert run_cli(*args, "--scores", "correct", "--scores", "f1", "--out", tmp_path / "ds") == 0
    assert "warning" not in capsys.readouterr().out
    assert set(Dataset.open(tmp_path / "ds").collect("outcomes")["name"]) == {"correct", "f1"}
    paper().write_csv(tmp_path / "paper.csv")
    wide = ["ingest", "--format", "table", tmp_path / "paper.csv", "--map", "case_id=item", "--wide", "system"]
    assert run_cli(*wide, "--wide-score", "accuracy", "--out", tmp_path / "paper") == 0
    assert Dataset.open(tmp_path / "paper").collect("runs").height == 9
    capsys.readouterr()
    for bad, says in [
        (["--format", "lm-eval", tmp_path / "paper.csv", "--wide", "system"], "--wide applies to --format table only"),
        (["--format", "table", tmp_path / "paper.csv", "--scores", ""], "--scores: '' holds an empty name"),
    ]:
        assert run_cli("ingest", *bad, "--out", tmp_path / "x") == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and says in error, error
