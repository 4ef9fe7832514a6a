r"""``compare``: grouped treatment-vs-control comparisons, one tidy row per (group, metric).

The group statistics of all metrics come from one Polars pass per design
(:mod:`~mas_eval.stats.summaries`); the tests, CIs, effect sizes and power are computed with
numpy/SciPy on those small arrays, every row at once (:mod:`~mas_eval.stats.designs`). Only the
rank tests, the bootstrap and the mixed model read raw values, once per (group, metric) row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from mas_eval.errors import DataError, MasEvalError
from mas_eval.stats._common import (
    ENGINE,
    GROUP,
    as_lazy,
    check_columns,
    check_no_nulls,
    check_probability,
    column_list,
    numeric_value,
)
from mas_eval.stats._rows import Rows
from mas_eval.stats.bootstrap import BOOT_METHODS, apply_bootstrap
from mas_eval.stats.cluster import apply_cluster, independent_cluster_sums, paired_cluster_sums
from mas_eval.stats.corrections import canonical_correction
from mas_eval.stats.designs import independent_rows, paired_rows, pooled_sd
from mas_eval.stats.guard import DQS_METRICS, MixedDqsMethodsError, dqs_method_guard
from mas_eval.stats.mixed import mixed_rows
from mas_eval.stats.ranks import apply_rank_test
from mas_eval.stats.summaries import (
    Sample,
    Summary,
    flat,
    independent_samples,
    independent_summary,
    metric,
    paired_samples,
    paired_summary,
    realign,
)

__all__ = ["METHODS", "TESTS", "MixedDqsMethodsError", "compare"]

TESTS = ("welch", "student", "paired", "mannwhitney", "wilcoxon", "auto")
METHODS = ("default", "mixed")
PAIRED_TESTS = ("paired", "wilcoxon")
RANK_TESTS = ("mannwhitney", "wilcoxon")
#: Internal name of the cluster column (``cluster`` may be the ``pair_on`` column itself).
CLUSTER = "_cluster"


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
    boot_ci: Literal["bca", "percentile"]
    allow_mixed_methods: bool

    @property
    def paired(self) -> bool:
        return self.test in PAIRED_TESTS


def _resolve_test(test: str, pair_on: str | None, method: str) -> str:
    if test not in TESTS:
        msg = f"test={test!r} is not one of {', '.join(TESTS)}"
        raise MasEvalError(msg)
    if test == "auto":
        return "paired" if pair_on is not None else "welch"
    if test in PAIRED_TESTS and pair_on is None:
        msg = f"test={test!r} pairs runs by case: pass pair_on (e.g. pair_on='case_id')"
        raise MasEvalError(msg)
    if test not in PAIRED_TESTS and pair_on is not None and method != "mixed":
        msg = f"pair_on={pair_on!r} is only used by paired tests: use test='paired', 'wilcoxon' or 'auto'"
        raise MasEvalError(msg)
    return test


def _check_options(
    *, names: tuple[str, str], method: str, alpha: float, confidence: float, n_boot: int, boot_ci: str,
    cluster: str | None, test: str, pair_on: str | None,
) -> None:  # fmt: skip
    if names[0] == names[1]:
        msg = f"treatment and control are both {names[0]!r}; compare two different systems"
        raise MasEvalError(msg)
    if method not in METHODS:
        msg = f"method={method!r} is not one of {', '.join(METHODS)}"
        raise MasEvalError(msg)
    check_probability(alpha, "alpha")
    check_probability(confidence, "confidence")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 0:
        msg = f"n_boot={n_boot!r} must be a non-negative integer (0: no bootstrap)"
        raise MasEvalError(msg)
    if boot_ci not in BOOT_METHODS:
        msg = f"boot_ci={boot_ci!r} is not one of {', '.join(BOOT_METHODS)}"
        raise MasEvalError(msg)
    if cluster is not None and test in RANK_TESTS:
        msg = f"cluster-robust inference is for the difference in means; it does not apply to test={test!r}"
        raise MasEvalError(msg)
    if cluster is not None and n_boot:
        msg = "cluster and n_boot cannot be combined (a cluster bootstrap is not implemented); drop one"
        raise MasEvalError(msg)
    if method == "mixed":
        if pair_on is None:
            msg = "method='mixed' fits a random intercept per case: pass pair_on (e.g. pair_on='case_id')"
            raise MasEvalError(msg)
        if cluster is not None or n_boot:
            msg = "method='mixed' cannot be combined with cluster or n_boot"
            raise MasEvalError(msg)


def _check_systems(runs: pl.LazyFrame, frame: pl.LazyFrame, system: str, names: tuple[str, str]) -> None:
    counts = runs.select((pl.col(system) == name).sum().alias(f"n{i}") for i, name in enumerate(names))
    counts = counts.collect(engine=ENGINE).row(0)
    missing = [name for name, n in zip(names, counts, strict=True) if not n]
    if missing:
        present = frame.select(pl.col(system).unique().sort()).head(20).collect(engine=ENGINE).to_series().to_list()
        msg = (
            f"no runs of system {', '.join(map(repr, missing))} in column {system!r}; "
            f"the systems present are: {', '.join(map(repr, present)) or '(none: the frame is empty)'}"
        )
        raise DataError(msg)


def _prepare(frame: pl.LazyFrame, request: _Request) -> tuple[pl.LazyFrame, list[str]]:
    """The compared runs: keys, system, case/cluster, metrics ``_m{i}``, DQS copies; and the guarded DQS columns."""
    schema = frame.collect_schema()
    extra = list(dict.fromkeys(c for c in (request.pair_on, request.cluster) if c is not None))
    check_columns(schema, [request.system], "system")
    check_columns(schema, request.by, "by")
    check_columns(schema, extra, "pair_on/cluster")
    check_columns(schema, request.metrics, "metrics")
    structural = {request.system, *request.by, *extra}
    clash = [name for name in request.metrics if name in structural]
    if clash or request.system in request.by:
        msg = f"{', '.join(map(repr, clash or [request.system]))} cannot be both a metric/system and a grouping column"
        raise MasEvalError(msg)
    if request.pair_on is not None and request.pair_on in request.by:
        msg = f"pair_on={request.pair_on!r} is also a by column: every group would hold a single case"
        raise MasEvalError(msg)
    values = [numeric_value(schema, name, "metric").alias(metric(i)) for i, name in enumerate(request.metrics)]
    guarded = [c for c in DQS_METRICS if c in request.metrics and "dqs_method" in schema]

    runs = frame.filter(pl.col(request.system).is_in(list(request.names)))
    if not request.by:
        runs = runs.with_columns(pl.lit(0, dtype=pl.Int8).alias(GROUP))
    kept = [*request.keys, request.system, *([request.pair_on] if request.pair_on else [])]
    kept += ["dqs_method"] if guarded else []
    clusters = [pl.col(request.cluster).alias(CLUSTER)] if request.cluster is not None else []
    runs = runs.select(*dict.fromkeys(kept), *clusters, *values, *(pl.col(c).alias(f"_g_{c}") for c in guarded))

    _check_systems(runs, frame, request.system, request.names)
    check_no_nulls(frame.filter(pl.col(request.system).is_in(list(request.names))), extra, "pair_on/cluster")
    return runs, guarded


def _default_rows(runs: pl.LazyFrame, request: _Request) -> tuple[Summary, Rows]:
    """The design's summary and its rows (Welch/Student or paired t)."""
    m = len(request.metrics)
    common = {"alpha": request.alpha, "confidence": request.confidence, "names": request.names}
    if request.paired and request.pair_on is not None:
        cluster = (CLUSTER, request.cluster) if request.cluster is not None else None
        summary = paired_summary(runs, request.keys, request.system, request.names, request.pair_on, m, cluster)
        return summary, paired_rows(arrays=flat(summary.arrays), **common)
    summary = independent_summary(runs, request.keys, request.system, *request.names, m)
    a = flat(summary.arrays)
    test = "student" if request.test == "student" else "welch"
    rows = independent_rows(
        n_t=a["n_t"], mean_t=a["mean_t"], var_t=a["var_t"], n_c=a["n_c"], mean_c=a["mean_c"], var_c=a["var_c"],
        test=test, **common,
    )  # fmt: skip
    return summary, rows


