"""The Dataset's validation rules, each with one clear message, entered through :func:`validate` alone.

Every message names the table, the column, up to five offending keys, and the fix. Checks
are batched: one aggregate query per table counts every violation, and only a broken rule
pays for a second query that fetches its example keys.

Most rules are decided by a run's own rows: they hold for a Dataset when they hold for each
part of its runs (a shard), which ``validate(tables, "part")`` checks where the part is read.
The others compare runs with each other or concern the tables keyed by case
(``validate(tables, "across")``), from small facts each part returns and the ``runs`` table.
``validate(tables)`` applies both to a whole Dataset. The other rule sets (:data:`RULES`) check
one rule alone, for the places that read a table anyway (a scan's cast, scoring's code book,
the sums a metric computes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import polars as pl

from mas_eval.data.schema import AGENT_KEY, MASS_SUM_TOLERANCE, RUN_KEY, TABLES, Column, Table
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, format_keys

__all__ = ["RULES", "Rules", "validate"]

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
    #: Whether the examples show the offending value beside the keys.
    show_value: bool = False


def _fail(spec: Table, rule: _Rule, frame: pl.LazyFrame, count: int, key: list[str], labels: Labels | None) -> None:
    shown = [*key, rule.column] if rule.show_value and rule.column not in key else key
    examples = frame.filter(rule.bad).select(shown).unique(maintain_order=False).sort(shown).head(_EXAMPLES)
    examples = (labels(examples) if labels is not None else examples).collect()
    msg = (
        f"table {spec.name!r}, column {rule.column!r}: {count} {rule.unit} {rule.problem}, "
        f"e.g. at {format_keys(examples.to_dicts())}; {rule.fix}"
    )
    raise rule.error(msg)


def _count_each(rules: list[_Rule]) -> list[pl.Expr]:
    """Expressions counting the rows (or groups) that break each rule."""
    return [rule.bad.sum().alias(f"r{i}") for i, rule in enumerate(rules)]


def _counts(frame: pl.LazyFrame, rules: list[_Rule]) -> tuple[int, ...]:
    """How many rows (or groups) of ``frame`` break each rule: one query."""
    return frame.select(_count_each(rules)).collect().row(0)


def _raise_broken(
    spec: Table,
    frame: pl.LazyFrame,
    rules: list[_Rule],
    counts: tuple[int, ...] | list[int],
    key: list[str],
    labels: Labels | None = None,
) -> None:
    for rule, count in zip(rules, counts, strict=True):
        if count:
            _fail(spec, rule, frame, count, key, labels)


def _run_checks(
    spec: Table, frame: pl.LazyFrame, rules: list[_Rule], key: list[str], labels: Labels | None = None
) -> None:
    if rules:
        _raise_broken(spec, frame, rules, _counts(frame, rules), key, labels)


def _check_storable(table: str, schema: pl.Schema) -> None:
    """Raise :class:`SchemaError` for a column of Python objects (Polars' ``Object`` type).

    No rule can check such a column, no cast can convert it and no Parquet file can hold it.
    """
    for name, have in schema.items():
        if have == pl.Object:
            msg = (
                f"table {table!r}, column {name!r}: holds Python objects (type Object), which cannot be checked or "
                "stored; convert them to strings or numbers first"
            )
            raise SchemaError(msg)


def _changed_by_cast(name: str, have: pl.DataType, want: pl.DataType) -> pl.Expr | None:
    """Return an expression true where casting column ``name`` from ``have`` to ``want`` would change a value.

    That is, change it rather than refuse it: a fractional number truncated to an integer, an integer beyond a
    float's 53 bits rounded, a number other than 0 or 1 made a boolean. None when no value can change that way (a
    string either parses or becomes null, which the rule of values that are not ``want`` finds).
    """
    numeric = have.is_numeric() or have == pl.Boolean
    if not numeric or not (want.is_numeric() or want == pl.Boolean):
        return None
    cast = pl.col(name).cast(want, strict=False)
    return cast.is_not_null() & (cast.cast(have, strict=False) != pl.col(name))


def _cast_rules(spec: Table, schema: pl.Schema) -> list[_Rule]:
    _check_storable(spec.name, schema)
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
                show_value=True,
            )
        )
        changed = _changed_by_cast(name, have, column.dtype)
        if changed is not None:
            rules.append(
                _Rule(
                    name,
                    changed,
                    f"hold values that {column.dtype} cannot hold exactly (a fraction would be truncated, "
                    "a number rounded), which are never changed silently",
                    f"store {column.dtype} values (round them yourself if that is what they mean)",
                    DataError,
                    show_value=True,
                )
            )
    return rules


_NULL_KEY = "have a null key"


def _value_rules(spec: Table, column: Column) -> list[_Rule]:
    col = pl.col(column.name)
    rules = []
    if column.name in spec.key:
        rules.append(_Rule(column.name, col.is_null(), _NULL_KEY, "every key column must be filled in"))
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


def _same_as_before(key: list[str]) -> pl.Expr:
    """Return an expression true on a row whose ``key`` equals the row's before (null on the first row)."""
    return pl.all_horizontal([pl.col(name) == pl.col(name).shift(1) for name in key])


