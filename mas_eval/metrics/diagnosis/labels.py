r"""Diagnosis labels: TP, FP, CAA, FN, AE, TM-SM (the LDDx v6 metrics guide, "AI-Enhanced Diagnosis Classification").

Every run's final list (the system side) and its case's ground truth (the ground-truth side) are
partitioned into labels, for all runs at once: equivalence is decided once per unique pair of
strings (:func:`~mas_eval.metrics.diagnosis.equivalence.match_pairs`), one-to-one matches by
:func:`~mas_eval.metrics.diagnosis.equivalence.assign`, and the rest is joins, group-bys and
string expressions with per-row patterns. Three rule sets (``preset``) differ where the guide
and Local-DDx's evaluators (``ddx_evaluator_v6.py``; v8's ``ddx_evaluator_v9.py``) disagree; see
:func:`classify`.

>>> tables = {
...     "runs": pl.DataFrame({"run_id": ["r1"], "case_id": ["c1"]}),
...     "ground_truth": pl.DataFrame({"case_id": ["c1", "c1"], "diagnosis": ["Myocardial infarction", "Dehydration"]}),
...     "ddx": pl.DataFrame({"run_id": ["r1", "r1"], "round": ["final", "final"], "agent_id": ["team", "team"],
...                          "diagnosis": ["Heart attack", "Pericarditis"], "stance": ["final", "final"],
...                          "mentions": [None, None], "evidence": [None, None]},
...                         schema_overrides={"mentions": pl.Int64, "evidence": pl.List(pl.String)}),
...     "interventions": pl.DataFrame({"run_id": ["r1"], "text": ["[Thirst]: give IV fluids"]}),
... }
>>> for row in classify(tables).select("side", "diagnosis", "label", "matched_to").rows():
...     print(row)
('system', 'Heart attack', 'TP', 'Myocardial infarction')
('system', 'Pericarditis', 'FP', None)
('ground_truth', 'Dehydration', 'TM-SM', 'dehydration')
('ground_truth', 'Myocardial infarction', 'TP', 'Heart attack')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from mas_eval.constraints import Interval, Options, check_columns, validate_params
from mas_eval.data.schema import RUN_KEY
from mas_eval.data.vocabulary import CANT_MISS, DEBATE, FINAL_ROUND, TEAM
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.metrics.diagnosis.equivalence import TIER, assign, match_pairs
from mas_eval.metrics.diagnosis.tables import shipped_table, string_table
from mas_eval.metrics.diagnosis.transcript import (
    CONSIDERATION_WINDOW,
    CONSIDERATION_WORDS,
    PLACEHOLDER,
    considered_in_transcript,
    excluded_in_debate,
)

__all__ = [
    "CONSIDERATION_WINDOW",
    "CONSIDERATION_WORDS",
    "DEFAULT_PATTERNS",
    "LABELS",
    "LDDX_V6_PATTERNS",
    "SIDES",
    "classify",
    "intervention_keywords",
    "label_counts",
]

#: The labels, system side first; ``label`` columns are this Enum.
LABELS = ("TP", "FP", "CAA", "FN", "AE", "TM-SM")
LABEL = pl.Enum(LABELS)
#: The two sides; ``side`` columns are this Enum.
SIDES = ("system", "ground_truth")
SIDE = pl.Enum(SIDES)
#: Patterns of the guide's AE, "explicitly ruled it out": ``{dx}`` stands for the regex-escaped ground-truth diagnosis.
DEFAULT_PATTERNS = ("exclude.*{dx}", "{dx}.*unlikely", "rule out.*{dx}", "{dx}.*less likely")
#: Local-DDx's own list (``_search_for_exclusion_evidence``): the default ones and ``X.*tier 4``.
LDDX_V6_PATTERNS = (*DEFAULT_PATTERNS[:3], "{dx}.*tier 4", DEFAULT_PATTERNS[3])

_INTERVENTIONS_FILE = "interventions.csv"
_REQUIRED = {
    "runs": (RUN_KEY, "case_id"),
    "ddx": (RUN_KEY, "round", "agent_id", "diagnosis", "stance", "mentions", "evidence"),
    "ground_truth": ("case_id", "diagnosis"),
    "messages": (RUN_KEY, "round", "text"),
    "interventions": (RUN_KEY, "text"),
}
_OPTIONAL = ("messages", "interventions")
_OUTPUT = {
    RUN_KEY: pl.String, "side": SIDE, "diagnosis": pl.String, "label": LABEL,
    "matched_to": pl.String, "tier": TIER, "score": pl.Float64,
}  # fmt: skip
Preset = Literal["spec", "lddx-v6", "lddx-v8"]


# --- the intervention table -------------------------------------------------------------------------


def _shipped() -> pl.DataFrame:
    return shipped_table(_INTERVENTIONS_FILE, ("keyword", "diagnosis"))


def _check_interventions(table: object) -> pl.DataFrame:
    meaning = {"keyword": "text found in an intervention", "diagnosis": "what it treats"}
    table = string_table(table, "intervention_table", meaning, "the intervention table")
    bad = table.with_row_index("row").filter(
        (pl.col("keyword").str.strip_chars() == "") | (pl.col("diagnosis").str.strip_chars() == "")
    )
    if bad.height:
        rows = bad["row"].head(5).to_list()
        msg = f"intervention_table: {bad.height} row(s) with an empty keyword or diagnosis: rows {rows}; drop them"
        raise DataError(msg)
    return table


def intervention_keywords(extra: pl.DataFrame | None = None, *, replace: bool = False) -> pl.DataFrame:
    """Return the intervention table: the shipped one, extended or replaced by ``extra``.

    Parameters
    ----------
    extra
        Rows to add, with String columns ``keyword`` and ``diagnosis`` (others are ignored).
    replace
        Use ``extra`` alone instead of adding it to the shipped table.

    Returns
    -------
    pl.DataFrame
        ``keyword, diagnosis``, unique rows sorted. A keyword found (case-insensitive substring) in
        an intervention of the symptom-management round means the intervention treats the diagnosis
        (e.g. "IV fluids" → dehydration, "naloxone" → opioid overdose).

    Examples
    --------
    >>> table = intervention_keywords(pl.DataFrame({"keyword": ["allopurinol"], "diagnosis": ["gout"]}))
    >>> table.filter(pl.col("keyword") == "allopurinol").rows()
    [('allopurinol', 'gout')]
    """
    if extra is None:
        if replace:
            msg = "intervention_keywords: replace=True needs an extra table"
            raise InvalidParameterError(msg)
        return _shipped().unique().sort("keyword", "diagnosis")
    extra = _check_interventions(extra)
    table = extra if replace else pl.concat([_shipped(), extra])
    return table.unique().sort("keyword", "diagnosis")


# --- inputs --------------------------------------------------------------------------------------------


def _table(tables: Any, name: str) -> pl.LazyFrame:
    """Return a table of the Dataset (or mapping) with its required columns checked, or raise a clear error."""
    if hasattr(tables, "collect") and not isinstance(tables, Mapping):
        try:
            frame: object = tables.collect(name)
        except Exception:
            frame = None
    else:
        frame = tables.get(name)
    columns = _REQUIRED[name]
    if frame is None:
        if name in _OPTIONAL:
            return pl.LazyFrame(schema=dict.fromkeys(columns, pl.String))
        msg = f"classify: no table {name!r}; it needs columns {list(columns)}"
        raise SchemaError(msg)
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        msg = f"classify: table {name!r} must be a polars DataFrame or LazyFrame, not {type(frame).__name__}"
        raise InvalidParameterError(msg)
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    check_columns(schema, columns, f"classify: table {name!r}", fix=f"it needs {', '.join(columns)}")
    # An empty table built without a schema has Null columns: give them the types the rules expect.
    typed = {"mentions": pl.Int64, "evidence": pl.List(pl.String)}
    nulls = [c for c in columns if schema[c] == pl.Null]
    return lazy.with_columns(pl.col(c).cast(typed.get(c, pl.String)) for c in nulls) if nulls else lazy


def _check_patterns(patterns: Sequence[str]) -> tuple[str, ...]:
    if isinstance(patterns, str) or not all(isinstance(p, str) for p in patterns) or not patterns:
        msg = f"exclusion_patterns must be a non-empty sequence of strings with {PLACEHOLDER!r}, not {patterns!r}"
        raise InvalidParameterError(msg)
    for pattern in patterns:
        if pattern.count(PLACEHOLDER) != 1:
            msg = f"exclusion pattern {pattern!r} must hold {PLACEHOLDER!r} (the diagnosis) exactly once"
            raise InvalidParameterError(msg)
        try:
            pl.select(pl.lit("x").str.contains(pattern.replace(PLACEHOLDER, "x")))
        except pl.exceptions.ComputeError as error:
            msg = f"exclusion pattern {pattern!r} is not a valid regular expression: {error}"
            raise InvalidParameterError(msg) from None
    return tuple(patterns)


# --- rules ---------------------------------------------------------------------------------------------


def _rows(frame: pl.DataFrame, side: str, label: str | pl.Expr, **columns: pl.Expr | None) -> pl.DataFrame:
    """``frame`` (run_id, diagnosis, …) as labels rows."""
    exprs = {
        "matched_to": pl.lit(None, pl.String),
        "tier": pl.lit(None, TIER),
        "score": pl.lit(None, pl.Float64),
    }
    exprs.update({k: v for k, v in columns.items() if v is not None})
    label_expr = pl.lit(label) if isinstance(label, str) else label
    return frame.select(
        pl.col(RUN_KEY).cast(pl.String),
        pl.lit(side).cast(SIDE).alias("side"),
        pl.col("diagnosis").cast(pl.String),
        label_expr.cast(LABEL).alias("label"),
        *(expr.alias(name) for name, expr in exprs.items()),
    ).cast(_OUTPUT)


def _best(pairs: pl.DataFrame) -> pl.DataFrame:
    """Per (run, left) the best matched right: higher score, better tier, then right in code-point order."""
    order = ["score", "tier", "right"]
    return (
        pairs.filter(pl.col("tier") != "unmatched")
        .sort([RUN_KEY, "left", *order], descending=[False, False, True, False, False])
        .group_by(RUN_KEY, "left", maintain_order=True)
        .first()
    )


def _treated(interventions: pl.LazyFrame, table: pl.DataFrame) -> pl.DataFrame:
    """(run, diagnosis) the run's interventions treat: a table keyword is a substring of an intervention, any case."""
    keywords = table.lazy().select(pl.col("keyword").str.to_lowercase().alias("keyword"), "diagnosis").unique()
    return (
        interventions.select(RUN_KEY, pl.col("text").str.to_lowercase())
        .drop_nulls()
        .unique()
        .join(keywords, how="cross")
        .filter(pl.col("text").str.contains(pl.col("keyword"), literal=True))
        .select(RUN_KEY, "diagnosis")
        .unique()
        .collect()
    )


