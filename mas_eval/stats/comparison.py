r"""``compare``: grouped treatment-vs-control comparisons, one tidy row per (group, metric).

The group statistics of all metrics come from one Polars pass per design
(:mod:`~mas_eval.stats.summaries`); the design's tests, CIs, effect sizes and power are computed
with numpy/SciPy on those small arrays, every row at once (:mod:`~mas_eval.stats.designs`): the
base rows. Each optional step then reads the base rows and its inputs and returns what it
changes, a :class:`~mas_eval.stats._rows.Patch`, which ``compare`` applies in a fixed order:
cluster-robust SEs (:mod:`~mas_eval.stats.cluster`), the rank test (:mod:`~mas_eval.stats.ranks`),
the bootstrap CI (:mod:`~mas_eval.stats.bootstrap`), the mixed model (:mod:`~mas_eval.stats.mixed`)
and the ``dqs_method`` notes. Only the rank tests, the bootstrap and the mixed model read raw
values, once per (group, metric) row. Which options combine is the table
:data:`~mas_eval.stats.options.COMPARE_RULES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, Boolean, Instance, Interval, Options, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError, MixedDqsMethodsError
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    GROUP,
    PROBABILITY,
    SYSTEM_NAME,
    as_lazy,
    check_columns,
    check_no_nulls,
    column_list,
    numeric_value,
    raise_on_nulls,
)
from mas_eval.stats._rows import Patch, Rows, warnings_on
from mas_eval.stats.bootstrap import bootstrap_step
from mas_eval.stats.cluster import (
    cluster_step,
    independent_cluster_sums,
    independent_cluster_sums_from,
    paired_cluster_sums,
)
from mas_eval.stats.designs import independent_rows, paired_rows, pooled_sd
from mas_eval.stats.equivalence import MARGIN, hypothesis_step, verdicts
from mas_eval.stats.guard import DQS_METRICS, dqs_method_guard
from mas_eval.stats.mixed import mixed_step
from mas_eval.stats.options import (
    MARGIN_TESTS,
    PAIRED_TESTS,
    RANK_TESTS,
    BootCI,
    Correction,
    Hypothesis,
    Method,
    Test,
    canonical_correction,
    check_combinations,
)
from mas_eval.stats.proportions import mcnemar_step, paired_table_counts
from mas_eval.stats.ranks import rank_test_step
from mas_eval.stats.sufficient import (
    SufficientStatistics,
    check_request,
    no_runs_error,
    null_key_counts,
    stat_column,
)
from mas_eval.stats.summaries import (
    Sample,
    Summary,
    align,
    case_table,
    column,
    flat,
    independent_samples,
    independent_summary,
    independent_summary_from,
    metric,
    paired_samples,
    paired_summary,
    paired_summary_from,
    realign,
    to_arrays,
)

__all__ = ["COMPARE_CONSTRAINTS", "MAX_BOOT", "MixedDqsMethodsError", "compare"]

#: Internal name of the cluster column (``cluster`` may be the ``pair_on`` column itself).
CLUSTER = "_cluster"
#: The case column of a run (``runs.case_id`` of the Dataset schema): ``test="auto"`` clusters a pass/fail
#: metric's repeated runs of a case by it when no ``pair_on`` or ``cluster`` is given.
CASE = "case_id"
#: Internal name of the copy of a guarded DQS column ``c``: ``f"{GUARDED}{c}"``.
GUARDED = "_guarded_"

#: Most bootstrap resamples: the memory and time of a bootstrap grow with them (8 bytes a resample for
#: each of a few arrays, and one draw per resample and run), while a 95% interval's Monte Carlo
#: error is already a small fraction of its width at a hundredth of this.
MAX_BOOT = 1_000_000

_MORE_BOOT = "more resamples would only cost memory and time; 10,000 give a stable interval"
_SEED_SEQUENCE = Predicate(lambda value: isinstance(value, np.random.SeedSequence), "a numpy SeedSequence")
_MARGINS = Predicate(
    lambda value: (
        isinstance(value, Mapping)
        and len(value) > 0
        and all(isinstance(k, str) and MARGIN.is_satisfied_by(v) for k, v in value.items())
    ),
    "a mapping of metric names to positive numbers",
)

#: What each option of :func:`compare` accepts on its own (:data:`~mas_eval.stats.options.COMPARE_RULES`
#: says which go together).
COMPARE_CONSTRAINTS = {
    "metrics": [COLUMN_NAMES],
    "treatment": [SYSTEM_NAME],
    "control": [SYSTEM_NAME],
    "by": [COLUMN_NAMES, NONE],
    "pair_on": [COLUMN_NAME, NONE],
    "cluster": [COLUMN_NAME, NONE],
    "test": [Options.of(Test)],
    "correction": [Options.of(Correction), NONE],
    "alpha": [PROBABILITY],
    "confidence": [PROBABILITY],
    "n_boot": [Interval(int, 0, MAX_BOOT, beyond=_MORE_BOOT)],
    "seed": [Interval(int, 0), _SEED_SEQUENCE, NONE],
    "method": [Options.of(Method)],
    "allow_mixed_methods": [Boolean()],
    "system": [COLUMN_NAME],
    "boot_ci": [Options.of(BootCI)],
    "margin": [MARGIN, _MARGINS, NONE],
    "hypothesis": [Options.of(Hypothesis), NONE],
}


@dataclass(frozen=True)
class _Request:
    """Validated options of one ``compare`` call."""

    metrics: list[str]
    by: list[str]
    keys: list[str]
    names: tuple[str, str]
    system: str
    test: str
    pair_on: str | None
    cluster: str | None
    correction: str
    alpha: float
    confidence: float
    n_boot: int
    seed: Any
    method: str
    boot_ci: BootCI
    allow_mixed_methods: bool
    #: ``test="auto"`` was asked for (``test`` holds what it resolved to).
    auto: bool = False
    #: ``"noninferior"`` or ``"equivalent"``, or None for the two-sided test of no difference.
    hypothesis: str | None = None
    #: The margin of each metric, in request order (empty without a hypothesis).
    margins: tuple[float, ...] = ()

    @property
    def paired(self) -> bool:
        return self.test in PAIRED_TESTS


def _resolve_test(test: str, pair_on: str | None) -> str:
    """``test`` with ``"auto"`` resolved: paired when there are cases to pair on."""
    if test == "auto":
        return "paired" if pair_on is not None else "welch"
    return test


def _check_systems(runs: pl.LazyFrame, frame: pl.LazyFrame, system: str, names: tuple[str, str]) -> None:
    counts = runs.select(
        (pl.col(system) == name).sum().alias(side) for side, name in zip(("treatment", "control"), names, strict=True)
    )
    counts = counts.collect(engine=ENGINE).row(0)
    missing = [name for name, n in zip(names, counts, strict=True) if not n]
    if missing:
        present = frame.select(pl.col(system).unique().sort()).head(20).collect(engine=ENGINE).to_series().to_list()
        msg = (
            f"no runs of system {', '.join(map(repr, missing))} in column {system!r}; "
            f"the systems present are: {', '.join(map(repr, present)) or '(none: the frame is empty)'}"
        )
        raise DataError(msg)


def _prepare(
    frame: pl.LazyFrame, request: _Request, auto_cluster: str | None = None
) -> tuple[pl.LazyFrame, list[str], pl.DataFrame | None]:
    """Return the compared runs (keys, system, case/cluster, metrics ``_metric_{i}``, DQS copies), the guarded DQS.

    ``auto_cluster``: a column copied as the cluster when ``request`` names none (``CASE``).
    """
    schema = frame.collect_schema()
    extra = list(dict.fromkeys(c for c in (request.pair_on, request.cluster) if c is not None))
    check_columns(schema, [request.system], "system")
    check_columns(schema, request.by, "by")
    check_columns(schema, extra, "pair_on/cluster")
    check_columns(schema, request.metrics, "metrics")
    structural = {request.system, *request.by, *extra}
    clash = [name for name in request.metrics if name in structural]
    if clash or request.system in request.by:
        msg = (
            f"compare: {', '.join(map(repr, clash or [request.system]))} cannot be both a metric/system and a "
            f"grouping column"
        )
        raise InvalidParameterError(msg)
    if request.pair_on is not None and request.pair_on in request.by:
        msg = f"compare: pair_on={request.pair_on!r} is also a by column: every group would hold a single case"
        raise InvalidParameterError(msg)
    checked = [numeric_value(schema, name, "metric") for name in request.metrics]
    compared = frame.filter(pl.col(request.system).is_in(list(request.names)))
    runs = compared if request.by else compared.with_columns(pl.lit(0, dtype=pl.Int8).alias(GROUP))
    # NaN and ±inf are left out like nulls (inference on infinite values means nothing), and
    # the rows say how many; metrics without any are read as they are, which costs nothing.
    counts = _non_finite_counts(runs, schema, request)
    dirty = _non_finite_metrics(counts)
    values = [
        (_finite_or_null(expr) if i in dirty else pl.col(name).cast(pl.Float64)).alias(metric(i))
        for i, (name, expr) in enumerate(zip(request.metrics, checked, strict=True))
    ]
    guarded = [c for c in DQS_METRICS if c in request.metrics and "dqs_method" in schema]

    kept = [*request.keys, request.system, *([request.pair_on] if request.pair_on else [])]
    kept += ["dqs_method"] if guarded else []
    cluster = request.cluster if request.cluster is not None else auto_cluster
    clusters = [pl.col(cluster).alias(CLUSTER)] if cluster is not None else []
    copies = [pl.col(c).alias(f"{GUARDED}{c}") for c in guarded]
    runs = runs.select(*dict.fromkeys(kept), *clusters, *values, *copies)

    _check_systems(runs, frame, request.system, request.names)
    check_no_nulls(compared, extra, "pair_on/cluster")
    return runs, guarded, counts


def _finite_or_null(value: pl.Expr) -> pl.Expr:
    return pl.when(value.is_finite()).then(value)


def _non_finite_counts(runs: pl.LazyFrame, schema: pl.Schema, request: _Request) -> pl.DataFrame | None:
    """Count the NaN and infinite values of each float metric per group of the compared ``runs``.

    The columns are ``nan_i`` and ``inf_i`` for each float metric ``i`` that holds any NaN or
    infinite value; None when none does.
    """
    floats = [(i, name) for i, name in enumerate(request.metrics) if schema[name].is_float()]
    if floats:
        # Usually there are none: one cheap pass without a group-by says so (docs/performance.md).
        any_non_finite = runs.select((~pl.col(name).is_finite()).any() for _, name in floats)
        found = any_non_finite.collect(engine=ENGINE).row(0)
        floats = [pair for pair, has_any in zip(floats, found, strict=True) if has_any]
    if not floats:
        return None
    return (
        runs.group_by(request.keys)
        .agg(
            agg
            for i, name in floats
            for agg in (
                pl.col(name).is_nan().sum().alias(f"nan_{i}"),
                pl.col(name).is_infinite().sum().alias(f"inf_{i}"),
            )
        )
        .collect(engine=ENGINE)
    )


def _non_finite_metrics(counts: pl.DataFrame | None) -> list[int]:
    """Return the metrics :func:`_non_finite_counts` found NaN or infinite values in."""
    return (
        [] if counts is None else [int(name.removeprefix("nan_")) for name in counts.columns if name.startswith("nan_")]
    )


def _non_finite_notes(counts: pl.DataFrame | None, summary: Summary, request: _Request) -> Patch:
    """Warn on every (group, metric) row whose compared runs held NaN or infinite values, with the counts."""
    m, dirty = len(request.metrics), _non_finite_metrics(counts)
    if counts is None or not dirty:
        return Patch()
    aligned = align(summary.groups, counts, request.keys)
    warnings: dict[int, list[str]] = {}
    # A loop over (group, metric) rows to word their warnings, not over runs.
    for g, row in enumerate(aligned.iter_rows(named=True)):
        for i in dirty:
            nan, inf = row[f"nan_{i}"] or 0, row[f"inf_{i}"] or 0
            if nan or inf:
                parts = [f"{nan:,} NaN" if nan else "", f"{inf:,} infinite" if inf else ""]
                warnings[g * m + i] = [f"{' and '.join(p for p in parts if p)} value(s) left out, like nulls"]
    return Patch(warnings=warnings)


def _base_rows(runs: pl.LazyFrame, request: _Request) -> tuple[Summary, Rows]:
    """Return the design's summary and its base rows (Welch/Student or paired t)."""
    m = len(request.metrics)
    if request.paired and request.pair_on is not None:
        cluster = (CLUSTER, request.cluster) if request.cluster is not None else None
        summary = paired_summary(runs, request.keys, request.system, request.names, request.pair_on, m, cluster)
    else:
        summary = independent_summary(runs, request.keys, request.system, *request.names, m)
    return summary, _design_rows(summary, request)