def _in_strict_order(key: list[str]) -> pl.Expr:
    """Return an expression true when each row's ``key`` is greater than the row's before it, column by column.

    Rows in strictly increasing order hold no key twice, whatever the order compared by (it only
    has to tell equal values from others): this is a comparison of neighbours, where counting
    each key's copies hashes every key. A null key is not in order (it is an error of its own).
    """
    later, same = pl.lit(False), pl.lit(True)
    for name in key:
        now, before = pl.col(name), pl.col(name).shift(1)
        later = later | (same & (now > before))
        same = same & (now == before)
    return later.fill_null(False).slice(1).all()


def _check_unique(spec: Table, frame: pl.LazyFrame) -> None:
    """Check the key-uniqueness rule by counting each key's copies.

    :func:`_check_table` calls it only for rows out of key order (:func:`_in_strict_order`): a
    Dataset's files are written sorted by key (:meth:`Dataset.write
    <mas_eval.storage.dataset.Dataset.write>`), and checking that order costs a fraction of the
    count (docs/performance.md).
    """
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


def _check_unique_keys(tables: Mapping[str, pl.LazyFrame]) -> None:
    """Check the key-uniqueness rule of :func:`_validate_tables` alone, for every table (as given).

    A repeated key multiplies rows in the joins that scoring makes; this is how a result of the
    wrong shape is explained to the user (error path only).
    """
    for name, raw in tables.items():
        spec = TABLES[name]
        if all(k in raw.collect_schema() for k in spec.key):
            _check_unique(spec, raw.select(spec.key))


def _conformed(spec: Table, raw: pl.LazyFrame) -> pl.LazyFrame:
    """Return ``raw`` with the schema's dtypes, and null for the optional columns it does not have.

    Later checks may read them.
    """
    schema = raw.collect_schema()
    absent = [pl.lit(None, dtype=c.dtype).alias(c.name) for c in spec.columns if c.name not in schema]
    return raw.select(pl.col(c.name).cast(c.dtype) for c in spec.columns if c.name in schema).with_columns(absent)


def _check_table(
    spec: Table, raw: pl.LazyFrame, codes: pl.LazyFrame | None = None
) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """Check a table's own rules (types, values, unique keys); return it conformed, and its ordered keys.

    The second is a frame of its key columns, row for row, whose rows are in strictly increasing order (None if they
    are not).

    ``codes``: the key columns as integer codes, row for row (:func:`_validate_part`). When they
    are in strictly increasing order and none is null, the keys are unique and none is null,
    without comparing a string.
    """
    schema = raw.collect_schema()
    key = list(spec.key)
    _run_checks(spec, raw, _cast_rules(spec, schema), [k for k in key if k in schema])
    # From here on the columns have the schema's dtypes.
    present = [c for c in spec.columns if c.name in schema]
    frame = raw.select(pl.col(c.name).cast(c.dtype) for c in present)
    rules = [rule for c in present for rule in _value_rules(spec, c)]
    if codes is not None and codes.select(_in_strict_order(key) & _filled(key)).collect().item():
        # No key is null: its rule is decided, and the key strings need not be read.
        rules = [rule for rule in rules if not (rule.column in key and rule.problem == _NULL_KEY)]
        _run_checks(spec, frame, rules, key)
        return _conformed(spec, raw), codes
    # The value rules and the key order in one read of the table.
    *counts, ordered = frame.select(*_count_each(rules), _in_strict_order(key).alias("_ordered")).collect().row(0)
    _raise_broken(spec, frame, rules, counts, key)
    if not ordered:
        _check_unique(spec, frame)
    conformed = _conformed(spec, raw)
    return conformed, conformed if ordered else None


