"""Failure modes and agreement, literally: plain Python over lists of labels, read next to the formulas.

A label is a tuple ``(run_id, mode, annotator, present)`` (``present`` a bool); a rating a tuple
``(group, unit, rater, value)``. Every statistic walks its units one by one and forms the sums
the formulas name, with exact ``Fraction`` arithmetic where a ratio is taken.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from fractions import Fraction

Label = tuple[str, str, str, bool]
Rating = tuple[object, object, str, object]


# -- agreement -----------------------------------------------------------------------------------


def _units(ratings: list[Rating]) -> dict[object, dict[object, dict[str, object]]]:
    """group -> unit -> rater -> value (missing values, None, left out)."""
    out: dict[object, dict[object, dict[str, object]]] = defaultdict(lambda: defaultdict(dict))
    for group, unit, rater, value in ratings:
        if value is not None:
            out[group][unit][rater] = value
    return out


def cohen_kappa(ratings: list[Rating]) -> dict[object, float | None]:
    """Cohen (1960): over the units both raters rated, (p_o - p_e) / (1 - p_e)."""
    out: dict[object, float | None] = {}
    for group, units in _units(ratings).items():
        raters = sorted({r for unit in units.values() for r in unit})
        assert len(raters) == 2, raters
        a, b = raters
        both = [unit for unit in units.values() if a in unit and b in unit]
        n = len(both)
        if n == 0:
            out[group] = None
            continue
        p_o = Fraction(sum(unit[a] == unit[b] for unit in both), n)
        ca, cb = Counter(unit[a] for unit in both), Counter(unit[b] for unit in both)
        p_e = sum(Fraction(ca[k], n) * Fraction(cb[k], n) for k in set(ca) | set(cb))
        out[group] = None if p_e == 1 else float((p_o - p_e) / (1 - p_e))
    return out


def fleiss_kappa(ratings: list[Rating]) -> dict[object, float | None]:
    """Fleiss (1971) over the units with the most ratings m: P_u = (sum_k n_uk^2 - m) / (m (m - 1))."""
    out: dict[object, float | None] = {}
    for group, units in _units(ratings).items():
        m = max(len(unit) for unit in units.values())
        complete = [Counter(unit.values()) for unit in units.values() if len(unit) == m]
        if m < 2:
            out[group] = None
            continue
        n = len(complete)
        p_bar = sum(Fraction(sum(c * c for c in counts.values()) - m, m * (m - 1)) for counts in complete) / n
        totals: Counter[object] = Counter()
        for counts in complete:
            totals.update(counts)
        p_e = sum(Fraction(total, n * m) ** 2 for total in totals.values())
        out[group] = None if p_e == 1 else float((p_bar - p_e) / (1 - p_e))
    return out


def krippendorff_alpha(ratings: list[Rating]) -> dict[object, float | None]:
    """Krippendorff, nominal: 1 - D_o / D_e from the coincidence matrix of the pairable units,
    o_ck = sum_u (number of c-k pairs of values in u) / (m_u - 1)."""
    out: dict[object, float | None] = {}
    for group, units in _units(ratings).items():
        coincidences: Counter[tuple[object, object]] = Counter()
        for unit in units.values():
            values = list(unit.values())
            if len(values) < 2:
                continue
            for i, j in itertools.permutations(range(len(values)), 2):
                coincidences[(values[i], values[j])] += Fraction(1, len(values) - 1)
        n_c: Counter[object] = Counter()
        for (c, _), count in coincidences.items():
            n_c[c] += count
        n = sum(n_c.values())
        disagree = sum(count for (c, k), count in coincidences.items() if c != k)
        expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
        out[group] = None if n < 2 or expected == 0 else float(1 - (n - 1) * disagree / expected)
    return out


# -- failure modes -------------------------------------------------------------------------------


def verdicts(
    labels: list[Label], consensus: str, annotator: str | None = None
) -> dict[tuple[str, str], tuple[bool, bool]]:
    """(run, mode) -> (has the mode, the annotators tied), for the annotators counted."""
    votes: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for run, mode, who, present in labels:
        if annotator is None or who == annotator:
            votes[(run, mode)].append(present)
    out = {}
    for key, said in votes.items():
        yes, total = sum(said), len(said)
        has = {"majority": 2 * yes > total, "any": yes >= 1, "all": yes == total}[consensus]
        out[key] = (has, 2 * yes == total)
    return out


def rates(
    labels: list[Label], system_of: dict[str, str], consensus: str, annotator: str | None = None
) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(system, mode) -> (n annotated runs, runs with the mode, tied runs counted as without it)."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for (run, mode), (has, tie) in verdicts(labels, consensus, annotator).items():
        cell = out[(system_of[run], mode)]
        cell[0] += 1
        cell[1] += has
        cell[2] += tie and not has
    return {key: (n, x, t) for key, (n, x, t) in out.items()}


def paired_tables(
    labels: list[Label], runs: dict[str, tuple[str, str]], treatment: str, control: str, consensus: str
) -> dict[str, tuple[int, int, int, int]]:
    """mode -> (a, b, c, d) over the cases both systems' runs were annotated on; ``runs``: run -> (system, case)."""
    has = {key: value[0] for key, value in verdicts(labels, consensus).items()}
    by_case: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for (run, mode), value in has.items():
        system, case = runs[run]
        by_case[(mode, case)][system] = value
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (mode, _), sides in by_case.items():
        out[mode]  # a mode annotated in one system only still has a (zero) row
        if treatment in sides and control in sides:
            t, c = sides[treatment], sides[control]
            out[mode][0 if t and c else 1 if t else 2 if c else 3] += 1
    return {mode: (a, b, c, d) for mode, (a, b, c, d) in out.items()}
