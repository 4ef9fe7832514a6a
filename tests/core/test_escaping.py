"""Names from the user's data and paths, in every output format: shown as they are, never run.

A system's or a task's name may hold anything: HTML, Markdown, Rich markup, LaTeX's specials, a
spreadsheet formula, control characters, a right-to-left override. The terminal shows it with
its markup escaped and its control characters as escapes; Markdown and HTML show it as text;
a CSV cell a spreadsheet would run starts with a quote, and reads back to the name; LaTeX keeps
each table row on one line.
"""

from __future__ import annotations

import csv
import html
import itertools
import re
import warnings
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console

import mas_eval
from mas_eval import Dataset
from mas_eval.cli.terminal import literal, print_frame
from mas_eval.escaping import (
    CONTROLS,
    FORMULA_START,
    markdown_text,
    one_line,
    spreadsheet_restored,
    spreadsheet_safe,
    visible,
)
from mas_eval.report import build, load_json
from mas_eval.report.benchmark import BenchmarkReport
from mas_eval.report.document import Report, ReportFigure
from mas_eval.report.html import figure_svg
from mas_eval.report.latex import escape_latex
from mas_eval.report.markdown import render_markdown
from mas_eval.scoring.reproduction import Reproduction
from mas_eval.stats import compare
from mas_eval.stats.comparison_table import read_comparisons
from tests.html_text import parsed as parsed_html
from tests.promises import assert_refused, assert_unchanged, run, tree

#: Task names a hostile user gives: markup of each output format, spreadsheet formulas, control
#: characters (an SGR colour, an OSC title, a right-to-left override), right-to-left text, and
#: what a figure would read as mathtext (or fail on).
NAMES = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "| a | b |", "[/mg]", "[draft]",
    '=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tlead", "\rlead", "two\n\nlines",
    "\x1b[31mred", "\x1b]0;title\x07", "x\u202eevil", "מערכת", "back\\slash & 50% #1 _u {b} ~ ^ *", ":thumbs_up:",
    "cost $x$ or $\\frac{$",
]  # fmt: skip
TREATMENT = "[draft] <b>mas</b>"
CONTROL = '=HYPERLINK("http://x") \x1b[31m'
#: The control characters that may never reach a reader raw; a line break ends a printed line.
RAW = {chr(c) for c in CONTROLS} - {"\n"}


