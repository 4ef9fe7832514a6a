"""The report's "Failure modes" section: each mode's rate per system, the paired differences, the agreement.

:func:`failures_section` is what :func:`mas_eval.report.build` adds when it is given the Dataset
and the Dataset has an ``annotations`` table (failure-mode labels, e.g. MAST's: `mas-eval ingest
--format annotations`). It holds one table, each system's rate of each mode with Wilson's
interval (:func:`~mas_eval.stats.failure_rates`, the annotators' majority), and one figure, the
modes by system as a heat map with the treatment − control difference of each mode on the cases
both ran, the modes still significant after Holm's correction outlined
(:func:`~mas_eval.stats.failure_differences`, :func:`~mas_eval.plots.failure_modes`). A line
says which modes differ and how far the annotators agree (Krippendorff's alpha over every run
and mode, :func:`~mas_eval.stats.annotator_agreement`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from mas_eval.errors import MasEvalError
from mas_eval.formatting import format_number, format_p
from mas_eval.report.parts import ReportFigure, ReportTable, Section

if TYPE_CHECKING:
    from mas_eval.storage.dataset import Dataset

__all__ = ["failures_section", "has_annotations"]

KEY, TITLE = "failures", "Failure modes"

_ABOUT = (
    "Annotators labelled runs with the failure modes they found (the annotations table). A run has a mode when "
    "more than half of its annotators found it; a mode's rate is the share of a system's annotated runs that have "
    "it, with Wilson's 95% interval. The two systems are compared on the cases both ran: McNemar's exact test and "
    "Newcombe's interval of the paired difference per mode, Holm-adjusted across the modes."
)


def has_annotations(dataset: Dataset | None) -> bool:
    """Whether ``dataset`` was given and has an ``annotations`` table.

    >>> import polars as pl
    >>> from mas_eval import Dataset
    >>> has_annotations(None), has_annotations(Dataset.from_frames(runs=pl.DataFrame({"run_id": ["r1"],
    ...     "system": ["mas"], "case_id": ["q1"]})))
    (False, False)
    """
    return dataset is not None and "annotations" in dataset


def failures_section(dataset: Dataset, treatment: str, control: str) -> Section:
    """Make the "Failure modes" section of ``dataset``'s annotations: omitted, with why, when there are none.

    >>> import polars as pl
    >>> from mas_eval import Dataset
    >>> runs = pl.DataFrame({"run_id": ["m1", "s1"], "system": ["mas", "single"], "case_id": ["q1", "q1"]})
    >>> labels = pl.DataFrame({"run_id": ["m1", "s1"], "mode": "1.3 Step repetition", "annotator": "judge",
    ...                        "present": [True, False]})
    >>> section = failures_section(Dataset.from_frames(runs=runs, annotations=labels), "mas", "single")
    >>> section.tables[0].frame.select("system", "n", "present").rows()
    [('mas', 1, 1), ('single', 1, 0)]
    >>> section.text[-1]
    'One annotator labelled the runs: no agreement to measure.'
    """
    from mas_eval import plots, stats

    with dataset.reading():
        annotations = dataset.collect("annotations")
        runs = dataset.collect("runs")
    if not annotations.height:
        return Section(KEY, TITLE, omitted="the annotations table is empty")
    rates = stats.failure_rates(annotations, runs)
    text = [_ABOUT]
    differences = None
    systems = set(runs.join(annotations.select("run_id").unique(), on="run_id", how="semi")["system"].to_list())
    if not {treatment, control} <= systems:
        text.append(f"No paired comparison of the failure modes: no annotated run of {treatment} or of {control}.")
    else:
        try:
            differences = stats.failure_differences(annotations, runs, treatment=treatment, control=control)
        except MasEvalError as exc:
            text.append(f"No paired comparison of the failure modes: {exc}.")
        else:
            text.append(_differing(differences, treatment, control))
    text.append(_agreement(annotations))
    caption = "Failure-mode rate per system: runs annotated (n), runs with the mode, rate and Wilson 95% interval"
    drawn = "Failure-mode rates by system" + (
        f"; beside each mode the paired difference {treatment} − {control} in percentage points, * and an outline "
        "where it stays significant after Holm."
        if differences is not None
        else "."
    )
    figure = ReportFigure("failure_modes", drawn, plots.failure_modes(rates, differences))
    return Section(KEY, TITLE, text=text, tables=[ReportTable("failure_rates", caption, rates)], figures=[figure])


def _differing(differences: pl.DataFrame, treatment: str, control: str) -> str:
    """Which modes differ after the correction, and which way."""
    tested = differences.filter(pl.col("p_value").is_not_null())
    if not tested.height:
        return f"No case was run by both {treatment} and {control} and annotated: nothing to pair."
    found = tested.filter(pl.col("p_adjusted") < 0.05).sort("mode")
    if not found.height:
        return (
            f"No mode's rate differs between {treatment} and {control} after Holm's correction ({tested.height} modes)."
        )
    said = [
        f"{row['mode']} ({100 * row['difference']:+.0f} pp, adjusted p {format_p(row['p_adjusted'])})"
        for row in found.iter_rows(named=True)
    ]
    return f"Modes whose rate differs ({treatment} − {control}), after Holm's correction: " + "; ".join(said) + "."


def _agreement(annotations: pl.DataFrame) -> str:
    """Return the annotators' agreement over every run and mode, or why there is none."""
    from mas_eval import stats

    annotators = annotations["annotator"].n_unique()
    if annotators < 2:
        return "One annotator labelled the runs: no agreement to measure."
    pooled = stats.annotator_agreement(annotations).filter(pl.col("mode").is_null()).row(0, named=True)
    alpha = pooled["krippendorff_alpha"]
    shown = "undefined (every label the same)" if alpha is None else format_number(alpha)
    return (
        f"Agreement of the {annotators} annotators over {pooled['n_runs']:,} labelled (run, mode) pairs: "
        f"Krippendorff's alpha {shown}, raw agreement {format_number(pooled['agreement'])}."
    )
