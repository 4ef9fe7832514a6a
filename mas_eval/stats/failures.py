r"""Failure modes from annotations: each system's rate per mode, the paired difference of two systems, agreement.

Annotators (people or a judge model) label runs with the failure modes of a taxonomy such as
MAST's (Cemri et al. 2025): the Dataset's ``annotations`` table, one row per run, mode and
annotator with whether the mode is ``present``. Studies then compare systems' failure-mode rates
by eye; these functions give

* :func:`failure_rates` — each system's rate of each mode, with Wilson's interval;
* :func:`failure_differences` — per mode, the treatment − control difference on the cases both
  ran, McNemar's exact test, Newcombe's interval, Holm or Benjamini–Hochberg across the modes;
* :func:`annotator_agreement` — per mode, how far the annotators agree: Cohen's kappa (two
  annotators), Fleiss' kappa and Krippendorff's alpha (:mod:`mas_eval.stats.agreement`).

Every function takes the Dataset (its ``annotations`` and ``runs``), or the annotations as a
frame with the runs as a second frame (or ``Scores``: its ``runs``).

Notes
-----
**Consensus.** A run has a mode when its annotators' consensus says so: with :math:`a` annotators
of the mode on the run, :math:`y` of whom found it,

* ``"majority"`` (default): :math:`y > a/2`; a tie (:math:`2y = a`) is not a majority and is
  counted in ``ties``;
* ``"any"``: :math:`y \ge 1`; ``"all"``: :math:`y = a`;
* ``annotator=NAME``: that annotator's label alone (runs it did not annotate are left out).

With ``by="agent_id"`` (or ``"round"``) the consensus is taken per agent: the run has the mode
*at* agent g when more than half of its annotators found the mode there (Who&When's decisive
agent, say), and the rate is the share of annotated runs with the mode at g.

**Rates.** Of the :math:`n` runs of a system annotated for a mode, :math:`x` have it:
rate :math:`x/n` with Wilson's (1927) score interval
(:func:`~mas_eval.stats.proportions.proportion_interval`). A run no one annotated for the mode
is not counted: unknown, not free of it.

**Paired differences.** The two systems' runs are paired on the case (and the epoch, when the
runs have epochs); for a mode, the pairs both annotated form the table a (both have it), b
(only the treatment), c (only the control), d (neither): the difference of rates is
:math:`(b - c)/n` with Newcombe's (1998) method 10 interval and McNemar's (1947) exact p
(:func:`~mas_eval.stats.proportions.paired_difference`), adjusted across the modes by Holm
(1979) or Benjamini–Hochberg (1995) (:func:`~mas_eval.stats.corrections.adjust_pvalues`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from mas_eval.constraints import FRAME, NONE, RUN_METRICS, Boolean, Instance, Options, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, format_keys
from mas_eval.stats._common import PROBABILITY, SYSTEM_NAME, check_columns
from mas_eval.stats.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from mas_eval.stats.corrections import adjust_pvalues
from mas_eval.stats.options import Correction, canonical_correction
from mas_eval.stats.proportions import paired_difference, proportion_interval
from mas_eval.storage.dataset import Dataset

__all__ = [
    "AGREEMENT_COLUMNS",
    "DIFFERENCE_COLUMNS",
    "RATE_COLUMNS",
    "Consensus",
    "Where",
    "annotator_agreement",
    "failure_differences",
    "failure_rates",
]

#: How a run's annotators' labels become one: more than half, at least one, all of them.
Consensus = Literal["majority", "any", "all"]
#: The annotation columns a rate can be broken down by: where in the run the mode was found.
Where = Literal["agent_id", "round"]

#: The columns of :func:`failure_rates` after the system, the mode and any ``by`` columns.
RATE_COLUMNS = ["category", "n", "present", "rate", "ci_low", "ci_high", "ties"]
#: The columns of :func:`failure_differences`.
DIFFERENCE_COLUMNS = [
    "mode", "category", "treatment", "control", "n", "both", "treatment_only", "control_only", "neither",
    "rate_treatment", "rate_control", "difference", "ci_low", "ci_high", "p_value", "p_adjusted", "correction",
]  # fmt: skip
#: The columns of :func:`annotator_agreement`.
AGREEMENT_COLUMNS = [
    "mode", "category", "n_runs", "n_annotators", "agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha",
]  # fmt: skip

_KEY = ["run_id", "mode", "annotator"]
#: Internal names: annotators of a (run, mode), and those who found the mode.
_A, _Y = "_annotators", "_yes"


def _where_list(value: object) -> bool:
    names = [value] if isinstance(value, str) else value
    return isinstance(names, list | tuple) and len(names) > 0 and all(n in ("agent_id", "round") for n in names)


_BY = Predicate(_where_list, "'agent_id', 'round' or a list of them")
_CONSENSUS = [Options.of(Consensus)]
_ANNOTATOR = [Predicate(lambda v: isinstance(v, str) and bool(v), "an annotator's name"), NONE]


def _frames(annotations: Any, runs: Any, where: str) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Return the annotations and (if any) the runs, as DataFrames with the columns needed, checked."""
    if isinstance(annotations, Dataset):
        if "annotations" not in annotations:
            msg = (
                f"{where}: the Dataset has no annotations table (it has: {', '.join(annotations.table_names)}); "
                "ingest annotations first (mas-eval ingest --format annotations FILE --into DATASET)"
            )
            raise SchemaError(msg)
        with annotations.reading():
            frame = annotations.collect("annotations")
            run_frame = annotations.collect("runs") if runs is None else None
        runs = run_frame if runs is None else runs
    elif isinstance(annotations, pl.LazyFrame | pl.DataFrame):
        frame = annotations.collect() if isinstance(annotations, pl.LazyFrame) else annotations
    else:
        msg = (
            f"{where}: annotations must be a Dataset or a Polars frame of annotations, not {type(annotations).__name__}"
        )
        raise InvalidParameterError(msg)
    check_columns(frame.schema, [*_KEY, "present"], f"{where}: annotations")
    if frame.schema["present"] != pl.Boolean:
        msg = f"{where}: annotations column 'present' has type {frame.schema['present']}; it must be Boolean"
        raise SchemaError(msg)
    twice = frame.filter(pl.struct(_KEY).is_duplicated()).select(_KEY).unique(maintain_order=True)
    if twice.height:
        msg = f"{where}: a run, mode and annotator annotated twice: {format_keys(twice.to_dicts())}"
        raise DataError(msg)
    if runs is None:
        return frame, None
    if hasattr(runs, "runs") and not isinstance(runs, pl.DataFrame | pl.LazyFrame):
        runs = runs.runs
    if isinstance(runs, pl.LazyFrame):
        runs = runs.collect()
    if not isinstance(runs, pl.DataFrame):
        msg = f"{where}: runs must be a Polars frame of runs (or Scores), not {type(runs).__name__}"
        raise InvalidParameterError(msg)
    check_columns(runs.schema, ["run_id", "system"], f"{where}: runs")
    orphans = frame.join(runs.select("run_id"), on="run_id", how="anti").select("run_id").unique(maintain_order=True)
    if orphans.height:
        msg = (
            f"{where}: annotations of run(s) not in the runs: {format_keys(orphans.to_dicts())}; "
            "pass the runs they annotate"
        )
        raise DataError(msg)
    return frame, runs


