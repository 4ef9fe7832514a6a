"""Frames a user hands to :meth:`Dataset.from_frames`, and the Parquet tables of a Dataset folder: a
value the cast to the schema's type would change is refused, never changed.

Polars' cast of a float to an integer truncates (1.5 tokens became 1, epoch 1.7 became 1) and its
cast of a number to a boolean makes 0.5 true; such a value is refused in one line naming the
table, the column, the run and the value, whether the Dataset is validated or only scored. A
column of Python objects is named at once.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval import Dataset
from mas_eval.errors import DataError, MasEvalError, SchemaError
from tests.promises import assert_refused, assert_unchanged, run, tree

RUNS = {"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]}
INT64_MAX = 2**63 - 1


def _runs(**columns: list[object]) -> pl.DataFrame:
    return pl.DataFrame({**RUNS, **columns})


@pytest.mark.parametrize(
    ("column", "values", "shown"),
    [
        ("tokens", [1.5, 2.0], "(run_id='r1', tokens=1.5)"),
        ("epoch", [1.0, 1.7], "(run_id='r2', epoch=1.7)"),
        ("api_calls", [3.0, -0.25], "(run_id='r2', api_calls=-0.25)"),
    ],
)
def test_a_fraction_in_an_integer_column_is_refused_naming_table_column_run_and_value(
    column: str, values: list[float], shown: str
) -> None:
    ds = Dataset.from_frames(runs=_runs(**{column: values}))
    for act in (ds.validate, lambda: mas_eval.score(ds)):  # validated or only scored: never truncated
        with pytest.raises(DataError) as info:
            act()
        message = str(info.value)
        assert message.startswith(
            f"table 'runs', column '{column}': 1 row(s) hold values that Int64 cannot hold exactly"
        )
        assert shown in message and "\n" not in message


def test_whole_floats_are_cast_and_scored_as_before() -> None:
    ds = Dataset.from_frames(runs=_runs(tokens=[1.0, 2.0], epoch=[1.0, 2.0]))
    assert ds.validate().collect("runs")["tokens"].to_list() == [1, 2]
    assert mas_eval.score(ds).runs["tokens_used"].to_list() == [1, 2]


def test_a_number_other_than_0_or_1_in_a_boolean_column_is_refused() -> None:
    annotations = pl.DataFrame({"run_id": ["r1"], "mode": ["m"], "annotator": ["a"], "present": [0.5]})
    with pytest.raises(DataError, match=r"table 'annotations', column 'present': .* Boolean cannot hold exactly.*0\.5"):
        Dataset.from_frames(runs=_runs(), annotations=annotations).validate()


@settings(max_examples=40, deadline=None)  # 40: each draw validates a two-row Dataset
@given(
    value=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False, min_value=-1e19, max_value=1e19),
        st.sampled_from([0.5, -0.5, 2.0**53 + 2, 2.0**63, -(2.0**63), 1e-300, math.nextafter(1.0, 2.0)]),
    )
)
def test_no_float_in_an_integer_column_changes_on_the_way_in(value: float) -> None:
    # At the edges of Int64 and Float64: a value is kept exactly as an Int64, or refused; never changed.
    ds = Dataset.from_frames(runs=_runs(seed=[value, 1.0]))
    try:
        kept = ds.validate().collect("runs")["seed"][0]
    except MasEvalError as refused:
        assert "column 'seed'" in str(refused) and "\n" not in str(refused)
        assert not (value.is_integer() and -(2**63) <= value < 2**63)
    else:
        assert kept == value and float(kept) == value


@settings(max_examples=30, deadline=None)  # 30: each draw validates a two-row Dataset
@given(value=st.integers(min_value=-(2**64), max_value=2**64 - 1))
def test_an_integer_beyond_int64_is_refused_not_wrapped(value: int) -> None:
    if -(2**63) <= value <= INT64_MAX:
        ds = Dataset.from_frames(runs=_runs(seed=[value, 1]))
        assert ds.validate().collect("runs")["seed"][0] == value
        return
    # Held as UInt64 (above) or Float64 (below): cast to Int64, it cannot be; refused.
    values = pl.Series("seed", [value, 1], dtype=pl.UInt64 if value > 0 else pl.Float64, strict=False)
    ds = Dataset.from_frames(runs=pl.DataFrame(RUNS).with_columns(values))
    with pytest.raises(MasEvalError, match="column 'seed'"):
        ds.validate()


def test_a_column_of_python_objects_is_named_at_once() -> None:
    objects = pl.Series("case_id", [object(), object()], dtype=pl.Object)
    frame = pl.DataFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"]}).with_columns(objects)
    with pytest.raises(SchemaError, match=r"^table 'runs', column 'case_id': holds Python objects \(type Object\)"):
        Dataset.from_frames(runs=frame)


def test_a_table_that_is_not_a_frame_is_named() -> None:
    with pytest.raises(SchemaError, match=r"^table 'runs': expected a Polars or pandas DataFrame, got list"):
        Dataset.from_frames(runs=[1, 2])


def test_the_command_line_refuses_a_fraction_stored_in_a_dataset_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder whose runs.parquet another tool wrote with tokens as floats.
    folder = tmp_path / "ds"
    folder.mkdir()
    _runs(tokens=[1.0, 2.5]).write_parquet(folder / "runs.parquet")
    before = tree(tmp_path)
    says = ["table 'runs', column 'tokens'", "Int64 cannot hold exactly", "(run_id='r2', tokens=2.5)"]
    assert_refused(run(capsys, "validate", folder), says=says)
    assert_refused(run(capsys, "score", folder, "--out", tmp_path / "scores", "--skip-validation"), says=says)
    assert_unchanged(before, tmp_path)
