"""``mas-eval simulate``: a synthetic Dataset from one of the four simulators.

Each ``--kind`` runs one function (:data:`SIMULATORS`). The options that mirror a simulator's
parameter take its default: one that the kinds' functions default differently (``--effect``,
``--tasks``) is left out of the call unless given, so each kind gets its own function's
default, which the help names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from mas_eval.cli.common import OverwriteOpt, ShardsOpt, defaults_of
from mas_eval.cli.terminal import console, literal, progress
from mas_eval.constraints import Interval, Options, check_parameter
from mas_eval.errors import InvalidParameterError
from mas_eval.simulation import answers, decision, diagnosis, outcomes
from mas_eval.simulation.answers import simulate_answers
from mas_eval.simulation.decision import simulate_decision
from mas_eval.simulation.diagnosis import simulate_diagnosis
from mas_eval.simulation.outcomes import simulate_outcomes
from mas_eval.storage.outputs import check_target

__all__ = ["SIMULATE_KINDS", "SIMULATORS", "simulate_command"]

#: The function each `mas-eval simulate --kind` runs.
SIMULATORS: dict[str, Callable[..., Any]] = {
    "decision": simulate_decision,
    "diagnosis": simulate_diagnosis,
    "answers": simulate_answers,
    "outcomes": simulate_outcomes,
}
#: The kinds of synthetic runs `mas-eval simulate --kind` writes.
SIMULATE_KINDS = tuple(SIMULATORS)
#: How many runs each kind makes within the memory ceiling (the simulators' ``runs`` constraints).
_CEILINGS = {
    "decision": decision.CEILING,
    "diagnosis": diagnosis.CEILING,
    "answers": answers.CEILING,
    "outcomes": outcomes.CEILING,
}
#: Options of `mas-eval simulate` that only answer runs take.
_ANSWER_OPTIONS = ("items", "entities", "answer_chars", "task_names")
#: The defaults of each simulator's parameters.
_DEFAULTS = {kind: defaults_of(function) for kind, function in SIMULATORS.items()}
_DECISION = _DEFAULTS["decision"]
#: The task names of answer runs when neither --tasks nor --task-names is given.
_ANSWER_TASKS: tuple[str, ...] = tuple(_DEFAULTS["answers"]["tasks"])


def _runs_ceilings() -> str:
    """Return the most runs of each kind, as the simulators' ``runs`` constraints declare them."""
    gigabytes = _CEILINGS["decision"].gigabytes
    each = ", ".join(f"{kind} {ceiling.runs:,}" for kind, ceiling in _CEILINGS.items())
    return f"at most, of the default size (within {gigabytes} GB of memory): {each}, fewer of larger runs"


def _of(kind: str, name: str) -> Any:
    """Return the default of simulator ``kind``'s parameter ``name``, for a help text."""
    return _DEFAULTS[kind][name]


def _pair(kind: str, name: str) -> str:
    """Return a ``(min, max)`` default as the option writes it: ``20,40``."""
    low, high = _of(kind, name)
    return f"{low},{high}"


def _per_kind(name: str) -> str:
    """Return the defaults of ``name`` of every simulator: one value if they agree, else one per kind."""
    defaults = {kind: _DEFAULTS[kind][name] for kind in SIMULATE_KINDS}
    if name == "tasks":
        defaults["answers"] = len(defaults["answers"])
    if len(set(defaults.values())) == 1:
        return f"{next(iter(defaults.values()))}"
    return ", ".join(f"{kind} {value}" for kind, value in defaults.items())


def _int_pair(name: str, text: str) -> tuple[int, int]:
    """``--items 20,40`` as ``(20, 40)``; one integer ``N`` as ``(N, N)`` (the range checks are the simulator's)."""
    parts = [part.strip() for part in text.split(",")]
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (1, 2):
        msg = f"simulate: --{name} {text!r} is invalid; write MIN,MAX (two integers, e.g. 20,40) or one integer"
        raise InvalidParameterError(msg)
    return (numbers[0], numbers[-1])


def _answer_tasks(count: int | None, names: str | None) -> tuple[str, ...] | None:
    """Return the task names of answer runs, or ``None`` (its default) if neither option is given.

    ``--task-names`` as given, else the first ``--tasks`` of the simulator's default names and ``task4``, ``task5``,
    ...
    """
    if names is not None:
        if count is not None:
            msg = "simulate: --tasks and --task-names are both given; give one (--task-names names the tasks)"
            raise InvalidParameterError(msg)
        return tuple(name.strip() for name in names.split(","))
    if count is None:
        return None
    # A name is made for every task: no more of them than runs.
    check_parameter("tasks", count, [Interval(int, 1, _CEILINGS["answers"].runs)], where="simulate")
    known = len(_ANSWER_TASKS)
    return (*_ANSWER_TASKS, *(f"task{i}" for i in range(known + 1, count + 1)))[:count]


