"""Metric families: each a room of its own that :func:`mas_eval.score` runs when its tables are present.

A :class:`Family` declares its name, the tables it needs and those it reads when present, its
parameter class, and a ``compute`` function from encoded lazy tables to its output tables; its
output columns are the registry's (:mod:`mas_eval.metrics.registry`). Adding a family means
writing its folder (parameters, output columns, ``compute``, with its oracle and tests beside it)
and one line calling :func:`register`: ``score``, ``Scores``, the manifest, the CLI, ``compare``
and the report's generic sections pick it up unchanged.

>>> [family.name for family in families()]
['decision', 'diagnosis', 'answers', 'outcomes', 'process']
>>> get("decision").needs, get("decision").reads
(('runs',), ('agents', 'beliefs', 'criteria', 'scores', 'alt_scores'))

What a report headlines and compares when it is told nothing is chosen from the data
(:func:`choose_columns`): the columns of the families that have something to say about these runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import polars as pl

from mas_eval.constraints import describe, parse_value
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics import registry
from mas_eval.metrics.codes import KeyCodes
from mas_eval.presets import Params, check_preset

__all__ = [
    "NAMED",
    "Chosen",
    "Family",
    "choose_columns",
    "compared_columns",
    "families",
    "get",
    "headline_columns",
    "parameter_help",
    "parse_override",
    "register",
    "resolve_params",
    "unregister",
]

#: In a family's ``headline`` or ``compared``: the run columns it names from the data (the outcomes family's
#: scores), in their order. No column of a Scores starts with ``_`` (:func:`~mas_eval.metrics.registry.check_named`
#: refuses such a name), so this never stands for a real column.
NAMED = "_named"

#: A needed table, or a tuple of tables of which one is enough.
Requirement = str | tuple[str, ...]
#: ``compute(tables, params, codes)``: lazy tables keyed by codes in, output tables out.
Compute = Callable[[Mapping[str, pl.LazyFrame], Any, KeyCodes], Mapping[str, pl.LazyFrame | pl.DataFrame]]


@dataclass(frozen=True)
class Family:
    """One metric family.

    Attributes
    ----------
    name
        Its name, also its section in the presets (:mod:`mas_eval.presets`).
    needs
        Tables it cannot run without; an entry that is a tuple is satisfied by any one of its tables.
    reads
        Tables it reads when present; an absent one reaches ``compute`` as an empty frame of
        the schema's columns, so that the metrics it feeds come out null with no special case.
    params
        Its parameter class (a frozen :class:`~mas_eval.constraints.Params` dataclass).
    compute
        ``compute(tables, params, codes) -> {output table: frame}``: every table it names in
        ``needs`` and ``reads``, keyed by integer codes (:class:`~mas_eval.metrics.codes.KeyCodes`:
        ``run_id`` everywhere, and the label columns of ``LABEL_COLUMNS``, ``agent_id`` included),
        to frames keyed by codes and sorted by their key. A ``runs`` frame has one row per run of
        ``tables["runs"]``, sorted by ``run_id`` (a family with rows for some runs left-joins them
        onto ``tables["runs"].select("run_id")``); ``score`` checks it. Lazy frames are
        collected by ``score``.
    description
        One line: what it measures, from which source document.
    columns, output_tables
        Its output columns (:class:`~mas_eval.metrics.registry.Metric`, in output order) and the
        output tables it owns (:class:`~mas_eval.metrics.registry.OutputTable`); :func:`register`
        enters them in the registry under its name.
    headline
        Run columns a report leads with: their means per system, with intervals (:mod:`mas_eval.report`);
        :data:`NAMED` stands for the columns it names from the data.
    compared
        Run columns a report (and ``mas-eval compare``) compares between the systems when given no
        metrics, if they have values (:func:`choose_columns`); :data:`NAMED` as in ``headline``. A family
        that compares nothing (the process family: its measures describe how a system works, not how
        well) is headlined when its headline columns have values.
    named
        Run columns it names from the data (:class:`~mas_eval.metrics.registry.NamedColumns`):
        its ``runs`` frame adds one column per name found, after its registered columns, sorted
        by name, and checks them with :func:`~mas_eval.metrics.registry.check_named`.
    """

    name: str
    needs: tuple[Requirement, ...]
    reads: tuple[str, ...]
    params: type[Params]
    compute: Compute
    description: str = ""
    columns: tuple[registry.Metric, ...] = ()
    output_tables: tuple[registry.OutputTable, ...] = ()
    headline: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    named: tuple[registry.NamedColumns, ...] = ()

    def missing(self, present: Collection[str]) -> list[str]:
        """Return the requirements ``present`` tables do not meet, worded (``"'ddx' or 'messages'"``)."""
        out = []
        for need in self.needs:
            options = (need,) if isinstance(need, str) else need
            if not any(name in present for name in options):
                out.append(" or ".join(map(repr, options)))
        return out

    def tables(self) -> list[str]:
        """Every table ``compute`` receives, needed or read."""
        names = [name for need in self.needs for name in ((need,) if isinstance(need, str) else need)]
        return list(dict.fromkeys([*names, *self.reads]))

    def outputs(self) -> dict[str, list[str]]:
        """Its output columns per table, from the registry."""
        out: dict[str, list[str]] = {}
        for m in registry.METRICS:
            if m.family == self.name:
                out.setdefault(m.table, []).append(m.name)
        return out


_FAMILIES: dict[str, Family] = {}


def families() -> list[Family]:
    """Return the registered families, in registration order (the order their run columns appear in).

    Examples
    --------
    >>> from mas_eval.metrics.family import families
    >>> [family.name for family in families()]
    ['decision', 'diagnosis', 'answers', 'outcomes', 'process']
    """
    return list(_FAMILIES.values())


def get(name: str) -> Family:
    """Return the family called ``name``.

    Examples
    --------
    >>> from mas_eval.metrics.family import get
    >>> get("decision").name
    'decision'
    """
    return _FAMILIES[name]


def _owners(candidates: Iterable[Family]) -> dict[str, Family]:
    return {name: family for family in candidates for name in family.params.constraints()}


def register(family: Family) -> Family:
    """Add ``family``, and its output columns and tables to the registry under its name.

    Family names and parameter names must be unique across families, so that ``--set key=value``
    and ``score(ds, key=value)`` say unambiguously whose parameter they set.
    """
    if family.name in _FAMILIES:
        msg = f"a metric family called {family.name!r} is already registered"
        raise ValueError(msg)
    shared = sorted(set(family.params.constraints()) & set(_owners(_FAMILIES.values())))
    if shared:
        msg = f"family {family.name!r}: parameter(s) {', '.join(shared)} already belong to another family"
        raise ValueError(msg)
    registry.register(
        [replace(column, family=family.name) for column in family.columns],
        [replace(table, family=family.name) for table in family.output_tables],
        [replace(entry, family=family.name) for entry in family.named],
    )
    _FAMILIES[family.name] = family
    return family


#: The families :mod:`mas_eval.metrics` registers on import (:func:`mark_imported`): those any new
#: process has, and no others, once it imports ``mas_eval``.
_IMPORTED: tuple[Family, ...] = ()


def mark_imported() -> None:
    """Record the families registered now as those importing :mod:`mas_eval.metrics` registers."""
    global _IMPORTED
    _IMPORTED = tuple(_FAMILIES.values())


def as_imported() -> bool:
    """Tell whether the registered families are those a freshly started process has, in the same order.

    They must be the same objects: a family registered (or replaced, or removed) at run time would
    not exist in a worker process, which would score without it.
    """
    current = tuple(_FAMILIES.values())
    return len(current) == len(_IMPORTED) and all(a is b for a, b in zip(current, _IMPORTED, strict=True))


def unregister(name: str) -> None:
    """Remove family ``name`` and everything it registered."""
    _FAMILIES.pop(name, None)
    registry.unregister(name)


def resolve_params(preset: str, overrides: Mapping[str, Any]) -> dict[str, Params]:
    """Each family's parameters: ``preset``'s section, then the ``overrides`` that name its parameters.

    An override that no family has is an :class:`~mas_eval.errors.InvalidParameterError` listing them all.
    """
    check_preset(preset)
    owners = _owners(_FAMILIES.values())
    unknown = sorted(set(overrides) - set(owners))
    if unknown:
        msg = f"score: unknown parameter(s) {', '.join(unknown)}; the parameters are: {', '.join(sorted(owners))}"
        raise InvalidParameterError(msg)
    return {
        family.name: family.params.of_preset(
            preset, **{key: value for key, value in overrides.items() if owners[key] is family}
        )
        for family in _FAMILIES.values()
    }


def parse_override(text: str) -> tuple[str, Any]:
    """``"key=value"`` from the command line, typed as parameter ``key`` expects (checked later).

    >>> parse_override("gt_boost=none")
    ('gt_boost', None)
    >>> parse_override("baseline_seconds=10")
    ('baseline_seconds', 10.0)
    >>> parse_override("dqs_weighted=false")
    ('dqs_weighted', False)
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    owners = _owners(_FAMILIES.values())
    if not sep or key not in owners:
        msg = f"--set {text!r}: expected key=value with key one of {', '.join(sorted(owners))}"
        raise InvalidParameterError(msg)
    return key, parse_value(raw, owners[key].params.constraints()[key])