def _take(frame: pl.DataFrame, done: pl.DataFrame) -> pl.DataFrame:
    """Return ``frame`` without the (run, diagnosis) pairs of ``done``."""
    return frame.join(done.select(RUN_KEY, "diagnosis"), on=[RUN_KEY, "diagnosis"], how="anti")


def _matched_rows(frame: pl.DataFrame, side: str, label: str | pl.Expr, other: str) -> pl.DataFrame:
    """Labels rows of a match frame: ``matched_to`` is its ``other`` column, with that match's tier and score."""
    return _rows(frame, side, label, matched_to=pl.col(other), tier=pl.col("tier"), score=pl.col("score"))


def _final_list(ddx: pl.LazyFrame) -> pl.DataFrame:
    """Return (run, diagnosis) of every run's final list, each string once."""
    return (
        ddx.filter((pl.col("round") == FINAL_ROUND) & (pl.col("stance") == "final"))
        .select(RUN_KEY, "diagnosis")
        .drop_nulls()
        .unique()
        .collect()
    )


def _case_truth(runs: pl.LazyFrame, ground_truth: pl.LazyFrame) -> pl.DataFrame:
    """Return (run, diagnosis) of the ground truth of every run's case, each string once."""
    return (
        runs.select(pl.col(RUN_KEY).cast(pl.String), pl.col("case_id").cast(pl.String))
        .unique()
        .join(ground_truth.select(pl.col("case_id").cast(pl.String), pl.col("diagnosis").cast(pl.String)), on="case_id")
        .select(RUN_KEY, "diagnosis")
        .drop_nulls()
        .unique()
        .collect()
    )


