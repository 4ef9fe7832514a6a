"""The command line holds no default of its own: every option that mirrors a parameter of a
Python function defaults to that parameter's default.

:data:`OPTIONS` lists, for every command, what each of its parameters mirrors: a function's
parameter (:class:`Mirrors`), several simulators' parameter left to each one's default
(:class:`GivenOnly`), or nothing (:class:`CliOnly`, with the reason). A command or option
missing from it fails, so a new option must say which it is.
(``mas-eval simulate --kind diagnosis`` made 3 tasks where ``simulate_diagnosis()`` makes 2: the
command line had its own copy of the defaults.)
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from polars.testing import assert_frame_equal

from mas_eval.cli import app, main
from mas_eval.cli.common import defaults_of, source_defaults
from mas_eval.cli.demo import run_demo
from mas_eval.ingest import (
    ingest_annotations,
    ingest_inspect,
    ingest_jsonl,
    ingest_lddx,
    ingest_lm_eval,
    ingest_otlp,
    ingest_table,
)
from mas_eval.report.benchmark import BenchmarkReport, read_medaisure_report
from mas_eval.report.content import build
from mas_eval.report.document import Report
from mas_eval.report.viewer import CaseViewer, case_viewer
from mas_eval.scoring.pipeline import score
from mas_eval.scoring.reproduction import Reproduction, reproduce
from mas_eval.simulation.answers import simulate_answers
from mas_eval.simulation.decision import simulate
from mas_eval.simulation.diagnosis import simulate_diagnosis
from mas_eval.simulation.outcomes import simulate_outcomes
from mas_eval.stats.comparison import compare
from mas_eval.stats.comparison_table import write_comparisons
from mas_eval.stats.economics import cost_effectiveness
from mas_eval.stats.epochs import pass_at_k_intervals
from mas_eval.stats.variance import plan, variance_components
from mas_eval.storage.dataset import Dataset


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Mirrors:
    """The option is ``function``'s ``parameter``: the same default (as ``convert`` writes it for the
    option), or required on both sides."""

    function: Callable[..., Any]
    parameter: str
    convert: Callable[[Any], Any] = _same


@dataclass(frozen=True)
class GivenOnly:
    """The option defaults to ``None``: passed only when given, so each function's own default applies."""

    functions: tuple[Callable[..., Any], ...]
    parameter: str


@dataclass(frozen=True)
class CliOnly:
    """The option mirrors no function parameter's default."""

    reason: str


SIMULATORS = (simulate, simulate_diagnosis, simulate_answers, simulate_outcomes)
#: The options of `mas-eval compare` that are parameters of `compare` by the same name.
COMPARE_OPTIONS = (
    "by", "pair_on", "cluster", "test", "correction", "treatment", "control", "alpha", "confidence", "n_boot", "seed",
    "boot_ci", "method", "allow_mixed_methods", "margin", "hypothesis",
)  # fmt: skip
#: The options of `mas-eval cost-effectiveness` that are parameters of `cost_effectiveness` by the same name.
COST_OPTIONS = ("metric", "cost", "treatment", "control", "pair_on", "by", "n_boot", "seed", "confidence")
DATASET = Mirrors(Dataset.open, "path")
OVERRIDES = CliOnly("--set key=value: the function's **overrides, none unless given")