def _design_rows(summary: Summary, request: _Request) -> Rows:
    """Return the base rows of the design from its group summary."""
    common = {"alpha": request.alpha, "confidence": request.confidence, "names": request.names}
    if request.paired:
        return paired_rows(stats=flat(summary.arrays), **common)
    stats = flat(summary.arrays)
    test = "student" if request.test == "student" else "welch"
    rows = independent_rows(
        n_t=stats["n_t"], mean_t=stats["mean_t"], var_t=stats["var_t"],
        n_c=stats["n_c"], mean_c=stats["mean_c"], var_c=stats["var_c"],
        test=test, **common,
    )  # fmt: skip
    return rows


def _cluster(runs: pl.LazyFrame, summary: Summary, base: Rows, request: _Request) -> Patch:
    m = len(request.metrics)
    if request.paired and summary.cases is not None:
        sums = paired_cluster_sums(summary.cases, summary.groups, request.keys, CLUSTER, m)
    else:
        sums = independent_cluster_sums(
            runs, summary.groups, request.keys, request.system, request.names[0], CLUSTER, m
        )
    return _cluster_patch(sums, summary, base, request)


def _cluster_patch(sums: dict[str, np.ndarray], summary: Summary, base: Rows, request: _Request) -> Patch:
    """Return the cluster-robust step from the per-group cluster sums (``cluster_ss``, ``n_clusters``)."""
    stats = flat(summary.arrays)
    if request.paired:
        sd = np.sqrt(stats["var_d"])
    else:
        sd = pooled_sd(stats["n_t"], stats["var_t"], stats["n_c"], stats["var_c"])
    return cluster_step(
        base, flat(sums), paired=request.paired, sd=sd, confidence=request.confidence, alpha=request.alpha
    )


