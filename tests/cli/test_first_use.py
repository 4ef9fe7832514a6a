"""What a new user meets first: messages that say what a path is, tables that fit 80 columns,
a help that lists everything, progress, and a summary a reader can use (issue 9, items 11-19)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

import mas_eval
from mas_eval import Dataset, SchemaError
from mas_eval.cli.terminal import print_comparisons, print_frame, print_system_means
from mas_eval.scoring.scores import Scores
from tests.conftest import run_cli_process, run_python
from tests.promises import run

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("first_use")
    ds = mas_eval.simulate(400, seed=8).write(root / "ds")
    scores = mas_eval.score(Dataset.open(ds)).write(root / "scores")
    return {"ds": ds, "scores": scores, "root": root}


# -- item 11: say what the path is, and what was expected ---------------------------------------


def test_compare_on_a_dataset_folder_says_to_score_it_first(
    capsys: pytest.CaptureFixture[str], folders: dict[str, Path]
) -> None:
    done = run(capsys, "compare", folders["ds"])
    assert done.code == 2
    assert f"{folders['ds']} is a Dataset folder, not a Scores folder; score it first" in done.err
    assert "No such file" not in done.err


def test_score_on_a_parquet_file_names_the_folder_to_pass(
    capsys: pytest.CaptureFixture[str], folders: dict[str, Path]
) -> None:
    done = run(capsys, "score", folders["ds"] / "runs.parquet", "--out", folders["root"] / "x")
    assert done.code == 2
    assert "is a Parquet file (one table), not a Dataset folder; pass the Dataset folder that holds it" in done.err


@pytest.mark.parametrize("command", ["validate", "summary"])
def test_validate_and_summary_on_a_scores_folder(
    capsys: pytest.CaptureFixture[str], folders: dict[str, Path], command: str
) -> None:
    done = run(capsys, command, folders["scores"])
    assert done.code == 2
    assert "is a Scores folder (written by `mas-eval score`), not a Dataset folder" in done.err
    assert "rename" not in done.err


def test_python_says_the_same(folders: dict[str, Path]) -> None:
    with pytest.raises(SchemaError, match="is a Dataset folder, not a Scores folder"):
        Scores.open(folders["ds"])
    with pytest.raises(SchemaError, match="is a Scores folder"):
        Dataset.open(folders["scores"])
    with pytest.raises(SchemaError, match="is a JSON/JSONL file, not a Dataset folder; ingest it into a Dataset first"):
        Dataset.open(DATA / "sample.jsonl")


# -- item 12: the whole list, and "did you mean" for required columns too ------------------------


def test_a_misspelt_metric_gets_a_suggestion_and_the_whole_list(
    capsys: pytest.CaptureFixture[str], folders: dict[str, Path]
) -> None:
    done = run(capsys, "compare", folders["scores"], "-m", "dqs,efficency_score")
    assert done.code == 2
    message = done.err
    assert "no column 'efficency_score' (did you mean 'efficiency_score'?)" in message
    for name in ("efficiency_score", "er_unassigned", "balance_score", "cost_usd"):
        assert name in message


def test_a_misspelt_required_column_gets_a_suggestion() -> None:
    runs = pl.DataFrame({"run_id": ["r1"], "sytem": ["mas"], "case_id": ["c1"]})
    with pytest.raises(SchemaError, match=r"missing required column\(s\) 'system'.*rename 'sytem' to 'system'"):
        Dataset.from_frames(runs=runs)


# -- item 14: tables fit the terminal; p-values read as p-values ---------------------------------


def _printed(width: int, draw: object) -> str:
    # Not a terminal, whatever the environment: rich takes FORCE_COLOR with TERM=dumb for a dumb
    # terminal and prints 80 columns wide, whatever width it was given.
    sink = open("/dev/null", "w", encoding="utf-8")  # noqa: SIM115
    console = Console(width=width, record=True, force_terminal=False, file=sink)
    assert console.width == width
    draw(console)  # type: ignore[operator]
    return console.export_text()


@pytest.mark.parametrize("width", [80, 100, 160])
def test_comparison_tables_fit_without_cutting_numbers(folders: dict[str, Path], width: int) -> None:
    table = mas_eval.compare(
        Scores.open(folders["scores"]), ["dqs", "decision_confidence"], by="task", pair_on="case_id"
    )
    text = _printed(width, lambda c: print_comparisons(table, title="t", out=c))
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    assert "0.0000" not in text  # a p-value is never printed as zero
    for value in table["difference"].to_list():
        assert f"{value:.4f}" in text


def test_a_p_value_that_underflows_is_printed_as_a_bound() -> None:
    runs = pl.DataFrame({"system": ["mas"] * 50 + ["single"] * 50, "y": [1.0 + i * 1e-3 for i in range(50)] * 2})
    runs = runs.with_columns(y=pl.when(pl.col("system") == "mas").then(pl.col("y") + 10).otherwise("y"))
    table = mas_eval.compare(runs, "y")
    assert table["p_adjusted"][0] < 1e-16
    text = _printed(160, lambda c: print_comparisons(table, out=c))
    assert "<1e-16" in text


def test_wide_frames_drop_trailing_columns_and_say_so() -> None:
    frame = pl.DataFrame({f"column_{i}": [0.123456789] for i in range(12)})
    text = _printed(80, lambda c: print_frame(frame, out=c))
    assert "…" not in text
    assert "not shown at this width: column_" in text


def test_system_means_are_metrics_as_rows(folders: dict[str, Path]) -> None:
    from mas_eval.cli.demo import headline

    means = headline(Scores.open(folders["scores"]).runs)
    text = _printed(80, lambda c: print_system_means(means, out=c))
    assert "…" not in text
    assert re.search(r"efficiency_score\s+0\.\d{4}\s+0\.\d{4}", text)


@pytest.mark.subprocess
def test_the_demo_at_80_columns_cuts_nothing(demo_at_80_columns: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, _ = demo_at_80_columns
    assert "…" not in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    # The answers table shows every column: n, accuracy, reasoning and combined per task and system.
    assert "Answer quality" in done.stdout
    assert re.search(r"diagnostic_reasoning\s+mas\s+100(\s+0\.\d{4}){3}\s*$", done.stdout, re.M)


# -- item 15: the help lists every command, flags take no value, --version ------------------------


def test_help_lists_demo_and_shows_no_bool_placeholders(capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "--help")
    assert done.code == 0
    for command in ("simulate", "ingest", "score", "compare", "validate", "summary", "demo"):
        assert re.search(rf"^\W*{command}\s", done.out, re.M), command
    assert "<bool>" not in done.out
    for command in ("score", "ingest", "compare"):
        assert "<bool>" not in run(capsys, command, "--help").out


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["score", "ds", "--out", "x", "--overwrite", "true"],
            "mas-eval score: Got unexpected extra argument(s) (true)",
        ),
        (["score"], "mas-eval score: Missing argument 'dataset'"),
        (["compare", "sc", "--alpha", "x"], "mas-eval compare: Invalid value for '--alpha'"),
        (["scroe"], "mas-eval: No such command 'scroe'. Did you mean 'score'?"),
    ],
)
def test_usage_errors_are_one_line_too(capsys: pytest.CaptureFixture[str], args: list[str], line: str) -> None:
    # Typer's own errors came in a box of five lines under a usage line.
    done = run(capsys, *args)
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith(f"error: {line}")
    assert lines[0].endswith(f"; see `{line.split(':')[0]} --help`")


@pytest.mark.subprocess
def test_version() -> None:
    done = run_cli_process("--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"mas-eval {mas_eval.__version__}")


@pytest.mark.subprocess
def test_importing_the_package_does_not_load_scipy() -> None:
    # What keeps `mas-eval --help` fast (2.4 s before: 1.4 s of it importing the statistics layer).
    code = "import sys, mas_eval.cli; print(any(m.startswith(('scipy', 'statsmodels')) for m in sys.modules))"
    done = run_python("-c", code)
    assert done.stdout.strip() == "False", done.stderr


# -- item 17: score reports its steps ------------------------------------------------------------


def test_score_reports_each_step() -> None:
    steps: list[str] = []
    mas_eval.score(mas_eval.simulate(50, seed=1), progress=steps.append)
    assert steps == ["encoding keys", "family decision", "assembling tables"]


# -- item 19: the demo's written report is for a reader --------------------------------------------


@pytest.mark.subprocess
def test_report_md_rounds_and_explains(demo_at_80_columns: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = demo_at_80_columns
    text = (out / "report.md").read_text(encoding="utf-8")
    assert not re.search(r"\d\.\d{7,}", text), "a float printed with more than 6 decimals"
    assert "| p (Holm) |" in text and "| p |" in text
    assert (
        "14 comparisons (test: the paired t on per-case differences (on case means where cases repeat)); p-values "
        "adjusted across the table (Holm)"
    ) in text
    assert re.search(r"dqs: mas is higher in 3 of 3 comparison\(s\) after the Holm correction", text)
    # The headline: each system's mean with its interval, and their difference.
    assert "| metric | mas | single | mas − single | 95% interval |" in text
    assert re.search(r"\| dqs \| 0\.\d{4} \[0\.\d{4}, 0\.\d{4}\] \| 0\.\d{4} \[", text)
