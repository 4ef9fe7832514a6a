"""The Python API as a hostile caller meets it: every public function and method refuses a value of
the wrong type with the project's error (a :class:`~mas_eval.errors.MasEvalError`), in one line
naming the function and the parameter, before any work.

The sweep follows scikit-learn's ``sklearn/tests/test_public_functions.py``: the public callables
are listed from the packages' ``__all__`` (functions, and the public methods and constructors of
the classes), and each parameter is given, in turn, a value of a type no parameter takes while
the required others get a value their own constraints accept. A public callable added without
its parameters checked fails :func:`test_every_public_callable_is_swept`, until it is validated
(:func:`mas_eval.constraints.validate_params`) or listed in :data:`EXEMPT` with the reason.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mas_eval
import mas_eval.ingest
import mas_eval.plots
import mas_eval.report
import mas_eval.stats
from mas_eval import Dataset, Scores
from mas_eval.constraints import Constraint
from mas_eval.errors import MasEvalError
from tests.promises import assert_refused, assert_unchanged, run, tree

#: The modules whose ``__all__`` is the public API (the simulators are in ``mas_eval``'s).
MODULES = (mas_eval, mas_eval.stats, mas_eval.plots, mas_eval.report, mas_eval.ingest)

#: Public callables whose parameters are not swept, and why. Each is a result the package builds and
#: returns (its fields are what a function computed), or takes its arguments as keywords of any name.
EXEMPT = {
    "mas_eval.Dataset.from_frames": "its tables are keywords of any name, each checked as a table "
    "(test_frames.py: a table that is not a frame is named)",
    "mas_eval.ingest.IngestResult.__init__": "the result ingest_jsonl returns",
    "mas_eval.ingest.LddxIngestResult.__init__": "the result the log adapters return",
    "mas_eval.stats.SufficientStatistics.__init__": "the result sufficient_statistics returns",
    "mas_eval.report.CombinedScore.__init__": "the result combined_score returns",
    "mas_eval.report.Report.__init__": "the result report.build returns",
    "mas_eval.report.ReportFigure.__init__": "a part of report.build's result",
    "mas_eval.report.ReportTable.__init__": "a part of report.build's result",
    "mas_eval.report.Section.__init__": "a part of report.build's result",
    "mas_eval.report.CaseViewer.__init__": "the result case_viewer returns",
}
#: Constructors that check their own fields as they are made (``__post_init__``), with a valid call.
SELF_CHECKED: dict[str, dict[str, Any]] = {
    "mas_eval.report.BenchmarkReport.__init__": {"model_id": "m"},
    "mas_eval.report.DetailedResult.__init__": {"task_id": "t"},
}


class _Wrong:
    """A value of a type no public parameter takes."""

    def __repr__(self) -> str:
        return "<a value of the wrong type>"


WRONG = _Wrong()


def _public() -> dict[str, tuple[Callable[..., Any], type | None]]:
    """Every public callable by its dotted name: the function (unwrapped from classmethod/staticmethod)
    and the class it belongs to (None for a module's function)."""
    found: dict[str, tuple[Callable[..., Any], type | None]] = {}
    seen: set[int] = set()
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) and id(obj) not in seen:
                seen.add(id(obj))
                found[f"{module.__name__}.{name}"] = (obj, None)
            elif inspect.isclass(obj) and not issubclass(obj, BaseException) and id(obj) not in seen:
                seen.add(id(obj))
                for attr, raw in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    function = raw.__func__ if isinstance(raw, classmethod | staticmethod) else raw
                    if inspect.isfunction(function):
                        found[f"{module.__name__}.{name}.{attr}"] = (function, obj)
    return found


PUBLIC = _public()


