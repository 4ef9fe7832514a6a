"""What every command module of the ``mas-eval`` command line shares.

The help's look, the arguments and options several commands take, and where an option's default comes from.

An option that mirrors a parameter of a Python function takes that parameter's default, read
from the function (:func:`defaults_of`, or :func:`source_defaults` for a function whose module
is slow to import), so the command line holds no default of its own that could drift from the
library's; tests/cli/test_defaults.py compares every option with the parameter it mirrors.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from typer.core import TyperCommand, TyperGroup

from mas_eval.metrics.family import parameter_help

__all__ = [
    "Command",
    "DatasetArg",
    "Group",
    "OverwriteOpt",
    "RawCsvOpt",
    "ShardsOpt",
    "choices",
    "defaults_of",
    "flag",
    "set_epilog",
    "source_defaults",
]


class _NoFlagTypes:
    """Help that shows no ``<bool>`` type beside ``--help``: a flag takes no value."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class Command(_NoFlagTypes, TyperCommand):
    """A command whose help shows no type beside ``--help``."""


class Group(_NoFlagTypes, TyperGroup):
    """The ``mas-eval`` group, whose help shows no type beside ``--help``."""


def choices(options: Any) -> str:
    """Return the values of a ``Literal`` type, for help texts (the checks read the same type)."""
    return ", ".join(get_args(options))


def flag(*names: str, help: str) -> Any:
    """Return an on/off option: given or not, it takes no value (so its help shows no type)."""
    return typer.Option(*names, help=help, metavar="")


def set_epilog() -> str:
    """Return the epilog of the commands taking ``--set``: every family's parameters, one paragraph each."""
    return "Parameters for --set (key=value; none for None):\n\n" + parameter_help().replace("\n", "\n\n")


def defaults_of(function: Callable[..., Any]) -> dict[str, Any]:
    """Return the defaults of ``function``'s parameters by name (those without one left out).

    They are what the options mirroring them default to.

    >>> def simulate(runs: int, *, seed: int, effect: float = 0.05) -> None: ...
    >>> defaults_of(simulate)
    {'effect': 0.05}
    """
    parameters = inspect.signature(function).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def source_defaults(module: str, function: str) -> dict[str, Any]:
    """Return the defaults of ``module.function``'s parameters, read from its source, not by importing it.

    For a function whose module is slow to import (the statistics layer loads SciPy and
    statsmodels): ``mas-eval --help`` shows its defaults without loading it. Only the module's
    parent packages are imported. Each default must be a literal (a number, string, ``None``,
    ...); tests/cli/test_defaults.py compares these with :func:`inspect.signature`'s.

    >>> defaults = source_defaults("mas_eval.stats.comparison", "compare")
    >>> defaults["alpha"], defaults["correction"]
    (0.05, 'holm')
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        msg = f"no source for module {module}"
        raise ModuleNotFoundError(msg)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == function]
    if not found:
        msg = f"{module} defines no function {function}()"
        raise LookupError(msg)
    args = found[-1].args  # the last definition is the one that runs (after any @overload stubs)
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)]
    pairs += [(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True) if default]
    return {arg.arg: ast.literal_eval(default) for arg, default in pairs}


DatasetArg = Annotated[Path, typer.Argument(help="Dataset folder (one Parquet file or folder per table).")]
OverwriteOpt = Annotated[bool, flag("--overwrite", help="Replace OUT if it exists (never an input).")]
RawCsvOpt = Annotated[
    bool,
    flag(
        "--raw-csv",
        help="Write CSV text cells as they are. By default a name starting with =, +, -, @, a tab or a carriage "
        "return gets a leading ' so that a spreadsheet shows it instead of running it as a formula.",
    ),
]
ShardsOpt = Annotated[
    int | None,
    typer.Option(
        help="Write every table keyed by run_id in N shards (hash(run_id) % N, each sorted by run; "
        "1: unsharded, the default).",
        metavar="N",
        show_default=False,
    ),
]