def simulate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    runs: Annotated[
        int,
        typer.Option(
            "--runs",
            "-n",
            help=f"Number of runs (both systems together); {_runs_ceilings()}.",
        ),
    ] = 10_000,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same dataset.")] = 0,
    effect: Annotated[
        float | None,
        typer.Option(
            help="The planted MAS − single difference: in mean dqs_raw for decision runs "
            f"(default {_of('decision', 'effect')}; DQS before the ground-truth boost, which widens the dqs gap "
            "as the MAS also picks the correct alternative more often), in expected recall for diagnosis runs "
            f"(default {_of('diagnosis', 'effect')}), in the probability of reproducing each entity and "
            f"reasoning step of the reference for answer runs (default {_of('answers', 'effect')}), in the pass "
            f"probability of a case of median difficulty for outcome runs (default {_of('outcomes', 'effect')}).",
            show_default=False,
        ),
    ] = None,
    # One value for every kind (tests/cli/test_defaults.py checks the simulators agree on it).
    mas_share: Annotated[
        float,
        typer.Option(help="Share of runs made by the MAS."),
    ] = _DECISION["mas_share"],
    repeats: Annotated[
        int,
        typer.Option(help="Runs per system per case (decision runs)."),
    ] = _DECISION["repeats"],
    tasks: Annotated[
        int | None,
        typer.Option(
            help=f"Number of tasks (default: {_per_kind('tasks')}); answer runs take the first of "
            f"{', '.join(_ANSWER_TASKS)}, then task{len(_ANSWER_TASKS) + 1}, task{len(_ANSWER_TASKS) + 2}, ...",
            show_default=False,
        ),
    ] = None,
    variants: Annotated[
        int,
        typer.Option(help="Number of variants (decision runs)."),
    ] = _DECISION["variants"],
    items: Annotated[
        str | None,
        typer.Option(
            help=f"Items per case as MIN,MAX or N (answer runs; default {_pair('answers', 'items')}).",
            metavar="MIN,MAX",
            show_default=False,
        ),
    ] = None,
    entities: Annotated[
        str | None,
        typer.Option(
            help="Clinical entities per reference answer as MIN,MAX or N, at most 10 "
            f"(answer runs; default {_pair('answers', 'entities')}).",
            metavar="MIN,MAX",
            show_default=False,
        ),
    ] = None,
    answer_chars: Annotated[
        int | None,
        typer.Option(
            help="Wanted length in characters of each answer, rationale and reference, 1 to 10000 "
            f"(answer runs; default {_of('answers', 'answer_chars')}).",
            show_default=False,
        ),
    ] = None,
    epochs: Annotated[
        int | None,
        typer.Option(
            help=f"Runs of each case by each system (outcome runs; default {_of('outcomes', 'epochs')}).",
            show_default=False,
        ),
    ] = None,
    task_names: Annotated[
        str | None,
        typer.Option(help="Task names, comma-separated, instead of --tasks (answer runs).", show_default=False),
    ] = None,
    kind: Annotated[
        str,
        typer.Option(
            help="decision (the crisis-MAS evaluation methodology's tables), diagnosis (the LDDx v6 metrics "
            "guide's: differentials, transcripts, ground truth; --effect is then the MAS − single difference in "
            f"recall, default {_of('diagnosis', 'effect')}) or answers (the MedAISure metrics overview's: MAS "
            f"and single agent answering the same benchmark items; --effect default {_of('answers', 'effect')}) or "
            "outcomes (a MAS and a single agent running each case for several --epochs, with per-agent usage, a "
            "pass/fail score 'match' and a numeric 'f1', as benchmark logs record them)."
        ),
    ] = "decision",
    shards: ShardsOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Write a synthetic dataset of MAS and single-agent runs over shared cases."""
    from mas_eval.storage.sharding import check_shards

    check_shards(shards, where="simulate")
    check_parameter("--kind", kind, [Options(SIMULATE_KINDS)], where="simulate")
    given = {"items": items, "entities": entities, "answer_chars": answer_chars, "task_names": task_names}
    misplaced = [f"--{name.replace('_', '-')}" for name in _ANSWER_OPTIONS if given[name] is not None]
    if kind != "outcomes" and epochs is not None:
        msg = f"simulate: --epochs applies only to --kind outcomes (this is --kind {kind}); leave it out"
        raise InvalidParameterError(msg)
    if kind != "answers" and misplaced:
        verb, them = ("applies", "it") if len(misplaced) == 1 else ("apply", "them")
        msg = (
            f"simulate: {', '.join(misplaced)} {verb} only to --kind answers (this is --kind {kind}); leave {them} out"
        )
        raise InvalidParameterError(msg)
    options: dict[str, Any] = {"effect": effect, "mas_share": mas_share, "tasks": tasks}
    if kind == "decision":
        options |= {"repeats": repeats, "variants": variants}
    elif kind == "answers":
        options |= {
            "items": None if items is None else _int_pair("items", items),
            "entities": None if entities is None else _int_pair("entities", entities),
            "answer_chars": answer_chars,
            "tasks": _answer_tasks(tasks, task_names),
        }
    elif kind == "outcomes":
        options |= {"epochs": epochs}
    check_target(out, overwrite=overwrite)
    with progress() as bar:
        task = bar.add_task("simulating", total=None)

        def advance(step: str) -> None:
            bar.update(task, description=f"simulating {step}")

        # What is not given is left out, so that the simulator's own default applies.
        chosen = {name: value for name, value in options.items() if value is not None}
        ds = SIMULATORS[kind](runs, seed=seed, progress=advance, **chosen)
        bar.update(task, description="writing")
        # Valid by construction (tests/simulation/test_simulate.py validates it): not validated again
        # (docs/performance.md).
        ds.write(out, overwrite=overwrite, validate=False, shards=shards)
    layout = f" in {shards} shards" if shards and shards > 1 else ""
    console.print(f"wrote {runs:,} runs to {literal(out)}{layout}", highlight=False)
