"""The Dataset's validation rules, each with one clear message.

Every message names the table, the column, up to five offending keys, and the fix. Checks
are batched: one aggregate query per table counts every violation, and only a broken rule
pays for a second query that fetches its example keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from mas_eval.data.schema import AGENT_KEY, MASS_SUM_TOLERANCE, TABLES, Column, Table
from mas_eval.errors import DataError, SchemaError, format_keys

__all__ = [
    "check_agent_masses",
    "check_alternative_inputs",
    "check_run_keys",
    "check_types",
    "check_unique_keys",
    "check_values",
    "validate_tables",
]

#: Turns a frame of key codes into the user's labels (identity when the keys are labels).
Labels = Callable[[pl.LazyFrame], pl.LazyFrame]

_EXAMPLES = 5


@dataclass(frozen=True)
class _Rule:
    """A row-level rule: ``bad`` is true on offending rows."""

    column: str
    bad: pl.Expr
    problem: str
    fix: str
    error: type[Exception] = DataError
    #: What is counted: rows, or the groups a rule aggregates (e.g. agents).
    unit: str = "row(s)"


def _fail(spec: Table, rule: _Rule, frame: pl.LazyFrame, count: int, key: list[str], labels: Labels | None) -> None:
    examples = frame.filter(rule.bad).select(key).unique(maintain_order=False).sort(key).head(_EXAMPLES)
    examples = (labels(examples) if labels is not None else examples).collect()
    msg = (
        f"table {spec.name!r}, column {rule.column!r}: {count} {rule.unit} {rule.problem}, "
        f"e.g. at {format_keys(examples.to_dicts())}; {rule.fix}"
    )
    raise rule.error(msg)


def _run_checks(
    spec: Table, frame: pl.LazyFrame, rules: list[_Rule], key: list[str], labels: Labels | None = None
) -> None:
    if not rules:
        return
    counts = frame.select(rule.bad.sum().alias(f"r{i}") for i, rule in enumerate(rules)).collect().row(0)
    for rule, count in zip(rules, counts, strict=True):
        if count:
            _fail(spec, rule, frame, count, key, labels)


def _cast_rules(spec: Table, schema: pl.Schema) -> list[_Rule]:
    rules = []
    for name, have in schema.items():
        column = spec.column_map.get(name)
        if column is None or have == column.dtype or have == pl.Null:
            continue
        # Polars refuses nested <-> flat casts only once it meets data; decide it from the types.
        if have.is_nested() != column.dtype.is_nested():
            msg = (
                f"table {spec.name!r}, column {name!r}: has type {have} which cannot be cast to "
                f"{column.dtype}; store it as {column.dtype}"
            )
            raise SchemaError(msg)
        probe = pl.col(name).cast(column.dtype, strict=False)
        rules.append(
            _Rule(
                name,
                pl.col(name).is_not_null() & probe.is_null(),
                f"hold values that are not {column.dtype}",
                f"fix them or store the column as {column.dtype}",
                SchemaError,
            )
        )
    return rules


def _value_rules(spec: Table, column: Column) -> list[_Rule]:
    col = pl.col(column.name)
    rules = []
    if column.name in spec.key:
        rules.append(_Rule(column.name, col.is_null(), "have a null key", "every key column must be filled in"))
    if column.dtype == pl.Float64:
        rules.append(
            _Rule(
                column.name,
                col.is_nan() | col.is_infinite(),
                "hold NaN or infinite values",
                "use null for a missing value, and finite numbers otherwise",
            )
        )
    if column.nonnegative:
        rules.append(_Rule(column.name, col < 0, "are negative", f"{column.name} must be >= 0"))
    if column.unit_interval:
        rules.append(
            _Rule(column.name, (col < 0) | (col > 1), "are outside [0, 1]", f"{column.name} must lie in [0, 1]")
        )
    if column.allowed is not None:
        rules.append(
            _Rule(
                column.name,
                col.is_not_null() & ~col.is_in(list(column.allowed)),
                "hold an unknown value",
                f"allowed values are {', '.join(map(repr, column.allowed))}",
            )
        )
    return rules


def _check_unique(spec: Table, frame: pl.LazyFrame) -> None:
    key = list(spec.key)
    # A group-by count streams; is_duplicated() over a struct of the key holds it all in memory.
    repeated = frame.group_by(key).agg(copies=pl.len())
    duplicate = _Rule(
        key[-1] if len(key) == 1 else ", ".join(key),
        pl.col("copies") > 1,
        "occur more than once",
        f"the key ({', '.join(key)}) must be unique: drop or merge the duplicates",
        unit="key(s)",
    )
    _run_checks(spec, repeated, [duplicate], key)


def check_unique_keys(tables: Mapping[str, pl.LazyFrame]) -> None:
    """The key-uniqueness rule of :func:`validate_tables` alone, for every table (as given).

    A repeated key multiplies rows in the joins that scoring makes; this is how a result of the
    wrong shape is explained to the user (error path only).
    """
    for name, raw in tables.items():
        spec = TABLES[name]
        if all(k in raw.collect_schema() for k in spec.key):
            _check_unique(spec, raw.select(spec.key))


def _check_table(spec: Table, raw: pl.LazyFrame) -> pl.LazyFrame:
    schema = raw.collect_schema()
    key = list(spec.key)
    _run_checks(spec, raw, _cast_rules(spec, schema), [k for k in key if k in schema])
    # From here on the columns have the schema's dtypes.
    present = [c for c in spec.columns if c.name in schema]
    frame = raw.select(pl.col(c.name).cast(c.dtype) for c in present)
    rules = [rule for c in present for rule in _value_rules(spec, c)]
    _run_checks(spec, frame, rules, key)
    _check_unique(spec, frame)
    # Later checks may read optional columns the table does not have: they are null.
    absent = [pl.lit(None, dtype=c.dtype).alias(c.name) for c in spec.columns if c.name not in schema]
    return frame.with_columns(absent)


#: Each agent's belief masses, summed per agent into ``mass_total`` (smallest: ``mass_min``).
_MASS_NOT_FINITE = _Rule(
    "mass",
    pl.col("mass_total").is_nan() | pl.col("mass_total").is_infinite(),
    "have NaN or infinite masses",
    "use finite masses >= 0",
    unit="agent(s)",
)
_MASS_NEGATIVE = _Rule(
    "mass", pl.col("mass_min") < 0, "have negative masses", "belief masses must be >= 0", unit="agent(s)"
)
_MASS_TOO_LARGE = _Rule(
    "mass",
    pl.col("mass_total") > 1 + MASS_SUM_TOLERANCE,
    f"have masses summing to more than 1 (+{MASS_SUM_TOLERANCE:g})",
    "an agent's belief masses must sum to <= 1 (less is an incomplete belief): renormalise them",
    unit="agent(s)",
)
_MASS_ALL_ZERO = _Rule(
    "mass",
    pl.col("mass_total") <= 0,
    "have all masses zero",
    "consensus, entropy and ER need a distribution: drop those agents' belief rows or give them mass",
    unit="agent(s)",
)
#: In this order: a NaN or a negative mass makes the sum rules meaningless.
_MASS_RULES = [_MASS_NOT_FINITE, _MASS_NEGATIVE, _MASS_TOO_LARGE, _MASS_ALL_ZERO]


def _check_masses(frame: pl.LazyFrame) -> None:
    totals = frame.group_by(AGENT_KEY).agg(mass_total=pl.col("mass").sum(), mass_min=pl.col("mass").min())
    _run_checks(TABLES["beliefs"], totals, _MASS_RULES, AGENT_KEY)


def check_agent_masses(agent_totals: pl.LazyFrame, *, labels: Labels | None = None) -> None:
    """The mass rules of :meth:`Dataset.validate` on per-agent sums already computed.

    ``agent_totals`` has, per agent, ``mass_total`` (the sum of its masses, null for an agent
    without belief rows) and ``mass_min``. Scoring applies the rules even without validation,
    at the cost of one aggregate over the agents: the formulas rely on them (a sum over 1 makes
    consensus and entropy meaningless, a zero total divides by zero). ``labels`` turns the
    frame's keys into the user's labels when they are codes.
    """
    _run_checks(TABLES["beliefs"], agent_totals, _MASS_RULES, AGENT_KEY, labels)


def check_values(name: str, frame: pl.LazyFrame, columns: list[str], *, labels: Labels | None = None) -> None:
    """The value rules of :meth:`Dataset.validate` (finite, >= 0, in [0, 1], allowed values) for
    ``columns`` of table ``name``, on a frame that scoring already holds: one aggregate query.

    The frame has the table's key columns (as codes, when ``labels`` decodes them) and ``columns``.
    """
    spec = TABLES[name]
    rules = [rule for column in columns for rule in _value_rules(spec, spec.column_map[column])]
    _run_checks(spec, frame, rules, list(spec.key), labels)


_ALTERNATIVE_RULES = [
    _Rule(
        "score",
        ~pl.col("_scores_finite"),
        "have NaN or infinite scores",
        "use null for a missing score, and finite numbers otherwise",
        unit="alternative(s)",
    ),
    _Rule(
        "score",
        (pl.col("_satisfaction_low") < 0) | (pl.col("_satisfaction_high") > 1),
        "have satisfaction scores outside [0, 1]",
        "scores on the default scale are satisfactions in [0, 1]; if they are raw measurements, "
        "set criteria.scale = 'raw' for those criteria",
        unit="alternative(s)",
    ),
]


def check_alternative_inputs(alternatives: pl.LazyFrame, *, labels: Labels | None = None) -> None:
    """The score rules of :meth:`Dataset.validate`, from the per-alternative extremes that the
    criteria pass computes anyway (:data:`~mas_eval.metrics.decision.criteria.CHECK_COLUMNS`).

    ``alternatives`` is keyed by ``run_id, alternative`` (codes, decoded by ``labels``). The
    criterion weights are checked before that pass, with :func:`check_values`.
    """
    key = ["run_id", "alternative"]
    _run_checks(TABLES["scores"], alternatives, _ALTERNATIVE_RULES, key, labels)


def check_run_keys(run_ids: pl.Series) -> None:
    """``runs.run_id`` not null and unique, given the ids **sorted** (as scoring's code book holds them)."""
    spec, key = TABLES["runs"], TABLES["runs"].key[0]
    nulls = run_ids.null_count()
    if nulls:
        msg = f"table 'runs', column {key!r}: {nulls} row(s) have a null key; every key column must be filled in"
        raise DataError(msg)
    repeated = run_ids.filter(run_ids.is_duplicated()).unique(maintain_order=True)
    if repeated.len():
        examples = format_keys([{key: value} for value in repeated.head(_EXAMPLES).to_list()])
        msg = (
            f"table {spec.name!r}, column {key!r}: {repeated.len()} key(s) occur more than once, e.g. at {examples}; "
            f"the key ({key}) must be unique: drop or merge the duplicates"
        )
        raise DataError(msg)


def _check_satisfaction(scores: pl.LazyFrame, criteria: pl.LazyFrame | None) -> None:
    spec = TABLES["scores"]
    if criteria is not None:
        criterion_key = list(TABLES["criteria"].key)
        scores = scores.join(criteria.select(*criterion_key, "scale"), on=criterion_key, how="left")
        on_satisfaction = pl.col("scale").is_null() | (pl.col("scale") == "satisfaction")
    else:
        on_satisfaction = pl.lit(True)
    rule = _Rule(
        "score",
        on_satisfaction & ((pl.col("score") < 0) | (pl.col("score") > 1)),
        "are satisfaction scores outside [0, 1]",
        "scores on the default scale are satisfactions in [0, 1]; if they are raw measurements, "
        "set criteria.scale = 'raw' for those criteria",
    )
    _run_checks(spec, scores, [rule], list(spec.key))


_NOT_PASS_FAIL = _Rule(
    "value",
    pl.col("passed").is_not_null() & (pl.col("value") != pl.col("passed").cast(pl.Float64)),
    "are pass/fail scores whose value is not 1 for passed and 0 for failed",
    "a pass is 1 and a fail 0; leave passed null for a score with other values",
)
_MIXED_PASS_FAIL = _Rule(
    "passed",
    pl.col("kinds") > 1,
    "are pass/fail in some runs and not in others",
    "a score is pass/fail in every run or in none: fill passed in every row of the name, or in none",
    unit="score name(s)",
)


def _check_outcomes(outcomes: pl.LazyFrame) -> None:
    spec = TABLES["outcomes"]
    _run_checks(spec, outcomes, [_NOT_PASS_FAIL], list(spec.key))
    kinds = outcomes.group_by("name").agg(kinds=pl.col("passed").is_null().n_unique())
    _run_checks(spec, kinds, [_MIXED_PASS_FAIL], ["name"])


#: The columns that, with ``epoch``, tell one run of a system on a case from its repeats.
_REPEAT_KEY = ["system", "case_id", "task", "variant", "epoch"]


def _check_epochs(runs: pl.LazyFrame) -> None:
    if "epoch" not in runs.collect_schema():
        return
    present = [c for c in _REPEAT_KEY if c in runs.collect_schema()]
    repeats = runs.filter(pl.col("epoch").is_not_null()).group_by(present).agg(copies=pl.len())
    rule = _Rule(
        "epoch",
        pl.col("copies") > 1,
        "are repeats of one system, case, task and variant that share an epoch",
        "give each repeat of a case its own epoch (1, 2, ...), or leave epoch null",
        unit="epoch(s)",
    )
    _run_checks(TABLES["runs"], repeats, [rule], present)


def _check_references(spec: Table, frame: pl.LazyFrame, parent_keys: pl.LazyFrame) -> None:
    key = spec.parent_key
    dangling = frame.select(key).unique().join(parent_keys, on=key, how="anti")
    count = dangling.select(pl.len()).collect().item()
    if count:
        examples = dangling.sort(key).head(_EXAMPLES).collect()
        msg = (
            f"table {spec.name!r}, column {key!r}: {count} {key}(s) not in table {spec.parent!r}, "
            f"e.g. {format_keys(examples.to_dicts())}; add those to {spec.parent!r} or drop their rows"
        )
        raise DataError(msg)


def check_types(tables: Mapping[str, pl.LazyFrame]) -> None:
    """The type rules of :func:`validate_tables` alone: every column castable to the schema's dtype.

    What a failed cast inside a query is turned into (:meth:`Dataset.reading
    <mas_eval.storage.dataset.Dataset.reading>`): one error naming the table, the column and the rows.
    """
    for name, raw in tables.items():
        spec = TABLES[name]
        schema = raw.collect_schema()
        _run_checks(spec, raw, _cast_rules(spec, schema), [k for k in spec.key if k in schema])


def validate_tables(tables: Mapping[str, pl.LazyFrame]) -> None:
    """Apply every rule to ``tables`` (as given, before conforming); raise on the first broken one.

    The schema drives it: each table's own rules, then each child table's ``parent_key``
    against its ``parent`` (every table of the Dataset has ``runs``, the required table, present).
    """
    checked = {name: _check_table(TABLES[name], frame) for name, frame in tables.items()}
    if "beliefs" in checked:
        _check_masses(checked["beliefs"])
    if "scores" in checked:
        _check_satisfaction(checked["scores"], checked.get("criteria"))
    if "outcomes" in checked:
        _check_outcomes(checked["outcomes"])
    _check_epochs(checked["runs"])
    for name, frame in checked.items():
        spec = TABLES[name]
        if spec.parent is not None and spec.parent in checked:
            _check_references(spec, frame, checked[spec.parent].select(spec.parent_key))