def _apply_cluster(runs: pl.LazyFrame, summary: Summary, rows: Rows, request: _Request) -> None:
    m, a = len(request.metrics), flat(summary.arrays)
    if request.paired and summary.cases is not None:
        arrays = paired_cluster_sums(summary.cases, summary.groups, request.keys, CLUSTER, m)
        sd = np.sqrt(a["var_d"])
    else:
        arrays = independent_cluster_sums(
            runs, summary.groups, request.keys, request.system, request.names[0], CLUSTER, m
        )
        sd = pooled_sd(a["n_t"], a["var_t"], a["n_c"], a["var_c"])
    apply_cluster(rows, flat(arrays), paired=request.paired, sd=sd, confidence=request.confidence, alpha=request.alpha)


def _samples(runs: pl.LazyFrame, summary: Summary, request: _Request) -> list[Sample]:
    m = len(request.metrics)
    if request.paired and summary.cases is not None and request.pair_on is not None:
        return paired_samples(summary.cases, summary.groups, request.keys, request.pair_on, m)
    return independent_samples(runs, summary.groups, request.keys, request.system, request.names, m)


def _apply_mixed(runs: pl.LazyFrame, summary: Summary, rows: Rows, request: _Request) -> None:
    if request.pair_on is None:
        return
    run_level = summary
    if request.paired:
        run_level = independent_summary(runs, request.keys, request.system, *request.names, len(request.metrics))
    mixed, fitted, reasons = mixed_rows(
        runs, realign(run_level, summary.groups, request.keys), keys=request.keys, system=request.system,
        names=request.names, case=request.pair_on, alpha=request.alpha, confidence=request.confidence,
    )  # fmt: skip
    for r in np.flatnonzero(~fitted):
        rows.warnings[r].insert(0, f"mixed model not used ({reasons[r]}); fell back to {request.test}")
    rows.take(fitted, mixed)


