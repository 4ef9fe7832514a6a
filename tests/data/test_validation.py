"""Every validation rule: the error class and the exact parts of its message."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

import mas_eval
from mas_eval import DataError, Dataset, SchemaError
from tests.conftest import tiny_frames

Mutation = Callable[[dict[str, pl.DataFrame]], None]


def _set(table: str, column: str, row: int, value: object) -> Mutation:
    def mutate(frames: dict[str, pl.DataFrame]) -> None:
        frame = frames[table]
        values = frame[column].to_list()
        values[row] = value
        frames[table] = frame.with_columns(pl.Series(column, values, strict=False))

    return mutate


def _replace(table: str, make: Callable[[pl.DataFrame], pl.DataFrame]) -> Mutation:
    def mutate(frames: dict[str, pl.DataFrame]) -> None:
        frames[table] = make(frames[table])

    return mutate


def _add(table: str, columns: dict[str, list[object]]) -> Mutation:
    def mutate(frames: dict[str, pl.DataFrame]) -> None:
        frames[table] = pl.DataFrame(columns)

    return mutate


CASES: list[tuple[str, Mutation, type[Exception], list[str]]] = [
    (
        "missing required column",
        _replace("beliefs", lambda f: f.drop("mass")),
        SchemaError,
        ["table 'beliefs'", "missing required column(s) 'mass'", "add or rename"],
    ),
    (
        "misspelt optional column",
        _replace("agents", lambda f: f.rename({"confidence": "confidnce"})),
        SchemaError,
        ["table 'agents'", "column 'confidnce'", "rename 'confidnce' to 'confidence'"],
    ),
    (
        "type that cannot be cast",
        _replace("agents", lambda f: f.with_columns(pl.Series("confidence", [[0.7], [0.9], [0.8], [0.6]]))),
        SchemaError,
        ["table 'agents', column 'confidence'", "cannot be cast to Float64"],
    ),
    (
        "value that cannot be cast",
        _replace("runs", lambda f: f.with_columns(pl.Series("iterations", ["2", "two", "3"]))),
        SchemaError,
        [
            "table 'runs', column 'iterations'",
            "1 row(s) hold values that are not Int64",
            "(run_id='r2', iterations='two')",
        ],
    ),
    (
        "null key",
        _set("agents", "agent_id", 2, None),
        DataError,
        ["table 'agents', column 'agent_id'", "1 row(s) have a null key", "(run_id='r2', agent_id=None)"],
    ),
    (
        "duplicate key",
        _set("beliefs", "alternative", 1, "x"),
        DataError,
        [
            "table 'beliefs', column 'run_id, agent_id, alternative'",
            "1 key(s) occur more than once",
            "(run_id='r1', agent_id='a1', alternative='x')",
            "must be unique",
        ],
    ),
    (
        "NaN",
        _set("runs", "seconds", 1, float("nan")),
        DataError,
        ["table 'runs', column 'seconds'", "NaN or infinite", "(run_id='r2')"],
    ),
    (
        "infinity",
        _set("scores", "score", 4, float("inf")),
        DataError,
        [
            "table 'scores', column 'score'",
            "NaN or infinite",
            "(run_id='r2', alternative='y', criterion='safety')",
        ],
    ),
    (
        "negative mass",
        _set("beliefs", "mass", 5, -0.1),
        DataError,
        ["table 'beliefs', column 'mass'", "are negative", "(run_id='r3', agent_id='a1', alternative='x')"],
    ),
    (
        "masses summing over one",
        _set("beliefs", "mass", 3, 0.6),
        DataError,
        [
            "table 'beliefs', column 'mass'",
            "1 agent(s) have masses summing to more than 1",
            "(run_id='r1', agent_id='a2')",
            "renormalise",
        ],
    ),
    (
        "an agent's masses all zero",
        _replace(
            "beliefs", lambda f: f.with_columns(mass=pl.when(pl.col("run_id") == "r3").then(0.0).otherwise("mass"))
        ),
        DataError,
        [
            "table 'beliefs', column 'mass'",
            "1 agent(s) have all masses zero",
            "(run_id='r3', agent_id='a1')",
            "drop those agents' belief rows or give them mass",
        ],
    ),
    (
        "negative agent weight",
        _set("agents", "weight", 0, -1.0),
        DataError,
        ["table 'agents', column 'weight'", "are negative", "(run_id='r1', agent_id='a1')"],
    ),
    (
        "negative criterion weight",
        _set("criteria", "weight", 1, -0.4),
        DataError,
        ["table 'criteria', column 'weight'", "are negative", "(run_id='r1', criterion='cost')"],
    ),
    (
        "unknown criterion kind",
        _set("criteria", "kind", 0, "benefits"),
        DataError,
        [
            "table 'criteria', column 'kind'",
            "unknown value",
            "(run_id='r1', criterion='safety')",
            "'benefit', 'cost'",
        ],
    ),
    (
        "unknown scale",
        _set("criteria", "scale", 0, "percent"),
        DataError,
        ["table 'criteria', column 'scale'", "'satisfaction', 'raw'"],
    ),
    (
        "confidence outside [0, 1]",
        _set("agents", "confidence", 3, 1.5),
        DataError,
        ["table 'agents', column 'confidence'", "outside [0, 1]", "(run_id='r3', agent_id='a1')"],
    ),
    (
        "negative usage",
        _set("runs", "iterations", 0, -1),
        DataError,
        ["table 'runs', column 'iterations'", "are negative", "(run_id='r1')"],
    ),
    (
        "satisfaction score outside [0, 1]",
        _set("scores", "score", 0, 1.2),
        DataError,
        [
            "table 'scores', column 'score'",
            "satisfaction scores outside [0, 1]",
            "(run_id='r1', alternative='x', criterion='safety')",
            "criteria.scale = 'raw'",
        ],
    ),
    (
        "dangling run_id",
        _set("agents", "run_id", 3, "r9"),
        DataError,
        ["table 'agents', column 'run_id'", "1 run_id(s) not in table 'runs'", "(run_id='r9')"],
    ),
    (
        "repeats sharing an epoch",
        _replace("runs", lambda f: f.with_columns(case_id=pl.lit("c1"), task=pl.lit("t1"), epoch=pl.lit(1))),
        DataError,
        [
            "table 'runs', column 'epoch'",
            "share an epoch",
            "(system='mas', case_id='c1', task='t1', variant=None, epoch=1)",
            "its own epoch",
        ],
    ),
    (
        "pass/fail outcome that is neither 0 nor 1",
        _add(
            "outcomes",
            {"run_id": ["r1", "r2"], "name": ["match", "match"], "value": [1.0, 0.0], "passed": [True, True]},
        ),
        DataError,
        ["table 'outcomes', column 'value'", "not 1 for passed", "(run_id='r2', name='match')", "leave passed null"],
    ),
    (
        "outcome pass/fail in some runs only",
        _add("outcomes", {"run_id": ["r1", "r2"], "name": ["f1", "f1"], "value": [1.0, 0.5], "passed": [True, None]}),
        DataError,
        ["table 'outcomes', column 'passed'", "1 score name(s)", "(name='f1')", "or in none"],
    ),
    (
        "NaN outcome",
        _add("outcomes", {"run_id": ["r1"], "name": ["f1"], "value": [float("nan")], "passed": [None]}),
        DataError,
        ["table 'outcomes', column 'value'", "NaN or infinite", "(run_id='r1', name='f1')"],
    ),
    (
        "negative agent usage",
        _add("usage", {"run_id": ["r1"], "agent_id": ["a1"], "model": ["m"], "input_tokens": [-3]}),
        DataError,
        ["table 'usage', column 'input_tokens'", "are negative", "(run_id='r1', agent_id='a1', model='m')"],
    ),
    (
        "ground truth keyed by run",
        _replace("ground_truth", lambda f: f.rename({"case_id": "run_id"})),
        SchemaError,
        ["table 'ground_truth', column 'case_id'", "keyed by case_id", "not by run_id"],
    ),
]


@pytest.mark.parametrize(("rule", "mutate", "error", "parts"), CASES, ids=[c[0] for c in CASES])
def test_rule_names_table_column_keys_and_fix(
    rule: str, mutate: Mutation, error: type[Exception], parts: list[str]
) -> None:
    frames = tiny_frames()
    mutate(frames)
    with pytest.raises(error) as caught:
        Dataset.from_frames(**frames).validate()
    message = str(caught.value)
    for part in parts:
        assert part in message, f"{part!r} not in: {message}"


def test_the_unmodified_fixture_is_valid() -> None:
    ds = Dataset.from_frames(**tiny_frames())
    assert ds.validate() is ds
    assert ds.table_names == ["runs", "agents", "beliefs", "criteria", "scores", "ground_truth"]


def test_incomplete_beliefs_are_allowed() -> None:
    frames = tiny_frames()
    frames["beliefs"] = frames["beliefs"].with_columns(pl.col("mass") * 0.5)
    ds = Dataset.from_frames(**frames).validate()
    # The mass an incomplete belief leaves out stays unassigned in evidential reasoning.
    assert (mas_eval.score(ds).runs["er_unassigned"] > 0).all()


def test_mass_sum_tolerates_rounding_and_no_more() -> None:
    frames = tiny_frames()
    _set("beliefs", "mass", 2, 0.5)(frames)
    _set("beliefs", "mass", 3, 0.5 + 5e-7)(frames)  # a2: 0.5 + 0.5000005 = 1 + 5e-7 <= 1 + 1e-6
    assert Dataset.from_frames(**frames).validate().table_names[2] == "beliefs"
    _set("beliefs", "mass", 3, 0.5 + 2e-6)(frames)  # 1 + 2e-6: over the tolerance
    with pytest.raises(DataError, match=r"1 agent\(s\) have masses summing to more than 1 \(\+1e-06\)"):
        Dataset.from_frames(**frames).validate()


def test_scoring_without_validation_still_refuses_an_agent_without_mass() -> None:
    # The same rule (validation.py), applied by score() to its per-agent sums, with the user's labels.
    frames = tiny_frames()
    _replace("beliefs", lambda f: f.with_columns(mass=pl.when(pl.col("agent_id") == "a2").then(0.0).otherwise("mass")))(
        frames
    )
    with pytest.raises(DataError, match=r"1 agent\(s\) have all masses zero, e\.g\. at \(run_id='r1', agent_id='a2'\)"):
        mas_eval.score(Dataset.from_frames(**frames))


def test_raw_scale_scores_may_leave_the_unit_interval() -> None:
    frames = tiny_frames()
    # criterion 'cost' of run r1 is declared raw, and holds 120 and 80.
    assert frames["scores"]["score"].max() == 120.0
    Dataset.from_frames(**frames).validate()


def test_at_most_five_keys_are_listed() -> None:
    n = 12
    runs = pl.DataFrame({"run_id": [f"r{i:02d}" for i in range(n)], "system": "mas", "case_id": "c"})
    agents = pl.DataFrame({"run_id": runs["run_id"], "agent_id": "a", "confidence": -0.5})
    with pytest.raises(DataError) as caught:
        Dataset.from_frames(runs=runs, agents=agents).validate()
    message = str(caught.value)
    assert f"{n} row(s) are outside [0, 1]" in message
    assert "(run_id='r04', agent_id='a')" in message
    assert "r05" not in message


def test_validation_is_entered_through_validate_alone() -> None:
    # Every module that uses the rules imports validate and nothing else from data/validation.py.
    from pathlib import Path

    import mas_eval.data.validation as validation

    assert validation.__all__ == ["RULES", "Rules", "validate"]
    package = Path(mas_eval.__file__).parent
    imported = {
        line.strip()
        for path in package.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("from mas_eval.data.validation import")
    }
    assert imported == {"from mas_eval.data.validation import validate"}


def test_validate_refuses_an_unknown_rule_set_and_gives_no_facts_for_one_rule() -> None:
    from mas_eval.data.validation import validate

    runs = pl.LazyFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})
    with pytest.raises(mas_eval.InvalidParameterError, match="rules='every' is not one of 'all', 'part'"):
        validate({"runs": runs}, "every")  # type: ignore[arg-type]
    assert validate({"runs": runs}, "unique keys").columns == ["name", "unpassed"]
    with pytest.raises(DataError, match=r"1 key\(s\) occur more than once, e\.g\. at \(run_id='r1'\)"):
        validate({"runs": pl.DataFrame({"run_id": ["r1", "r1"]})}, "run keys")
