"""The answers family's reference tables — synonyms, lexicon, markers, fact sets — and their compiled form.

Four shipped CSVs (general medical knowledge), each extendable by the user:

* **synonyms**: the diagnosis family's synonym table (``mas_eval/metrics/diagnosis/synonyms.csv``,
  one source of truth for diagnosis names), less the terms of ``ambiguous.csv`` that read as
  ordinary words in free text ("all", "mg", "i.e."), plus this family's ``synonyms.csv``
  (medication brands, abbreviations of treatments, symptoms and tests, British spellings);
* **lexicon** (``lexicon.csv``): clinical entities by category, :data:`CATEGORIES`;
* **markers** (``markers.csv``): structure, evidence and fallacy markers of a rationale;
* **facts** (``facts.csv``): the fact set of a diagnosis (factual consistency).

MedAISure's own small tables ship beside them (``medaisure_*.csv``; ``shipped="medaisure"``,
parameter ``answers_vocabulary``).

:class:`Vocabulary` compiles them once: every term normalised
(:func:`~mas_eval.metrics.answers.normalise.normalise_text`) and passed through the synonym map,
synonym chains followed, and the search patterns built; a bad table is refused with a message
naming it, the rows and the fix.

>>> vocabulary = Vocabulary.shipped()
>>> pl.select(vocabulary.normalise(pl.lit("Pt w/ SOB; started Tylenol & abx for CAP?"))).item()
'pt w shortness of breath started acetaminophen antibiotics for cap'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

import polars as pl

from mas_eval.constraints import Options, check_parameter, validate_params
from mas_eval.errors import DataError, InvalidParameterError, format_keys
from mas_eval.metrics.answers.normalise import (
    Matching,
    Normalisation,
    as_written,
    canonical,
    longest_first,
    medaisure_text,
    named_as,
    normalise_text,
    pattern,
    pattern_of,
    spaced,
)
from mas_eval.metrics.diagnosis.equivalence import follow_chains, synonym_table
from mas_eval.metrics.diagnosis.tables import shipped_table, string_table

__all__ = [
    "CATEGORIES",
    "MARKER_KINDS",
    "ROLE_KINDS",
    "PatternSet",
    "Tables",
    "Vocabulary",
    "answer_synonyms",
    "fact_table",
    "lexicon_table",
    "marker_table",
]

#: Entity categories of clinical accuracy, in the order of their default weights.
CATEGORIES = ("diagnoses", "treatments", "medications", "symptoms", "labs")
#: Kinds of reasoning marker.
MARKER_KINDS = ("structure", "evidence", "fallacy")
#: Which shipped tables: the package's own (``"spec"``) or MedAISure's (``"medaisure"``).
Tables = Literal["spec", "medaisure"]
#: Separates the forms of one marker or fact in its cell ("first|firstly").
FORMS = "|"

_PACKAGE = "mas_eval.metrics.answers"
_CODE = pl.UInt32
_MATCHING = Options.of(Matching)
_MATCHINGS: tuple[Matching, ...] = _MATCHING.values
#: The constraint of the public table functions' ``shipped``.
_SHIPPED = {"shipped": [Options.of(Tables)]}

_SYNONYM_COLUMNS = {"term": "a word or phrase", "canonical": "the name it means"}
_LEXICON_COLUMNS = {"term": "a clinical entity", "category": f"one of {', '.join(CATEGORIES)}"}
_MARKER_COLUMNS = {"kind": f"one of {', '.join(MARKER_KINDS)}", "marker": "its forms, separated by '|'"}
_FACT_COLUMNS = {"diagnosis": "a diagnosis", "fact": "a fact of it, its forms separated by '|'"}


def _shipped(file: str, columns: dict[str, str], tables: Tables = "spec") -> pl.DataFrame:
    return shipped_table(file if tables == "spec" else f"medaisure_{file}", tuple(columns), _PACKAGE)


def _extended(
    shipped: pl.DataFrame,
    extra: object,
    name: str,
    check: Callable[[object, str], pl.DataFrame],
    *,
    replace: bool,
    key: str | None = None,
) -> pl.DataFrame:
    """Extend (or replace) ``shipped`` by the user's ``extra`` rows, checked by ``check``.

    With ``key``, an ``extra`` row overrides the shipped rows of the same normalised ``key``.
    """
    if extra is None:
        if replace:
            msg = f"{name}: replace=True needs a table in extra"
            raise InvalidParameterError(msg)
        return shipped.clone()
    added = check(extra, f"{name}(extra)")
    if replace:
        return added
    if key is not None:
        overridden = added.select(normalise_text(pl.col(key))).to_series().implode()
        shipped = shipped.filter(~normalise_text(pl.col(key)).is_in(overridden))
    return pl.concat([shipped, added])


@validate_params(_SHIPPED)
def answer_synonyms(
    extra: pl.DataFrame | None = None, *, replace: bool = False, shipped: Tables = "spec"
) -> pl.DataFrame:
    """Return the answers' synonym table: the diagnosis synonyms less the ambiguous terms, plus this family's.

    Parameters
    ----------
    extra
        Rows to add, String columns ``term`` and ``canonical``; a term of ``extra`` overrides the
        shipped rows of the same (normalised) term, and brings back an ambiguous one.
    replace
        Use ``extra`` alone.
    shipped
        ``"medaisure"``: MedAISure's four rows (``medaisure_synonyms.csv``) instead.

    Returns
    -------
    pl.DataFrame
        ``term, canonical`` as written (:class:`Vocabulary` normalises them).

    Examples
    --------
    >>> table = answer_synonyms()
    >>> table.filter(pl.col("term").is_in(["mi", "tylenol", "mg"])).sort("term").rows()
    [('mi', 'myocardial infarction'), ('tylenol', 'acetaminophen')]
    """
    if shipped == "spec":
        ambiguous = _shipped("ambiguous.csv", {"term": "", "reason": ""}).select(normalise_text(pl.col("term")))
        diagnosis = synonym_table().filter(~normalise_text(pl.col("term")).is_in(ambiguous.to_series().implode()))
        table = pl.concat([diagnosis, _shipped("synonyms.csv", _SYNONYM_COLUMNS)])
    else:
        table = _shipped("synonyms.csv", _SYNONYM_COLUMNS, shipped)
    return _extended(table, extra, "answer_synonyms", _check_synonyms, replace=replace, key="term")


@validate_params(_SHIPPED)
def lexicon_table(
    extra: pl.DataFrame | None = None, *, replace: bool = False, shipped: Tables = "spec"
) -> pl.DataFrame:
    """Return the entity lexicon: the shipped ``lexicon.csv`` (a few hundred common terms), extended or replaced.

    Parameters
    ----------
    extra
        Rows to add, String columns ``term`` and ``category`` (one of :data:`CATEGORIES`).
    replace
        Use ``extra`` alone.
    shipped
        ``"medaisure"``: MedAISure's 33 rows (``medaisure_lexicon.csv``) instead.

    Returns
    -------
    pl.DataFrame
        ``term, category`` as written.

    Examples
    --------
    >>> lexicon_table().filter(pl.col("term") == "insulin").rows()
    [('insulin', 'treatments'), ('insulin', 'medications')]
    """
    table = _shipped("lexicon.csv", _LEXICON_COLUMNS, shipped)
    return _extended(table, extra, "lexicon_table", _check_lexicon, replace=replace)


@validate_params(_SHIPPED)
def marker_table(extra: pl.DataFrame | None = None, *, replace: bool = False, shipped: Tables = "spec") -> pl.DataFrame:
    """Return the reasoning markers: shipped ``markers.csv`` (MedAISure's lists), extended or replaced.

    ``kind`` is one of :data:`MARKER_KINDS`; ``marker`` its forms separated by ``|``.
    ``shipped="medaisure"``: MedAISure's markers exactly as it lists them (``medaisure_markers.csv``).

    >>> marker_table().filter(pl.col("kind") == "fallacy").height
    8
    >>> marker_table(shipped="medaisure").filter(pl.col("kind") == "structure").height
    13
    """
    table = _shipped("markers.csv", _MARKER_COLUMNS, shipped)
    return _extended(table, extra, "marker_table", _check_markers, replace=replace)


@validate_params(_SHIPPED)
def fact_table(extra: pl.DataFrame | None = None, *, replace: bool = False, shipped: Tables = "spec") -> pl.DataFrame:
    """Return the fact sets: shipped ``facts.csv`` (``diagnosis, fact``, forms split by ``|``), extended or replaced.

    ``shipped="medaisure"``: MedAISure's keyword sets, one keyword a fact (``medaisure_facts.csv``).

    >>> fact_table().filter(pl.col("diagnosis") == "sepsis")["fact"].to_list()
    ['iv fluids|fluids', 'lactate', 'hypotension']
    >>> fact_table(shipped="medaisure").filter(pl.col("diagnosis") == "sepsis")["fact"].to_list()
    ['iv fluids', 'fluids', 'lactate', 'hypotension']
    """
    table = _shipped("facts.csv", _FACT_COLUMNS, shipped)
    return _extended(table, extra, "fact_table", _check_facts, replace=replace)


# --- compiling ------------------------------------------------------------------------------------------


def _refuse_empty(frame: pl.DataFrame, expr: pl.Expr, name: str, column: str) -> None:
    """Raise a :class:`DataError` naming the rows of ``frame`` whose ``expr`` (of ``column``) has no words."""
    empty = frame.with_row_index("row").filter(normalise_text(expr) == "")
    if empty.height:
        rows = format_keys(empty.select("row", column).to_dicts())
        msg = (
            f"{name}: {empty.height} row(s) whose {column} has no words once normalised (punctuation and spaces "
            f"only): {rows}; remove them"
        )
        raise DataError(msg)


def _refuse_unknown(frame: pl.DataFrame, column: str, allowed: tuple[str, ...], name: str) -> None:
    bad = frame.with_row_index("row").filter(~pl.col(column).is_in(allowed))
    if bad.height:
        rows = format_keys(bad.select("row", column).to_dicts())
        allowed_text = ", ".join(allowed)
        msg = f"{name}: {bad.height} row(s) with an unknown {column}: {rows}; {column} must be one of {allowed_text}"
        raise DataError(msg)


def _check_synonyms(table: object, name: str) -> pl.DataFrame:
    table = string_table(table, name, _SYNONYM_COLUMNS, "a synonym table")
    for column in _SYNONYM_COLUMNS:
        _refuse_empty(table, pl.col(column), name, column)
    return table


def _check_lexicon(table: object, name: str) -> pl.DataFrame:
    table = string_table(table, name, _LEXICON_COLUMNS, "a lexicon")
    _refuse_unknown(table, "category", CATEGORIES, name)
    _refuse_empty(table, pl.col("term"), name, "term")
    return table


def _every_form_has_words(column: str) -> pl.Expr:
    # A cell passes when its emptiest form has words: the min of each form's normalised length.
    forms = pl.col(column).str.split(FORMS).list.eval(normalise_text(pl.element()).str.len_bytes())
    return pl.when(forms.list.min() > 0).then(pl.lit("ok")).otherwise(pl.lit(""))


def _check_markers(table: object, name: str) -> pl.DataFrame:
    table = string_table(table, name, _MARKER_COLUMNS, "a marker table")
    _refuse_unknown(table, "kind", MARKER_KINDS, name)
    _refuse_empty(table, _every_form_has_words("marker"), name, "marker")
    return table


def _check_facts(table: object, name: str) -> pl.DataFrame:
    table = string_table(table, name, _FACT_COLUMNS, "a fact table")
    _refuse_empty(table, pl.col("diagnosis"), name, "diagnosis")
    _refuse_empty(table, _every_form_has_words("fact"), name, "fact")
    return table


def _resolved_synonyms(table: pl.DataFrame, normal: Callable[[pl.Expr], pl.Expr] = normalise_text) -> pl.DataFrame:
    """Return the ``term → canonical`` pairs normalised by ``normal``, chains followed, self-maps dropped.

    Clashes and cycles are refused.
    """
    normalised = _check_synonyms(table, "synonyms").with_columns(
        term_n=normal(pl.col("term")), canonical_n=normal(pl.col("canonical"))
    )
    mapping = normalised.filter(pl.col("term_n") != pl.col("canonical_n")).select(
        term="term_n", canonical="canonical_n"
    )
    clash = (
        mapping.group_by("term")
        .agg(pl.col("canonical").unique().sort())
        .filter(pl.col("canonical").list.len() > 1)
        .sort("term")
    )
    if clash.height:
        shown = format_keys(clash.rename({"canonical": "canonicals"}).to_dicts())
        msg = f"synonyms: {clash.height} term(s) mapped to different canonical names: {shown}; keep one row per term"
        raise DataError(msg)
    return follow_chains(mapping.unique())


def _synonym_patterns(resolved: pl.DataFrame) -> tuple[list[str], list[str]]:
    """Return the patterns and replacements of the synonym pass, longest first.

    Every canonical name maps to itself, so that a text already holding a canonical name longer
    than a term inside it keeps it ("hiv infection" is not rewritten to "hiv infection infection").
    """
    targets = dict(zip(resolved["term"], resolved["canonical"], strict=True))
    targets |= {name: name for name in resolved["canonical"] if name not in targets}
    patterns = longest_first(pattern(term) for term in targets)
    lookup = {pattern(term): pattern(name) for term, name in targets.items()}
    return patterns, [lookup[p] for p in patterns]


def _forms(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """``frame`` with one row per form of ``column`` (``|``-separated), as ``form``."""
    return frame.with_columns(form=pl.col(column).str.split(FORMS)).explode("form")


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The compiled reference tables: normalised, through the synonym map, with their search patterns.

    Build it with :meth:`of` (from tables) or :meth:`shipped`; pass it to
    :func:`~mas_eval.metrics.answers.suite.answer_scores`.

    Attributes
    ----------
    synonyms
        ``term, canonical``: normalised, chains followed (a → b → c is a → c), no self-maps.
    lexicon
        ``term, category``: unique; a term normalised and mapped (``"MI"`` → ``myocardial infarction``).
    markers
        ``kind, marker, form``: one row per form; ``marker`` names the marker (its mapped forms joined by ``|``).
    facts
        ``diagnosis, fact, form``: one row per form of a fact of a diagnosis, mapped likewise.
    normalisation
        How texts are normalised (:data:`~mas_eval.metrics.answers.normalise.Normalisation`).
        ``"medaisure"``: MedAISure's :func:`~mas_eval.metrics.answers.normalise.medaisure_text`,
        without the synonym map; the tables' terms are used as written
        (:func:`~mas_eval.metrics.answers.normalise.as_written`: lowercase, nothing deleted, not
        mapped), so a term with a character that normalisation deletes ("x-ray") never occurs,
        as in MedAISure; the synonym map then only rewrites words for the entity extraction
        ``"phrases_then_words"``.
    """

    synonyms: pl.DataFrame
    lexicon: pl.DataFrame
    markers: pl.DataFrame
    facts: pl.DataFrame
    normalisation: Normalisation = "spec"
    _synonym_patterns: tuple[list[str], list[str]] = field(repr=False, compare=False, default=([], []))
    _lookups: dict[tuple[str, str], PatternSet] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def of(
        cls,
        *,
        synonyms: pl.DataFrame | None = None,
        lexicon: pl.DataFrame | None = None,
        markers: pl.DataFrame | None = None,
        facts: pl.DataFrame | None = None,
        normalisation: Normalisation = "spec",
    ) -> Vocabulary:
        """Compile the tables for ``normalisation``.

        Each defaults to the shipped one: :func:`answer_synonyms`, :func:`lexicon_table`,
        :func:`marker_table`, :func:`fact_table`.

        Raises
        ------
        InvalidParameterError
            A table that is not a polars DataFrame.
        SchemaError
            A missing column, or one that does not hold strings.
        DataError
            A null value; a term, form or diagnosis without words once normalised; an unknown
            category or marker kind; a term mapped to two canonical names; a synonym cycle.
        """
        check_parameter("normalisation", normalisation, [Options.of(Normalisation)], where="Vocabulary.of")
        medaisure = normalisation == "medaisure"
        synonyms = answer_synonyms() if synonyms is None else synonyms
        resolved = _resolved_synonyms(synonyms, as_written if medaisure else normalise_text)
        patterns = ([], []) if medaisure else _synonym_patterns(resolved)
        draft = cls(resolved, pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), normalisation, patterns)
        mapped = as_written if medaisure else draft.normalise
        lexicon = _check_lexicon(lexicon_table() if lexicon is None else lexicon, "lexicon")
        lexicon = lexicon.select(term=mapped(pl.col("term")), category="category").unique().sort("category", "term")
        markers = _check_markers(marker_table() if markers is None else markers, "markers")
        markers = _named(_forms(markers.with_row_index("row"), "marker").with_columns(form=mapped(pl.col("form"))),
                         "marker", ["kind"])  # fmt: skip
        facts = _check_facts(fact_table() if facts is None else facts, "facts")
        facts = _forms(facts.with_row_index("row").with_columns(diagnosis=mapped(pl.col("diagnosis"))), "fact")
        facts = _named(facts.with_columns(form=mapped(pl.col("form"))), "fact", ["diagnosis"])
        compiled = cls(resolved, lexicon, markers, facts, normalisation, patterns)
        compiled._lookups.update(_lookups(compiled))
        return compiled

    @staticmethod
    def shipped(tables: Tables = "spec", normalisation: Normalisation = "spec") -> Vocabulary:
        """Return the shipped ``tables`` (:data:`Tables`) compiled for ``normalisation``, once per process.

        >>> Vocabulary.shipped("medaisure", "medaisure").lexicon.height
        33
        """
        return _shipped_vocabulary(tables, normalisation)

    # --- normalisation ----------------------------------------------------------------------------

    def spaced(self, expr: pl.Expr) -> pl.Expr:
        """Normalise texts and pass them through the synonym map, in the spaced form matching runs on.

        The spaced form is :func:`~mas_eval.metrics.answers.normalise.spaced`'s; one Aho–Corasick
        pass goes over every term.
        """
        if self.normalisation == "medaisure":
            return named_as(pl.lit(" ") + medaisure_text(expr) + pl.lit(" "), expr)
        patterns, replacements = self._synonym_patterns
        text = spaced(expr)
        if patterns:
            text = text.str.replace_many(patterns, replacements, leftmost=True)
        return text

    def normalise(self, expr: pl.Expr) -> pl.Expr:
        """Normalised texts through the synonym map, words separated by single spaces.

        Notes
        -----
        After :func:`~mas_eval.metrics.answers.normalise.normalise_text`, one left-to-right pass
        over the words: at each word the longest synonym term (or canonical name) that starts there
        is replaced by its canonical name, and the pass continues after it. Replaced text is not
        searched again; chains were followed when the table was compiled. Under
        ``normalisation="medaisure"``: :func:`~mas_eval.metrics.answers.normalise.medaisure_text`.
        """
        if self.normalisation == "medaisure":
            return medaisure_text(expr)
        return canonical(self.spaced(expr))

    def words(self, spaced_text: pl.Expr) -> pl.Expr:
        """Return the normalised text of a spaced one (:meth:`spaced`): :meth:`normalise` without redoing it."""
        if self.normalisation == "medaisure":
            return spaced_text.str.strip_prefix(" ").str.strip_suffix(" ")
        return canonical(spaced_text)

    @property
    def gap(self) -> str:
        """What separates two words in spaced texts and patterns: two spaces; one under MedAISure's normalisation."""
        return " " if self.normalisation == "medaisure" else "  "

    # --- search patterns --------------------------------------------------------------------------

    def entity_patterns(self, matching: Matching) -> PatternSet:
        """Return the lexicon terms; payload: a bitmask of each term's categories (bit i: ``CATEGORIES[i]``)."""
        return _lookup(self, "lexicon", matching)

    def presence_patterns(self, matching: Matching) -> PatternSet:
        """Forms of markers and facts; payload: the role codes of each form (:data:`ROLE_KINDS`)."""
        return _lookup(self, "presence", matching)

    def diagnosis_patterns(self, matching: Matching) -> PatternSet:
        """Diagnoses of the fact sets; payload: the role codes of each diagnosis's facts."""
        return _lookup(self, "diagnoses", matching)


