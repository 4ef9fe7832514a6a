"""What the command line and the demo print: consoles, progress bars and small tables."""

from __future__ import annotations

import polars as pl
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

__all__ = ["console", "err_console", "print_frame", "progress"]

console = Console()
err_console = Console(stderr=True)


def progress() -> Progress:
    """A transient progress bar on stderr, shown only when stderr is a terminal."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )


def _cell(value: object) -> str:
    """A table cell: 4 decimals for ordinary floats, 3 significant digits for tiny ones (p-values)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if value != 0 and abs(value) < 1e-3 else f"{value:.4f}"
    return str(value)


def print_frame(frame: pl.DataFrame, title: str | None = None, *, out: Console | None = None) -> None:
    """Print a small frame as a rich table (floats to 4 decimals)."""
    table = Table(title=title, title_justify="left")
    for name, dtype in frame.schema.items():
        table.add_column(name, justify="right" if dtype.is_numeric() else "left")
    for row in frame.iter_rows():
        table.add_row(*(_cell(v) for v in row))
    (out or console).print(table)