def _raw(text: str) -> set[str]:
    return {char for char in text if char in RAW}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A Dataset whose tasks and systems have hostile names, and its Scores folder."""
    root = tmp_path_factory.mktemp("names")
    ds = mas_eval.simulate(120, seed=5)
    runs = ds.collect("runs")
    cases = runs["case_id"].unique().sort().to_list()
    task_of = dict(zip(cases, itertools.cycle(NAMES), strict=False))
    runs = runs.with_columns(
        task=pl.col("case_id").replace_strict(task_of),
        system=pl.col("system").replace_strict({"mas": TREATMENT, "single": CONTROL}),
    )
    named = Dataset({**{name: ds.scan(name) for name in ds.table_names}, "runs": runs.lazy()})
    dataset = named.write(root / "dataset")
    scores = mas_eval.score(Dataset.open(dataset), out=root / "scores")
    return dataset, scores.source


@pytest.fixture(scope="module")
def report(folders: tuple[Path, Path]) -> Report:
    """The report of the hostile Scores, with only its forest plot (which names every task) as a figure."""
    document = build(folders[1], treatment=TREATMENT, control=CONTROL, title=f"Title {NAMES[0]} {NAMES[12]}")
    sections = [replace(s, figures=[f for f in s.figures if f.name == "forest_difference"]) for s in document.sections]
    return replace(document, sections=sections)


# -- the functions ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_visible_shows_control_characters_and_keeps_the_rest(name: str) -> None:
    shown = visible(name)
    assert not _raw(shown) and "\n" not in shown
    assert shown == name or any(chr(c) in name for c in CONTROLS)
    expected = {"\tlead": "\\tlead", "two\n\nlines": "two\\n\\nlines", "x\u202eevil": "x\\u202eevil"}
    assert shown == expected.get(name, shown)
    assert visible("\x1b]0;t\x07\x9b\x7f\u2066\u2069") == "\\x1b]0;t\\x07\\x9b\\x7f\\u2066\\u2069"
    assert visible("מערכת é ü 中") == "מערכת é ü 中"


@pytest.mark.parametrize("name", [*NAMES, "ends in a backslash\\", "[bold]x[/bold]", "[link=http://x]y"])
def test_literal_prints_the_name_itself_through_rich_markup(name: str) -> None:
    out = Console(width=500, color_system=None, record=True, emoji=False)
    out.print(f"[bold]task[/] {literal(name)} [dim]end[/]")
    assert out.export_text() == f"task {visible(name)} end\n"


def test_markdown_text_reads_back_as_the_name() -> None:
    for name in NAMES:
        escaped = markdown_text(name)
        assert "<" not in escaped and ">" not in escaped and "\n" not in escaped
        assert not re.search(r"(?<!\\)[|\[\]`*]", escaped.replace("\\\\", "")), escaped
        assert html.unescape(re.sub(r"\\(.)", r"\1", escaped)) == one_line(name).strip(" ")
    assert markdown_text("- item") == "\\- item" and markdown_text("1. item") == "1\\. item"
    assert markdown_text("-0.5") == "-0.5" and markdown_text("decision_confidence") == "decision_confidence"


# -- the terminal -------------------------------------------------------------------------------


def test_compare_prints_every_name_as_it_is(capsys: pytest.CaptureFixture[str], folders: tuple[Path, Path]) -> None:
    args = ["--treatment", TREATMENT, "--control", CONTROL, "--by", "task", "--pair-on", "case_id"]
    done = run(capsys, "compare", folders[1], *args)
    assert done.code == 0, done.err
    assert not _raw(done.out + done.err)
    assert "[draft]" in done.out and "[/mg]" in done.out and ":thumbs_up:" in done.out
    for name in NAMES:
        assert visible(name) in done.out, name
    assert f"{visible(TREATMENT)} - {visible(CONTROL)}: " in done.out  # the title


def test_the_error_line_shows_names_as_they_are(capsys: pytest.CaptureFixture[str], folders: tuple[Path, Path]) -> None:
    before = tree(folders[1].parent)
    done = run(capsys, "compare", folders[1], "--treatment", "[/mg] [draft]\x1b[2J\u202e", "--control", CONTROL)
    line = assert_refused(done, says=["[/mg] [draft]\\x1b[2J\\u202e", visible(CONTROL)])
    assert not _raw(line)
    assert_unchanged(before, folders[1].parent)


@pytest.mark.slow
def test_commands_print_paths_holding_markup_and_control_characters(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dataset = tmp_path / "ds \x1b]0;pwned\x07 \u202e :thumbs_up:"
    scores = tmp_path / "scores \x1b]0;t\x07 \u202e"
    commands = [
        ("simulate", "--runs", "40", "--seed", "1", "--out", tmp_path / "a[/]b"),
        ("simulate", "--runs", "40", "--seed", "1", "--out", dataset),
        ("validate", dataset),
        ("summary", dataset),
        ("score", dataset, "--out", scores),
        ("compare", scores, "--out", tmp_path / "c[/]x.csv"),
        ("report", scores, "--out", tmp_path / "r[/]x.json"),
    ]
    for command in commands:
        done = run(capsys, *command)
        assert done.code == 0, (command, done.err)
        assert not _raw(done.out + done.err), command
        assert visible(str(command[-1])) in done.out or visible(str(command[1])) in done.out, done.out
    assert (tmp_path / "c[/]x.csv").is_file() and (tmp_path / "r[/]x.json").is_file()


def test_tables_fit_the_width_with_the_escapes_shown() -> None:
    frame = pl.DataFrame({"task": [name * 2 for name in NAMES], "dqs": [0.5] * len(NAMES), "n": [3] * len(NAMES)})
    frame = frame.with_columns(pl.col("dqs").alias(f"other{i}") for i in range(8))
    out = Console(width=70, color_system=None, record=True, emoji=False)
    print_frame(frame, title="\x1b[31m[draft] title", out=out)
    printed = out.export_text()
    assert not _raw(printed)
    assert all(cell_len(line) <= 70 for line in printed.splitlines()), printed
    assert "\\x1b[31m[draft] title" in printed and "not shown at this width" in printed
    for name in NAMES:
        assert visible(name * 2) in printed, name


# -- Markdown -----------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    """A pipe table row's cells, as a reader sees them (escapes and entities undone)."""
    inner = line.strip()[1:-1]
    return [html.unescape(re.sub(r"\\(.)", r"\1", cell.strip())) for cell in re.split(r"(?<!\\)\|", inner)]