def _filled(columns: list[str]) -> pl.Expr:
    """Return an expression true when no row has a null in ``columns``."""
    return pl.all_horizontal(pl.col(name).is_not_null() for name in columns).all()


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


def _check_masses(frame: pl.LazyFrame, ordered_by: pl.LazyFrame | None = None) -> None:
    """Check the mass rules on each agent's sums.

    ``ordered_by``: the belief rows' keys (or their codes), row for row, when they are in strictly increasing order.

    Rows in key order hold each agent's rows together, so an agent is a stretch of equal
    ``run_id, agent_id`` numbered in one pass, and the sums are grouped by that number instead
    of hashing the keys (docs/performance.md). Only a broken rule groups by the keys to
    name the agents.
    """
    sums = {"mass_total": pl.col("mass").sum(), "mass_min": pl.col("mass").min()}
    if ordered_by is not None:
        agent = (~_same_as_before(AGENT_KEY).fill_null(False)).cum_sum().alias("_agent")
        rows = pl.concat([ordered_by.select(agent), frame.select("mass")], how="horizontal")
        totals = rows.group_by("_agent").agg(**sums)
        if not any(_counts(totals, _MASS_RULES)):
            return
    totals = frame.group_by(AGENT_KEY).agg(**sums)
    _run_checks(TABLES["beliefs"], totals, _MASS_RULES, AGENT_KEY)


def _check_agent_masses(agent_totals: pl.LazyFrame, *, labels: Labels | None = None) -> None:
    """Check the mass rules of :meth:`Dataset.validate` on per-agent sums already computed.

    ``agent_totals`` has, per agent, ``mass_total`` (the sum of its masses, null for an agent
    without belief rows) and ``mass_min``. Scoring applies the rules even without validation,
    at the cost of one aggregate over the agents: the formulas rely on them (a sum over 1 makes
    consensus and entropy meaningless, a zero total divides by zero). ``labels`` turns the
    frame's keys into the user's labels when they are codes.
    """
    _run_checks(TABLES["beliefs"], agent_totals, _MASS_RULES, AGENT_KEY, labels)


def _check_values(name: str, frame: pl.LazyFrame, columns: list[str], *, labels: Labels | None = None) -> None:
    """Check the value rules of :meth:`Dataset.validate` for ``columns`` of table ``name`` in one query.

    The rules: finite, >= 0, in [0, 1], allowed values; on a frame that scoring already holds.

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


def _check_alternative_inputs(alternatives: pl.LazyFrame, *, labels: Labels | None = None) -> None:
    """Check the score rules of :meth:`Dataset.validate` from the per-alternative extremes.

    The criteria pass computes those extremes anyway (:data:`~mas_eval.metrics.decision.criteria.CHECK_COLUMNS`).

    ``alternatives`` is keyed by ``run_id, alternative`` (codes, decoded by ``labels``). The
    criterion weights are checked before that pass, with :func:`_check_values`.
    """
    key = ["run_id", "alternative"]
    _run_checks(TABLES["scores"], alternatives, _ALTERNATIVE_RULES, key, labels)


def _check_run_keys(run_ids: pl.Series) -> None:
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
    out_of_range = (pl.col("score") < 0) | (pl.col("score") > 1)
    # Only the scores outside [0, 1] are looked up in criteria, not every score (docs/performance.md).
    scores = scores.filter(out_of_range)
    if criteria is not None:
        criterion_key = list(TABLES["criteria"].key)
        scores = scores.join(criteria.select(*criterion_key, "scale"), on=criterion_key, how="left")
        on_satisfaction = pl.col("scale").is_null() | (pl.col("scale") == "satisfaction")
    else:
        on_satisfaction = pl.lit(True)
    rule = _Rule(
        "score",
        on_satisfaction & out_of_range,
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


#: The facts a part of the runs gives :func:`_check_across_parts`: each score name of ``outcomes``
#: and whether it is left without pass/fail (``unpassed``) in some row of the part.
_KINDS_SCHEMA = pl.Schema({"name": pl.String, "unpassed": pl.Boolean})


def _outcome_kinds(outcomes: pl.LazyFrame | None) -> pl.DataFrame:
    """Each score name with each of pass/fail and not that its rows in ``outcomes`` hold."""
    if outcomes is None:
        return pl.DataFrame(schema=_KINDS_SCHEMA)
    return outcomes.select("name", unpassed=pl.col("passed").is_null()).unique().collect()


def _check_kinds(kinds: list[pl.DataFrame]) -> None:
    """Check that a score name is pass/fail in every run or in none, from the parts' :func:`_outcome_kinds`."""
    per_name = pl.concat(kinds).lazy().group_by("name").agg(kinds=pl.col("unpassed").n_unique())
    _run_checks(TABLES["outcomes"], per_name, [_MIXED_PASS_FAIL], ["name"])


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
    # Rows sorted by key hold each reference in one stretch: its first row stands for it, and a
    # comparison of neighbours finds those rows where a hash of every reference found them
    # (unsorted rows only repeat some). Only a dangling one pays for the count of distinct ones.
    firsts = frame.select(key).filter(pl.col(key).ne_missing(pl.col(key).shift(1)))
    if firsts.join(parent_keys, on=key, how="anti").select(pl.len()).collect().item() == 0:
        return
    dangling = frame.select(key).unique().join(parent_keys, on=key, how="anti")
    count = dangling.select(pl.len()).collect().item()
    if count:
        examples = dangling.sort(key).head(_EXAMPLES).collect()
        msg = (
            f"table {spec.name!r}, column {key!r}: {count} {key}(s) not in table {spec.parent!r}, "
            f"e.g. {format_keys(examples.to_dicts())}; add those to {spec.parent!r} or drop their rows"
        )
        raise DataError(msg)