@dataclass(frozen=True, eq=False)
class PatternSet:
    """One Aho–Corasick search: its patterns, what each one stands for, and a payload per pattern.

    Attributes
    ----------
    patterns
        Longest first (leftmost-first matching then takes the longest match).
    lookup
        ``pattern`` and what it stands for: ``term, category`` (lexicon), ``kind, name`` (markers
        and facts), ``fact`` (diagnoses); a pattern may have several rows.
    payload
        Aligned with ``patterns``: a category bitmask (UInt8) or a list of role codes
        (``4 · number + kind``, kind the position in :data:`ROLE_KINDS`).
    """

    patterns: list[str]
    lookup: pl.DataFrame
    payload: pl.Series

    def find(self, text: pl.Expr, *, overlapping: bool) -> pl.Expr:
        """Per spaced text, the numbers (positions in :attr:`patterns`) of the patterns found, each once.

        Non-overlapping (leftmost-longest, the entities) or overlapping (every occurrence of every
        pattern: presence). A null text finds nothing.
        """
        empty = pl.lit(pl.Series([[]], dtype=pl.List(pl.UInt32)))
        if not self.patterns:
            return empty
        found = text.str.extract_many(self.patterns, leftmost=not overlapping, overlapping=overlapping)
        numbers = found.list.eval(pl.element().cast(pl.Enum(self.patterns)).to_physical())
        return numbers.list.unique().fill_null(empty)

    def payloads(self, numbers: pl.Expr) -> pl.Expr:
        """Return the payloads of lists of pattern ``numbers``: their bitmasks, or their role codes (each once)."""
        if not self.patterns:
            return numbers
        gather = pl.lit(self.payload).gather(pl.element())
        if isinstance(self.payload.dtype, pl.List):
            return numbers.list.eval(gather.list.explode(keep_nulls=False, empty_as_null=False)).list.unique()
        return numbers.list.eval(gather)