def _labels(frame: pl.DataFrame, annotator: str | None, where: str) -> pl.DataFrame:
    """Return the annotations counted: all, or the named annotator's (who must have annotated something)."""
    if annotator is None:
        return frame
    mine = frame.filter(pl.col("annotator") == annotator)
    if not mine.height:
        names = frame["annotator"].unique().sort().head(10).to_list()
        msg = f"{where}: no annotation by {annotator!r}; the annotators are: {', '.join(map(str, names)) or '(none)'}"
        raise DataError(msg)
    return mine


def _verdict(consensus: Consensus, yes: pl.Expr, total: pl.Expr) -> pl.Expr:
    """Whether the consensus of ``total`` annotators, ``yes`` of whom found the mode, says the run has it."""
    if consensus == "any":
        return yes >= 1
    if consensus == "all":
        return yes == total
    return 2 * yes > total


def _consensus(labels: pl.DataFrame, consensus: Consensus, where_columns: list[str]) -> pl.DataFrame:
    """Per (run, mode[, where]): the annotators, those who found the mode, the verdict and whether it tied.

    Without ``where_columns``: one row per annotated (run, mode). With them: one row per (run,
    mode, where) at which some annotator found the mode, beside the (run, mode) rows themselves
    (``where`` null) giving each (run, mode)'s annotator count.
    """
    totals = labels.group_by("run_id", "mode").agg(pl.len().alias(_A), pl.col("present").sum().alias(_Y))
    if not where_columns:
        return totals.with_columns(
            _verdict(consensus, pl.col(_Y), pl.col(_A)).alias("_has"),
            (2 * pl.col(_Y) == pl.col(_A)).alias("_tie"),
        )
    found = (
        labels.filter(pl.col("present"))
        .group_by("run_id", "mode", *where_columns)
        .agg(pl.len().alias(_Y))
        .join(totals.select("run_id", "mode", _A), on=["run_id", "mode"])
    )
    return found.with_columns(
        _verdict(consensus, pl.col(_Y), pl.col(_A)).alias("_has"),
        (2 * pl.col(_Y) == pl.col(_A)).alias("_tie"),
    )