def _samples(runs: pl.LazyFrame, summary: Summary, request: _Request) -> list[Sample]:
    m = len(request.metrics)
    if request.paired and summary.cases is not None and request.pair_on is not None:
        return paired_samples(summary.cases, summary.groups, request.keys, request.pair_on, m)
    return independent_samples(runs, summary.groups, request.keys, request.system, request.names, m)


def _mixed(runs: pl.LazyFrame, summary: Summary, request: _Request, case: str) -> Patch:
    run_level = summary
    if request.paired:
        run_level = independent_summary(runs, request.keys, request.system, *request.names, len(request.metrics))
    return mixed_step(
        runs, realign(run_level, summary.groups, request.keys), keys=request.keys, system=request.system,
        names=request.names, case=case, fallback=request.test, alpha=request.alpha, confidence=request.confidence,
    )  # fmt: skip


def _step_patches(
    counts: pl.DataFrame | None,
    runs: pl.LazyFrame,
    summary: Summary,
    base: Rows,
    request: _Request,
    notes: dict[tuple[Any, ...], str],
    guarded: list[str],
) -> list[Patch]:
    """Return what each optional step asked for contributes to the base rows, in the order it applies.

    Every step reads the base rows and its own inputs; the one thing passed on from step to step
    is which rows are still valid, as a row an earlier step found degenerate (a rank test SciPy
    refused) is left out of the later ones (it draws nothing from the bootstrap's generator).
    A later patch overrides an earlier one where both set a column.
    """
    patches: list[Patch] = []
    valid = base.ok

    def add(patch: Patch) -> None:
        nonlocal valid
        patches.append(patch)
        if patch.invalid is not None:
            valid = valid & ~patch.invalid

    if request.cluster is not None:
        add(_cluster(runs, summary, base, request))
    if request.test in RANK_TESTS or request.n_boot:
        samples = _samples(runs, summary, request)
        if request.test in RANK_TESTS:
            add(rank_test_step(samples, request.test, valid=valid))
        if request.n_boot:
            boot = bootstrap_step(
                samples,
                valid=valid,
                n_boot=request.n_boot,
                seed=request.seed,
                confidence=request.confidence,
                method=request.boot_ci,
            )
            add(boot)
    if request.method == "mixed" and request.pair_on is not None:
        add(_mixed(runs, summary, request, request.pair_on))
    add(_mixed_methods_notes(summary, notes, request, guarded))
    # Last, so that no step that replaces its rows' warnings (the mixed model) drops these.
    add(_non_finite_notes(counts, summary, request))
    return patches


def _auto_cluster_column(schema: pl.Schema, request: _Request) -> str | None:
    """``CASE`` when ``test="auto"`` may cluster a pass/fail metric's repeated runs by it, else None."""
    structural = {request.system, *request.by, *request.metrics}
    chosen = request.pair_on is not None or request.cluster is not None or request.n_boot or request.method != "default"
    return CASE if request.auto and not chosen and CASE in schema and CASE not in structural else None


def _mcnemar_wanted(request: _Request) -> bool:
    """Whether McNemar's test replaces the paired t on pass/fail metrics with one run per case and system."""
    if request.test == "mcnemar":
        return True
    plain = request.cluster is None and not request.n_boot and request.method == "default"
    return request.auto and request.pair_on is not None and plain


def _pass_fail(runs: pl.LazyFrame, request: _Request) -> np.ndarray:
    """Per metric: whether it is pass/fail, every compared value 0 or 1 (a Boolean's are), and there is one."""
    m = len(request.metrics)
    flags = runs.select(
        (((pl.col(metric(i)) == 0) | (pl.col(metric(i)) == 1)).all() & pl.col(metric(i)).is_not_null().any()).alias(
            str(i)
        )
        for i in range(m)
    )
    found = np.array(flags.collect(engine=ENGINE).row(0), dtype=bool)
    if request.test == "mcnemar" and not found.all():
        names = ", ".join(repr(name) for name, ok in zip(request.metrics, found, strict=True) if not ok)
        msg = (
            f"compare: test='mcnemar' compares pass/fail outcomes, but {names} hold(s) values other than 0 and 1 "
            f"(or none); use test='paired' for those, or a Boolean / 0-1 column"
        )
        raise InvalidParameterError(msg)
    return found


