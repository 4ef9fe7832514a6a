"""What every simulator shares: the two systems, how runs split into cases, and tables built from codes.

Keys and texts are held as integer codes into small vocabularies and decoded only when a table
is read (:func:`coded_table`): at a million runs eager string columns would take gigabytes and seconds.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from mas_eval.constraints import Interval
from mas_eval.data.schema import TABLES
from mas_eval.data.vocabulary import SYSTEMS
from mas_eval.errors import InvalidParameterError, option

__all__ = [
    "MEMORY_CEILING_GB",
    "SYSTEMS",
    "Coded",
    "SizeCeiling",
    "check_at_most",
    "coded_table",
    "deal_runs",
    "expand",
    "labels",
    "mean_of",
    "narrow_codes",
    "split_runs",
    "vocab",
]


#: Memory a simulation may take, in GB: its Dataset (held as codes) and the decoding of each table
#: as it is written, above the imports. A simulator's ceilings are set so that it stays within.
MEMORY_CEILING_GB = 8


@dataclass(frozen=True)
class SizeCeiling:
    """How many runs a simulator makes within :data:`MEMORY_CEILING_GB`, from what a run costs.

    ``bytes_per_run`` is the peak memory of a run of the default size (simulated and written,
    measured at 100,000 runs); ``runs`` is the ceiling it gives, rounded down to two
    significant digits. Larger runs (more agents, items, messages or characters) cost more:
    a simulator weighs them by its own ``size`` estimate (:meth:`check`).
    """

    where: str
    bytes_per_run: int
    #: The memory ceiling, in GB (:data:`MEMORY_CEILING_GB`).
    gigabytes: int = MEMORY_CEILING_GB

    @property
    def runs(self) -> int:
        """The most runs of the default size."""
        most = self.gigabytes * 10**9 // self.bytes_per_run
        step = 10 ** max(len(str(most)) - 2, 0)
        return most // step * step

    @property
    def fix(self) -> str:
        """What to do instead of a larger simulation."""
        return (
            f"more would take over {self.gigabytes} GB of memory; simulate several Datasets with other seeds "
            "(each within the ceiling) instead"
        )

    def constraint(self) -> Interval:
        """Return the declared constraint of ``runs``: at least 2, at most :attr:`runs`."""
        return Interval(int, 2, self.runs, beyond=self.fix)

    def check(
        self, runs: int, size: Callable[..., float], options: dict[str, Any], simulator: Callable[..., Any]
    ) -> None:
        """Raise :class:`~mas_eval.errors.InvalidParameterError` if ``runs`` runs of this size exceed the ceiling.

        The size is the one that ``options`` give.

        ``size(**options)`` is the simulator's estimate of what a run costs, compared with its value
        at the defaults of ``simulator``'s parameters: a run twice the default size counts twice.
        """
        defaults = {name: inspect.signature(simulator).parameters[name].default for name in options}
        scale = size(**options) / size(**defaults)
        if runs * scale <= self.runs:
            return
        given = {name: value for name, value in options.items() if _plain(value) != _plain(defaults[name])}
        shown = " and ".join(_spelled(name, value) for name, value in given.items()) or "the default sizes"
        gigabytes = runs * scale * self.bytes_per_run / 10**9
        most = max(int(self.runs / scale), 0)
        msg = (
            f"{self.where}: {runs:,} runs with {shown} would take about {gigabytes:,.0f} GB of memory (each run "
            f"{scale:,.1f} times the default size), over the ceiling of {self.gigabytes} GB; pass at most {most:,} "
            f"runs of this size, or smaller runs, or simulate several Datasets with other seeds"
        )
        raise InvalidParameterError(msg)


def _plain(value: object) -> object:
    """Return a range as a tuple, whether given as a tuple or a list: ``[20, 40]`` is the default ``(20, 40)``."""
    return tuple(value) if isinstance(value, list) else value


def _spelled(name: str, value: object) -> str:
    """Spell an option as the user passes it: ``items=(40, 80)``, or ``--items 40,80`` on the command line."""
    if isinstance(value, tuple | list) and len(value) == 2:
        return option(name, tuple(value), cli=f"--{name.replace('_', '-')} {value[0]},{value[1]}")
    return option(name, value)


def mean_of(pair: tuple[int, int]) -> float:
    """Return the mean of a count drawn uniformly from the inclusive range ``pair``."""
    return (pair[0] + pair[1]) / 2


def expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Children of variable-sized groups: (parent of each child, position in its parent, offsets).

    ``offsets`` has ``len(counts) + 1`` entries; parent ``i`` owns children ``offsets[i]:offsets[i+1]``.
    Parent and position are int32 while they fit: at a million runs these arrays have ~16M
    entries, and halving them saves memory and time in every gather that uses them.
    """
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    index = np.int32 if max(offsets[-1], len(counts)) < 2**31 else np.int64
    parent = np.repeat(np.arange(len(counts), dtype=index), counts)
    position = np.arange(offsets[-1], dtype=index) - np.repeat(offsets[:-1].astype(index), counts)
    return parent, position, offsets


def labels(prefix: str, n: int, width: int = 0) -> pl.Series:
    """``prefix1 ... prefixN``, zero-padded to ``width`` digits; built by Polars, not Python."""
    number = pl.int_range(1, n + 1, dtype=pl.Int64).cast(pl.String)
    if width:
        number = number.str.zfill(width)
    return pl.select(pl.concat_str(pl.lit(prefix), number).alias(prefix)).to_series()