def _categories(frame: pl.DataFrame) -> pl.DataFrame:
    """Each mode's category (the first given, in sorted order; null when none is)."""
    return (
        frame.group_by("mode").agg(pl.col("category").drop_nulls().sort().first())
        if "category" in frame.columns
        else (frame.select("mode").unique().with_columns(pl.lit(None, pl.String).alias("category")))
    )


@validate_params(
    {
        "annotations": [Instance(Dataset, "a Dataset"), FRAME],
        "runs": [RUN_METRICS, NONE],
        "consensus": _CONSENSUS,
        "annotator": _ANNOTATOR,
        "by": [_BY, NONE],
        "confidence": [PROBABILITY],
    }
)
def failure_rates(
    annotations: Any,
    runs: Any = None,
    *,
    consensus: Consensus = "majority",
    annotator: str | None = None,
    by: Where | Sequence[Where] | None = None,
    confidence: float = 0.95,
) -> pl.DataFrame:
    r"""Each system's rate of each failure mode, with Wilson's interval.

    Parameters
    ----------
    annotations : Dataset or polars.DataFrame
        A Dataset with an ``annotations`` table (its ``runs`` give each run's system), or the
        annotations as a frame (``run_id, mode, annotator, present``; ``category``, ``agent_id``,
        ``round`` when present).
    runs : polars.DataFrame, polars.LazyFrame or Scores, optional
        The runs (``run_id, system``) when ``annotations`` is a frame; with a Dataset, other runs
        than its own (a Scores' ``runs``, say).
    consensus : {"majority", "any", "all"}
        How a run's annotators' labels of a mode become one (module notes).
    annotator : str, optional
        Count only this annotator's labels (a named annotator's judgement instead of a consensus).
    by : {"agent_id", "round"} or list of them, optional
        Break each rate down by where in the run the mode was found: the share of annotated runs
        whose annotators (by ``consensus``) found it at that agent or round.
    confidence : float
        Level of the interval, in (0, 1).

    Returns
    -------
    polars.DataFrame
        One row per system and mode (and ``by`` value), sorted by them:

        ============ ===============================================================
        system       the system
        mode         the failure mode
        (``by``)     the agent or round (null: an annotation of the whole run)
        category     the mode's category, when the annotations give one
        n            runs of the system annotated for the mode
        present      those that have it, by ``consensus``
        rate         ``present / n``
        ci_low       Wilson's (1927) score interval of the rate
        ci_high
        ties         runs whose annotators split evenly (``"majority"``: counted as
                     not having it); 0 otherwise
        ============ ===============================================================

    Raises
    ------
    InvalidParameterError
        A bad option.
    SchemaError
        A column is missing; ``present`` is not Boolean; the Dataset has no annotations.
    DataError
        An annotation of a run not in ``runs``; a run, mode and annotator annotated twice; no
        annotation by ``annotator``.

    Examples
    --------
    >>> import polars as pl
    >>> ann = pl.DataFrame({"run_id": ["r1", "r1", "r2", "r2", "r3", "r3"], "mode": ["1.3 Step repetition"] * 6,
    ...                     "annotator": ["a", "b"] * 3, "present": [True, True, True, False, False, False]})
    >>> runs = pl.DataFrame({"run_id": ["r1", "r2", "r3"], "system": ["mas", "mas", "mas"]})
    >>> failure_rates(ann, runs).select("system", "n", "present", "rate", "ties").rows()
    [('mas', 3, 1, 0.3333333333333333, 1)]
    >>> failure_rates(ann, runs, consensus="any")["present"].item()
    2
    """
    frame, run_frame = _frames(annotations, runs, "failure_rates")
    if run_frame is None:
        msg = "failure_rates: give the runs (a frame with run_id and system) beside a frame of annotations"
        raise InvalidParameterError(msg)
    where = [by] if isinstance(by, str) else list(by or [])
    missing = [c for c in where if c not in frame.columns]
    if missing:
        check_columns(frame.schema, missing, "failure_rates: annotations")
    labels = _labels(frame, annotator, "failure_rates")
    systems = run_frame.select("run_id", "system")
    annotated = (
        _consensus(labels, consensus, []).join(systems, on="run_id").group_by("system", "mode").agg(pl.len().alias("n"))
    )
    verdicts = _consensus(labels, consensus, where).join(systems, on="run_id")
    counts = (
        verdicts.group_by("system", "mode", *where)
        .agg(pl.col("_has").sum().alias("present"), (pl.col("_tie") & ~pl.col("_has")).sum().alias("ties"))
        .join(annotated, on=["system", "mode"])
        .join(_categories(frame), on="mode", how="left")
        .sort("system", "mode", *where, nulls_last=True)
    )
    n = counts["n"].to_numpy().astype(float)
    present = counts["present"].to_numpy().astype(float)
    low, high = proportion_interval(present, n, "wilson", confidence)
    out = counts.with_columns(
        pl.Series("rate", present / n),
        pl.Series("ci_low", low),
        pl.Series("ci_high", high),
        pl.col("present").cast(pl.Int64),
        pl.col("ties").cast(pl.Int64),
        pl.col("n").cast(pl.Int64),
    )
    return out.select("system", "mode", *where, *RATE_COLUMNS)