def _note_mixed_methods(rows: Rows, summary: Summary, notes: dict[tuple[Any, ...], str], request: _Request,
                        guarded: list[str]) -> None:  # fmt: skip
    m = len(request.metrics)
    # A loop over (group, metric) rows to attach warnings, not over runs.
    for g, key in enumerate(summary.groups.iter_rows()):
        if key not in notes:
            continue
        for i, name in enumerate(request.metrics):
            if name in guarded:
                message = f"dqs_method differs ({notes[key]}); compared anyway (allow_mixed_methods)"
                rows.warnings[g * m + i].append(message)


def compare(
    run_metrics: Any,
    metrics: str | Iterable[str],
    treatment: str = "mas",
    control: str = "single",
    by: str | Sequence[str] | None = None,
    pair_on: str | None = None,
    cluster: str | None = None,
    test: Literal["welch", "student", "paired", "mannwhitney", "wilcoxon", "auto"] = "welch",
    correction: Literal["holm", "fdr_bh", "bonferroni", "none"] = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_boot: int = 0,
    seed: int | np.random.SeedSequence | None = None,
    method: Literal["default", "mixed"] = "default",
    allow_mixed_methods: bool = False,
    system: str = "system",
    *,
    boot_ci: Literal["bca", "percentile"] = "bca",
) -> pl.DataFrame:
    r"""Compare a treatment system with a control system on many metrics, per group.

    One row per (group, metric): descriptives, the test, the CI of the difference, Cohen's d /
    Hedges' g with a CI, power, and p-values adjusted across the whole table.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run (``Scores.runs``; for a ``Scores`` its ``.runs`` is used), with the
        ``system`` column, the metrics, and any ``by`` / ``pair_on`` / ``cluster`` columns.
    metrics : str or list of str
        Numeric (or boolean, read as 0/1) metric columns; ``"dqs,decision_confidence"`` works.
        NaN counts as missing; missing values are left out per metric.
    treatment, control : str
        The two values of ``system`` to compare; ``difference = treatment - control``.
    by : str or list of str, optional
        Grouping columns: one comparison per group (e.g. ``"task"``).
    pair_on : str, optional
        The case column both systems ran (e.g. ``"case_id"``). Paired tests average each
        system's runs per case first, then test the per-case differences; cases that only
        one system ran are left out (counted in ``warning``). Required by ``"paired"``,
        ``"wilcoxon"`` and ``method="mixed"``; with it ``test="auto"`` is ``"paired"``, and
        with an independent test (``"welch"``, the default) it is an error unless
        ``method="mixed"``: pass ``test="auto"`` or ``"paired"`` to pair.
    cluster : str, optional
        Column whose values are clusters of correlated runs (e.g. ``"case_id"`` when runs
        repeat, or a scenario family). The difference gets a cluster-robust (CR1) standard
        error, with ``n_clusters - 1`` degrees of freedom (Miller 2024, "Adding Error Bars to
        Evals"). In a paired design every case must lie in one cluster.
    test : {"welch", "student", "paired", "mannwhitney", "wilcoxon", "auto"}
        ``"welch"`` (default; seed 004's formula), ``"student"`` (pooled variance; preset
        ``crisis-mas-poc``), ``"paired"`` (t on per-case differences), ``"mannwhitney"``,
        ``"wilcoxon"`` (signed ranks of the per-case differences), ``"auto"`` (paired when
        ``pair_on`` is given, else Welch).
    correction : {"holm", "fdr_bh", "bonferroni", "none"}
        Multiple-comparison correction over every row of the result (the family).
    alpha : float
        Significance level of ``significant`` and of ``power``.
    confidence : float
        Level of the CIs (difference and d).
    n_boot : int
        When > 0, the CI of the difference is a bootstrap CI from ``n_boot`` resamples
        (independent: each system resampled separately; paired: cases resampled).
    seed : int, optional
        Seed of ``numpy.random.default_rng`` for the bootstrap; the same seed and data give
        the same intervals.
    method : {"default", "mixed"}
        ``"mixed"``: a linear mixed model ``y ~ treatment`` with a random intercept per
        ``pair_on`` case (statsmodels ``MixedLM``, REML); when a fit does not converge or is
        singular (random-intercept variance 0) the row falls back to ``test`` and ``warning``
        says why.
    allow_mixed_methods : bool
        ``dqs`` / ``dqs_raw`` come from a cascade (criteria, MCDA, final score) recorded in
        ``dqs_method``; comparing groups whose DQS came from different methods raises
        :class:`MixedDqsMethodsError` unless this is True (then ``warning`` says so).
    system : str
        The column naming the system of each run.
    boot_ci : {"bca", "percentile"}
        Bootstrap interval type (keyword only).

    Returns
    -------
    polars.DataFrame
        Sorted by the ``by`` columns (nulls last), then metrics in the order given:

        ====================== ===========================================================
        (``by`` columns)       the group
        metric                 metric name
        test                   ``welch``, ``student``, ``paired``, ``mannwhitney``,
                               ``wilcoxon``, ``ols_cluster``, ``paired_cluster``, ``mixed``
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
                               (Mann-Whitney), min(W+, W-) (Wilcoxon, as SciPy)
        dof                    degrees of freedom (Welch-Satterthwaite for Welch,
                               ``n_clusters - 1`` with ``cluster``; null for rank tests
                               and the mixed model, whose reference is the normal)
        p_value                two-sided p
        p_adjusted             p adjusted across all rows (``correction``)
        significant            ``p_adjusted <= alpha``
        ci_low, ci_high        CI of the difference in means (rank tests: the Welch /
                               paired t interval)
        ci_method              welch, student, paired, cluster, mixed, bootstrap_bca,
                               bootstrap_percentile
        cohens_d               d_s = difference / pooled SD (ddof 1), or d_z =
                               mean difference / SD of differences in paired designs
        hedges_g               J(df) * cohens_d, J exact (df = n_t + n_c - 2, or n - 1)
        d_ci_low, d_ci_high    CI of d: noncentral t inversion; with ``cluster`` or
                               ``mixed``, the CI of the difference divided by the SD
        d_type                 ``d_s`` or ``d_z``: which d the row holds
        effect_size            |d| < 0.2 negligible, < 0.5 small, < 0.8 medium, else large
        power                  observed power: the row's two-sided test at level alpha
                               when the true effect equals the estimate (a function
                               of p; not evidence of anything by itself). Rank tests
                               report their t-test counterpart's.
        correlation            paired: Pearson r of the two systems' per-case means
        warning                why a row is degenerate, notes (unpaired cases left
                               out, undefined improvement %, fallbacks), or null
        ====================== ===========================================================

    Raises
    ------
    MasEvalError
        Bad options (unknown test, ``pair_on`` missing for a paired test, ...).
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

    Cohen's d (seed 004): :math:`d_s = \Delta / s_p`; paired :math:`d_z = \bar d / s_d`.
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
    """
    names = (treatment, control)
    _check_options(
        names=names, method=method, alpha=alpha, confidence=confidence, n_boot=n_boot, boot_ci=boot_ci,
        cluster=cluster, test=test, pair_on=pair_on,
    )  # fmt: skip
    by_columns = column_list(by, "by")
    request = _Request(
        metrics=column_list(metrics, "metrics", required=True),
        by=by_columns,
        keys=by_columns or [GROUP],
        names=names,
        system=system,
        test=_resolve_test(test, pair_on, method),
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
    )
    frame = as_lazy(run_metrics)
    runs, guarded = _prepare(frame, request)
    notes = {}
    if guarded:
        notes = dqs_method_guard(
            runs.rename({f"_g_{c}": c for c in guarded}), keys=request.keys, system=system, names=request.names,
            dqs_columns=guarded, allow=allow_mixed_methods,
        )  # fmt: skip

    summary, rows = _default_rows(runs, request)
    if cluster is not None:
        _apply_cluster(runs, summary, rows, request)
    if request.test in RANK_TESTS or n_boot:
        samples = _samples(runs, summary, request)
        if request.test in RANK_TESTS:
            apply_rank_test(rows, samples, request.test)
        if n_boot:
            apply_bootstrap(rows, samples, n_boot=n_boot, seed=seed, confidence=confidence, method=boot_ci)
    if method == "mixed":
        _apply_mixed(runs, summary, rows, request)
    _note_mixed_methods(rows, summary, notes, request, guarded)

    groups = summary.groups
    rows.set("metric", np.array(request.metrics * groups.height, dtype=object))
    body = rows.finish(correction=request.correction, alpha=alpha)
    if not request.by:
        return body
    head = groups[pl.Series(np.repeat(np.arange(groups.height), len(request.metrics)))]
    return pl.concat([head, body], how="horizontal")