def _check_types(tables: Mapping[str, pl.LazyFrame]) -> None:
    """Check the type rules of :func:`_validate_tables` alone: every column castable to the schema's dtype.

    What a failed cast inside a query is turned into (:meth:`Dataset.reading
    <mas_eval.storage.dataset.Dataset.reading>`): one error naming the table, the column and the rows.
    """
    for name, raw in tables.items():
        spec = TABLES[name]
        schema = raw.collect_schema()
        _run_checks(spec, raw, _cast_rules(spec, schema), [k for k in spec.key if k in schema])


def _check_exact_casts(name: str, raw: pl.LazyFrame) -> None:
    """Check, alone, that no value changes when table ``name`` is cast to the schema's dtypes.

    A fraction truncated to an integer, a number other than 0 or 1 made a boolean: one query, and none when every
    column has its schema's type already (a Dataset this package wrote).
    """
    spec = TABLES[name]
    schema = raw.collect_schema()
    _check_storable(name, schema)
    rules = [
        rule
        for rule in _cast_rules(spec, schema)
        if rule.error is DataError  # the rule of values changed; the others are decided where the cast fails
    ]
    _run_checks(spec, raw, rules, [k for k in spec.key if k in schema])


def _check_parts_own(
    tables: Mapping[str, pl.LazyFrame], codes: Mapping[str, pl.LazyFrame] | None = None
) -> tuple[dict[str, pl.LazyFrame], set[str], pl.DataFrame]:
    """Check each table's own rules, then those across the tables of the same runs but references.

    Returns the tables conformed, those whose references the codes found (:func:`_validate_part`), and the facts for
    :func:`_check_across_parts`.
    """
    checked, ordered_by, found = {}, {}, set()
    for name, frame in tables.items():
        table_codes = (codes or {}).get(name)
        checked[name], ordered_by[name] = _check_table(TABLES[name], frame, table_codes)
        if table_codes is not None and ordered_by[name] is table_codes:
            found.add(name)  # no run code is null: every run_id is a row of runs
    if "beliefs" in checked:
        _check_masses(checked["beliefs"], ordered_by["beliefs"])
    if "scores" in checked:
        _check_satisfaction(checked["scores"], checked.get("criteria"))
    if "outcomes" in checked:
        spec = TABLES["outcomes"]
        _run_checks(spec, checked["outcomes"], [_NOT_PASS_FAIL], list(spec.key))
    return checked, found, _outcome_kinds(checked.get("outcomes"))