def _auto_cluster(runs: pl.LazyFrame, summary: Summary, base: Rows, request: _Request, pass_fail: np.ndarray) -> Patch:
    """Return the cluster-robust step, by ``CASE``, on the rows of pass/fail metrics whose runs repeat a case."""
    m, keys = len(request.metrics), request.keys
    rows = np.tile(pass_fail, summary.groups.height)
    if not rows.any():
        return Patch()
    if runs.select(pl.col(CLUSTER).null_count()).collect(engine=ENGINE).item():
        return Patch(warnings=warnings_on(rows, f"{CASE!r} has nulls: repeated runs of a case are not clustered"))
    per_case = runs.group_by([*keys, request.system, CLUSTER]).agg(
        pl.col(metric(i)).count().alias(column("runs", i)) for i in range(m)
    )
    repeats = per_case.group_by(keys).agg(
        (pl.col(column("runs", i)) > 1).any().alias(column("repeated", i)) for i in range(m)
    )
    arrays = to_arrays(align(summary.groups, repeats.collect(engine=ENGINE), keys), ("repeated",), m)
    mask = rows & (np.nan_to_num(flat(arrays)["repeated"], nan=0.0) > 0)
    if not mask.any():
        return Patch()
    patch = _cluster(runs, summary, base, replace(request, cluster=CASE))
    note = (
        f"pass/fail metric with repeated runs of a case (epochs): clustered by {CASE!r} (cluster-robust SE); "
        f"pass cluster= or pair_on= to choose"
    )
    notes = {int(r): [note, *patch.warnings.get(int(r), [])] for r in np.flatnonzero(mask)}
    invalid = None if patch.invalid is None else patch.invalid & mask
    return Patch(columns=patch.columns, where=mask, warnings=notes, invalid=invalid)


@dataclass(frozen=True)
class _PassFail:
    """What a test against a margin needs to know of the pass/fail rows: which they are, and their tables."""

    #: Independent rows whose metric is pass/fail (Farrington and Manning's test where Welch's stays).
    independent: np.ndarray | None = None
    #: The paired 2x2 table of every row (Tango's test where McNemar's is).
    paired_counts: dict[str, np.ndarray] | None = None


def _pass_fail_patches(
    runs: pl.LazyFrame, summary: Summary, base: Rows, request: _Request, auto_cluster: str | None
) -> tuple[list[Patch], _PassFail]:
    """Return McNemar's test (paired) or clusters by case (independent) on the rows of pass/fail metrics.

    Also what a test against a margin needs of those rows.
    """
    wanted = _mcnemar_wanted(request) and request.paired and summary.cases is not None
    plain = request.cluster is None and not request.n_boot and request.method == "default"
    # An independent pass/fail metric tested against a margin is a difference of two proportions.
    scored = request.hypothesis in MARGIN_TESTS and request.auto and not request.paired and plain
    if not (wanted or auto_cluster is not None or scored):
        return [], _PassFail()
    pass_fail = _pass_fail(runs, request)
    if not pass_fail.any():
        return [], _PassFail()
    rows = np.tile(pass_fail, summary.groups.height)
    if not wanted:
        patches = [] if auto_cluster is None else [_auto_cluster(runs, summary, base, request, pass_fail)]
        return patches, _PassFail(independent=rows)
    assert summary.cases is not None
    counts = paired_table_counts(summary.cases, summary.groups, request.keys, len(request.metrics))
    explicit = request.test == "mcnemar"
    return [mcnemar_step(base, counts, rows, explicit=explicit, confidence=request.confidence)], _PassFail(
        paired_counts=counts
    )


def _mixed_methods_notes(
    summary: Summary, notes: dict[tuple[Any, ...], str], request: _Request, guarded: list[str]
) -> Patch:
    m = len(request.metrics)
    warnings: dict[int, list[str]] = {}
    # A loop over (group, metric) rows to attach warnings, not over runs.
    for g, key in enumerate(summary.groups.iter_rows()):
        if key not in notes:
            continue
        for i, name in enumerate(request.metrics):
            if name in guarded:
                warnings[g * m + i] = [f"dqs_method differs ({notes[key]}); compared anyway (allow_mixed_methods)"]
    return Patch(warnings=warnings)