@dataclass(frozen=True)
class Coded:
    """A string column held as integer codes into ``labels`` (a null code gives a null string)."""

    labels: pl.Series
    codes: np.ndarray | pl.Series


def vocab(values: tuple[str | None, ...] | list[str | None]) -> tuple[pl.Series, np.ndarray]:
    """Return a vocabulary as a Series to gather from, and its entries' lengths in characters."""
    return pl.Series(values, dtype=pl.String), np.array([len(v or "") for v in values], dtype=np.int64)


def narrow_codes(name: str, codes: np.ndarray, size: int) -> pl.Series:
    """Codes into a vocabulary of ``size`` entries, in the narrowest unsigned type that holds them."""
    return pl.Series(name, codes.astype(np.min_scalar_type(max(size - 1, 0)), copy=False))


def coded_table(
    name: str,
    columns: dict[str, np.ndarray | pl.Series | Coded | pl.Expr | None],
    hidden: dict[str, tuple[np.ndarray, int]] | None = None,
    *,
    where: str = "simulate",
) -> pl.LazyFrame:
    """Build the table ``name`` as a LazyFrame decoded on read: codes, expressions over ``hidden`` codes, or nulls.

    ``hidden`` holds the codes (and vocabulary sizes) that expressions gather from, e.g. the
    fragments of a message; they are dropped by the final select. ``where`` names the simulator in
    an internal error. Names, order and dtypes come from the schema: ``columns`` names some of the
    table's columns in the schema's order (those it leaves out are null), so a drift in schema.py
    (a column renamed or moved) shows up here.
    """
    spec = TABLES[name]
    given = list(columns)
    if [c for c in spec.names if c in columns] != given:
        msg = f"{where}: internal error, {name} columns {given} are not in the order of schema {spec.names}"
        raise AssertionError(msg)
    stored: list[pl.Series] = []
    select: list[pl.Expr] = []
    for column in spec.columns:
        value = columns.get(column.name)
        if value is None:
            select.append(pl.lit(None, dtype=column.dtype).alias(column.name))
        elif isinstance(value, pl.Expr):
            select.append(value.cast(column.dtype).alias(column.name))
        elif isinstance(value, Coded):
            codes = value.codes
            stored.append(
                narrow_codes(column.name, codes, len(value.labels))
                if isinstance(codes, np.ndarray)
                else codes.alias(column.name)
            )
            select.append(pl.lit(value.labels).gather(pl.col(column.name)).alias(column.name))
        else:
            stored.append(pl.Series(column.name, value, dtype=column.dtype))
            select.append(pl.col(column.name))
    for key, (codes, size) in (hidden or {}).items():
        stored.append(narrow_codes(key, codes, size))
    return pl.DataFrame(stored).lazy().select(select)


def split_runs(runs: int, mas_share: float, repeats: int = 1, *, where: str) -> tuple[int, int, int]:
    """MAS runs, single runs and cases (each run ``repeats`` times by both systems) of a simulator.

    Raises :class:`~mas_eval.errors.InvalidParameterError`, naming the simulator ``where``, when
    not every case can be run by both systems.
    """
    n_mas = round(runs * mas_share)
    n_single = runs - n_mas
    n_cases = min(n_mas, n_single) // repeats
    if n_cases < 1:
        times = f" {repeats} time(s)" if repeats > 1 else ""
        fix = "raise runs or lower repeats" if repeats > 1 else "raise runs or bring mas_share nearer 0.5"
        msg = (
            f"{where}: runs={runs} with mas_share={mas_share:g} gives {n_mas} MAS and {n_single} single "
            f"runs, too few for every case to be run{times} by both systems; {fix}"
        )
        raise InvalidParameterError(msg)
    return n_mas, n_single, n_cases


def check_at_most(where: str, name: str, given: object, high: int, limit: int, asks: str, has: str) -> None:
    """:class:`~mas_eval.errors.InvalidParameterError` when a range's maximum ``high`` exceeds ``limit``.

    ``asks`` says what the maximum counts, ``has`` what bounds it: the message reads
    ``"<where>: <name>=<given> asks for up to <high> <asks>, but <has>; pass a maximum <= <limit>"``.
    """
    if high > limit:
        msg = f"{where}: {name}={given!r} asks for up to {high} {asks}, but {has}; pass a maximum <= {limit}"
        raise InvalidParameterError(msg)


def deal_runs(n_mas: int, n_single: int, n_cases: int) -> tuple[np.ndarray, np.ndarray]:
    """Whether each run is the MAS's, and its case: each system deals its runs to the cases in turn.

    Runs come sorted by case, then by repeat, the MAS's first.

    >>> is_mas, case = deal_runs(3, 3, 3)
    >>> is_mas.tolist(), case.tolist()
    ([True, False, True, False, True, False], [0, 0, 1, 1, 2, 2])
    """
    is_mas = np.concatenate([np.ones(n_mas, dtype=bool), np.zeros(n_single, dtype=bool)])
    turn = np.concatenate([np.arange(n_mas, dtype=np.int64), np.arange(n_single, dtype=np.int64)])
    case = turn % n_cases
    order = np.lexsort((~is_mas, turn // n_cases, case))
    return is_mas[order], case[order]