OPTIONS: dict[str, dict[str, Mirrors | tuple[Mirrors, ...] | GivenOnly | CliOnly]] = {
    "simulate": {
        "out": Mirrors(Dataset.write, "path"),
        "runs": CliOnly("the simulators require runs (no default); 10,000 is the command's quick dataset"),
        "seed": CliOnly("the simulators require seed (no default, so a script states it); the command's is 0"),
        "effect": GivenOnly(SIMULATORS, "effect"),
        "mas_share": tuple(Mirrors(fn, "mas_share") for fn in SIMULATORS),
        "repeats": Mirrors(simulate, "repeats"),
        "tasks": GivenOnly(SIMULATORS, "tasks"),
        "variants": Mirrors(simulate, "variants"),
        "items": GivenOnly((simulate_answers,), "items"),
        "entities": GivenOnly((simulate_answers,), "entities"),
        "answer_chars": GivenOnly((simulate_answers,), "answer_chars"),
        "task_names": GivenOnly((simulate_answers,), "tasks"),
        "epochs": GivenOnly((simulate_outcomes,), "epochs"),
        "kind": CliOnly("chooses the simulator; decision's is mas_eval.simulate, the package's first"),
        "shards": Mirrors(Dataset.write, "shards"),
        "overwrite": Mirrors(Dataset.write, "overwrite"),
    },
    "ingest": {
        "files": Mirrors(ingest_jsonl, "paths"),
        "out": Mirrors(ingest_jsonl, "out"),
        "format_": CliOnly("chooses the function: jsonl runs ingest_jsonl, each log format its adapter"),
        "skip_invalid": (
            Mirrors(ingest_jsonl, "skip_invalid"),
            Mirrors(ingest_lddx, "skip_invalid"),
            Mirrors(ingest_inspect, "skip_invalid"),
        ),
        "map_": (Mirrors(ingest_table, "columns"), Mirrors(ingest_annotations, "columns")),
        "scores": Mirrors(ingest_table, "scores"),
        "wide": Mirrors(ingest_table, "wide"),
        "wide_score": Mirrors(ingest_table, "wide_score"),
        "system": (
            Mirrors(ingest_otlp, "system"),
            Mirrors(ingest_lm_eval, "system"),
            Mirrors(ingest_inspect, "system"),
            Mirrors(ingest_annotations, "system"),
        ),
        "into": Mirrors(ingest_annotations, "into"),
        "taxonomy": Mirrors(ingest_annotations, "taxonomy"),
        "annotator": Mirrors(ingest_annotations, "annotator"),
        "system_attribute": Mirrors(ingest_otlp, "system_attribute"),
        "case_attribute": Mirrors(ingest_otlp, "case_attribute"),
        "count_evaluator": (Mirrors(ingest_otlp, "count_evaluator"), Mirrors(ingest_inspect, "count_evaluator")),
        "rejects": Mirrors(ingest_jsonl, "rejects"),
        "chunk_mb": Mirrors(ingest_jsonl, "chunk_bytes", lambda chunk_bytes: chunk_bytes / 2**20),
        "max_line_mb": (
            Mirrors(ingest_jsonl, "max_line_bytes", lambda max_line_bytes: max_line_bytes / 2**20),
            Mirrors(ingest_otlp, "max_line_bytes", lambda max_line_bytes: max_line_bytes / 2**20),
            Mirrors(ingest_lm_eval, "max_line_bytes", lambda max_line_bytes: max_line_bytes / 2**20),
            Mirrors(ingest_table, "max_line_bytes", lambda max_line_bytes: max_line_bytes / 2**20),
        ),
        "max_member_mb": Mirrors(ingest_inspect, "max_member_bytes", lambda max_member_bytes: max_member_bytes / 2**20),
        "shards": (Mirrors(ingest_jsonl, "shards"), Mirrors(ingest_lddx, "shards"), Mirrors(ingest_inspect, "shards")),
        "overwrite": (Mirrors(ingest_jsonl, "overwrite"), Mirrors(ingest_lddx, "overwrite")),
    },
    "benchmark-report": {
        "report": Mirrors(read_medaisure_report, "path"),
        "out": Mirrors(BenchmarkReport.write, "path"),
        "tables": CliOnly("a second output: the folder BenchmarkReport.write_csv_tables fills, only when given"),
        "overwrite": Mirrors(BenchmarkReport.write, "overwrite"),
    },
    "combined-score": {
        "report": Mirrors(read_medaisure_report, "path"),
        "weights": Mirrors(BenchmarkReport.add_combined_score, "weights"),
        "no_renormalize": Mirrors(BenchmarkReport.add_combined_score, "renormalize_missing", operator.not_),
        "name": Mirrors(BenchmarkReport.add_combined_score, "metric_name"),
        "out": CliOnly("optional: the report is written (BenchmarkReport.write's path) only when given"),
        "overwrite": Mirrors(BenchmarkReport.write, "overwrite"),
    },
    "score": {
        "dataset": DATASET,
        "out": CliOnly("required: the command writes a Scores folder (score(out=None) returns the tables)"),
        "preset": Mirrors(score, "preset"),
        "set_": OVERRIDES,
        "pairwise": CliOnly("adds the override pairwise=True; off leaves the preset's value"),
        "skip_validation": CliOnly(
            "the command validates (score(validate=True)); score() by default checks only what it relies on"
        ),
        "workers": Mirrors(score, "workers"),
        "engine": Mirrors(score, "engine"),
        "scheduler": Mirrors(score, "scheduler"),
        "compression": Mirrors(score, "compression"),
        "overwrite": Mirrors(score, "overwrite"),
    },
    "compare": {
        "scores": CliOnly("the Scores folder whose runs table is compared (Scores.scan)"),
        "metrics": CliOnly(
            "default None: the columns the metric families with values in these runs compare "
            "(metrics.family.choose_columns, as a report does), printed"
        ),
        **{name: Mirrors(compare, name) for name in COMPARE_OPTIONS},
        "out": CliOnly("optional: the table is written (write_comparisons' path) only when given"),
        "overwrite": Mirrors(write_comparisons, "overwrite"),
        "raw_csv": Mirrors(write_comparisons, "raw_csv"),
    },
    "cost-effectiveness": {
        "scores": CliOnly("the Scores folder whose runs table is weighed (Scores.scan)"),
        **{name: Mirrors(cost_effectiveness, name) for name in COST_OPTIONS},
        "out": CliOnly("optional: the table is written (write_comparisons' path) only when given"),
        "overwrite": Mirrors(write_comparisons, "overwrite"),
    },
    "report": {
        "scores": Mirrors(build, "scores"),
        "out": Mirrors(Report.write, "path"),
        "comparisons": Mirrors(build, "comparisons"),
        "dataset": Mirrors(build, "dataset"),
        "title": Mirrors(build, "title"),
        "treatment": Mirrors(build, "treatment"),
        "control": Mirrors(build, "control"),
        "cases": CliOnly("optional: a second output, the case viewer (case_viewer's page), written only when given"),
        "overwrite": Mirrors(Report.write, "overwrite"),
    },
    "pass-at-k": {
        "scores": CliOnly("the Scores folder whose runs table is read (Scores.scan)"),
        "metric": Mirrors(pass_at_k_intervals, "metric"),
        "k": Mirrors(pass_at_k_intervals, "k", lambda ks: ",".join(map(str, ks))),
        **{
            name: Mirrors(pass_at_k_intervals, name)
            for name in ("by", "treatment", "control", "n_boot", "seed", "resample_epochs", "confidence")
        },
    },
    "variance": {
        "scores": CliOnly("the Scores folder whose runs table is read (Scores.scan)"),
        "metric": Mirrors(variance_components, "metric"),
        **{name: Mirrors(variance_components, name) for name in ("by", "judge", "method", "confidence", "paired")},
        "mde": CliOnly("optional: the design is planned (plan's required mde) only when given"),
        **{
            name: Mirrors(plan, name)
            for name in ("power", "alpha", "cost_per_run", "cost_per_case", "max_epochs", "max_cases")
        },
    },
    "view": {
        "scores": Mirrors(case_viewer, "scores"),
        "out": Mirrors(CaseViewer.write, "path"),
        **{
            name: Mirrors(case_viewer, name)
            for name in ("dataset", "metric", "treatment", "control", "pair_on", "title")
        },
        "overwrite": Mirrors(CaseViewer.write, "overwrite"),
    },
    "reproduce": {
        "dataset": DATASET,
        "preset": Mirrors(reproduce, "preset"),
        "set_": OVERRIDES,
        "tolerance": Mirrors(reproduce, "tolerance"),
        "aggregate_tolerance": Mirrors(reproduce, "aggregate_tolerance"),
        "out": CliOnly("optional: the result is written (Reproduction.write's path) only when given"),
        "show": CliOnly("how many disagreements to print: display only"),
        "overwrite": Mirrors(Reproduction.write, "overwrite"),
        "raw_csv": Mirrors(Reproduction.write, "raw_csv"),
    },
    "validate": {"dataset": DATASET},
    "reshard": {
        "dataset": DATASET,
        "shards": CliOnly("required: the layout is the command's point (Dataset.write's None keeps it unsharded)"),
        "out": Mirrors(Dataset.write, "path"),
        "overwrite": Mirrors(Dataset.write, "overwrite"),
    },
    "summary": {
        "dataset": DATASET,
        "as_json": CliOnly("prints JSON instead of a table: display only"),
    },
    "combine": {
        "datasets": CliOnly("required: the Dataset folders Dataset.concat puts together, each Dataset.open'ed"),
        "out": Mirrors(Dataset.write, "path"),
        "shards": Mirrors(Dataset.write, "shards"),
        "overwrite": Mirrors(Dataset.write, "overwrite"),
    },
    "demo": {
        "out": Mirrors(run_demo, "out"),
        "data": Mirrors(run_demo, "data"),
    },
}