def test_markdown_shows_every_name_as_text(report: Report) -> None:
    text = render_markdown(report, "r_figures")
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert not _raw(text) and "\r" not in text
    assert f"# Title {markdown_text(NAMES[0])} {markdown_text(NAMES[12])}" in text
    assert f"## {markdown_text(f'{TREATMENT} vs {CONTROL}')}" in text
    block = text.split("| task | metric |")[1].split("\n\n")[0]
    rows = [line for line in ("| task | metric |" + block).splitlines() if line.startswith("|")]
    width = len(_cells(rows[0]))
    assert all(len(_cells(row)) == width for row in rows), "a | or line break in a name broke the table"
    tasks = {_cells(row)[0] for row in rows[2:]}
    assert tasks == {one_line(name).strip(" ") for name in NAMES}


def test_markdown_figure_links_are_url_encoded(report: Report, tmp_path: Path) -> None:
    path = report.write(tmp_path / "my report (1) [x].md")
    text = path.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links and all(link.startswith("my%20report%20%281%29%20%5Bx%5D_figures/") for link in links), links
    assert all((tmp_path / unquote(link)).is_file() for link in links), links
    alt = re.search(r"!\[(.*)\]\(", text)
    assert alt is not None and "<" not in alt.group(1)


def test_benchmark_markdown_escapes_markdown_syntax_too() -> None:
    report = BenchmarkReport.from_dict({"model_id": "[x](javascript:alert(1)) *b* <i>"})
    text = report.to_markdown()
    assert "# Benchmark report: \\[x\\](javascript:alert(1)) \\*b\\* &lt;i&gt;" in text


# -- LaTeX --------------------------------------------------------------------------------------


def test_latex_keeps_every_row_on_one_line(report: Report) -> None:
    latex = report.to_latex()
    assert not _raw(latex) and "\r" not in latex
    for table in latex.split(r"\begin{tabular}")[1:]:
        body = table.split(r"\end{tabular}")[0]
        assert "\n\n" not in body, "a blank line ends the paragraph inside the table"
        rows = body.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
        assert all(row.endswith(r" \\") and not row.startswith("[") for row in rows), rows
    comparison = latex.split(r"\label{tab:mas-eval-comparison}")[1].split(r"\bottomrule")[0]
    assert comparison.count(r" \\") == report.tables["comparison"].height + 1
    assert r"{}[draft] & " in latex and r"\textless{}script\textgreater{}alert(1)" in latex
    assert r"two  lines" in latex and r"\textbackslash{}x1b[31mred" in latex
    assert (
        escape_latex(NAMES[16])
        == r"back\textbackslash{}slash \& 50\% \#1 \_u \{b\} \textasciitilde{} \textasciicircum{} *"
    )


# -- HTML and JSON ------------------------------------------------------------------------------


def test_html_shows_every_name_as_text(report: Report) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        page = report.to_html()
    assert not [w for w in caught if _raw(str(w.message))], "a warning printed a control character raw"
    parsed = parsed_html(page)
    assert not {"script", "img", "b"} & set(parsed.tags)
    assert not _raw(page.replace("\t", "").replace("\r", ""))
    text = "".join(parsed.text)
    for name in NAMES:
        assert visible(name, breaks=False) in text, name
    assert "\\u202e" in text and "\\x1b[31m" in text


def test_figure_ids_holding_names_are_escaped_in_svg() -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], gid=f"points:{CONTROL}\u202e<script>", label=NAMES[16])
    svg = figure_svg(ReportFigure("f", "", fig))
    plt.close(fig)
    assert not _raw(svg.replace("\t", "").replace("\r", "")) and "<script>" not in svg
    assert "\\x1b[31m\\u202e&lt;script&gt;" in svg


def test_json_keeps_every_name_exactly(report: Report, tmp_path: Path) -> None:
    loaded = load_json(report.write(tmp_path / "r.json"))
    assert set(loaded["tables"]["comparison"]["task"]) == set(NAMES)


# -- CSV ----------------------------------------------------------------------------------------


def _column(path: Path, name: str) -> list[str]:
    with path.open(newline="", encoding="utf-8") as file:
        return [row[name] for row in csv.DictReader(file)]