@validate_params(
    {**COMPARE_CONSTRAINTS, "run_metrics": [RUN_METRICS, Instance(SufficientStatistics, "SufficientStatistics")]}
)
def compare(
    run_metrics: Any,
    metrics: str | Iterable[str],
    treatment: str = "mas",
    control: str = "single",
    by: str | Sequence[str] | None = None,
    pair_on: str | None = None,
    cluster: str | None = None,
    test: Test = "auto",
    correction: Correction | None = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_boot: int = 0,
    seed: int | np.random.SeedSequence | None = None,
    method: Method = "default",
    allow_mixed_methods: bool = False,
    system: str = "system",
    *,
    boot_ci: BootCI = "bca",
    margin: float | Mapping[str, float] | None = None,
    hypothesis: Hypothesis | None = None,
) -> pl.DataFrame:
    r"""Compare a treatment system with a control system on many metrics, per group.

    One row per (group, metric): descriptives, the test, the CI of the difference, Cohen's d /
    Hedges' g with a CI, power, and p-values adjusted across the whole table.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame, Scores or SufficientStatistics
        One row per run (``Scores.runs``; for a ``Scores`` its ``.runs`` is used), with the
        ``system`` column, the metrics, and any ``by`` / ``pair_on`` / ``cluster`` columns. Or
        per-shard sums merged with :func:`~mas_eval.stats.sufficient.merge_statistics`, for data
        too large for memory: the same table (to rounding, 1e-10) for Welch, Student, paired and
        cluster-robust tests, with the same options as the in-memory call (``by`` may be a subset
        of the ``by`` the sums were built with; ``pair_on`` / ``cluster`` may be left out). Rank
        tests, ``n_boot`` and ``method="mixed"`` need raw values and raise InvalidParameterError.
    metrics : str or list of str
        Numeric (or boolean, read as 0/1) metric columns; ``"dqs,decision_confidence"`` works.
        NaN counts as missing; missing values are left out per metric.
    treatment, control : str
        The two values of ``system`` to compare; ``difference = treatment - control``.
    by : str or list of str, optional
        Grouping columns: one comparison per group (e.g. ``"task"``); ``"task,variant"`` works.
    pair_on : str, optional
        The case column both systems ran (e.g. ``"case_id"``). Paired tests average each
        system's runs per case first, then test the per-case differences; cases that only
        one system ran are left out (counted in ``warning``). Required by ``"paired"``,
        ``"wilcoxon"`` and ``method="mixed"``; with it the default ``test="auto"`` is
        ``"paired"``. With an independent test (``"welch"``, ``"student"``, ``"mannwhitney"``)
        it is an error unless ``method="mixed"``.
    cluster : str, optional
        Column whose values are clusters of correlated runs (e.g. ``"case_id"`` when runs
        repeat, or a scenario family). The difference gets a cluster-robust (CR1) standard
        error, with ``n_clusters - 1`` degrees of freedom (Miller 2024, "Adding Error Bars to
        Evals"). In a paired design every case must lie in one cluster.
    test : {"auto", "welch", "student", "paired", "mannwhitney", "wilcoxon", "mcnemar"}
        ``"auto"`` (default, as on the command line): ``"paired"`` when ``pair_on`` is given,
        else ``"welch"`` (the crisis-MAS evaluation methodology's formula); ``"student"`` (pooled
        variance; preset ``crisis-mas-poc``), ``"paired"`` (t on per-case differences),
        ``"mannwhitney"``, ``"wilcoxon"`` (signed ranks of the per-case differences),
        ``"mcnemar"`` (pass/fail metrics only, with ``pair_on``: McNemar's exact test and
        Newcombe's interval, :mod:`~mas_eval.stats.proportions`).

        A metric is *pass/fail* when it is Boolean or holds only 0 and 1 among the compared runs.
        For such a metric ``"auto"`` (with no ``cluster``, ``n_boot`` or ``method="mixed"``) chooses:
        with ``pair_on``, ``"mcnemar"`` where every paired case has one run per system, and the
        paired t on case means where cases repeat (epochs; ``warning`` says so); without
        ``pair_on``, when a system ran a case (the ``case_id`` column) more than once, Welch's
        difference with a cluster-robust SE by ``case_id`` (``test`` ``"ols_cluster"``; ``warning``
        says so). Other metrics are compared exactly as before. Sufficient statistics never switch
        (they cannot tell a pass/fail metric) and refuse ``"mcnemar"``.
    correction : {"holm", "fdr_bh", "bonferroni", "none", "bh", "benjamini-hochberg"} or None
        Multiple-comparison correction over every row of the result (the family); ``"bh"`` and
        ``"benjamini-hochberg"`` are ``"fdr_bh"``, None is ``"none"``.
    alpha : float
        Significance level of ``significant`` and of ``power``, in (0, 1).
    confidence : float
        Level of the CIs (difference and d), in (0, 1).
    n_boot : int
        When > 0, the CI of the difference is a bootstrap CI from ``n_boot`` resamples, at most
        :data:`MAX_BOOT` (independent: each system resampled separately; paired: cases
        resampled). Not with ``cluster`` or ``method="mixed"``.
    seed : int or numpy.random.SeedSequence, optional
        Seed (>= 0) of ``numpy.random.default_rng`` for the bootstrap; the same seed and data
        give the same intervals.
    method : {"default", "mixed"}
        ``"mixed"``: a linear mixed model ``y ~ treatment`` with a random intercept per
        ``pair_on`` case (statsmodels ``MixedLM``, REML); when a fit does not converge or is
        singular (random-intercept variance 0) the row falls back to ``test`` and ``warning``
        says why. Needs ``pair_on``; not with ``cluster`` or ``n_boot``.
    allow_mixed_methods : bool
        ``dqs`` / ``dqs_raw`` come from a cascade (criteria, MCDA, final score) recorded in
        ``dqs_method``; comparing groups whose DQS came from different methods raises
        :class:`MixedDqsMethodsError` unless this is True (then ``warning`` says so).
    system : str
        The column naming the system of each run.
    boot_ci : {"bca", "percentile"}
        Bootstrap interval type (keyword only).
    margin : float or dict of str to float, optional
        The margin :math:`\delta > 0` of ``hypothesis``, in each metric's units (0.05: five
        points of a pass rate), or one per metric (``{"passed": 0.05, "dqs": 0.02}``, every
        compared metric named). Keyword only; needs ``hypothesis``.
    hypothesis : {"superior", "noninferior", "equivalent"}, optional
        What each row tests (keyword only), higher being better. None or ``"superior"`` (the
        default): the two-sided test of no difference, the table as above. ``"noninferior"``:
        :math:`H_0: \Delta \le -\delta` against :math:`\Delta > -\delta`, one-sided;
        ``"equivalent"``: two one-sided tests (TOST) of :math:`|\Delta| < \delta`
        (:mod:`~mas_eval.stats.equivalence`). Means keep their design (Welch, Student, paired,
        cluster-robust, mixed) and shift its t (or z) by the margin; with ``test="auto"`` a pass/fail
        metric's paired table (McNemar's rows) gets Tango's score test and interval, and two
        independent pass rates get Farrington and Manning's score test and Mee's interval.
        ``statistic`` and ``p_value`` become the one-sided test's (TOST's larger p), so
        ``correction`` adjusts those across the table (every group of ``by`` and every metric is
        one test of the family) and ``significant`` means "shown"; ``power`` is null. Three
        columns follow ``warning``: ``hypothesis``, ``margin`` and ``verdict``
        (``"non-inferior at δ=0.05"``, ``"equivalent within ±0.05"``, ``"not shown"``, or null
        for a row without a test). Not with a rank test.

    Returns
    -------
    polars.DataFrame
        Sorted by the ``by`` columns (nulls last), then metrics in the order given. A metric
        with no value for either system in a group, but values in another group, does not apply
        there and gets no row for that group (a Dataset with decision and diagnosis tasks):

        ====================== ===========================================================
        (``by`` columns)       the group
        metric                 metric name
        test                   ``welch``, ``student``, ``paired``, ``mannwhitney``,
                               ``wilcoxon``, ``ols_cluster``, ``paired_cluster``, ``mixed``,
                               ``mcnemar``
        n_treatment, n_control runs with a value (paired: runs averaged into the paired cases)
        n_pairs                paired designs: cases with a value from both systems
        n_clusters             clusters (``cluster``) or cases in the mixed model
        mean_treatment         mean (paired: over paired cases of the per-case means)
        mean_control           idem for control
        std_treatment          sample SD, ddof 1 (paired: of the per-case means)
        std_control            idem for control
        difference             treatment - control (mixed: the fixed-effect estimate)
        improvement_percentage 100 * difference / mean_control (null when mean_control = 0)
        statistic              t (t tests, cluster), z (mixed), U of treatment
                               (Mann-Whitney), min(W+, W-) (Wilcoxon, as SciPy),
                               min(b, c) of the discordant cases (McNemar)
        dof                    degrees of freedom (Welch-Satterthwaite for Welch,
                               ``n_clusters - 1`` with ``cluster``; null for rank tests,
                               McNemar and the mixed model)
        p_value                two-sided p
        p_adjusted             p adjusted across all rows (``correction``)
        correction             the correction ``p_adjusted`` used (``holm``, ``fdr_bh``,
                               ``bonferroni`` or ``none``), so a saved table says so
        significant            ``p_adjusted <= alpha``
        ci_low, ci_high        CI of the difference in means (rank tests: the Welch /
                               paired t interval)
        ci_method              welch, student, paired, cluster, mixed, bootstrap_bca,
                               bootstrap_percentile, newcombe (Newcombe 1998, method 10,
                               the paired difference of pass rates)
        cohens_d               d_s = difference / pooled SD (ddof 1), or d_z =
                               mean difference / SD of differences in paired designs
        hedges_g               J(df) * cohens_d, J exact (df = n_t + n_c - 2, or n - 1)
        d_ci_low, d_ci_high    CI of d: noncentral t inversion; with ``cluster`` or
                               ``mixed``, the CI of the difference divided by the SD
        d_type                 ``d_s`` or ``d_z``: which d the row holds
        effect_size            ``|d|`` < 0.2 negligible, < 0.5 small, < 0.8 medium, else large
        power                  observed power: the row's two-sided test at level alpha
                               when the true effect equals the estimate (a function
                               of p; not evidence of anything by itself). Rank tests
                               and McNemar report their t-test counterpart's.
        correlation            paired: Pearson r of the two systems' per-case means
        warning                why a row is degenerate, notes (unpaired cases left
                               out, undefined improvement %, fallbacks), or null
        ====================== ===========================================================

    Raises
    ------
    InvalidParameterError
        A bad option (unknown test, alpha outside (0, 1), a seed that is not a non-negative
        integer, metrics that are not column names, ...) or combination of options
        (``pair_on`` missing for a paired test, ``cluster`` with a rank test, ...; see
        :data:`~mas_eval.stats.options.COMPARE_RULES`); also a ``MasEvalError`` and a ``ValueError``.
    SchemaError
        A named column is missing or not numeric.
    DataError
        No runs of ``treatment`` or ``control`` at all; nulls in ``pair_on`` / ``cluster``.
    MixedDqsMethodsError
        ``dqs`` compared across different ``dqs_method`` values (see ``allow_mixed_methods``).

    Notes
    -----
    Welch: :math:`t = \Delta / \sqrt{s_T^2/n_T + s_C^2/n_C}` with Welch–Satterthwaite df;
    Student: :math:`SE = s_p \sqrt{1/n_T + 1/n_C}`,
    :math:`s_p^2 = ((n_T-1)s_T^2 + (n_C-1)s_C^2)/(n_T+n_C-2)`, df :math:`n_T+n_C-2`; paired:
    :math:`SE = s_d/\sqrt{n}`, df :math:`n-1`. CI: :math:`\Delta \pm t_{df,1-(1-c)/2}\,SE`.

    Cohen's d (the crisis-MAS methodology): :math:`d_s = \Delta / s_p`; paired :math:`d_z = \bar d / s_d`.
    Hedges: :math:`g = J(\nu) d`, :math:`J(\nu) = \Gamma(\nu/2)/(\sqrt{\nu/2}\,\Gamma((\nu-1)/2))`.
    The CI of d inverts the noncentral t of the Student (or paired) statistic, also for
    Welch rows (Steiger & Fouladi 1997).

    Cluster-robust SE, the closed form of OLS ``y ~ 1 + T`` with statsmodels' CR1 sandwich
    (``cov_type="cluster"``): :math:`\widehat{Var}(\Delta) = \frac{G}{G-1}\frac{N-1}{N-2}
    \sum_g (E_{Tg}/n_T - E_{Cg}/n_C)^2`, :math:`E_{sg}` the sum of :math:`y - \bar y_s` over
    cluster g's runs of system s; paired: :math:`\frac{G}{G-1}\sum_g E_g^2 / n^2` with
    :math:`E_g = \sum_{i\in g}(d_i - \bar d)`. Reference t with :math:`G-1` df.

    Degenerate rows (a system missing, fewer than 2 values or pairs, zero variance in both
    systems or of the differences, fewer than 2 clusters, non-finite data) keep their
    descriptives, get null inference and a ``warning``, and are left out of the correction
    family. Nothing is NaN: undefined values are null.

    The group statistics (count, mean, variance of every metric at once) are one Polars
    group-by per design; paired designs first build the per-case table (one group-by and a
    join, sorted so that results are bit-for-bit reproducible), clusters add one more pass.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({
    ...     "system": ["mas"] * 4 + ["single"] * 4,
    ...     "dqs": [0.82, 0.85, 0.81, 0.84, 0.75, 0.73, 0.76, 0.74],
    ... })
    >>> row = compare(runs, "dqs", test="student").row(0, named=True)
    >>> round(row["statistic"], 6), round(row["p_value"], 9), round(row["cohens_d"], 6), row["effect_size"]
    (7.602631, 0.000269641, 5.375872, 'large')
    >>> round(row["difference"], 3), round(row["improvement_percentage"], 2)
    (0.085, 11.41)

    As good within 0.05? Non-inferiority is shown; equivalence within 0.01 is not:

    >>> row = compare(runs, "dqs", margin=0.05, hypothesis="noninferior").row(0, named=True)
    >>> round(row["p_value"], 9), row["verdict"]
    (2.0565e-05, 'non-inferior at δ=0.05')
    >>> compare(runs, "dqs", margin=0.01, hypothesis="equivalent")["verdict"].item()
    'not shown'
    """
    names = (treatment, control)
    if treatment == control:
        msg = f"compare: treatment and control are both {treatment!r}; compare two different systems"
        raise InvalidParameterError(msg)
    check_combinations(
        "compare",
        {
            "test": test, "pair_on": pair_on, "cluster": cluster, "n_boot": n_boot, "method": method,
            "hypothesis": hypothesis, "margin": margin,
        },
    )  # fmt: skip
    by_columns = column_list(by, "by")
    metric_names = column_list(metrics, "metrics", required=True)
    request = _Request(
        metrics=metric_names,
        by=by_columns,
        keys=by_columns or [GROUP],
        names=names,
        system=system,
        test=_resolve_test(test, pair_on),
        auto=test == "auto",
        pair_on=pair_on,
        cluster=cluster,
        correction=canonical_correction(correction),
        alpha=alpha,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        method=method,
        boot_ci=boot_ci,
        allow_mixed_methods=allow_mixed_methods,
        hypothesis=hypothesis if hypothesis in MARGIN_TESTS else None,
        margins=_margins(margin, metric_names),
    )
    if isinstance(run_metrics, SufficientStatistics):
        return _compare_merged(run_metrics, request)
    frame = as_lazy(run_metrics)
    auto_cluster = _auto_cluster_column(frame.collect_schema(), request)
    runs, guarded, counts = _prepare(frame, request, auto_cluster)
    notes = {}
    if guarded:
        notes = dqs_method_guard(
            runs.rename({f"{GUARDED}{c}": c for c in guarded}), keys=request.keys, system=system,
            names=request.names, dqs_columns=guarded, allow=allow_mixed_methods,
        )  # fmt: skip

    summary, base = _base_rows(runs, request)
    patches = _step_patches(counts, runs, summary, base, request, notes, guarded)
    pass_fail_patches, pass_fail = _pass_fail_patches(runs, summary, base, request, auto_cluster)
    patches += pass_fail_patches
    present = None
    if request.by:
        names = [metric(i) for i in range(len(request.metrics))]
        present = runs.group_by(request.by).agg(pl.col(names).is_not_null().any()).collect(engine=ENGINE)
    return _assemble(summary, base, patches, request, present, pass_fail)