def _commands() -> dict[str, Any]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _params(command: str) -> dict[str, Any]:
    return {param.name: param for param in _commands()[command].params if param.name is not None}


def _mirrored(command: str, option: str) -> list[Mirrors]:
    entry = OPTIONS[command][option]
    return list(entry) if isinstance(entry, tuple) else [entry] if isinstance(entry, Mirrors) else []


@pytest.mark.slow
def test_the_table_lists_every_command_and_every_option() -> None:
    assert sorted(OPTIONS) == sorted(_commands())
    for command in OPTIONS:
        assert sorted(OPTIONS[command]) == sorted(_params(command)), command


@pytest.mark.slow
def test_the_table_is_not_vacuous() -> None:
    mirrored = [(command, option) for command in OPTIONS for option in OPTIONS[command] if _mirrored(command, option)]
    assert len(mirrored) >= 50
    # Every command but validate/summary (a folder and a display flag) mirrors a default of its function.
    defaults = {c for c, o in mirrored if _params(c)[o].required is False}
    assert defaults == set(OPTIONS) - {"validate", "summary"}
    for entry in (e for options in OPTIONS.values() for e in options.values() if isinstance(e, CliOnly)):
        assert len(entry.reason) > 20, entry


@pytest.mark.parametrize(
    ("command", "option"),
    [(command, option) for command in OPTIONS for option in OPTIONS[command] if _mirrored(command, option)],
)
def test_an_option_has_the_default_of_the_parameter_it_mirrors(command: str, option: str) -> None:
    param = _params(command)[option]
    for mirror in _mirrored(command, option):
        default = inspect.signature(mirror.function).parameters[mirror.parameter].default
        where = f"{command} {option}: {mirror.function.__qualname__}({mirror.parameter})"
        if default is inspect.Parameter.empty:
            assert param.required, f"{where} has no default, so the option must be required"
        else:
            assert not param.required, where
            assert param.default == mirror.convert(default), where
            assert type(param.default) is type(mirror.convert(default)), where