def test_compare_csv_neutralises_formulas_and_reads_back(
    capsys: pytest.CaptureFixture[str], folders: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "c.csv"
    args = ["--treatment", TREATMENT, "--control", CONTROL, "--by", "task", "--pair-on", "case_id", "--out", out]
    assert run(capsys, "compare", folders[1], *args).code == 0
    tasks = set(_column(out, "task"))
    starting = [name for name in NAMES if name[0] in FORMULA_START]
    assert len(starting) == 6
    assert {f"'{name}" for name in starting} <= tasks
    assert not {cell for cell in tasks if cell[:1] in FORMULA_START}
    assert any(cell.startswith("-") for cell in _column(out, "difference")), "numbers are written as they are"
    runs = mas_eval.Scores.open(folders[1]).runs
    expected = compare(runs, "dqs", by="task", pair_on="case_id", treatment=TREATMENT, control=CONTROL)
    back = read_comparisons(out)
    assert sorted(back.filter(pl.col("metric") == "dqs")["task"]) == sorted(expected["task"])
    assert set(back["task"]) == set(NAMES)


def test_raw_csv_keeps_formulas_when_asked(
    capsys: pytest.CaptureFixture[str], folders: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "raw.csv"
    args = ["--treatment", TREATMENT, "--control", CONTROL, "--by", "task", "--out", out, "--raw-csv"]
    assert run(capsys, "compare", folders[1], *args).code == 0
    assert NAMES[5] in _column(out, "task")
    before = tree(tmp_path)
    done = run(capsys, "compare", folders[1], "--treatment", TREATMENT, "--control", CONTROL, "--raw-csv",
               "--out", tmp_path / "t.parquet")  # fmt: skip
    assert_refused(done, says="--raw-csv applies to a .csv --out only")
    done = run(capsys, "reproduce", folders[0], "--raw-csv")
    assert_refused(done, says="--raw-csv applies to the CSV files of --out")
    assert_unchanged(before, tmp_path)


@pytest.mark.slow
def test_a_report_reads_the_names_back_from_a_comparisons_csv(
    capsys: pytest.CaptureFixture[str], folders: tuple[Path, Path], tmp_path: Path
) -> None:
    table = tmp_path / "c.csv"
    args = ["--treatment", TREATMENT, "--control", CONTROL, "--by", "task", "--out", table]
    assert run(capsys, "compare", folders[1], *args).code == 0
    args = ["--comparisons", table, "--treatment", TREATMENT, "--control", CONTROL, "--out", tmp_path / "r.json"]
    assert run(capsys, "report", folders[1], *args).code == 0
    assert set(load_json(tmp_path / "r.json")["tables"]["comparison"]["task"]) == set(NAMES)


def test_reproduce_writes_its_csv_files_safe_too(tmp_path: Path) -> None:
    text = {"run_id": ["=HYPERLINK(1)", "r2"], "metric": ["tp", "@tp"], "basis": ["labels"] * 2,
            "item": ["+x", None], "recorded": ["-0.5", "-1+1"], "recomputed": ["0.5", "null"]}  # fmt: skip
    result = Reproduction(pl.DataFrame({"metric": ["-tp"], "share": [-0.5]}), pl.DataFrame(text), preset="lddx-v6")
    result.write(tmp_path / "safe")
    assert _column(tmp_path / "safe" / "disagreements.csv", "run_id") == ["'=HYPERLINK(1)", "r2"]
    assert _column(tmp_path / "safe" / "disagreements.csv", "recorded") == ["-0.5", "'-1+1"]
    assert _column(tmp_path / "safe" / "summary.csv", "metric") == ["'-tp"]
    assert _column(tmp_path / "safe" / "summary.csv", "share") == ["-0.5"]
    result.write(tmp_path / "raw", raw_csv=True)
    assert _column(tmp_path / "raw" / "disagreements.csv", "run_id") == ["=HYPERLINK(1)", "r2"]


@given(st.lists(st.one_of(st.none(), st.text(alphabet="'=+-@\t\r0123456789.eaé|\"", max_size=6)), max_size=12))
def test_spreadsheet_safe_leaves_no_formula_and_restores_every_cell(cells: list[str | None]) -> None:
    frame = pl.DataFrame(
        {"name": cells, "number": [-1.5] * len(cells)}, schema={"name": pl.String, "number": pl.Float64}
    )
    safe = spreadsheet_safe(frame)
    number = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z")
    assert all(not c or c[0] not in FORMULA_START or number.match(c) for c in safe["name"])
    assert safe["number"].equals(frame["number"])
    assert spreadsheet_restored(safe).equals(frame)
