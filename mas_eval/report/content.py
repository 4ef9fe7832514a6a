"""The MAS-vs-baseline report's content: which sections, tables and figures, from which inputs.

:func:`build` is the one place that decides what a report holds; the renderers only lay it out.
A section whose inputs are absent (no ground truth, no cost, a single system) is kept as a
one-line reason, never an empty table or figure.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, PATH, TEXT, Instance, check_columns, validate_params
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.metrics.family import compared_columns, headline_columns
from mas_eval.metrics.registry import metric
from mas_eval.report.answer_quality import ANSWER_COMPARISON, ANSWER_METRICS, answers_section, has_items
from mas_eval.report.decision import decision_sections
from mas_eval.report.diagnosis import DIAGNOSIS_TABLES, diagnosis_section, has_diagnosis
from mas_eval.report.document import Report, ReportFigure, ReportTable, Section
from mas_eval.report.failures import failures_section, has_annotations
from mas_eval.report.findings import after_correction, correction_of, findings
from mas_eval.report.outcomes import has_outcomes, outcomes_section
from mas_eval.report.tables import has_values, system_means
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.provenance import inputs_sha256, provenance

__all__ = ["COMPARISON_DESIGN", "build", "default_comparisons"]

#: The design of the comparison a report runs when it is given none (the demo's), over the run
#: columns each registered family declares it compares (:func:`~mas_eval.metrics.family.compared_columns`).
COMPARISON_DESIGN: dict[str, Any] = {
    "by": "task",
    "pair_on": "case_id",
    "test": "paired",
    "correction": "holm",
}


def _cases_run_by_both(runs: pl.DataFrame, treatment: str, control: str) -> int:
    """How many cases have runs of both systems: the pairs a paired design can use."""
    return (
        runs.filter(pl.col("system").is_in([treatment, control]))
        .group_by("case_id")
        .agg(pl.col("system").n_unique().alias("systems"))
        .filter(pl.col("systems") == 2)
        .height
    )


def _open_scores(scores: Scores | str | Path) -> Scores:
    if isinstance(scores, Scores):
        return scores
    if isinstance(scores, str | Path):
        # Only the tables the sections read: a million decision runs' alternatives and agents
        # (7.5 million rows) took a third of the report's time to read and were never used.
        ran = Scores.manifest(scores).get("families", {}).get("ran")
        wanted = ["runs", "conflicts", "items", *DIAGNOSIS_TABLES]
        if ran is None or "diagnosis" in ran:  # its collaboration figure reads the agents' credibility
            wanted.append("agents")
        return Scores.open(scores, tables=wanted)
    msg = f"report: scores must be a Scores object or a Scores folder, not {type(scores).__name__}"
    raise InvalidParameterError(msg)


def _open_dataset(dataset: Dataset | str | Path | None) -> Dataset | None:
    if dataset is None or isinstance(dataset, Dataset):
        return dataset
    return Dataset.open(dataset)


def _default_metrics(runs: pl.DataFrame) -> list[str]:
    """The default comparison's metrics: the run columns each registered family compares, those the scores have
    (the comparison itself leaves out those without a value)."""
    return [name for name in compared_columns() if name in runs.columns]


def default_comparisons(
    runs: pl.DataFrame, treatment: str = "mas", control: str = "single"
) -> tuple[pl.DataFrame | None, str]:
    """The comparison a report runs when given none (the demo's), or ``None`` and why not.

    :data:`COMPARISON_DESIGN` (by task, paired on case, Holm) over the run columns the registered
    families compare (:func:`~mas_eval.metrics.family.compared_columns`) that the runs have values
    of; an unpaired Welch test when fewer than two cases were run by both systems.
    """
    from mas_eval.stats import compare

    paired_cases = _cases_run_by_both(runs, treatment, control)

    systems = set(runs["system"].unique().to_list())
    missing = [name for name in (treatment, control) if name not in systems]
    if missing:
        have = ", ".join(sorted(map(str, systems)))
        return None, f"no comparison: the scores have no run of system {', '.join(missing)} (they have: {have})"
    metrics = [name for name in _default_metrics(runs) if has_values(runs, name)]
    if not metrics:
        return None, f"no comparison: the scores have no values of {', '.join(compared_columns())}"
    design = dict(COMPARISON_DESIGN)
    if paired_cases < 2:
        design.update(pair_on=None, test="welch")
    by = design.pop("by")
    if not has_values(runs, by):
        by = None
    table = compare(runs, metrics, by=by, treatment=treatment, control=control, **design)
    return table, ""


def _comparison_description(comparisons: pl.DataFrame) -> str:
    tests = ", ".join(sorted(set(comparisons["test"].drop_nulls().to_list()))) or "none"
    correction = correction_of(comparisons)
    return (
        f"{comparisons.height} comparisons (test: {tests}); p-values adjusted across the table "
        f"({correction}). The difference is treatment − control, with its 95% CI; d is Cohen's d "
        "(d_z for paired designs)."
    )


@validate_params(
    {
        "scores": [Instance(Scores, "Scores"), PATH],
        "comparisons": [Instance(pl.DataFrame, "a Polars DataFrame (a compare table)"), NONE],
        "title": [TEXT],
        "dataset": [Instance(Dataset, "a Dataset"), PATH, NONE],
        "treatment": [TEXT],
        "control": [TEXT],
        "command": [TEXT, NONE],
    }
)
def build(
    scores: Scores | str | Path,
    comparisons: pl.DataFrame | None = None,
    *,
    title: str = "MAS vs single-agent baseline",
    dataset: Dataset | str | Path | None = None,
    treatment: str = "mas",
    control: str = "single",
    command: str | None = None,
) -> Report:
    """Build the MAS-vs-baseline report of ``scores``.

    Parameters
    ----------
    scores
        What :func:`mas_eval.score` returned, or the folder :meth:`Scores.write` wrote.
    comparisons
        A :func:`mas_eval.stats.compare` table; ``None`` runs :data:`COMPARISON_DESIGN` (by
        task, paired on case, Holm) on the run columns the families compare
        (:func:`~mas_eval.metrics.family.compared_columns`), or an unpaired Welch test when no
        case was run by both systems.
    title
        The report's title.
    dataset
        The scored Dataset (or its folder), for the dataset summary and its files' hashes.
    treatment, control
        The two systems compared, as in ``compare``.
    command
        The command or call that built the report, recorded in the provenance (the CLI passes
        its command line); by default the Python call.

    Returns
    -------
    Report
        Sections: ``dataset``, ``headline``, ``comparison``, ``forest`` (every family's columns
        alike), the decision family's ``distributions``, ``paired``, ``calibration`` and
        ``efficiency`` (:mod:`mas_eval.report.decision`), then ``diagnosis`` when the scores hold a
        diagnostic team's outputs (:mod:`mas_eval.report.diagnosis`), ``answers`` when they have
        an ``items`` table (:mod:`mas_eval.report.answer_quality`: answer scores per task and
        system, compared item by item, and the combined score), ``outcomes`` when the scores have
        run columns named from an ``outcomes`` table (:mod:`mas_eval.report.outcomes`: pass rates,
        the paired comparison, pass@k, cost per correct answer, the compute-matched comparison),
        ``failures`` when ``dataset`` has an ``annotations`` table (:mod:`mas_eval.report.failures`:
        each failure mode's rate per system, the heat map with the paired differences, the
        annotators' agreement), and ``provenance``. Write it with
        :meth:`Report.write` (``.html``, ``.md``, ``.json``, ``.tex``).

    Notes
    -----
    Figures are drawn by :mod:`mas_eval.plots` in its double-column paper style. The
    calibration section uses :func:`mas_eval.stats.calibration` (ECE, MCE, Brier) on
    ``decision_confidence`` against ``gt_match``.

    Examples
    --------
    >>> import mas_eval
    >>> from mas_eval.report import build
    >>> scores = mas_eval.score(mas_eval.simulate(runs=200, seed=1))
    >>> report = build(scores, title="Pilot")
    >>> [s.key for s in report.sections][:3]
    ['dataset', 'headline', 'comparison']
    """
    scores = _open_scores(scores)
    ds = _open_dataset(dataset)
    if "runs" not in scores:
        msg = f"report: the scores have no 'runs' table (they have: {', '.join(scores.names)}); score a Dataset first"
        raise SchemaError(msg)
    runs = scores.runs
    if runs.height == 0:
        msg = "report: the scores' 'runs' table is empty; there is nothing to report"
        raise SchemaError(msg)
    check_columns(
        runs.schema,
        ["system", "case_id"],
        "report: the scores' runs",
        fix="report the Scores that mas_eval.score wrote",
    )
    given = comparisons is not None
    why_no_comparison = ""
    inputs: dict[str, str | Path] = {}
    if scores.source is not None:
        inputs["scores"] = scores.source
    if ds is not None and ds.source is not None:
        inputs["dataset"] = ds.source
    # The Dataset's summary (every table's run ids, read by Polars) and the inputs' hashes
    # (hashlib) run without holding the GIL: beside the sections, whose figures matplotlib draws
    # on one core holding it.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mas_eval-report") as beside:
        summary = beside.submit(ds.summary) if ds is not None else None
        hashes = beside.submit(lambda: {name: inputs_sha256(path) for name, path in inputs.items()})
        paired_cases = _cases_run_by_both(runs, treatment, control)
        if comparisons is None:
            comparisons, why_no_comparison = default_comparisons(runs, treatment, control)
        sections = _sections(scores, runs, comparisons, why_no_comparison, treatment, control, paired_cases, ds)
        sections.insert(0, _dataset_section(runs, None if summary is None else summary.result()))
        hashed = hashes.result()
    call = command or (
        f"mas_eval.report.build(scores, comparisons={'<given>' if given else None}, title={title!r}, "
        f"dataset={'<given>' if ds is not None else None}, treatment={treatment!r}, control={control!r})"
    )
    record = provenance(
        inputs=inputs,
        hashes=hashed,
        parameters={
            "preset": scores.preset,
            "params": scores.params,
            "families": {"ran": scores.ran, "skipped": scores.skipped},
            "comparison": "given" if given else {"metrics": _default_metrics(runs), **COMPARISON_DESIGN},
            **({"answer_comparison": {"metrics": ANSWER_METRICS, **ANSWER_COMPARISON}} if has_items(scores) else {}),
            "treatment": treatment,
            "control": control,
            "title": title,
        },
    )
    record["call"] = call
    sections.append(_provenance_section(record, scores))
    return Report(title=title, sections=sections, provenance=record)


# -- sections ---------------------------------------------------------------------------------


def _sections(
    scores: Scores,
    runs: pl.DataFrame,
    comparisons: pl.DataFrame | None,
    why_no_comparison: str,
    treatment: str,
    control: str,
    paired_cases: int,
    dataset: Dataset | None = None,
) -> list[Section]:
    """Every section after the dataset's and before the provenance, in the report's order."""
    from mas_eval import plots

    with plots.paper_style(columns=2):
        sections = [
            _headline_section(runs),
            _comparison_section(comparisons, why_no_comparison, treatment, control),
            _forest_section(comparisons, why_no_comparison, treatment, control),
            *decision_sections(runs, treatment, control, paired_cases, scores.get("conflicts")),
        ]
        if has_diagnosis(scores):
            sections.append(diagnosis_section(scores, comparisons, why_no_comparison, treatment, control))
        if has_items(scores):
            sections.append(answers_section(scores["items"], treatment, control))
        if has_outcomes(scores):
            sections.append(outcomes_section(scores, treatment, control))
        if dataset is not None and has_annotations(dataset):
            sections.append(failures_section(dataset, treatment, control))
    return sections


def _dataset_section(runs: pl.DataFrame, summary: pl.DataFrame | None) -> Section:
    keys = [name for name in ("system", "task", "variant") if has_values(runs, name)]
    per_group = runs.group_by(keys).agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort(keys)
    text = [f"{runs.height:,} runs of {runs['system'].n_unique()} system(s) on {runs['case_id'].n_unique():,} cases."]
    tables = [ReportTable("runs_per_group", f"Runs and cases per {', '.join(keys)}", per_group)]
    if summary is not None:
        tables.append(ReportTable("dataset_tables", "Rows per table of the scored Dataset", summary))
    return Section("dataset", "Dataset", text=text, tables=tables)


def _headline_section(runs: pl.DataFrame) -> Section:
    means = system_means(runs)
    described = [name for name in headline_columns() if has_values(runs, name)]
    text = ["Means over runs. " + " ".join(f"{name}: {metric('runs', name).description}" for name in described)]
    return Section(
        "headline", "Headline per system", text=text, tables=[ReportTable("headline", "Mean per system", means)]
    )


def _comparison_section(comparisons: pl.DataFrame | None, why: str, treatment: str, control: str) -> Section:
    title = f"{treatment} vs {control}"
    if comparisons is None or comparisons.height == 0:
        return Section("comparison", title, omitted=why or "no comparison: the comparison table is empty")
    text = [_comparison_description(comparisons), *findings(comparisons, treatment)]
    return Section(
        "comparison",
        title,
        text=text,
        tables=[ReportTable("comparison", f"{treatment} − {control}: one row per group and metric", comparisons)],
    )


def _forest_section(comparisons: pl.DataFrame | None, why: str, treatment: str, control: str) -> Section:
    from mas_eval import plots

    title = "Effects at a glance"
    if comparisons is None or comparisons.height == 0:
        return Section("forest", title, omitted=why or "no comparison rows to plot")
    if comparisons["ci_low"].drop_nulls().len() == 0:
        return Section("forest", title, omitted="no comparison row has a confidence interval to plot")
    figures = [
        ReportFigure(
            "forest_difference",
            f"Differences with 95% CIs; filled markers stay significant {after_correction(comparisons)}.",
            plots.forest(comparisons, effect="difference", treatment=treatment, control=control),
        ),
        ReportFigure(
            "forest_cohens_d",
            "Cohen's d with its 95% CI.",
            plots.forest(comparisons, effect="cohens_d", treatment=treatment, control=control),
        ),
    ]
    return Section("forest", title, figures=figures)


def _provenance_section(record: dict[str, Any], scores: Scores) -> Section:
    rows = [
        ("mas_eval version", str(record["mas_eval_version"])),
        ("created (UTC)", str(record["created_utc"])),
        ("Python", str(record["python"])),
        ("preset", scores.preset),
        ("call", str(record["call"])),
    ]
    for name, value in _flatten(record["parameters"].get("params", {}), "params"):
        rows.append((name, value))
    for name, entry in record["inputs"].items():
        for file, digest in entry["sha256"].items():
            rows.append((f"sha256 {name}/{file}", digest))
    if not record["inputs"]:
        rows.append(("inputs", "scores computed in memory: no input files to hash"))
    frame = pl.DataFrame(rows, schema=["item", "value"], orient="row")
    return Section("provenance", "Provenance", tables=[ReportTable("provenance", "How this report was made", frame)])


def _flatten(value: object, prefix: str) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for key, inner in value.items() for pair in _flatten(inner, f"{prefix}.{key}")]
    if isinstance(value, float) and math.isnan(value):
        return [(prefix, "NaN")]
    return [(prefix, str(value))]