@validate_params(
    {
        "annotations": [Instance(Dataset, "a Dataset"), FRAME],
        "runs": [RUN_METRICS, NONE],
        "treatment": [SYSTEM_NAME],
        "control": [SYSTEM_NAME],
        "consensus": _CONSENSUS,
        "annotator": _ANNOTATOR,
        "correction": [Options.of(Correction), NONE],
        "confidence": [PROBABILITY],
    }
)
def failure_differences(
    annotations: Any,
    runs: Any = None,
    *,
    treatment: str = "mas",
    control: str = "single",
    consensus: Consensus = "majority",
    annotator: str | None = None,
    correction: Correction | None = "holm",
    confidence: float = 0.95,
) -> pl.DataFrame:
    r"""Per failure mode, the treatment − control difference of rates on the cases both ran, tested and corrected.

    Parameters
    ----------
    annotations, runs, consensus, annotator
        As :func:`failure_rates`; the runs need ``case_id`` (and ``epoch``, if some run has one).
    treatment, control : str
        The two systems compared (values of ``runs.system``).
    correction : {"holm", "fdr_bh", "bonferroni", "none", "bh", "benjamini-hochberg"} or None
        The multiple-comparison correction across the modes (``"holm"``: family-wise error;
        ``"fdr_bh"``: false discovery rate).
    confidence : float
        Level of Newcombe's interval, in (0, 1).

    Returns
    -------
    polars.DataFrame
        One row per mode annotated in either system, sorted by mode:

        ================ ============================================================
        mode, category   the failure mode and its category
        treatment        the treatment system, as given
        control          the control system
        n                cases (case and epoch) both systems ran and annotators
                         annotated for the mode
        both             of those, cases where both runs have the mode (a)
        treatment_only   only the treatment's run (b)
        control_only     only the control's run (c)
        neither          neither (d)
        rate_treatment   :math:`(a + b)/n`
        rate_control     :math:`(a + c)/n`
        difference       :math:`(b - c)/n`: positive when the treatment's runs have the
                         mode more often
        ci_low, ci_high  Newcombe's (1998) method 10 interval; null when n = 0
        p_value          McNemar's exact two-sided p; null when n = 0
        p_adjusted       ``p_value`` adjusted across the modes' rows
        correction       the correction applied
        ================ ============================================================

    Raises
    ------
    InvalidParameterError
        A bad option, or ``treatment`` equal to ``control``.
    SchemaError
        A column is missing (``case_id`` of the runs, say).
    DataError
        A system has two annotated runs of one case (and epoch); an annotation of a run not in
        ``runs``; no run of ``treatment`` or ``control``.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"run_id": [f"{s}{i}" for s in ("m", "s") for i in range(4)],
    ...                      "system": ["mas"] * 4 + ["single"] * 4, "case_id": [f"q{i}" for i in range(4)] * 2})
    >>> ann = pl.DataFrame({"run_id": runs["run_id"], "mode": "2.3 Task derailment", "annotator": "judge",
    ...                     "present": [True, True, True, False, False, True, False, False]})
    >>> row = failure_differences(ann, runs).row(0, named=True)
    >>> row["n"], row["treatment_only"], row["control_only"], row["difference"], row["p_value"]
    (4, 2, 0, 0.5, 0.5)
    """
    if treatment == control:
        msg = f"failure_differences: treatment and control are both {treatment!r}; compare two systems"
        raise InvalidParameterError(msg)
    method = canonical_correction(correction)
    frame, run_frame = _frames(annotations, runs, "failure_differences")
    if run_frame is None:
        msg = "failure_differences: give the runs (run_id, system, case_id) beside a frame of annotations"
        raise InvalidParameterError(msg)
    check_columns(run_frame.schema, ["case_id"], "failure_differences: runs")
    pair_on = ["case_id"] + (
        ["epoch"] if "epoch" in run_frame.columns and run_frame["epoch"].is_not_null().any() else []
    )
    systems = set(run_frame["system"].unique().to_list())
    absent = [s for s in (treatment, control) if s not in systems]
    if absent:
        msg = (
            f"failure_differences: no run of system {', '.join(map(repr, absent))}; the runs' systems are: "
            f"{', '.join(sorted(map(str, systems)))}"
        )
        raise DataError(msg)
    labels = _labels(frame, annotator, "failure_differences")
    chosen = run_frame.filter(pl.col("system").is_in([treatment, control])).select("run_id", "system", *pair_on)
    verdicts = _consensus(labels, consensus, []).join(chosen, on="run_id")
    twice = verdicts.filter(pl.struct("mode", "system", *pair_on).is_duplicated())
    if twice.height:
        shown = format_keys(twice.select("system", *pair_on, "mode").unique(maintain_order=True).to_dicts())
        msg = (
            f"failure_differences: a system has several annotated runs of one {' and '.join(pair_on)} "
            f"({shown}); a paired comparison needs one run per system and case"
        )
        raise DataError(msg)
    side = pl.col("system") == treatment
    paired = (
        verdicts.group_by("mode", *pair_on)
        .agg(
            (side & pl.col("_has")).any().alias("_t"),
            (~side & pl.col("_has")).any().alias("_c"),
            pl.col("system").n_unique().alias("_systems"),
        )
        .filter(pl.col("_systems") == 2)
    )
    table = (
        verdicts.select("mode")
        .unique()
        .join(
            paired.group_by("mode").agg(
                (pl.col("_t") & pl.col("_c")).sum().alias("both"),
                (pl.col("_t") & ~pl.col("_c")).sum().alias("treatment_only"),
                (~pl.col("_t") & pl.col("_c")).sum().alias("control_only"),
                (~pl.col("_t") & ~pl.col("_c")).sum().alias("neither"),
            ),
            on="mode",
            how="left",
        )
        .with_columns(pl.col("both", "treatment_only", "control_only", "neither").fill_null(0).cast(pl.Int64))
        .join(_categories(frame), on="mode", how="left")
        .sort("mode")
    )
    cells = [table[c].to_numpy() for c in ("both", "treatment_only", "control_only", "neither")]
    stats = paired_difference(*cells, confidence=confidence)
    p = stats["p_value"].to_numpy().astype(float)
    empty = stats["n"].to_numpy() == 0
    p = np.where(empty, np.nan, p)
    adjusted = adjust_pvalues(p, method)
    out = pl.concat([table, stats.drop("p_value")], how="horizontal").with_columns(
        pl.lit(treatment).alias("treatment"),
        pl.lit(control).alias("control"),
        pl.Series("p_value", p, nan_to_null=True),
        pl.Series("p_adjusted", adjusted, nan_to_null=True),
        pl.lit(method).alias("correction"),
    )
    return out.select(DIFFERENCE_COLUMNS)


