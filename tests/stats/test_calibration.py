"""calibration / reliability_table against a plain numpy reference, bin edges, and bad input."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mas_eval import DataError, SchemaError
from mas_eval.errors import InvalidParameterError
from mas_eval.stats import calibration, reliability_table


def reference(conf: np.ndarray, outcome: np.ndarray, bins: int, strategy: str) -> dict[str, object]:
    """ECE/MCE/Brier and the bins, straight from the definitions (scikit-learn's binning rule)."""
    if strategy == "uniform":
        edges = np.array([k / bins for k in range(bins + 1)])
    else:
        edges = np.quantile(conf, [k / bins for k in range(bins + 1)])
    index = np.searchsorted(edges[1:-1], conf, side="right")
    table = []
    ece, mce = 0.0, 0.0
    for b in np.unique(index):
        inside = index == b
        gap = abs(outcome[inside].mean() - conf[inside].mean())
        ece += inside.sum() / conf.size * gap
        mce = max(mce, gap)
        table.append((int(b), edges[b], edges[b + 1], int(inside.sum()), conf[inside].mean(), outcome[inside].mean()))
    return {"ece": ece, "mce": mce, "brier": float(np.mean((conf - outcome) ** 2)), "table": table}


def runs(seed: int, n: int = 400) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    system = rng.choice(["mas", "single"], n)
    conf = np.round(rng.beta(4, 2, n), 2)  # rounded: many values sit exactly on bin edges
    correct = rng.random(n) < np.where(system == "mas", conf, conf**2)
    return pl.DataFrame({"system": system, "task": rng.choice(["a", "b"], n), "conf": conf, "ok": correct})


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("bins", [1, 5, 10])
def test_calibration_matches_the_numpy_reference(strategy: str, bins: int) -> None:
    frame = runs(bins)
    summary = calibration(frame, "conf", "ok", by="task", bins=bins, strategy=strategy)
    table = reliability_table(frame, "conf", "ok", by="task", bins=bins, strategy=strategy)
    assert summary.columns == ["task", "system", "n", "mean_confidence", "accuracy", "ece", "mce", "brier", "n_bins",
                               "warning"]  # fmt: skip
    assert table.columns == ["task", "system", "bin", "bin_low", "bin_high", "n", "mean_confidence", "accuracy", "note"]
    assert summary.height == 4
    for row in summary.iter_rows(named=True):
        part = frame.filter((pl.col("task") == row["task"]) & (pl.col("system") == row["system"]))
        want = reference(part["conf"].to_numpy(), part["ok"].to_numpy().astype(float), bins, strategy)
        assert row["ece"] == pytest.approx(want["ece"], abs=1e-12)
        assert row["mce"] == pytest.approx(want["mce"], abs=1e-12)
        assert row["brier"] == pytest.approx(want["brier"], abs=1e-12)
        assert row["n"] == part.height
        got = table.filter((pl.col("task") == row["task"]) & (pl.col("system") == row["system"]))
        got = got.drop("task", "system", "note")
        assert got.height == len(want["table"]) == row["n_bins"]
        for mine, theirs in zip(got.rows(), want["table"], strict=True):
            assert mine[0] == theirs[0] and mine[3] == theirs[3]
            assert mine[1:3] == pytest.approx(theirs[1:3], abs=1e-12)
            assert mine[4:] == pytest.approx(theirs[4:], abs=1e-12)


def test_uniform_bins_are_left_closed_and_the_last_is_closed() -> None:
    conf = [0.0, 0.1, 0.2, 0.3, 0.7, 0.9, 0.999, 1.0]
    frame = pl.DataFrame({"system": ["mas"] * 8, "conf": conf, "ok": [1] * 8})
    table = reliability_table(frame, "conf", "ok", bins=10)
    assert dict(zip(table["bin"], table["n"], strict=True)) == {0: 1, 1: 1, 2: 1, 3: 1, 7: 1, 9: 3}
    assert table.filter(pl.col("bin") == 3)["bin_low"].item() == 0.3


def test_calibration_without_system_pools_all_runs() -> None:
    frame = runs(3)
    pooled = calibration(frame, "conf", "ok", system=None)
    assert pooled.columns[0] == "n" and pooled["n"].item() == frame.height


def test_a_group_without_outcomes_gets_a_row_with_a_warning() -> None:
    frame = pl.DataFrame(
        {"system": ["mas", "mas", "single"], "conf": [0.2, 0.9, 0.5], "ok": [True, None, None]}
    ).with_columns(pl.col("ok").cast(pl.Boolean))
    out = calibration(frame, "conf", "ok")
    single = out.filter(pl.col("system") == "single").row(0, named=True)
    assert single["n"] == 0 and single["ece"] is None
    assert "no run with both" in single["warning"]
    assert out.filter(pl.col("system") == "mas")["n"].item() == 1


@pytest.mark.parametrize(
    ("data", "kwargs", "error", "text"),
    [
        ({"conf": [0.2, 1.2], "ok": [1, 0]}, {}, DataError, r"must lie in \[0, 1\]: 1 runs"),
        ({"conf": [0.2, 0.3], "ok": [1, 2]}, {}, DataError, "boolean or 0/1"),
        ({"conf": [0.2, 0.3], "ok": ["y", "n"]}, {}, SchemaError, "must be numeric or boolean"),
        (
            {"conf": [0.2, 0.3], "ok": [1, 0]},
            {"bins": 0},
            InvalidParameterError,
            r"calibration: bins=0 is invalid; bins must be an integer in \[1, 1000\]",
        ),
        (
            {"conf": [0.2, 0.3], "ok": [1, 0]},
            {"strategy": "kmeans"},
            InvalidParameterError,
            "calibration: strategy='kmeans' is invalid; strategy must be one of 'uniform', 'quantile'",
        ),
        ({"conf": [0.2, 0.3], "ok": [1, 0]}, {"by": "task"}, SchemaError, "no column 'task'"),
    ],
)
def test_bad_calibration_input(
    data: dict[str, list[object]], kwargs: dict[str, object], error: type, text: str
) -> None:
    frame = pl.DataFrame({"system": ["mas", "mas"], **data})
    with pytest.raises(error, match=text):
        calibration(frame, "conf", "ok", **kwargs)  # type: ignore[arg-type]
