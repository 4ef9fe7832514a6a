"""The MAS-vs-baseline report's content: which sections, tables and figures, from which inputs.

:func:`build` is the one place that decides what a report holds; the renderers only lay it out.
What it headlines and compares when given nothing is chosen from the data
(:func:`~mas_eval.metrics.family.choose_columns`: the columns of the metric families with values in
these runs), and it says so. A section whose inputs are absent (no ground truth, no cost, a single
system) is one line of the closing "Not in this data" list, never a heading over nothing.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, PATH, TEXT, Instance, Options, check_columns, validate_params
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.metrics.family import Chosen, choose_columns
from mas_eval.metrics.registry import metric
from mas_eval.report.answer_quality import ANSWER_COMPARISON, ANSWER_METRICS, answers_section, has_items
from mas_eval.report.decision import decision_sections
from mas_eval.report.diagnosis import DIAGNOSIS_TABLES, diagnosis_section, has_diagnosis
from mas_eval.report.document import Report, ReportFigure, ReportTable, Section
from mas_eval.report.economics import cost_section
from mas_eval.report.failures import failures_section, has_annotations
from mas_eval.report.findings import after_correction, correction_of, findings
from mas_eval.report.outcomes import has_outcomes, outcome_columns, outcomes_section
from mas_eval.report.process import process_section
from mas_eval.report.tables import has_values, repeats_cases
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.provenance import inputs_sha256, provenance

__all__ = ["COMPARISON_DESIGN", "build", "chosen_columns", "default_comparisons"]

#: The design of the comparison a report runs when it is given none (the demo's), over the run
#: columns :func:`chosen_columns` chooses: by task, paired on the case, the test ``compare`` picks
#: for each metric (``"auto"``: McNemar's exact test and Newcombe's interval for a pass/fail
#: metric run once per case, the paired t otherwise), Holm across the table.
COMPARISON_DESIGN: dict[str, Any] = {
    "by": "task",
    "pair_on": "case_id",
    "test": "auto",
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
        # Only the tables the sections read; the runs' alternatives and agents never are (docs/performance.md).
        ran = Scores.manifest(scores).get("families", {}).get("ran")
        wanted = ["runs", "conflicts", "items", *DIAGNOSIS_TABLES]
        if ran is None or "diagnosis" in ran:  # its collaboration figure reads the agents' credibility
            wanted.append("agents")
        if ran is None or "process" in ran:  # each agent's share of its system's work
            wanted.append("agent_process")
        return Scores.open(scores, tables=wanted)
    msg = f"report: scores must be a Scores object or a Scores folder, not {type(scores).__name__}"
    raise InvalidParameterError(msg)


def _open_dataset(dataset: Dataset | str | Path | None) -> Dataset | None:
    if dataset is None or isinstance(dataset, Dataset):
        return dataset
    return Dataset.open(dataset)


@validate_params(
    {
        "scores": [Instance((Scores, pl.DataFrame), "Scores or a runs DataFrame")],
        "kind": [Options(("headline", "compared"))],
    }
)
def chosen_columns(scores: Scores | pl.DataFrame, kind: str = "compared") -> Chosen:
    """Return the run columns a report headlines (``kind="headline"``) or compares (``"compared"``) when told none.

    Those of the metric families that ran and have values in these runs
    (:func:`~mas_eval.metrics.family.choose_columns`): an inspect_ai log's scores, not the decision
    family's empty DQS. A bare runs frame is judged on every registered family, without the columns
    a family names from the data.

    Examples
    --------
    >>> import mas_eval
    >>> chosen_columns(mas_eval.score(mas_eval.simulate_outcomes(60, seed=1))).columns
    ['f1', 'match']
    >>> chosen_columns(mas_eval.score(mas_eval.simulate(60, seed=1))).columns
    ['dqs', 'decision_confidence']
    """
    if isinstance(scores, pl.DataFrame):
        runs, ran, named = scores, None, None
    else:
        runs, ran, named = scores.runs, (scores.ran or None), scores.named
    return choose_columns(kind, lambda name: has_values(runs, name), ran=ran, named=named)  # type: ignore[arg-type]


def default_comparisons(
    runs: pl.DataFrame | Scores, treatment: str = "mas", control: str = "single", *, chosen: Chosen | None = None
) -> tuple[pl.DataFrame | None, str]:
    """Return the comparison a report runs when given none (the demo's), or ``None`` and why not.

    :data:`COMPARISON_DESIGN` (by task, paired on case, the test for each metric's kind, Holm) over
    the run columns :func:`chosen_columns` chooses (or ``chosen``'s); an unpaired test when fewer
    than two cases were run by both systems.
    """
    from mas_eval.stats import compare

    if chosen is None:
        chosen = chosen_columns(runs)
    frame = runs if isinstance(runs, pl.DataFrame) else runs.runs
    paired_cases = _cases_run_by_both(frame, treatment, control)
    systems = set(frame["system"].unique().to_list())
    missing = [name for name in (treatment, control) if name not in systems]
    if missing:
        have = ", ".join(sorted(map(str, systems)))
        return None, f"no comparison: the scores have no run of system {', '.join(missing)} (they have: {have})"
    metrics = chosen.columns
    if not metrics:
        return None, "no comparison: none of the columns the metric families compare by default has a value here"
    design = dict(COMPARISON_DESIGN)
    if paired_cases < 2:
        design.update(pair_on=None)
    by = design.pop("by")
    if not has_values(frame, by):
        by = None
    table = compare(frame, metrics, by=by, treatment=treatment, control=control, **design)
    return table, ""


#: How each test of a comparison table reads in a sentence.
_TESTS = {
    "mcnemar": "McNemar's exact test with Newcombe's interval of the paired difference (a pass/fail score run "
    "once per case)",
    "paired": "the paired t on per-case differences (on case means where cases repeat)",
    "welch": "Welch's t",
    "ols_cluster": "Welch's difference with a cluster-robust SE by case",
}


def _comparison_description(comparisons: pl.DataFrame) -> str:
    found = sorted(set(comparisons["test"].drop_nulls().to_list()))
    tests = "; ".join(_TESTS.get(name, name) for name in found) or "none"
    correction = correction_of(comparisons)
    effect = " d is Cohen's d (d_z for paired designs)." if comparisons["cohens_d"].drop_nulls().len() else ""
    return (
        f"{comparisons.height} comparisons (test: {tests}); p-values adjusted across the table "
        f"({correction}). The difference is treatment − control, with its 95% CI.{effect}"
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
        A :func:`mas_eval.stats.compare` table; ``None`` runs :data:`COMPARISON_DESIGN` (by task,
        paired on case, the test for each metric's kind, Holm) on the run columns chosen from the
        data (:func:`chosen_columns`: the logged scores of inspect_ai or lm-eval logs, DQS and
        confidence of the decision family, ...), or an unpaired test when no case was run by both.
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
        Sections, each present when the data fill it: ``dataset``; ``headline`` (each chosen
        column's mean per system with its interval, a figure of them); ``comparison`` and ``forest``
        (every family's columns alike); the decision family's ``distributions``, ``paired``,
        ``calibration``, ``efficiency`` and ``consensus`` (:mod:`mas_eval.report.decision`);
        ``diagnosis`` (:mod:`mas_eval.report.diagnosis`); ``answers``
        (:mod:`mas_eval.report.answer_quality`); ``outcomes`` when the scores have run columns named
        from an ``outcomes`` table (:mod:`mas_eval.report.outcomes`: pass rates per system and task,
        pass@k and pass^k, the accuracy–cost frontier, cost per correct answer, led by their figures);
        ``cost`` when the runs record a cost or tokens (:mod:`mas_eval.report.economics`: is the
        extra cost worth it, the cost-effectiveness plane); ``process``
        (:mod:`mas_eval.report.process`: how the agents worked); ``failures`` when ``dataset`` has an
        ``annotations`` table (:mod:`mas_eval.report.failures`: each failure mode's rate per system, the heat
        map with the paired differences, the annotators' agreement); ``not_in_data`` (what the data could
        not show, one line each: :attr:`Report.not_in_data`); and ``provenance``. Write it with
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
    chosen = chosen_columns(scores)
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
            comparisons, why_no_comparison = default_comparisons(scores, treatment, control, chosen=chosen)
        context = _Context(scores, runs, chosen, None if given else chosen, treatment, control, paired_cases, ds)
        sections = _sections(context, comparisons, why_no_comparison)
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
            "comparison": "given" if given else {"metrics": chosen.columns, **COMPARISON_DESIGN},
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


@dataclass(frozen=True)
class _Context:
    """What every section reads: the scores, their runs, the columns chosen from the data, the two systems."""

    scores: Scores
    runs: pl.DataFrame
    chosen: Chosen
    #: The default comparison's choice (None: the comparison table was given).
    compared: Chosen | None
    treatment: str
    control: str
    paired_cases: int
    dataset: Dataset | None


def _sections(context: _Context, comparisons: pl.DataFrame | None, why_no_comparison: str) -> list[Section]:
    """Every section after the dataset's and before the provenance, in the report's order."""
    from mas_eval import plots

    scores, runs, treatment, control = context.scores, context.runs, context.treatment, context.control
    # The treatment in the MAS's blue, the control in the single agent's orange, whatever their names: as the
    # case viewer draws them.
    with plots.paper_style(columns=2), plots.compared_systems(treatment, control):
        sections = [
            _headline_section(scores, runs),
            _comparison_section(comparisons, why_no_comparison, context.compared, treatment, control),
            _forest_section(comparisons, why_no_comparison, treatment, control),
            *decision_sections(runs, treatment, control, context.paired_cases, scores.get("conflicts")),
        ]
        if has_diagnosis(scores):
            sections.append(diagnosis_section(scores, comparisons, why_no_comparison, treatment, control))
        if has_items(scores):
            sections.append(answers_section(scores["items"], treatment, control))
        if has_outcomes(scores):
            sections.append(outcomes_section(scores, treatment, control, comparisons, context.dataset))
        if context.dataset is not None and has_annotations(context.dataset):
            sections.append(failures_section(context.dataset, treatment, control))
        main = _main_score(scores, context.chosen)
        if main is not None:
            sections.append(cost_section(runs, main, treatment, control, context.paired_cases))
        if "process" in scores.ran or "agent_process" in scores:
            sections.append(process_section(scores, control))
    return sections


def _main_score(scores: Scores, chosen: Chosen) -> str | None:
    """Return the score whose cost a reader weighs: the first pass/fail outcome, else the first column compared."""
    if has_outcomes(scores):
        pass_fail, graded = outcome_columns(scores)
        if pass_fail or graded:
            return (pass_fail or graded)[0]
    return chosen.columns[0] if chosen.columns else None


def _dataset_section(runs: pl.DataFrame, summary: pl.DataFrame | None) -> Section:
    keys = [name for name in ("system", "task", "variant") if has_values(runs, name)]
    per_group = runs.group_by(keys).agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort(keys)
    text = [f"{runs.height:,} runs of {runs['system'].n_unique()} system(s) on {runs['case_id'].n_unique():,} cases."]
    tables = [ReportTable("runs_per_group", f"Runs and cases per {', '.join(keys)}", per_group)]
    if summary is not None:
        tables.append(ReportTable("dataset_tables", "Rows per table of the scored Dataset", summary))
    return Section("dataset", "Dataset", text=text, tables=tables)


def _described(name: str, named: set[str], runs: pl.DataFrame) -> str:
    """Say what run column ``name`` is: the registry's description, or the logged score's kind."""
    if name in named:
        kind = "pass/fail: its mean is the pass rate" if runs.schema[name] == pl.Boolean else "graded"
        return f"A score the evaluation logged ({kind})."
    return metric("runs", name).description


def _headline_section(scores: Scores, runs: pl.DataFrame) -> Section:
    from mas_eval import plots
    from mas_eval.stats import describe

    title = "Headline per system"
    chosen = chosen_columns(scores, "headline")
    if not chosen.columns:
        return Section("headline", title, omitted="none of the columns the metric families headline has a value here")
    cluster = "case_id" if repeats_cases(runs) else None
    table = describe(runs, chosen.columns, cluster=cluster)
    named = {name for names in scores.named.values() for name in names}
    how = (
        "cluster-robust over cases (a case's epochs are not independent)"
        if cluster
        else "Wilson's score interval for a pass rate, the t interval for a mean"
    )
    text = [f"{chosen.sentence()} Means over runs with their 95% intervals: {how}."]
    family = {name: owner for owner, names in chosen.by_family.items() for name in names}
    about = pl.DataFrame(
        [(name, family[name], _described(name, named, runs)) for name in chosen.columns],
        schema={"metric": pl.String, "family": pl.String, "what it is": pl.String},
        orient="row",
    )
    figure = ReportFigure(
        "headline",
        f"Each headline column's mean per system with its 95% interval ({how}); a panel per column, each on its own "
        "scale.",
        plots.system_profile(table),
    )
    caption = "Mean per system with its 95% interval (a pass/fail column's mean is its pass rate)"
    tables = [
        ReportTable("headline", caption, table),
        ReportTable("headline_columns", "What each headline column is, and the metric family it comes from", about),
    ]
    return Section("headline", title, text=text, tables=tables, figures=[figure])


def _comparison_section(
    comparisons: pl.DataFrame | None, why: str, compared: Chosen | None, treatment: str, control: str
) -> Section:
    title = f"{treatment} vs {control}"
    if comparisons is None or comparisons.height == 0:
        return Section("comparison", title, omitted=why or "no comparison: the comparison table is empty")
    chose = [compared.sentence()] if compared is not None else []
    text = [*chose, _comparison_description(comparisons), *findings(comparisons, treatment)]
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
    mcnemar = " (Newcombe's interval where McNemar's test compared a pass/fail score)" if (
        comparisons["test"] == "mcnemar"
    ).any() else ""  # fmt: skip
    figures = [
        ReportFigure(
            "forest_difference",
            f"Differences with 95% CIs{mcnemar}; filled markers stay significant {after_correction(comparisons)}.",
            plots.forest(comparisons, effect="difference", treatment=treatment, control=control),
        ),
    ]
    if comparisons["d_ci_low"].drop_nulls().len():
        figures.append(
            ReportFigure(
                "forest_cohens_d",
                "Cohen's d with its 95% CI.",
                plots.forest(comparisons, effect="cohens_d", treatment=treatment, control=control),
            )
        )
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