def _margins(margin: float | Mapping[str, float] | None, metrics: list[str]) -> tuple[float, ...]:
    """Each metric's margin: one number for all, or the mapping's (which must name every metric and no other)."""
    if margin is None:
        return ()
    if not isinstance(margin, Mapping):
        return tuple(float(margin) for _ in metrics)
    missing = [name for name in metrics if name not in margin]
    extra = [name for name in margin if name not in metrics]
    if missing or extra:
        parts = [f"no margin for {', '.join(map(repr, missing))}" if missing else "",
                 f"margins for metrics not compared: {', '.join(map(repr, extra))}" if extra else ""]  # fmt: skip
        msg = f"compare: margin: {'; '.join(p for p in parts if p)}; give one margin per compared metric, or one number"
        raise InvalidParameterError(msg)
    return tuple(float(margin[name]) for name in metrics)


def _assemble(
    summary: Summary,
    base: Rows,
    patches: Sequence[Patch],
    request: _Request,
    present: pl.DataFrame | None,
    pass_fail: _PassFail | None = None,
) -> pl.DataFrame:
    """Return the finished table from the base rows and ``patches``.

    The ``patches`` are applied in order, then the test against the margin, the correction, the
    ``by`` columns, and the rows that apply.

    ``present`` says, per ``by`` group, which metrics have any value among the compared runs
    (column ``metric(i)``); None without ``by``. ``pass_fail`` says which rows are pass rates.
    """
    table = base
    for patch in patches:
        table = table.patched(patch)

    groups = summary.groups
    table = table.patched(Patch(columns={"metric": np.array(request.metrics * groups.height, dtype=object)}))
    margins = np.tile(np.array(request.margins, dtype=float), groups.height)
    if request.hypothesis is not None:
        pass_fail = pass_fail or _PassFail()
        step = hypothesis_step(
            table, hypothesis=request.hypothesis, margin=margins, confidence=request.confidence,
            paired_counts=pass_fail.paired_counts, independent_pass_fail=pass_fail.independent,
        )  # fmt: skip
        table = table.patched(step)
    body = table.finish(correction=request.correction, alpha=request.alpha)
    if request.hypothesis is not None:
        body = body.with_columns(
            pl.lit(request.hypothesis).alias("hypothesis"),
            pl.Series("margin", margins, dtype=pl.Float64),
            pl.Series("verdict", verdicts(request.hypothesis, margins, body["significant"].to_list()), pl.String),
        )
    if present is None:
        return body
    head = groups[pl.Series(np.repeat(np.arange(groups.height), len(request.metrics)))]
    keep = _applicable(head, present, request)
    return pl.concat([head, body], how="horizontal").filter(pl.Series(keep))


