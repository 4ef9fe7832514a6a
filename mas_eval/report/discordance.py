"""The cases behind a paired comparison: one row per case, the cases where the two systems differ first.

A paired test says *whether* the treatment beats the control; :func:`cases` says *where*: each
case with both systems' score, tokens and cost, and its discordance class. For a pass/fail
metric run once per case and system, the classes are the cells of McNemar's table, so that the
count of ``"treatment passed, control failed"`` is McNemar's *b* and that of ``"control passed,
treatment failed"`` its *c* (:func:`mas_eval.stats.mcnemar_exact`); otherwise (a graded metric,
or several epochs of a case) a case's score is its mean over the system's runs, as
:func:`mas_eval.stats.compare` pairs them, and the classes say which system scored higher.
:func:`mas_eval.report.write_cases` draws the same rows as a page with each case's transcripts
side by side.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from mas_eval.constraints import COLUMN_NAME, NONE, Instance, Predicate, check_columns, numeric_value, validate_params
from mas_eval.errors import InvalidParameterError, SchemaError, option
from mas_eval.metrics.family import compared_columns, get, headline_columns
from mas_eval.report.outcomes import FAMILY as OUTCOMES
from mas_eval.report.outcomes import outcome_columns
from mas_eval.report.tables import has_values
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CASE_COLUMNS",
    "COST_COLUMNS",
    "DISCORDANCE",
    "DISCORDANT",
    "TOKEN_COLUMNS",
    "cases",
    "choose_metric",
    "open_dataset",
    "open_scores",
]

#: The discordance classes of a case, in the order :func:`cases` lists them. The first four are
#: the cells of McNemar's table (a pass/fail metric run once per case and system); the next three
#: compare case means (a graded metric, or epochs); the last three hold cases not both systems scored.
DISCORDANCE: tuple[str, ...] = (
    "treatment passed, control failed",
    "control passed, treatment failed",
    "treatment higher",
    "control higher",
    "both passed",
    "both failed",
    "tied",
    "treatment only",
    "control only",
    "neither scored",
)
#: The classes where the two systems disagree on a case: what a paired test's result rests on.
DISCORDANT: tuple[str, ...] = DISCORDANCE[:4]

#: The run columns a run's tokens and cost are read from, the first one with values (the outcomes
#: family's system usage, else the decision family's copy of ``runs.tokens`` and ``runs.cost_usd``).
TOKEN_COLUMNS = ("run_tokens", "tokens_used")
COST_COLUMNS = ("run_cost_usd", "cost_usd")

#: The columns of :func:`cases` after the case column, in order (``task`` and ``target`` only when
#: the runs have values of them).
CASE_COLUMNS = (
    "task", "discordance", "score_treatment", "score_control", "difference", "runs_treatment", "runs_control",
    "tokens_treatment", "tokens_control", "cost_treatment", "cost_control", "target",
)  # fmt: skip

_SYSTEM = Predicate(lambda value: isinstance(value, str) and value != "", "a system name (a non-empty string)")
_SCORES = Predicate(lambda value: isinstance(value, Scores | str | Path), "a Scores object or a Scores folder")
_DATASET = Predicate(lambda value: isinstance(value, Dataset | str | Path), "a Dataset or a Dataset folder")


def open_scores(scores: Scores | str | Path, where: str) -> Scores:
    """``scores`` as :class:`~mas_eval.Scores`, read from its folder when given a path.

    Examples
    --------
    >>> open_scores(42, "cases")
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: cases: scores must be a Scores object or a Scores folder, not int
    """
    if isinstance(scores, Scores):
        return scores
    if isinstance(scores, str | Path):
        return Scores.open(scores)
    msg = f"{where}: scores must be a Scores object or a Scores folder, not {type(scores).__name__}"
    raise InvalidParameterError(msg)


def open_dataset(dataset: Dataset | str | Path | None, where: str) -> Dataset | None:
    """``dataset`` as a :class:`~mas_eval.Dataset` (opened when given a path), or ``None``.

    Examples
    --------
    >>> open_dataset(None, "cases") is None
    True
    """
    if dataset is None or isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, str | Path):
        return Dataset.open(dataset)
    msg = f"{where}: dataset must be a Dataset, a Dataset folder or None, not {type(dataset).__name__}"
    raise InvalidParameterError(msg)


@validate_params({"scores": [Instance(Scores, "Scores")], "metric": [COLUMN_NAME, NONE]})
def choose_metric(scores: Scores, metric: str | None = None) -> tuple[str, str]:
    """Choose the metric :func:`cases` compares, and say why.

    ``metric`` when given (it must be a numeric or Boolean run column of the scores); else the
    outcomes family's first pass/fail score with values, else the first run column with values
    that a family compares by default (:func:`~mas_eval.metrics.family.compared_columns`: DQS,
    recall, ...), then another outcome, then a column of the answers or diagnosis family, then a
    headline column.

    Raises
    ------
    SchemaError
        ``metric`` is not a run column of the scores, or not numeric or Boolean; no column has
        values to compare.

    Examples
    --------
    >>> import mas_eval
    >>> choose_metric(mas_eval.score(mas_eval.simulate_outcomes(40, seed=1)))
    ('match', "the outcomes family's first pass/fail score")
    >>> choose_metric(mas_eval.score(mas_eval.simulate(40, seed=1)))
    ('dqs', 'the first column the metric families compare by default')
    """
    runs = scores.runs
    if metric is not None:
        check_columns(runs.schema, [metric], "metrics", fix=f"pass one of them as {option('metric', 'NAME')}")
        numeric_value(runs.schema, metric, "the metric")
        return metric, "chosen"
    pass_fail, graded = outcome_columns(scores) if scores.named.get(OUTCOMES) else ([], [])
    if pass_fail:
        return pass_fail[0], "the outcomes family's first pass/fail score"
    candidates: list[tuple[str, str]] = [
        *((name, "the first column the metric families compare by default") for name in compared_columns()),
        *((name, "the outcomes family's first score") for name in graded),
        *((name, f"the {family} family's first run column") for family in ("answers", "diagnosis")
          for name in get(family).outputs().get("runs", [])),
        *((name, "the first headline column") for name in headline_columns()),
    ]  # fmt: skip
    for name, why in candidates:
        if has_values(runs, name) and (runs.schema[name].is_numeric() or runs.schema[name] == pl.Boolean):
            return name, why
    msg = (
        "cases: the scores' runs have no metric with values to compare; "
        f"pass {option('metric', 'NAME')} naming a run column"
    )
    raise SchemaError(msg)


def _check_design(runs: pl.DataFrame, pair_on: str, treatment: str, control: str) -> None:
    check_columns(runs.schema, [pair_on], "cases: pair_on", fix="pass the column both systems ran (pair_on)")
    if treatment == control:
        msg = f"cases: treatment and control are both {treatment!r}; pass two different systems"
        raise InvalidParameterError(msg)
    systems = set(runs["system"].unique().drop_nulls().to_list())
    missing = [name for name in (treatment, control) if name not in systems]
    if missing:
        have = ", ".join(map(repr, sorted(map(str, systems))))
        which = " and ".join(map(repr, missing))
        fix = f"name two of them with {option('treatment', 'NAME')} and {option('control', 'NAME')}"
        msg = f"cases: the scores have no run of system {which}; they have {have}: {fix}"
        raise InvalidParameterError(msg)


def _first_with_values(runs: pl.DataFrame, names: Sequence[str]) -> str | None:
    return next((name for name in names if has_values(runs, name)), None)


@validate_params(
    {
        "scores": [_SCORES],
        "dataset": [_DATASET, NONE],
        "metric": [COLUMN_NAME, NONE],
        "treatment": [_SYSTEM],
        "control": [_SYSTEM],
        "pair_on": [COLUMN_NAME],
    }
)
def cases(
    scores: Scores | str | Path,
    dataset: Dataset | str | Path | None = None,
    metric: str | None = None,
    treatment: str = "mas",
    control: str = "single",
    pair_on: str = "case_id",
) -> pl.DataFrame:
    r"""One row per case both systems were run on: each system's score, tokens and cost, and how they differ.

    Parameters
    ----------
    scores
        What :func:`mas_eval.score` returned, or its folder.
    dataset
        The scored Dataset (or its folder): the cases' ``target`` (the expected answer) comes
        from its ``runs``. Optional here; the viewer (:func:`write_cases`) reads the transcripts
        from it.
    metric
        The run column compared; by default the outcomes family's first pass/fail score, else a
        graded one (:func:`choose_metric`; the ``metric`` column says which).
    treatment, control
        The two systems (difference = treatment − control), as in :func:`mas_eval.stats.compare`.
    pair_on
        The column both systems ran: the case.

    Returns
    -------
    polars.DataFrame
        One row per case (value of ``pair_on``, as text) that either system ran:

        ================= ===========================================================
        metric            the metric compared (the same in every row)
        ``pair_on``       the case
        task              its task (the first of its runs'), when the runs have tasks
        discordance       its class, one of :data:`DISCORDANCE` (an ``Enum``)
        score_treatment   the treatment's score: the metric's mean over its runs of
                          the case (its epochs), nulls left out; ``score_control`` alike
        difference        ``score_treatment - score_control``
        runs_treatment    the treatment's runs of the case with a value; ``runs_control``
        tokens_treatment  mean tokens per run of the treatment on the case (``run_tokens``,
                          else ``tokens_used``); ``tokens_control`` alike
        cost_treatment    mean cost per run in USD (``run_cost_usd``, else ``cost_usd``)
        target            the expected answer (``runs.target`` of the Dataset), when known
        ================= ===========================================================

        The discordant cases come first: ``"treatment passed, control failed"`` then ``"control
        passed, treatment failed"`` (McNemar's *b* and *c*) for a pass/fail metric (every value 0
        or 1, one run per case and system, as ``compare`` decides it applies McNemar's test);
        otherwise ``"treatment higher"`` then ``"control higher"``. Then the concordant cases
        (``"both passed"``, ``"both failed"``, or ``"tied"``), then the cases not both systems
        scored. Within a class, the largest \|difference\| first, then by case.

    Raises
    ------
    SchemaError
        ``metric`` or ``pair_on`` is not a column of the runs; the metric is not numeric or Boolean.
    InvalidParameterError
        ``treatment`` or ``control`` ran nothing in the scores, or they are the same system.

    Examples
    --------
    >>> import mas_eval
    >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
    >>> table = cases(mas_eval.score(ds), ds)
    >>> table["metric"][0], table.height
    ('match', 30)
    >>> table.group_by("discordance").len().sort("discordance").rows()
    [('treatment passed, control failed', 9), ('control passed, treatment failed', 4), ('both passed', 11), ('both failed', 6)]
    >>> table.select("case_id", "discordance", "score_treatment", "score_control").head(2).rows()
    [('case000007', 'treatment passed, control failed', 1.0, 0.0), ('case000013', 'treatment passed, control failed', 1.0, 0.0)]

    The first two classes are McNemar's *b* and *c*: the exact test on them is the comparison's.

    >>> from mas_eval.stats import compare, mcnemar_exact
    >>> round(mcnemar_exact(9, 4)["p_value"].item(), 4)
    0.2668
    >>> round(compare(mas_eval.score(ds), "match", pair_on="case_id")["p_value"].item(), 4)
    0.2668
    """  # noqa: E501
    scores = open_scores(scores, "cases")
    ds = open_dataset(dataset, "cases")
    runs = scores.runs
    name, _ = choose_metric(scores, metric)
    _check_design(runs, pair_on, treatment, control)
    return _case_frame(runs, ds, name, treatment, control, pair_on)


def _case_frame(
    runs: pl.DataFrame, ds: Dataset | None, metric: str, treatment: str, control: str, pair_on: str
) -> pl.DataFrame:
    value = numeric_value(runs.schema, metric, "the metric")
    tokens = _first_with_values(runs, TOKEN_COLUMNS)
    cost = _first_with_values(runs, COST_COLUMNS)
    has_task = has_values(runs, "task")
    both = runs.filter(pl.col("system").is_in([treatment, control]) & pl.col(pair_on).is_not_null())
    both = both.with_columns(pl.col(pair_on).cast(pl.String).alias("_case"))
    if ds is not None and "target" in ds.scan("runs").collect_schema():
        targets = ds.scan("runs").select("run_id", "target").filter(pl.col("target").is_not_null())
        both = both.join(targets.collect(), on="run_id", how="left")
    else:
        both = both.with_columns(target=pl.lit(None, pl.String))
    per_side = both.group_by("_case", "system").agg(
        score=value.mean(),
        runs=value.count(),
        tokens=pl.col(tokens).cast(pl.Float64).mean() if tokens else pl.lit(None, pl.Float64),
        cost=pl.col(cost).cast(pl.Float64).mean() if cost else pl.lit(None, pl.Float64),
        task=pl.col("task").drop_nulls().sort().first() if has_task else pl.lit(None, pl.String),
        target=pl.col("target").drop_nulls().first(),
    )

    def side(system: str, tag: str) -> pl.DataFrame:
        picked = per_side.filter(pl.col("system") == system).drop("system")
        return picked.rename({c: f"{c}_{tag}" for c in picked.columns if c != "_case"})

    wide = side(treatment, "treatment").join(side(control, "control"), on="_case", how="full", coalesce=True)
    t, c = pl.col("score_treatment"), pl.col("score_control")
    paired = t.is_not_null() & c.is_not_null()
    # McNemar's table applies as compare applies it: every value 0 or 1, one run per paired case and system.
    values = both.select(value.drop_nulls())
    zero_one = values.height > 0 and bool(values.select(pl.all().is_in([0.0, 1.0]).all()).item())
    several = wide.filter(paired & ((pl.col("runs_treatment") > 1) | (pl.col("runs_control") > 1))).height > 0
    pass_fail = zero_one and not several
    if pass_fail:
        concordant = pl.when(t == 1).then(pl.lit(DISCORDANCE[4])).otherwise(pl.lit(DISCORDANCE[5]))
        paired_class = pl.when(t > c).then(pl.lit(DISCORDANCE[0])).when(t < c).then(pl.lit(DISCORDANCE[1]))
        paired_class = paired_class.otherwise(concordant)
    else:
        paired_class = (
            pl.when(t > c).then(pl.lit(DISCORDANCE[2])).when(t < c).then(pl.lit(DISCORDANCE[3]))
            .otherwise(pl.lit(DISCORDANCE[6]))
        )  # fmt: skip
    discordance = (
        pl.when(paired).then(paired_class)
        .when(t.is_not_null()).then(pl.lit(DISCORDANCE[7]))
        .when(c.is_not_null()).then(pl.lit(DISCORDANCE[8]))
        .otherwise(pl.lit(DISCORDANCE[9]))
    )  # fmt: skip
    out = wide.with_columns(
        metric=pl.lit(metric),
        discordance=discordance.cast(pl.Enum(DISCORDANCE)),
        difference=t - c,
        task=pl.coalesce("task_treatment", "task_control"),
        target=pl.coalesce("target_treatment", "target_control"),
        runs_treatment=pl.col("runs_treatment").fill_null(0).cast(pl.Int64),
        runs_control=pl.col("runs_control").fill_null(0).cast(pl.Int64),
    )
    out = out.sort(
        pl.col("discordance").to_physical(), pl.col("difference").abs(), "_case", descending=[False, True, False],
        nulls_last=True,
    )  # fmt: skip
    columns = ["metric", pl.col("_case").alias(pair_on)]
    columns += [name for name in CASE_COLUMNS if name not in ("task", "target")]
    if has_task:
        columns.insert(2, "task")
    if out["target"].drop_nulls().len() > 0:
        columns.append("target")
    return out.select(columns)
