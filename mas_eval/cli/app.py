"""The ``mas-eval`` typer app: its commands in the order the help lists them, and :func:`main`.

Every command is a thin shell over a Python function, in the module of its group
(:mod:`~mas_eval.cli.simulate`, :mod:`~mas_eval.cli.ingest`, :mod:`~mas_eval.cli.benchmark`,
:mod:`~mas_eval.cli.score`, :mod:`~mas_eval.cli.compare`, :mod:`~mas_eval.cli.view`,
:mod:`~mas_eval.cli.dataset`, :mod:`~mas_eval.cli.demo`): it checks its arguments before any work (an output path that
exists, lies inside an input or cannot be written; a bad parameter value), calls the function,
prints. :func:`main` turns an error about the user's input — a
:class:`~mas_eval.errors.MasEvalError` or an ``OSError`` — and a usage error of the command line
into one line on stderr and exit code 2, never a traceback; SIGTERM stops a command as Ctrl-C
does, its outputs being written removed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import Annotated

import typer

from mas_eval._version import __version__
from mas_eval.cli import benchmark, compare, dataset, demo, epochs, ingest, score, simulate, view
from mas_eval.cli.common import Command, Group, set_epilog
from mas_eval.cli.terminal import console, err_console, literal
from mas_eval.errors import MasEvalError, command_line

__all__ = ["app", "main"]

app = typer.Typer(
    cls=Group,
    name="mas-eval",
    help="Score logged runs of multi-agent LLM systems against single-agent baselines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        console.print(f"mas-eval {__version__}")
        raise typer.Exit


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_version, is_eager=True, metavar=""),
    ] = False,
) -> None:
    """Score logged runs of multi-agent LLM systems against single-agent baselines."""


app.command(cls=Command, name="simulate")(simulate.simulate_command)
app.command(cls=Command, name="ingest")(ingest.ingest_command)
app.command(cls=Command, name="benchmark-report")(benchmark.benchmark_report_command)
app.command(cls=Command, name="combined-score")(benchmark.combined_score_command)
app.command(cls=Command, name="score", epilog=set_epilog())(score.score_command)
app.command(cls=Command, name="compare")(compare.compare_command)
app.command(cls=Command, name="cost-effectiveness")(compare.cost_effectiveness_command)
app.command(cls=Command, name="report")(compare.report_command)
app.command(cls=Command, name="pass-at-k")(epochs.pass_at_k_command)
app.command(cls=Command, name="variance")(epochs.variance_command)
app.command(cls=Command, name="view")(view.view_command)
app.command(cls=Command, name="reproduce", epilog=set_epilog())(score.reproduce_command)
app.command(cls=Command, name="validate")(dataset.validate_command)
app.command(cls=Command, name="reshard")(dataset.reshard_command)
app.command(cls=Command, name="summary")(dataset.summary_command)
app.command(cls=Command, name="combine")(dataset.combine_command)
app.command(cls=Command, name="demo")(demo.demo_command)


def _one_line(exc: BaseException) -> str:
    """Return an error as the single line the user sees."""
    if isinstance(exc, OSError) and not isinstance(exc, MasEvalError):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"{where}{exc.strerror or exc}"
    return " ".join(str(exc).split())


def _usage_line(exc: typer.TyperException) -> str:
    """Return a usage error of the command line itself (a missing argument, an unknown option) as one line."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "mas-eval"
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    return f"{where}: {' '.join(message.split()).rstrip('.')}; see `{where} --help`"


def _fail(line: str, code: int) -> None:
    """Print ``line`` as the error (names and paths in it printed literally) and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {literal(line)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def _run(argv: Sequence[str] | None) -> None:
    """Run the command line ``argv`` and exit: 0, 2 for an error (one line on stderr), 1 if aborted."""
    try:
        with command_line():
            # Not standalone: the command line's own usage errors come here too, to be one line.
            code = app(args=list(argv) if argv is not None else None, prog_name="mas-eval", standalone_mode=False)
    except (MasEvalError, OSError) as exc:
        _fail(_one_line(exc), 2)
    except typer.Abort:
        _fail("aborted", 1)
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed already, as typer does it
            sys.exit(2)
        _fail(_usage_line(exc), getattr(exc, "exit_code", 2))
    else:
        # Exit as a standalone click program does, success included (callers of main() rely on it).
        sys.exit(code if isinstance(code, int) else 0)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so that it unwinds as it does on Ctrl-C."""


#: The exit codes of a command stopped by Ctrl-C (SIGINT) and by SIGTERM: 128 + the signal's
#: number, what a shell reports for a process the signal killed.
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


@contextlib.contextmanager
def _sigterm_like_sigint() -> Iterator[list[int]]:
    """Stop the command on SIGTERM, within this block, as Ctrl-C does.

    SIGTERM is what ``timeout``, job schedulers and container stops send: the outputs being written are removed,
    worker processes stopped.

    Yields a list that holds the signal once one came. A second SIGTERM while the command cleans up
    is ignored, so that the cleanup finishes (SIGKILL still ends it at once). Outside the main
    thread, where no handler can be set, SIGTERM keeps its default action.
    """
    received: list[int] = []

    def stop(signum: int, frame: object) -> None:  # noqa: ARG001 -- a signal handler's signature
        if not received:
            received.append(signum)
            raise _Terminated

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread
        yield received
        return
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``mas-eval`` console script.

    Exits with 0; 2 for an error (one line on stderr); 1 if a prompt was aborted;
    :data:`EXIT_INTERRUPTED` (130) after Ctrl-C and :data:`EXIT_TERMINATED` (143) after SIGTERM,
    in both cases once the outputs being written are removed and the worker processes stopped.
    """
    try:
        with _sigterm_like_sigint() as terminated:
            try:
                _run(argv)
            except SystemExit:
                if terminated:  # typer turned the interrupt into 130, as for Ctrl-C
                    sys.exit(EXIT_TERMINATED)
                raise
            except KeyboardInterrupt:  # one that came outside typer's reach
                sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)
    except SystemExit as exited:
        if argv is None and exited.code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
            _leave_at_once(exited.code)
        raise


def _leave_at_once(code: int) -> None:
    """End this process with ``code`` now, once its outputs are cleaned up, without finalising Python.

    An interrupted Polars query may still be running a Python function of ours on one of its
    threads (the shard hash of a sharded write). Python's finalisation ends such a thread where
    it waits for the interpreter, through frames that cannot be unwound, and the process then
    may abort (SIGABRT, exit -6) instead of exiting with 130 or 143 (docs/performance.md, "cli/app.py").
    By then the cleanup has run (the ``finally`` blocks the
    interrupt passed through), so nothing is left to finalise. Only the console script does this:
    a caller of ``main(argv)`` keeps its interpreter.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