@validate_params({"annotations": [Instance(Dataset, "a Dataset"), FRAME], "pooled": [Boolean()]})
def annotator_agreement(annotations: Any, *, pooled: bool = True) -> pl.DataFrame:
    r"""How far the annotators agree on each failure mode: Cohen's and Fleiss' kappa, Krippendorff's alpha.

    Parameters
    ----------
    annotations : Dataset or polars.DataFrame
        A Dataset with an ``annotations`` table, or that table as a frame (``run_id, mode,
        annotator, present``). Runs are the units, annotators the raters, present/absent the
        two categories.
    pooled : bool
        Add a last row (``mode`` null) over every (run, mode) as a unit: one figure for the
        whole taxonomy, as MAST reports its kappa.

    Returns
    -------
    polars.DataFrame
        One row per mode, sorted, then the pooled row:

        ================== =============================================================
        mode, category     the failure mode and its category (null in the pooled row)
        n_runs             runs at least two annotators labelled for the mode (in the
                           pooled row: such (run, mode) pairs)
        n_annotators       annotators who labelled the mode
        agreement          the share of agreeing pairs of labels within a run
                           (:math:`1 - D_o`, over the runs of ``n_runs``)
        cohen_kappa        Cohen's kappa over the runs both labelled, when exactly two
                           annotators labelled the mode; null otherwise
        fleiss_kappa       Fleiss' kappa over the runs labelled by as many annotators as
                           the most-labelled run
        krippendorff_alpha Krippendorff's alpha (nominal), every pairable run
        ================== =============================================================

        A kappa or alpha is null when every label of the mode is the same (no disagreement to
        expect by chance: a mode no one ever found); ``agreement`` is then 1.

    Raises
    ------
    SchemaError
        A column is missing, or ``present`` is not Boolean.
    DataError
        A run, mode and annotator annotated twice.

    Notes
    -----
    The formulas are in :mod:`mas_eval.stats.agreement`; they run for every mode at once, from
    group sums.

    Examples
    --------
    >>> import polars as pl
    >>> ann = pl.DataFrame({"run_id": [f"r{i}" for i in range(6)] * 2, "mode": "1.5 Unaware of termination conditions",
    ...                     "annotator": ["a"] * 6 + ["b"] * 6,
    ...                     "present": [True, True, False, False, False, True, True, False, False, False, False, True]})
    >>> row = annotator_agreement(ann, pooled=False).row(0, named=True)
    >>> row["n_runs"], round(row["agreement"], 4), round(row["cohen_kappa"], 4)
    (6, 0.8333, 0.6667)
    """
    frame, _ = _frames(annotations, None, "annotator_agreement")
    rows = frame.select(*_KEY, "present")
    keyed = {"unit": "run_id", "rater": "annotator", "value": "present"}
    per_mode = _agreement(rows, keyed, "mode").join(_categories(frame), on="mode", how="left").sort("mode")
    if pooled:
        # Every (run, mode) a unit, in one group: the agreement over the whole taxonomy.
        units = {**keyed, "unit": ["run_id", "mode"]}
        whole = _agreement(rows.with_columns(pl.lit(0).alias(_ALL)), units, _ALL).with_columns(
            pl.lit(None, pl.String).alias("mode"), pl.lit(None, pl.String).alias("category")
        )
        per_mode = pl.concat([per_mode, whole.select(per_mode.columns)])
    return per_mode.select(AGREEMENT_COLUMNS)