def _named(frame: pl.DataFrame, column: str, by: list[str]) -> pl.DataFrame:
    """One row per form of each marker or fact, named by its mapped forms joined with ``|``."""
    names = frame.group_by("row", maintain_order=True).agg(*by, name=pl.col("form").str.join(FORMS)).explode(by)
    return (
        frame.select("row", "form")
        .join(names, on="row")
        .select(*by, pl.col("name").alias(column), "form")
        .unique()
        .sort(*by, column, "form")
    )


#: Kinds of role a marker or fact form plays, in the order their codes use (``code % 4``).
ROLE_KINDS = (*MARKER_KINDS, "fact")


def _lookups(vocabulary: Vocabulary) -> dict[tuple[str, str], PatternSet]:
    """Every pattern set, for both matchings."""
    roles = pl.concat(
        [
            vocabulary.markers.select("kind", name="marker").unique(),
            vocabulary.facts.select(kind=pl.lit("fact"), name="fact").unique(),
        ]
    ).sort("kind", "name")
    kind_index = pl.col("kind").replace_strict(list(ROLE_KINDS), list(range(len(ROLE_KINDS))), return_dtype=_CODE)
    roles = roles.with_row_index("number").select("kind", "name", code=pl.col("number").cast(_CODE) * 4 + kind_index)
    tables = {
        "lexicon": vocabulary.lexicon.select(pattern="term", term="term", category="category"),
        "presence": pl.concat(
            [
                vocabulary.markers.select(pattern="form", kind="kind", name="marker"),
                vocabulary.facts.select(pattern="form", kind=pl.lit("fact"), name="fact"),
            ]
        ),
        "diagnoses": vocabulary.facts.select(pattern="diagnosis", kind=pl.lit("fact"), name="fact"),
    }
    bit = pl.col("category").replace_strict(
        list(CATEGORIES), [1 << index for index in range(len(CATEGORIES))], return_dtype=pl.UInt8
    )
    out = {}
    for what, table in tables.items():
        for matching in _MATCHINGS:
            found = table.with_columns(
                pattern_of(pl.col("pattern"), matching, vocabulary.gap).alias("pattern")
            ).unique()
            patterns = longest_first(found["pattern"])
            order = pl.DataFrame({"pattern": patterns}, schema={"pattern": pl.String})
            if what == "lexicon":
                per = found.group_by("pattern").agg(payload=bit.sum().cast(pl.UInt8))
            else:
                coded = found.join(roles, on=["kind", "name"])
                per = coded.group_by("pattern").agg(payload=pl.col("code").unique().sort())
            payload = order.join(per, on="pattern", how="left", maintain_order="left")["payload"]
            out[(what, matching)] = PatternSet(patterns, found.sort(found.columns), payload)
    return out


def _lookup(vocabulary: Vocabulary, what: str, matching: Matching) -> PatternSet:
    check_parameter("matching", matching, [_MATCHING])
    return vocabulary._lookups[(what, matching)]


@cache
def _shipped_vocabulary(tables: Tables, normalisation: Normalisation) -> Vocabulary:
    return Vocabulary.of(
        synonyms=answer_synonyms(shipped=tables),
        lexicon=lexicon_table(shipped=tables),
        markers=marker_table(shipped=tables),
        facts=fact_table(shipped=tables),
        normalisation=normalisation,
    )