def _applicable(head: pl.DataFrame, present: pl.DataFrame, request: _Request) -> np.ndarray:
    """Which rows (``head``: group of each row, metrics in request order within a group) to keep.

    A metric with no value for either system in a group, but values in another group, does not
    apply there (a decision metric in a diagnosis task): its row goes. Counted on the runs before
    any pairing, so a group whose values are merely unpaired keeps its row and its warning.
    Those rows' p-values were outside the correction's family already.
    """
    names = [metric(i) for i in range(len(request.metrics))]
    aligned = head.join(present, on=request.by, how="left", maintain_order="left", nulls_equal=True)
    has = aligned.select(pl.col(names).fill_null(True)).to_numpy().astype(bool).reshape(head.height, len(names))
    which = np.arange(head.height) % len(names)  # the metric of each row
    return has[np.arange(head.height), which] | ~has.any(axis=0)[which]


def _refuse_raw_values(request: _Request) -> None:
    """Raise for the options that read raw values, which sufficient statistics do not keep."""
    needs = []
    if request.test in RANK_TESTS:
        needs.append(f"test={request.test!r} ranks the values")
    if request.test == "mcnemar":
        needs.append("test='mcnemar' counts each case's pass/fail outcomes")
    if request.n_boot:
        needs.append(f"n_boot={request.n_boot} resamples the values")
    if request.method == "mixed":
        needs.append("method='mixed' fits a model to every run")
    if not needs:
        return
    columns = [request.system, *request.by, *(c for c in (request.pair_on, request.cluster) if c), *request.metrics]
    msg = (
        f"compare: {' and '.join(needs)}: it needs the raw values, which sufficient statistics do not keep. "
        f"Gather only the columns it reads ({', '.join(map(repr, dict.fromkeys(columns)))}) from every shard "
        f"(e.g. pl.scan_parquet(paths).select(...)) and call compare on that frame; Welch, Student, paired and "
        f"cluster-robust t tests run from the statistics"
    )
    raise InvalidParameterError(msg)


def _compared_level(frame: pl.DataFrame, request: _Request, stats_of: tuple[str, ...]) -> pl.DataFrame:
    """Return ``frame``, a level of the sufficient statistics, as this request compares it.

    It keeps the two systems, ``GROUP`` when ungrouped, and each requested metric's statistics
    renamed ``column(stat, i)``.
    """
    kept = frame.filter(pl.col(request.system).is_in(list(request.names)))
    if not request.by:
        kept = kept.with_columns(pl.lit(0, dtype=pl.Int8).alias(GROUP))
    renames = [
        pl.col(stat_column(stat, name)).alias(column(stat, i))
        for i, name in enumerate(request.metrics)
        for stat in stats_of
        if stat_column(stat, name) in frame.columns
    ]
    structural = [c for c in kept.columns if ":" not in c or c.startswith("has:")]
    return kept.select(*structural, *renames)


def _merged_wide(moments: pl.DataFrame, request: _Request) -> pl.DataFrame:
    """Return the group-by of :func:`~mas_eval.stats.summaries.independent_summary` from merged moments."""
    columns = []
    for i in range(len(request.metrics)):
        n, total, m2 = pl.col(column("n", i)), pl.col(column("sum", i)), pl.col(column("m2", i))
        columns += [
            n.alias(column("n", i)),
            pl.when(n > 0).then(total / n).alias(column("mean", i)),
            pl.when(n > 1).then(m2 / (n - 1)).alias(column("var", i)),
        ]
    return moments.select(*request.keys, request.system, *columns)