def _check_all_references(checked: Mapping[str, pl.LazyFrame], found: Collection[str] = ()) -> None:
    """Check each child table's ``parent_key`` against its ``parent``, where both are present.

    The tables whose references are ``found`` already are left out.
    """
    for name, frame in checked.items():
        spec = TABLES[name]
        if spec.parent is not None and spec.parent in checked and name not in found:
            _check_references(spec, frame, checked[spec.parent].select(spec.parent_key))


def _validate_part(tables: Mapping[str, pl.LazyFrame], codes: Mapping[str, pl.LazyFrame] | None = None) -> pl.DataFrame:
    """Every rule a run's own rows decide, on the tables keyed by ``run_id`` of some of the runs.

    ``tables`` hold every row of their runs and ``runs`` among them (a shard, whose rows of a
    run all lie in it). What holds for each part holds for the Dataset, given that no run is in
    two parts (a shard's runs all hash to it): keys unique, references found, sums per agent
    and per run. Returns the small facts :func:`_check_across_parts` combines for the rules
    that compare runs with each other.

    ``codes`` gives, for some tables, their key columns as integer codes, row for row: codes
    that keep the order and the equality of the values they stand for, null where a value is
    null, and for ``run_id`` the run's row in ``runs`` (null if it has none), as a shard's
    stored codes are (:mod:`mas_eval.storage.stored_codes`). Then the key order, the agents'
    groups and the references are checked on integers, not strings (docs/performance.md). A
    rule the codes find broken is checked again on the values, which words it.
    """
    checked, found, kinds = _check_parts_own(tables, codes)
    _check_all_references(checked, found)
    return kinds


def _check_across_parts(
    runs: pl.LazyFrame, facts: list[pl.DataFrame], by_case: Mapping[str, pl.LazyFrame] | None = None
) -> None:
    """Check the rules :func:`_validate_part` cannot decide in one part.

    A score name pass/fail in every run or in none (from the parts' ``facts``), each repeat of a case its own epoch
    (from the whole ``runs``), and the own rules of the tables keyed by case (``by_case``: ground truth, read
    whole).
    """
    for name, frame in (by_case or {}).items():
        _check_table(TABLES[name], frame)
    _check_kinds(facts)
    _check_epochs(_conformed(TABLES["runs"], runs))


def _validate_tables(tables: Mapping[str, pl.LazyFrame]) -> pl.DataFrame:
    """Apply every rule to ``tables`` (as given, before conforming); raise on the first broken one; return the facts.

    The schema drives it: each table's own rules, then each child table's ``parent_key``
    against its ``parent`` (every table of the Dataset has ``runs``, the required table, present).
    """
    checked, _, kinds = _check_parts_own(tables)
    _check_kinds([kinds])
    _check_epochs(checked["runs"])
    _check_all_references(checked)
    return kinds


#: The rule sets :func:`validate` applies (its ``rules``).
Rules = Literal[
    "all",
    "part",
    "across",
    "types",
    "exact casts",
    "storable",
    "unique keys",
    "run keys",
    "values",
    "agent masses",
    "alternative inputs",
]
#: Every name :data:`Rules` allows.
RULES: tuple[str, ...] = get_args(Rules)


