"""The integer codes scoring keys on: exact packing, label order kept, round trips."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.segments import label_of, pack, run_of

LARGEST = 2**32 - 1


@given(run=st.integers(0, LARGEST), label=st.integers(0, LARGEST))
def test_pack_is_exact_and_ordered_as_the_pair(run: int, label: int) -> None:
    runs = np.array([run, run], dtype=np.uint32)
    labels = np.array([label, 0], dtype=np.uint32)
    packed = pack(runs, labels)
    assert run_of(packed).tolist() == runs.tolist()
    assert label_of(packed).tolist() == labels.tolist()
    assert packed[0] >= packed[1]  # the label orders keys within a run


def _tables() -> dict[str, pl.LazyFrame]:
    runs = pl.LazyFrame(
        {
            "run_id": ["r2", "r10", "R"],
            "system": ["mas", "single", "mas"],
            "recommended": ["b", None, "A"],
            "correct": ["b", None, None],
        }
    )
    beliefs = pl.LazyFrame(
        {
            "run_id": ["r10", "r2", "r2", "orphan"],
            "agent_id": ["g", "g2", "g10", "g"],
            "alternative": ["é", "b", "a10", "a2"],
            "mass": [1.0, 0.5, 0.5, 1.0],
        }
    )
    return {"runs": runs, "beliefs": beliefs}


def test_codes_follow_the_sorted_labels() -> None:
    codes = KeyCodes.of(_tables(), ["run_id", "system"])
    assert codes.runs["run_id"].to_list() == ["R", "r10", "r2"]
    # The union of every table's alternatives (the orphan row's too), in code point order.
    assert codes.labels["alternative"].to_list() == ["A", "a10", "a2", "b", "é"]
    assert codes.labels["agent_id"].to_list() == ["g", "g10", "g2"]


def test_encode_then_decode_gives_the_table_back_without_orphans() -> None:
    tables = _tables()
    codes = KeyCodes.of(tables, ["run_id", "system"])
    encoded = codes.encode("beliefs", tables["beliefs"])
    assert encoded.collect_schema()["run_id"] == pl.UInt32
    decoded = codes.decode(encoded, {"run_id": "run_id", "agent_id": "agent_id", "alternative": "alternative"})
    expected = tables["beliefs"].filter(pl.col("run_id") != "orphan")
    assert_frame_equal(decoded.collect(), expected.collect(), check_row_order=False)


def test_null_labels_stay_null_and_runs_get_their_ids() -> None:
    tables = _tables()
    codes = KeyCodes.of(tables, ["run_id", "system"])
    encoded = codes.encode("runs", tables["runs"]).sort("run_id")
    assert encoded.collect()["run_id"].to_list() == [0, 1, 2]
    out = codes.decode(encoded, {"recommended": "alternative"}).select(
        *codes.run_columns(["run_id", "system"]), "recommended"
    )
    assert out.collect().to_dict(as_series=False) == {
        "run_id": ["R", "r10", "r2"],
        "system": ["mas", "single", "mas"],
        "recommended": ["A", None, "b"],
    }