def _merged_cases(cases: pl.DataFrame, request: _Request, cluster: str | None) -> pl.LazyFrame:
    """Return the case table of :func:`~mas_eval.stats.summaries.case_table` from merged per-case sums."""
    assert request.pair_on is not None
    aggs = []
    for i in range(len(request.metrics)):
        n, total = pl.col(column("n", i)).sum(), pl.col(column("sum", i)).sum()
        aggs += [pl.when(n > 0).then(total / n).alias(column("case_mean", i)), n.alias(column("case_runs", i))]
    frame = cases
    if cluster is not None:
        frame = frame.with_columns(pl.col(cluster).alias(CLUSTER))
        aggs += [pl.col(CLUSTER).first().alias("case_cluster"), pl.col(CLUSTER).n_unique().alias("n_case_clusters")]
    per_case = frame.lazy().group_by([*request.keys, request.pair_on, request.system]).agg(aggs)
    return case_table(
        per_case, request.keys, request.system, request.names, request.pair_on, len(request.metrics),
        CLUSTER if cluster is not None else None,
    )  # fmt: skip


def _merged_residual_sums(clusters: pl.DataFrame, moments: pl.DataFrame, request: _Request, cluster: str):
    r"""Per (group, cluster, system) :math:`E_{sg} = D_{sg} + n_{sg}(c_{sg} - \bar y_s)` and the count."""
    m = len(request.metrics)
    within = [*request.keys, request.system]
    means = moments.select(
        *within,
        *(
            pl.when(pl.col(column("n", i)) > 0)
            .then(pl.col(column("sum", i)) / pl.col(column("n", i)))
            .alias(column("ybar", i))
            for i in range(m)
        ),
    )
    joined = clusters.join(means, on=within, how="left", nulls_equal=True)
    columns = []
    for i in range(m):
        n = pl.col(column("n", i))
        residual = pl.col(column("dev", i)) + n * (pl.col(column("shift", i)) - pl.col(column("ybar", i)))
        columns += [residual.fill_null(0.0).alias(column("residual_sum", i)), n.alias(column("count", i))]
    return joined.lazy().select(*within, pl.col(cluster).alias(CLUSTER), *columns)


def _merged_non_finite(moments: pl.DataFrame, request: _Request) -> pl.DataFrame | None:
    """:func:`_non_finite_counts` from merged moments."""
    m = len(request.metrics)
    totals = moments.select(
        (pl.col(column("nan", i)).sum() + pl.col(column("inf", i)).sum()).alias(str(i)) for i in range(m)
    ).row(0)
    dirty = [i for i, total in enumerate(totals) if total]
    if not dirty:
        return None
    return moments.group_by(request.keys).agg(
        agg for i in dirty for agg in (pl.col(column(s, i)).sum().alias(f"{s}_{i}") for s in ("nan", "inf"))
    )


def _merged_guard(stats: SufficientStatistics, request: _Request) -> tuple[list[str], dict[tuple[Any, ...], str]]:
    """Apply the ``dqs_method`` guard to merged statistics: the guarded DQS metrics, the notes of mixed groups."""
    if stats.methods is None:
        return [], {}
    has = [stat_column("has", c) for c in DQS_METRICS if c in request.metrics]
    has = [c for c in has if c in stats.methods.columns]
    if not has:
        return [], {}
    guarded = [c.removeprefix("has:") for c in has]
    methods = _compared_level(stats.methods, request, ())
    # One stand-in run per (group, system, method) that holds a value: all the guard reads.
    runs = methods.filter(pl.sum_horizontal(has) > 0).select(
        *request.keys, request.system, "dqs_method", *(pl.lit(1.0).alias(c) for c in guarded)
    )
    notes = dqs_method_guard(
        runs.lazy(), keys=request.keys, system=request.system, names=request.names, dqs_columns=guarded,
        allow=request.allow_mixed_methods,
    )  # fmt: skip
    return guarded, notes


def _compare_merged(stats: SufficientStatistics, request: _Request) -> pl.DataFrame:
    """``compare`` on merged sufficient statistics: the in-memory path's steps, fed from sums."""
    _refuse_raw_values(request)
    check_request(
        stats, metrics=request.metrics, system=request.system, pair_on=request.pair_on, cluster=request.cluster
    )
    stats = stats.regrouped(request.by, drop_case_cluster=request.cluster is None)
    error = no_runs_error(stats, request.names)
    if error is not None:
        raise error
    extra = list(dict.fromkeys(c for c in (request.pair_on, request.cluster) if c is not None))
    raise_on_nulls(null_key_counts(stats, request.names, extra), "pair_on/cluster")
    guarded, notes = _merged_guard(stats, request)

    moments = _compared_level(stats.moments, request, ("n", "sum", "m2", "nan", "inf"))
    m = len(request.metrics)
    if request.paired and request.pair_on is not None:
        assert stats.cases is not None
        cases = _compared_level(stats.cases, request, ("n", "sum"))
        cases_table = _merged_cases(cases, request, request.cluster)
        cluster = (CLUSTER, request.cluster) if request.cluster is not None else None
        summary = paired_summary_from(cases_table, request.keys, request.pair_on, m, cluster)
    else:
        wide = _merged_wide(moments, request)
        summary = independent_summary_from(wide, request.keys, request.system, *request.names, m)
    base = _design_rows(summary, request)

    patches = []
    if request.cluster is not None:
        if request.paired and summary.cases is not None:
            sums = paired_cluster_sums(summary.cases, summary.groups, request.keys, CLUSTER, m)
        else:
            assert stats.clusters is not None
            clusters = _compared_level(stats.clusters, request, ("n", "shift", "dev"))
            residuals = _merged_residual_sums(clusters, moments, request, request.cluster)
            sums = independent_cluster_sums_from(
                residuals, summary.groups, request.keys, request.system, request.names[0], CLUSTER, m
            )
        patches.append(_cluster_patch(sums, summary, base, request))
    patches.append(_mixed_methods_notes(summary, notes, request, guarded))
    patches.append(_non_finite_notes(_merged_non_finite(moments, request), summary, request))
    present = None
    if request.by:
        present = moments.group_by(request.by).agg(
            (pl.col(column("n", i)).sum() > 0).alias(metric(i)) for i in range(m)
        )
    return _assemble(summary, base, patches, request, present)