def _parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters a caller names: not ``self``/``cls``, not ``**kwargs``."""
    return [
        p
        for p in inspect.signature(function).parameters.values()
        if p.name not in ("self", "cls") and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]


def _swept() -> Iterator[tuple[str, str]]:
    for name, (function, _) in sorted(PUBLIC.items()):
        if name in EXEMPT:
            continue
        for parameter in _parameters(function):
            yield name, parameter.name


def test_every_public_callable_is_swept() -> None:
    unchecked = []
    for name, (function, _) in sorted(PUBLIC.items()):
        named = {p.name for p in _parameters(function)}
        if not named or name in EXEMPT or name in SELF_CHECKED:
            continue
        declared = set(getattr(function, "__parameter_constraints__", {}))
        if named - declared:
            unchecked.append(f"{name}: {', '.join(sorted(named - declared))}")
    assert not unchecked, "public parameters without constraints (validate_params them):\n" + "\n".join(unchecked)
    stale = sorted(set(EXEMPT) - set(PUBLIC)) + sorted(set(SELF_CHECKED) - set(PUBLIC))
    assert not stale, f"exempt callables that are no longer public: {stale}"


def test_the_public_list_is_every_name_of_the_modules_all() -> None:
    # Every name of __all__ resolves (the lazy ones too), and every callable of them is listed above.
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                assert any(function is obj for function, _ in PUBLIC.values()), f"{module.__name__}.{name}"


# -- valid values for the other parameters ---------------------------------------------------------


@pytest.fixture(scope="module")
def candidates(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """Values of many types: for each required parameter, the first its constraints accept is given."""
    folder = tmp_path_factory.mktemp("api")
    ds = mas_eval.simulate(20, seed=1)
    scores = mas_eval.score(ds)
    runs = scores.runs
    from matplotlib.figure import Figure

    return [
        "x",
        ["x"],
        1,
        2,
        0.5,
        [1],
        (1, 2),
        ("mas", "single"),
        True,
        {"x": "y"},
        runs,
        runs.lazy(),
        ds,
        scores,
        folder / "out",
        [folder / "out"],
        np.array([1.0]),
        datetime(2026, 1, 1, tzinfo=UTC),
        mas_eval.stats.sufficient_statistics(runs, "dqs"),
        [mas_eval.stats.sufficient_statistics(runs, "dqs")],
        print,
        Figure(),
        [runs],
        runs["run_id"],
        [ds],
    ]


def _valid(constraints: list[Constraint], candidates: list[Any]) -> Any:
    for value in candidates:
        try:
            if any(c.is_satisfied_by(value) for c in constraints):
                return value
        except Exception:  # a predicate that cannot read this candidate: try the next
            continue
    msg = f"no candidate satisfies {[str(c) for c in constraints]}: add one to candidates()"
    raise AssertionError(msg)


@pytest.fixture(scope="module")
def instances(candidates: list[Any]) -> dict[type, Any]:
    """One instance of each public class, for its methods."""
    runs = candidates[10]
    report = mas_eval.report.BenchmarkReport(model_id="m", task_scores={"t": {"accuracy": 1.0}})
    return {
        Dataset: candidates[12],
        Scores: candidates[13],
        mas_eval.stats.SufficientStatistics: candidates[18],
        mas_eval.report.BenchmarkReport: report,
        mas_eval.report.DetailedResult: mas_eval.report.DetailedResult(task_id="t"),
        mas_eval.report.CombinedScore: report.add_combined_score({"diagnostics": 1.0}),
        mas_eval.report.Report: mas_eval.report.Report("t", [], {}),
        mas_eval.report.ReportTable: mas_eval.report.ReportTable("t", "c", runs),
        mas_eval.report.Section: mas_eval.report.Section("k", "t"),
    }


@pytest.mark.parametrize(("name", "parameter"), list(_swept()))
def test_a_value_of_the_wrong_type_is_refused_naming_the_function_and_parameter(
    name: str, parameter: str, candidates: list[Any], instances: dict[type, Any]
) -> None:
    function, owner = PUBLIC[name]
    constraints = getattr(function, "__parameter_constraints__", {})
    arguments = dict(SELF_CHECKED.get(name, {}))
    for p in _parameters(function):
        if p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_POSITIONAL:
            arguments.setdefault(p.name, _valid(constraints[p.name], candidates) if p.name in constraints else None)
    arguments[parameter] = WRONG
    varargs = [p.name for p in _parameters(function) if p.kind is inspect.Parameter.VAR_POSITIONAL]
    positional = [arguments.pop(varargs[0])] if varargs and varargs[0] in arguments else []
    if owner is None:
        call = function
    elif function.__name__ == "__init__":
        call = owner
    elif isinstance(inspect.getattr_static(owner, function.__name__), classmethod | staticmethod):
        call = getattr(owner, function.__name__)
    else:
        # The arguments are checked before the method's body runs: an instance made without its fields does.
        call = getattr(instances.get(owner) or owner.__new__(owner), function.__name__)
    with pytest.raises(MasEvalError) as info:
        call(*positional, **arguments)
    message = str(info.value)
    assert "\n" not in message, message
    shown = function.__qualname__.removesuffix(".__init__")
    assert shown in message and parameter in message, message


# -- the entry points a user calls first -----------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: Dataset.open(5), "Dataset.open: path=5 is invalid; path must be a path"),
        (lambda: Scores.open(None), "Scores.open: path=None is invalid; path must be a path"),
        (lambda: Dataset.open(b"folder"), "Dataset.open: path=b'folder' is invalid"),
        (lambda: mas_eval.score("some/folder"), "score: ds='some/folder' is invalid; ds must be a Dataset"),
        (lambda: mas_eval.compare(None, "dqs"), "compare: run_metrics=None is invalid; run_metrics must be a Polars"),
        (lambda: mas_eval.ingest.ingest_inspect(5), "ingest_inspect: paths=5 is invalid"),
        (lambda: mas_eval.report.build(None), "build: scores=None is invalid"),
        (lambda: mas_eval.plots.save(None, "f.png"), "save: fig=None is invalid; fig must be a matplotlib Figure"),
    ],
)
def test_the_first_calls_raise_the_projects_errors(call: Callable[[], object], says: str) -> None:
    with pytest.raises(MasEvalError) as info:
        call()
    assert says in str(info.value)


def test_a_system_name_with_a_lone_surrogate_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    # What `--system $'\xff'` gives Python: the byte as a lone surrogate (surrogateescape), which no
    # Parquet file and no UTF-8 output can hold (a traceback from Polars' constructor before).
    log = tmp_path / "log.eval"
    log.write_bytes(b"not read")
    before = tree(tmp_path)
    with pytest.raises(MasEvalError, match=r"ingest_inspect: system='\\udcff' is invalid; .*no lone surrogate"):
        mas_eval.ingest.ingest_inspect(log, tmp_path / "out", system="\udcff")
    assert_unchanged(before, tmp_path)


def test_the_command_line_refuses_a_lone_surrogate_in_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.eval"
    log.write_bytes(b"not read")
    before = tree(tmp_path)
    done = run(capsys, "ingest", log, "--format", "inspect", "--system", os.fsdecode(b"\xff"), "--out", tmp_path / "o")
    assert_refused(done, says=["system='\\udcff'", "no lone surrogate"])
    assert_unchanged(before, tmp_path)


def test_writing_where_no_folder_can_be_made_is_the_projects_error() -> None:
    # /proc takes no new entries: making the staging folder fails with ENOENT (FileNotFoundError before).
    ds = mas_eval.simulate(10, seed=1)
    with pytest.raises(MasEvalError, match=r"^/proc/x: cannot be written \(no such file or directory\); .*another"):
        ds.write("/proc/x")
    assert not Path("/proc/x").exists()