def _expand(columns: Iterable[str], family: Family, named: Mapping[str, Sequence[str]] | None) -> list[str]:
    """``columns`` with :data:`NAMED` replaced by the columns ``family`` named from the data (none when unknown)."""
    out: list[str] = []
    for name in columns:
        out += list((named or {}).get(family.name, ())) if name == NAMED else [name]
    return out


def headline_columns(named: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Return the run columns every registered family headlines, in registration order.

    ``named``: the columns each family named from the data (``Scores.named``), put where the family
    declares :data:`NAMED`; without it those are left out.

    Examples
    --------
    >>> from mas_eval.metrics.family import headline_columns
    >>> headline_columns()[:3]
    ['dqs', 'gt_match', 'decision_confidence']
    >>> "match" in headline_columns({"outcomes": ["match"]})
    True
    """
    return list(dict.fromkeys(n for family in _FAMILIES.values() for n in _expand(family.headline, family, named)))


def compared_columns(named: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Return the run columns every registered family compares by default, in registration order.

    ``named`` is as in :func:`headline_columns`.

    Examples
    --------
    >>> from mas_eval.metrics.family import compared_columns
    >>> compared_columns()[:3]
    ['dqs', 'decision_confidence', 'traditional_recall']
    """
    return list(dict.fromkeys(n for family in _FAMILIES.values() for n in _expand(family.compared, family, named)))


@dataclass(frozen=True)
class Chosen:
    """The run columns chosen from the data (:func:`choose_columns`), and why.

    Attributes
    ----------
    kind
        ``"headline"`` or ``"compared"``.
    columns
        The chosen columns, in registration order of their families.
    by_family
        The chosen columns of each family that has values, by family.
    silent
        Families that ran (or might have) whose declared columns have no value here, with those columns.
    """

    kind: str
    columns: list[str]
    by_family: dict[str, list[str]] = field(default_factory=dict)
    silent: dict[str, list[str]] = field(default_factory=dict)

    def sentence(self) -> str:
        """One sentence saying what was chosen and what was passed over, for a reader.

        >>> Chosen("compared", ["match"], {"outcomes": ["match"]}, {"decision": ["dqs"]}).sentence()
        'Compared by default: match (the outcomes family), the columns of the metric families with values in these runs; the decision family has no values of dqs.'
        """  # noqa: E501
        verb, what = ("Compared", "compare") if self.kind == "compared" else ("Headlined", "headline")
        if not self.columns:
            return f"{verb} by default: nothing, as none of the columns the metric families {what} has a value here."
        parts = [f"{', '.join(cols)} (the {family} family)" for family, cols in self.by_family.items()]
        said = f"{verb} by default: {'; '.join(parts)}, the columns of the metric families with values in these runs"
        if self.silent:
            quiet = [f"the {family} family has no values of {', '.join(cols)}" for family, cols in self.silent.items()]
            said += "; " + "; ".join(quiet)
        return said + "."


def choose_columns(
    kind: Literal["headline", "compared"],
    has_values: Callable[[str], bool],
    *,
    ran: Iterable[str] | None = None,
    named: Mapping[str, Sequence[str]] | None = None,
) -> Chosen:
    """Choose the run columns a report headlines or compares when told none: the families' with something to say.

    A registered family that ran (all of them when ``ran`` is None) *has something to say* about these
    runs when one of the columns it compares has values (``has_values(name)``), or, comparing none, one
    of its headline columns has. ``kind="compared"`` chooses those families' compared columns with
    values, ``kind="headline"`` their headline columns (or, declaring none, their compared ones) with
    values: a Dataset of inspect_ai logs (outcomes, usage and messages, no beliefs) is headlined and
    compared on its logged scores, not on the decision family's empty DQS.

    Parameters
    ----------
    kind : {"headline", "compared"}
        Which declared columns to choose from.
    has_values : callable
        Whether a run column of these runs has at least one value (false for a column they lack).
    ran : iterable of str, optional
        The families that ran (``Scores.ran``).
    named : mapping, optional
        The columns each family named from the data (``Scores.named``), for :data:`NAMED`.

    Returns
    -------
    Chosen
        The columns, the families they come from, and the families passed over.

    Examples
    --------
    >>> present = {"match", "run_tokens", "agents_active"}
    >>> chosen = choose_columns("compared", present.__contains__, named={"outcomes": ["match"]})
    >>> chosen.columns, list(chosen.silent)
    (['match'], ['decision', 'diagnosis', 'answers'])
    >>> choose_columns("headline", present.__contains__, named={"outcomes": ["match"]}).columns
    ['match', 'run_tokens', 'agents_active']
    """
    ran_set = None if ran is None else set(ran)
    by_family: dict[str, list[str]] = {}
    silent: dict[str, list[str]] = {}
    for family in _FAMILIES.values():
        if ran_set is not None and family.name not in ran_set:
            continue
        compared = _expand(family.compared, family, named)
        headline = _expand(family.headline, family, named)
        judged = compared or headline
        if not judged:
            continue
        if not any(has_values(name) for name in judged):
            silent[family.name] = judged
            continue
        # A family that headlines nothing of its own is headlined by what it compares.
        declared = compared if kind == "compared" else (headline or compared)
        with_values = [name for name in dict.fromkeys(declared) if has_values(name)]
        if with_values:
            by_family[family.name] = with_values
    columns = list(dict.fromkeys(name for cols in by_family.values() for name in cols))
    return Chosen(kind, columns, by_family, silent)


def parameter_help() -> str:
    """One line per parameter of every family: ``name (family): allowed; default``, for the CLI."""
    lines = []
    for family in _FAMILIES.values():
        defaults = family.params().as_dict()
        for name, constraints in family.params.constraints().items():
            lines.append(f"{name} ({family.name}): {describe(constraints)}; default {defaults[name]!r}")
    return "\n".join(lines)