@dataclass(frozen=True)
class _Unmatched:
    """The unmatched diagnoses of both sides after TP, and the tables the presets check them against."""

    pairs: Callable[[pl.DataFrame, pl.DataFrame | pl.LazyFrame], pl.DataFrame]
    final: pl.DataFrame
    truth: pl.DataFrame
    ddx: pl.LazyFrame
    critical: pl.LazyFrame
    messages: pl.LazyFrame
    treated: pl.DataFrame
    patterns: tuple[str, ...]

    @property
    def debate(self) -> pl.LazyFrame:
        """The messages of the debate round."""
        return self.messages.filter(pl.col("round") == DEBATE)

    def tm_sm(self, open_truth: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Return the TM-SM rows among ``open_truth`` and the ground truth left after them."""
        best = _best(self.pairs(open_truth, self.treated)).rename({"left": "diagnosis"})
        return _matched_rows(best, "ground_truth", "TM-SM", "right"), _take(open_truth, best)


def _spec_labels(rest: _Unmatched) -> list[pl.DataFrame]:
    """Label the unmatched diagnoses as the metrics guide does: CAA, FP, AE, TM-SM, FN (see :func:`classify`)."""
    supported = (
        rest.critical.filter(pl.col("evidence").list.len() > 0).select(RUN_KEY, "diagnosis").drop_nulls().unique()
    )
    caa = _best(rest.pairs(rest.final, supported)).rename({"left": "diagnosis"})
    excluded_rows = rest.ddx.filter((pl.col("round") == DEBATE) & (pl.col("stance") == "excluded"))
    excluded_rows = excluded_rows.select(RUN_KEY, "diagnosis").drop_nulls().unique()
    by_stance = rest.pairs(rest.truth, excluded_rows).filter(pl.col("tier") != "unmatched")
    refuted = pl.concat(
        [excluded_in_debate(rest.truth, rest.debate, rest.patterns), by_stance.select(RUN_KEY, diagnosis="left")]
    ).unique()
    tm_sm, missed = rest.tm_sm(_take(rest.truth, refuted))
    return [
        _matched_rows(caa, "system", "CAA", "right"),
        _rows(_take(rest.final, caa), "system", "FP"),
        _rows(refuted, "ground_truth", "AE"),
        tm_sm,
        _rows(missed, "ground_truth", "FN"),
    ]


def _lddx_v8_labels(rest: _Unmatched) -> list[pl.DataFrame]:
    """Label the unmatched diagnoses as Local-DDx v8's evaluator does: FP, AE, TM-SM, FN (see :func:`classify`)."""
    considered = considered_in_transcript(rest.truth, rest.messages)
    tm_sm, missed = rest.tm_sm(_take(rest.truth, considered))
    return [
        _rows(rest.final, "system", "FP"),
        _rows(considered, "ground_truth", "AE"),
        tm_sm,
        _rows(missed, "ground_truth", "FN"),
    ]


def _team_cant_miss(critical: pl.LazyFrame) -> pl.DataFrame:
    """Return the team's can't-miss list: names de-duplicated by lowercase text without ``*``, first by rank."""
    key = pl.col("diagnosis").str.strip_chars("*").str.strip_chars().str.to_lowercase()
    return (
        critical.filter(pl.col("agent_id") == TEAM)
        .filter(pl.col("diagnosis").is_not_null())
        .with_columns(key=key, mentions=pl.col("mentions").fill_null(1))
        .sort(RUN_KEY, "key", "rank", "diagnosis", nulls_last=True)
        .group_by(RUN_KEY, "key", maintain_order=True)
        .first()
        .select(RUN_KEY, "diagnosis", "mentions")
        .collect()
    )


def _lddx_v6_labels(rest: _Unmatched, caa_mentions: int) -> list[pl.DataFrame]:
    """Label the unmatched diagnoses as Local-DDx v6's evaluator does: CAA/TP, FP, TM-SM, AE, FN (:func:`classify`)."""
    team = _team_cant_miss(rest.critical)
    caught = assign(rest.pairs(rest.truth, team.select(RUN_KEY, "diagnosis")))
    caught = caught.join(team.rename({"diagnosis": "right"}), on=[RUN_KEY, "right"], how="left")
    label = pl.when(pl.col("mentions") >= caa_mentions).then(pl.lit("TP")).otherwise(pl.lit("CAA"))
    tm_sm, left = rest.tm_sm(_take(rest.truth, caught.select(RUN_KEY, diagnosis="left")))
    refuted = excluded_in_debate(left, rest.debate, rest.patterns)
    return [
        _matched_rows(caught.rename({"left": "diagnosis"}), "ground_truth", label, "right"),
        _rows(rest.final, "system", "FP"),
        tm_sm,
        _rows(refuted, "ground_truth", "AE"),
        _rows(_take(left, refuted), "ground_truth", "FN"),
    ]


_PARAMS = {
    "preset": [Options(("spec", "lddx-v6", "lddx-v8"))],
    "threshold": [Interval(float, 0, 1, closed="right")],
    "caa_mentions": [Interval(int, 1)],
}


@validate_params(_PARAMS)
def classify(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame] | Any,
    *,
    preset: Preset = "spec",
    synonyms: pl.DataFrame | None = None,
    threshold: float = 0.6,
    judge: Callable[[str, str], bool | float] | None = None,
    cache_path: str | Path | None = None,
    exclusion_patterns: Sequence[str] | None = None,
    intervention_table: pl.DataFrame | None = None,
    caa_mentions: int = 3,
) -> pl.DataFrame:
    r"""Label every final-list and ground-truth diagnosis of every run.

    Parameters
    ----------
    tables
        A Dataset (anything with ``collect(name)``) or a mapping of table name to frame:
        ``runs`` (``run_id, case_id``), ``ddx`` (``run_id, round, agent_id, diagnosis, stance,
        mentions, evidence``), ``ground_truth`` (``case_id, diagnosis``), and optionally
        ``messages`` (``run_id, round, text``) and ``interventions`` (``run_id, text``); an absent
        optional table is empty. The final list is ``ddx`` round ``"final"``, stance ``"final"``;
        can't-miss diagnoses are round ``"cant_miss"``, stance ``"critical"``; the debate is round
        ``"refinement_and_justification"`` (as :mod:`mas_eval.ingest.lddx` writes them).
    preset
        ``"spec"`` (the LDDx v6 metrics guide), ``"lddx-v6"`` (Local-DDx's evaluator code) or
        ``"lddx-v8"`` (Local-DDx v8's deterministic evaluator); see Notes.
    synonyms, threshold, judge, cache_path
        Passed to :func:`~mas_eval.metrics.diagnosis.equivalence.match_pairs` for every
        equivalence question.
    exclusion_patterns
        Regular expressions with ``{dx}`` once, the regex-escaped ground-truth diagnosis;
        ``None`` is :data:`DEFAULT_PATTERNS` (``"spec"``) or :data:`LDDX_V6_PATTERNS` (``"lddx-v6"``).
    intervention_table
        ``keyword, diagnosis`` rows; ``None`` is the shipped :func:`intervention_keywords` table.
    caa_mentions
        ``"lddx-v6"``: least mentions of a can't-miss diagnosis that make its ground truth TP.

    Returns
    -------
    pl.DataFrame
        ``run_id, side, diagnosis, label, matched_to, tier, score``: one row per unique final
        diagnosis (side ``"system"``) and per unique ground-truth diagnosis of the run's case
        (side ``"ground_truth"``), as written. ``matched_to`` is the other side's diagnosis for TP,
        the can't-miss diagnosis for CAA, the treated diagnosis of the intervention table for
        TM-SM, else null; ``tier``/``score`` are that match's. Sorted by run, side, diagnosis.

    Raises
    ------
    SchemaError
        A table or column is missing (the message names both).
    InvalidParameterError
        An unknown preset, a threshold outside (0, 1], a bad pattern or table.

    Notes
    -----
    Both presets start with **TP**: one-to-one matches (``assign``) between the run's final list
    and its case's ground truth, each string once per run. Then (the guide's classification table):

    ``"spec"``
        * **CAA** (system side): an unmatched final diagnosis equivalent to a can't-miss
          diagnosis (any agent) whose evidence list is non-empty; **FP**: the other unmatched
          final diagnoses.
        * **AE** (ground-truth side): an unmatched ground truth :math:`X` that a debate message
          of the run matches with one of the patterns (case-insensitive; ``.`` does not cross a
          line break, so a pattern must hold within one line), or that is equivalent to a debate
          ``ddx`` row with stance ``"excluded"``.
        * **TM-SM**: an unmatched, not-AE ground truth equivalent to a diagnosis that the
          intervention table maps from a keyword found (case-insensitive substring) in one of
          the run's interventions; **FN**: the rest.
        * Partition: :math:`TP+FP+CAA = |final|` and :math:`TP+FN+AE+TM\_SM = |GT|`.

    ``"lddx-v6"`` (``ddx_evaluator_v6.py``, ``evaluate_diagnosis``)
        * **CAA** is a ground-truth diagnosis: an unmatched ground truth matched one-to-one
          (``assign``) to a diagnosis of the team's can't-miss list (agent ``"team"``, names
          de-duplicated by lowercase text without ``*``, first by rank); it is **TP** instead
          when that diagnosis has ``mentions >= caa_mentions`` (null mentions count as 1).
        * **TM-SM** is decided before AE (the code's order): as in ``"spec"``, with the shipped
          table instead of the code's six hard-coded symptom → diagnosis-substring rules.
        * **AE**: debate messages only (no ``excluded`` rows), patterns :data:`LDDX_V6_PATTERNS`;
          **FN** the rest; **FP** every unmatched final diagnosis (there is no system-side CAA).
        * Partition: :math:`TP_{gt}+FN+AE+CAA+TM\_SM = |GT|` and :math:`TP_{sys}+FP = |final|`,
          where :math:`TP_{gt} - TP_{sys}` is the number of promoted can't-miss matches; the code
          counts ``tp = len(matched_pairs)``, i.e. :math:`TP_{gt}`, and so does :func:`label_counts`.

    ``"lddx-v8"`` (``ddx_evaluator_v9.py``, ``DeterministicClinicalEvaluator.evaluate_diagnosis``)
        * No CAA: **FP** is every unmatched final diagnosis.
        * **AE**: an unmatched ground truth that some response of any round mentions (lowercase
          substring) with one of :data:`CONSIDERATION_WORDS` within :data:`CONSIDERATION_WINDOW`
          characters (:func:`~mas_eval.metrics.diagnosis.transcript.considered_in_transcript`);
          exclusion and mere consideration alike.
        * **TM-SM** after AE, as in ``"spec"``; **FN** the rest.
        * Partition: :math:`TP+FN+AE+TM\_SM = |GT|` and :math:`TP+FP = |final|`.

    Not reproduced from the code: its LLM equivalence judge (pass ``judge``), the order-dependent
    first-match loops (here: best score first), the unescaped diagnosis inside its regexes (here
    escaped), and an unmatched final string identical to a promoted can't-miss one leaving FP.
    """
    patterns = _check_patterns(
        exclusion_patterns
        if exclusion_patterns is not None
        else (DEFAULT_PATTERNS if preset == "spec" else LDDX_V6_PATTERNS)
    )
    table = intervention_keywords() if intervention_table is None else _check_interventions(intervention_table)
    runs, ddx, ground_truth, messages, interventions = (
        _table(tables, name) for name in ("runs", "ddx", "ground_truth", "messages", "interventions")
    )
    equivalence = {"synonyms": synonyms, "threshold": threshold, "judge": judge, "cache_path": cache_path}

    def pairs(left: pl.DataFrame, right: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
        return match_pairs(left, right, left_on="diagnosis", right_on="diagnosis", by=RUN_KEY, **equivalence)

    ddx = ddx.with_columns(pl.col(RUN_KEY).cast(pl.String), pl.col("diagnosis").cast(pl.String))
    final, truth = _final_list(ddx), _case_truth(runs, ground_truth)
    matched = assign(pairs(final, truth))
    out = [
        _matched_rows(matched.rename({"left": "diagnosis"}), "system", "TP", "right"),
        _matched_rows(matched.rename({"right": "diagnosis"}), "ground_truth", "TP", "left"),
    ]
    rest = _Unmatched(
        pairs=pairs,
        final=final.join(matched.select(RUN_KEY, diagnosis="left"), on=[RUN_KEY, "diagnosis"], how="anti"),
        truth=truth.join(matched.select(RUN_KEY, diagnosis="right"), on=[RUN_KEY, "diagnosis"], how="anti"),
        ddx=ddx,
        critical=ddx.filter((pl.col("round") == CANT_MISS) & (pl.col("stance") == "critical")),
        messages=messages.with_columns(pl.col(RUN_KEY).cast(pl.String)),
        treated=_treated(interventions.with_columns(pl.col(RUN_KEY).cast(pl.String)), table),
        patterns=patterns,
    )
    if preset == "spec":
        out.extend(_spec_labels(rest))
    elif preset == "lddx-v8":
        out.extend(_lddx_v8_labels(rest))
    else:
        out.extend(_lddx_v6_labels(rest, caa_mentions))
    return pl.concat(out).sort(RUN_KEY, "side", "diagnosis")


def label_counts(labels: pl.DataFrame, runs: pl.DataFrame | pl.LazyFrame | None = None) -> pl.DataFrame:
    """Per run, the counts ``tp, fp, fn, caa, ae, tm_sm`` of a :func:`classify` frame.

    Parameters
    ----------
    labels
        The output of :func:`classify`.
    runs
        A frame with ``run_id``: every one of its runs gets a row (zeros when it has no labels).
        ``None``: the runs of ``labels``.

    Returns
    -------
    pl.DataFrame
        ``run_id, tp, fp, fn, caa, ae, tm_sm`` (UInt32), sorted by run. ``tp`` counts
        ground-truth-side TP (under ``"spec"`` equal to the system side; under ``"lddx-v6"`` it
        includes can't-miss promotions, as the code's ``len(matched_pairs)``); ``caa`` counts CAA
        on whichever side the preset puts it.

    Examples
    --------
    >>> labels = pl.DataFrame({"run_id": ["r1", "r1"], "side": ["system", "ground_truth"],
    ...                        "label": ["FP", "FN"]})
    >>> label_counts(labels, pl.DataFrame({"run_id": ["r1", "r2"]})).rows()
    [('r1', 0, 1, 1, 0, 0, 0), ('r2', 0, 0, 0, 0, 0, 0)]
    """
    check_columns(labels.schema, [RUN_KEY, "side", "label"], "label_counts: labels", fix="pass the output of classify")
    label, side = pl.col("label").cast(pl.String), pl.col("side").cast(pl.String)
    counts = labels.group_by(pl.col(RUN_KEY).cast(pl.String)).agg(
        tp=((label == "TP") & (side == "ground_truth")).sum(),
        fp=(label == "FP").sum(),
        fn=(label == "FN").sum(),
        caa=(label == "CAA").sum(),
        ae=(label == "AE").sum(),
        tm_sm=(label == "TM-SM").sum(),
    )
    if runs is not None:
        check_columns(runs.lazy().collect_schema(), [RUN_KEY], "label_counts: runs")
        keys = runs.lazy().select(pl.col(RUN_KEY).cast(pl.String)).unique().collect()
        counts = keys.join(counts, on=RUN_KEY, how="left")
    names = ("tp", "fp", "fn", "caa", "ae", "tm_sm")
    return counts.select(RUN_KEY, *(pl.col(n).fill_null(0).cast(pl.UInt32) for n in names)).sort(RUN_KEY)
