"""plots.pass_at_k and plots.design_power: what they draw is the statistics' rows, in the house colours."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from mas_eval import plots
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.stats import design_power, pass_at_k_intervals, plan
from tests.stats.test_pass_intervals import _planted

COMPONENTS = pl.DataFrame({"quantity": ["case", "epoch"], "estimate": [0.02, 0.2], "judges": 1,
                           "difference": "mas - single"})  # fmt: skip


@pytest.fixture(scope="module")
def intervals() -> pl.DataFrame:
    return pass_at_k_intervals(_planted(4, cases=40), "ok", k=[1, 2, 5], treatment="mas", control="single", seed=1)


def test_pass_at_k_draws_each_system_and_measure_with_its_band(intervals: pl.DataFrame) -> None:
    ax = plots.pass_at_k(intervals).axes[0]
    lines = {line.get_gid(): line for line in ax.lines}
    assert set(lines) == {f"{m}:{s}" for m in ("pass_at_k", "pass_hat_k") for s in ("mas", "single")}
    colours = plots.system_colours(["mas", "single"])
    bands = {c.get_gid(): c for c in ax.collections}
    for system in ("mas", "single"):
        for gid, measure in (("pass_at_k", "pass@k"), ("pass_hat_k", "pass^k")):
            rows = intervals.filter(
                (pl.col("system") == system) & pl.col("control").is_null() & (pl.col("measure") == measure)
            ).sort("k")
            line = lines[f"{gid}:{system}"]
            assert np.array_equal(line.get_xydata(), rows.select("k", "estimate").to_numpy())
            assert to_hex(line.get_color()) == colours[system].lower()
            band = bands[f"{gid}_band:{system}"].get_paths()[0].vertices
            # fill_between's polygon runs along the lower limits and back along the upper ones.
            assert np.isclose(band[:, 1].min(), rows["boot_low"].min()) and np.isclose(
                band[:, 1].max(), rows["boot_high"].max())  # fmt: skip
    assert lines["pass_hat_k:mas"].get_linestyle() == "--"
    assert ax.get_legend().get_texts()[0].get_text() == "mas pass@k"


def test_pass_at_k_t_bands_and_a_given_ax(intervals: pl.DataFrame) -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plots.pass_at_k(intervals, band="t", ax=ax) is fig
    band = next(c for c in ax.collections if c.get_gid() == "pass_at_k_band:single").get_paths()[0].vertices
    rows = intervals.filter(
        (pl.col("system") == "single") & pl.col("control").is_null() & (pl.col("measure") == "pass@k")
    )
    assert np.isclose(band[:, 1].max(), rows["ci_high"].max())


def test_design_power_draws_a_curve_per_epoch_count_and_marks_the_chosen_design() -> None:
    table = plan(COMPONENTS, mde=0.06, max_cases=150, max_epochs=6)
    curves = design_power(COMPONENTS, mde=0.06, epochs=[1, 2, 5])
    ax = plots.design_power(curves, plan=table).axes[0]
    lines = {line.get_gid(): line for line in ax.lines}
    for epochs in (1, 2, 5):
        mine = curves.filter(pl.col("epochs") == epochs)
        assert np.array_equal(lines[f"design_power:{epochs}"].get_xydata(), mine.select("cases", "power").to_numpy())
    chosen = table.filter("chosen").row(0, named=True)
    assert lines["design_chosen"].get_xydata().tolist() == [[chosen["cases"], chosen["power"]]]
    assert lines["design_target"].get_ydata().tolist() == [0.8, 0.8]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1 epoch", "2 epochs", "5 epochs"]
    assert "133 cases × 5 epochs" in [t.get_text() for t in ax.texts]
    assert "design_target" not in {line.get_gid() for line in plots.design_power(curves, target=None).axes[0].lines}


def test_bad_input_is_one_named_error(intervals: pl.DataFrame) -> None:
    with pytest.raises(InvalidParameterError, match="band='wald'"):
        plots.pass_at_k(intervals, band="wald")
    with pytest.raises(SchemaError, match="'boot_low'"):
        plots.pass_at_k(intervals.drop("boot_low"))
    grouped = pl.concat([intervals.with_columns(task=pl.lit(t)) for t in ("a", "b")])
    with pytest.raises(DataError, match="filter them to one group"):
        plots.pass_at_k(grouped)
    curves = design_power(COMPONENTS, mde=0.06, epochs=[1], cases=[10, 20])
    with pytest.raises(DataError, match="filter them to one group"):
        plots.design_power(pl.concat([curves, curves]))
    with pytest.raises(InvalidParameterError, match=r"target=1\.5"):
        plots.design_power(curves, target=1.5)