#: The group column of the pooled row of :func:`annotator_agreement`.
_ALL = "_all_modes"


def _agreement(rows: pl.DataFrame, keyed: dict[str, Any], by: str) -> pl.DataFrame:
    """Return the three coefficients (and the raw agreement) per group of ``by``."""
    alpha = krippendorff_alpha(rows, **keyed, by=by)
    fleiss = fleiss_kappa(rows, **keyed, by=by)
    counted = rows.group_by(by).agg(pl.col("annotator").n_unique().cast(pl.Int64).alias("n_annotators"))
    two = rows.join(counted.filter(pl.col("n_annotators") == 2), on=by, how="semi")
    if two.height:
        cohen = cohen_kappa(two, **keyed, by=by).select(by, pl.col("kappa").alias("cohen_kappa"))
    else:
        cohen = pl.DataFrame(schema={by: rows.schema[by], "cohen_kappa": pl.Float64()})
    out = alpha.select(
        by,
        pl.col("n_units").alias("n_runs"),
        (1 - pl.col("observed_disagreement")).alias("agreement"),
        pl.col("alpha").alias("krippendorff_alpha"),
    )
    for part in (counted, fleiss.select(by, pl.col("kappa").alias("fleiss_kappa")), cohen):
        out = out.join(part, on=by, how="left", nulls_equal=True)
    return out