@pytest.mark.parametrize(
    ("command", "option"),
    [(command, option) for command in OPTIONS for option, e in OPTIONS[command].items() if isinstance(e, GivenOnly)],
)
def test_an_option_left_to_each_function_defaults_to_none(command: str, option: str) -> None:
    entry = OPTIONS[command][option]
    assert isinstance(entry, GivenOnly)
    assert _params(command)[option].default is None
    for function in entry.functions:  # else the option would mirror it
        assert defaults_of(function)[entry.parameter] is not None


def test_compares_defaults_read_from_its_source_are_its_signatures() -> None:
    # `mas-eval --help` reads them without importing the statistics layer (SciPy).
    assert source_defaults("mas_eval.stats.comparison", "compare") == defaults_of(compare)
    assert source_defaults("mas_eval.stats.economics", "cost_effectiveness") == defaults_of(cost_effectiveness)


@pytest.mark.parametrize(
    ("kind", "function"), [*zip(("decision", "diagnosis", "answers", "outcomes"), SIMULATORS, strict=True)]
)
def test_simulate_writes_what_the_simulator_writes_with_its_defaults(
    kind: str, function: Callable[..., Dataset], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--kind", kind, "--runs", "12", "--seed", "3", "--out", str(tmp_path / "ds")])
    assert exited.value.code == 0
    written, expected = Dataset.open(tmp_path / "ds"), function(12, seed=3)
    assert sorted(written.table_names) == sorted(expected.table_names)
    for name in expected.table_names:
        assert_frame_equal(written.collect(name), expected.collect(name), check_dtypes=False)


def test_simulate_diagnosis_makes_the_functions_number_of_tasks(tmp_path: Path) -> None:
    # The drift that prompted this file: 3 tasks from the command line, 2 from simulate_diagnosis().
    with pytest.raises(SystemExit):
        main(["simulate", "--kind", "diagnosis", "--runs", "40", "--seed", "1", "--out", str(tmp_path / "dx")])
    tasks = Dataset.open(tmp_path / "dx").collect("runs")["task"].n_unique()
    assert tasks == defaults_of(simulate_diagnosis)["tasks"] == 2


def test_the_help_names_each_simulators_defaults() -> None:
    helps = {name: getattr(param, "help", None) or "" for name, param in _params("simulate").items()}
    decision, diagnosis, answers, outcomes = (defaults_of(fn) for fn in SIMULATORS)
    assert f"decision runs (default {decision['effect']};" in helps["effect"]
    assert f"diagnosis runs (default {diagnosis['effect']})" in helps["effect"]
    assert f"answer runs (default {answers['effect']})" in helps["effect"]
    assert f"outcome runs (default {outcomes['effect']})" in helps["effect"]
    assert f"outcome runs; default {outcomes['epochs']}" in helps["epochs"]
    expected = (
        f"decision {decision['tasks']}, diagnosis {diagnosis['tasks']}, answers {len(answers['tasks'])}, "
        f"outcomes {outcomes['tasks']}"
    )
    assert f"(default: {expected})" in helps["tasks"]
    assert "default {},{}".format(*answers["items"]) in helps["items"]
    assert "default {},{}".format(*answers["entities"]) in helps["entities"]
    assert f"default {answers['answer_chars']}" in helps["answer_chars"]