def validate(
    tables: Mapping[str, pl.LazyFrame | pl.DataFrame],
    rules: Rules = "all",
    *,
    codes: Mapping[str, pl.LazyFrame] | None = None,
    facts: Sequence[pl.DataFrame] = (),
    columns: Sequence[str] = (),
    labels: Labels | None = None,
) -> pl.DataFrame:
    """Apply the rule set ``rules`` to ``tables``; raise the first broken rule, else return the facts across parts.

    The one way into the Dataset's rules: the :class:`~mas_eval.storage.dataset.Dataset` (its
    ``validate``, ``validate_shard``, ``validate_across``, ``scan`` and ``check_run_ids``) and the
    metrics that check the sums they compute call it.

    Parameters
    ----------
    tables
        Frames by table name, as given (before conforming to the schema).
    rules
        ``"all"``: every rule, on a whole Dataset. ``"part"``: the rules a run's own rows decide,
        on the tables keyed by ``run_id`` of some of the runs (a shard), every row of their runs
        and ``runs`` among them; ``codes`` may give, for some tables, their key columns as
        integer codes row for row (a shard's stored codes, :mod:`mas_eval.storage.stored_codes`),
        so that keys, agents and references are checked on integers. ``"across"``: the rules that
        compare runs with each other, from ``tables["runs"]`` (whole) and the ``facts`` every part
        returned, and the own rules of the tables keyed by case among ``tables`` (ground truth).
        One rule alone: ``"types"`` (every column castable to the schema's dtype), ``"exact
        casts"`` (no value changed by that cast), ``"storable"`` (no column of Python objects),
        ``"unique keys"``, ``"run keys"`` (``tables["runs"]``'s ``run_id`` filled in and unique,
        given **sorted**, as scoring's code book holds them), ``"values"`` (finite, >= 0, in
        [0, 1], allowed values, for ``columns`` of each table), ``"agent masses"`` (the mass
        rules, on ``tables["beliefs"]`` holding ``mass_total`` and ``mass_min`` per agent) and
        ``"alternative inputs"`` (the score rules, on ``tables["scores"]`` holding each
        alternative's extremes: :data:`~mas_eval.metrics.decision.criteria.CHECK_COLUMNS`).
    codes, facts, columns
        As ``rules`` says; ignored by the other rule sets.
    labels
        Turns a frame of key codes into the user's labels, for the messages of ``"values"``,
        ``"agent masses"`` and ``"alternative inputs"`` on frames keyed by codes.

    Returns
    -------
    polars.DataFrame
        The facts the rules across parts combine (``name, unpassed``: each score name of
        ``outcomes`` and whether some row leaves it without pass/fail), from ``"all"`` and
        ``"part"``; empty for the other rule sets.

    Raises
    ------
    SchemaError, DataError
        The first broken rule: the table, the column, up to five keys, and the fix.
    InvalidParameterError
        ``rules`` is not one of :data:`RULES`.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.LazyFrame({"run_id": ["r1", "r2"], "system": ["mas", "single"], "case_id": ["c1", "c1"]})
    >>> validate({"runs": runs}).height
    0
    >>> validate({"runs": runs.with_columns(tokens=pl.lit(-3))}, "values", columns=["tokens"])
    Traceback (most recent call last):
    ...
    mas_eval.errors.DataError: table 'runs', column 'tokens': 2 row(s) are negative, e.g. at (run_id='r1'), (run_id='r2'); tokens must be >= 0
    """  # noqa: E501
    lazy = {name: frame.lazy() for name, frame in tables.items()}
    match rules:
        case "all":
            return _validate_tables(lazy)
        case "part":
            return _validate_part(lazy, codes)
        case "across":
            by_case = {name: frame for name, frame in lazy.items() if RUN_KEY not in TABLES[name].key}
            _check_across_parts(lazy["runs"], list(facts), by_case)
        case "exact casts" | "storable" | "values":
            _each_table(lazy, rules, list(columns), labels)
        case _:
            _one_rule(lazy, rules, labels)
    return pl.DataFrame(schema=_KINDS_SCHEMA)


def _each_table(tables: Mapping[str, pl.LazyFrame], rules: str, columns: list[str], labels: Labels | None) -> None:
    """Apply :func:`validate`'s ``rules`` that check one table at a time to each of ``tables``."""
    for name, frame in tables.items():
        if rules == "exact casts":
            _check_exact_casts(name, frame)
        elif rules == "storable":
            _check_storable(name, frame.collect_schema())
        else:
            _check_values(name, frame, columns, labels=labels)


def _one_rule(tables: Mapping[str, pl.LazyFrame], rules: str, labels: Labels | None) -> None:
    """Apply :func:`validate`'s ``rules`` that check one rule on the tables together."""
    match rules:
        case "types":
            _check_types(tables)
        case "unique keys":
            _check_unique_keys(tables)
        case "run keys":
            _check_run_keys(tables["runs"].select(RUN_KEY).collect()[RUN_KEY])
        case "agent masses":
            _check_agent_masses(tables["beliefs"], labels=labels)
        case "alternative inputs":
            _check_alternative_inputs(tables["scores"], labels=labels)
        case _:
            msg = f"validate: rules={rules!r} is not one of {', '.join(map(repr, RULES))}"
            raise InvalidParameterError(msg)
