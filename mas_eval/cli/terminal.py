"""What the command line and the demo print: consoles, progress, and tables that fit the terminal.

Tables are never squeezed until their numbers turn into ``0.7…``: a table keeps its columns in
order of importance (left to right) while they fit the console's width, and says which it left
out. Numbers are written by :mod:`mas_eval.formatting`, so a p-value reads as a p-value.

User text (names from the data, paths, messages holding them) is printed as it is: every
line put together as Rich markup takes it through :func:`literal`, which escapes the markup and
shows control characters as escapes (:func:`mas_eval.escaping.visible`), and the tables, titles
and notes here do the same with their cells. So ``[draft]`` prints as ``[draft]``, ``[/mg]``
cannot end a style, and no escape sequence or bidirectional override reaches the terminal.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from mas_eval.escaping import visible
from mas_eval.formatting import format_value, system_means_rows
from mas_eval.stats.comparison_table import comparison_cells

if TYPE_CHECKING:  # the rest of rich loads with the first table or progress display
    import polars as pl
    from rich.live import Live
    from rich.progress import Progress
    from rich.spinner import Spinner
    from rich.table import Table

__all__ = [
    "Steps",
    "console",
    "err_console",
    "literal",
    "print_comparisons",
    "print_frame",
    "print_system_means",
    "progress",
    "steps",
]

# No emoji codes: a task named ":thumbs_up:" is printed as that, not as a picture.
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)

#: Space a column takes beyond its text: one space each side.
_PADDING = 2


def literal(text: object) -> str:
    r"""``text`` as Rich markup that prints it literally: markup escaped, control characters visible.

    Every user text in a line written as markup goes through it: ``console.print(f"wrote
    {literal(path)}")``. Unlike :func:`rich.markup.escape`, the result prints the same whatever
    follows it: trailing backslashes are doubled and followed by an empty tag of the null style,
    so that they neither escape a tag after them nor print doubled before plain text.

    >>> print(literal("[draft] [/mg] \x1b[31m"))
    \[draft] \[/mg] \x1b[31m
    >>> print(literal("C:\\"))
    C:\\[none][/none]
    """
    shown = visible(str(text))
    body = shown.rstrip("\\")
    trailing = len(shown) - len(body)
    return escape(body) + ("\\" * (2 * trailing) + "[none][/none]" if trailing else "")


def progress(*, bytes_done: bool = False) -> Progress:
    """Return a transient progress bar on stderr (steps done of all, or bytes read with an ETA).

    It is shown only when stderr is a terminal.
    """
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [SpinnerColumn(), TextColumn("[progress.description]{task.description}"), BarColumn()]
    columns += [DownloadColumn(), TimeRemainingColumn()] if bytes_done else [MofNCompleteColumn()]
    return Progress(
        *columns, TimeElapsedColumn(), console=err_console, transient=True, disable=not err_console.is_terminal
    )


class Steps:
    """The steps of a long command, each printed with its duration once done (see :func:`steps`)."""

    def __init__(self, live: Live | None) -> None:
        self._live = live
        self._name: str | None = None
        self._spinner: Spinner | None = None
        self._started = 0.0
        self._first = time.perf_counter()

    def start(self, name: str) -> None:
        """Finish the current step (printing its duration) and start ``name``."""
        self.finish()
        self._name, self._started = name, time.perf_counter()
        if self._live is not None:
            from rich.spinner import Spinner

            self._spinner = Spinner("dots", text=f"{literal(name)} ...")
            self._live.update(self._spinner)

    def count(self, name: str, done: int, total: int) -> None:
        """Show step ``name`` (started if it is not the current one) with a bar: ``done`` of ``total``."""
        if name != self._name:
            self.start(name)
        if self._live is not None:
            from rich.progress_bar import ProgressBar
            from rich.table import Table

            row = Table.grid(padding=(0, 1))
            row.add_row(self._spinner, ProgressBar(total=total, completed=done, width=40), f"{done:,}/{total:,}")
            self._live.update(row)

    def finish(self) -> None:
        """Print the current step as done, with its duration."""
        if self._name is not None and self._live is not None:
            name = literal(f"{self._name:<22}")
            self._live.console.print(f"  [green]done[/] {name} {time.perf_counter() - self._started:6.1f} s")
        self._name = None

    @property
    def elapsed(self) -> float:
        """Seconds since the first step started."""
        return time.perf_counter() - self._first


@contextlib.contextmanager
def steps() -> Iterator[Steps]:
    """Show a command's steps on stderr: the current one with a spinner, each finished one with its duration.

    Shown only when stderr is a terminal (a log file gets none of it).
    """
    if not err_console.is_terminal:
        yield Steps(None)
        return
    from rich.live import Live

    with Live(console=err_console, transient=True, refresh_per_second=8) as live:
        shown = Steps(live)
        try:
            yield shown
        finally:
            shown.finish()


def _width(header: str, cells: Sequence[str]) -> int:
    """Return the columns a table column takes on the terminal (a wide character takes two)."""
    from rich.cells import cell_len

    return max([cell_len(header), *(cell_len(c) for c in cells)]) + _PADDING


def _table() -> Table:
    from rich import box
    from rich.table import Table

    return Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)


def _print_fitted(
    headers: list[str],
    columns: list[list[str]],
    numeric: list[bool],
    *,
    title: str | None,
    out: Console,
    hidden_hint: str = "",
    keep: int = 1,
) -> None:
    """Print the leading columns that fit ``out``'s width (at least ``keep``), and name the others.

    Every header, cell and the title are user text: printed as they are (no markup), control
    characters shown as escapes, and measured so.
    """
    headers = [visible(header) for header in headers]
    columns = [[visible(cell) for cell in cells] for cells in columns]
    budget, shown = out.width, 0
    for index, (header, cells) in enumerate(zip(headers, columns, strict=True)):
        width = _width(header, cells)
        if index >= keep and width > budget:
            break
        budget -= width
        shown += 1
    if title:  # above the table, not a table title: those wrap at the table's width
        out.print(Text(visible(title), style="bold"))
    table = _table()
    for header, is_number in zip(headers[:shown], numeric[:shown], strict=True):
        table.add_column(Text(header), justify="right" if is_number else "left", no_wrap=True, overflow="fold")
    for row in zip(*columns[:shown], strict=True):
        table.add_row(*map(Text, row))
    out.print(table)
    if shown < len(headers):
        hidden = Text(f"not shown at this width: {', '.join(headers[shown:])}{hidden_hint}", style="dim")
        out.print(hidden)


def print_frame(frame: pl.DataFrame, title: str | None = None, *, out: Console | None = None) -> None:
    """Print a small frame as a table that fits the console, columns in order of importance.

    Numbers are written by :func:`~mas_eval.formatting.format_value` (p-value columns as
    p-values); columns that do not fit are named below the table.
    """
    target = out or console
    headers = frame.columns
    columns = [[format_value(name, v) for v in frame[name].to_list()] for name in headers]
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    _print_fitted(headers, columns, numeric, title=title, out=target)


def print_system_means(means: pl.DataFrame, title: str | None = None, *, out: Console | None = None) -> None:
    """Print per-system means with metrics as rows and systems as columns (fits any width).

    ``means`` has a ``system`` column, a ``runs`` count and one column per metric, a row per system.
    """
    headers, rows = system_means_rows(means.to_dicts())
    columns = [list(column) for column in zip(*rows, strict=True)]
    _print_fitted(headers, columns, [False, *[True] * (len(headers) - 1)], title=title, out=out or console)


def print_comparisons(
    table: pl.DataFrame, title: str | None = None, *, out: Console | None = None, confidence: float = 0.95
) -> None:
    """Print a :func:`~mas_eval.compare` table for a reader: one line per (group, metric).

    The group and metric lead; then the difference, its CI, the adjusted p (``*`` when
    significant), Cohen's d, n (pairs, or runs), the two means, the effect label and the test,
    as many as the width allows. Warnings are printed as numbered notes below the table
    rather than as a column.
    """
    target = out or console
    cells = comparison_cells(table, confidence=confidence)
    _print_fitted(
        cells.headers, cells.columns, cells.numeric, title=title, out=target, keep=cells.keep,
        hidden_hint=" (every column is in the table compare returns, and in --out)",
    )  # fmt: skip
    for number, warning in enumerate(cells.notes, start=1):
        target.print(Text(f"[{number}] {visible(warning)}"), soft_wrap=False)
