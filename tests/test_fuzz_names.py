"""Awkward paths and names, end to end: simulate → score → compare → report, every promise kept.

Hypothesis draws the folder and file names the user passes and the system and task names the
data holds from pieces a hostile user (or an unlucky one) puts there: glob characters
(``?``, ``*``, ``[1]``, ``{a,b}``), Rich markup (``[/]``, ``[bold]``), control characters (an
SGR colour, a bell, line breaks), right-to-left marks and overrides, the markup of every output
format, spreadsheet formulas, and names as long as a file system allows. The commands run as
a user runs them (``mas-eval ...``) and must keep every promise of the README: success with the
right result, or one line and exit 2 where a name cannot be made (a derived name past 255
bytes); nothing left beside the outputs; the inputs byte-identical; nothing printed raw to the
terminal; every name shown as text in every report format and read back exactly.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval import Dataset, Scores
from mas_eval.escaping import CONTROLS, FORMULA_START
from mas_eval.report import load_json
from mas_eval.stats.comparison_table import read_comparisons
from mas_eval.storage.outputs import STAGING_PREFIX
from tests.promises import Outcome, assert_refused, assert_unchanged, run, tree

#: The pieces names are made of: glob and brace characters, Rich markup, control characters,
#: bidirectional marks, the markup of Markdown, HTML, LaTeX and spreadsheets, and plain text.
PIECES = [
    "a", "Z", "7", "é", "מ", " ", ".", "-", "_",
    "?", "*", "[1]", "[!a]", "**", "{a,b}", "[", "]",
    "[/]", "[bold]", "[/mg]", "[draft]", ":smile:",
    "\x1b[31m", "\x1b]0;t\x07", "\x07", "\n", "\r", "\t", "\x7f", "\x85",
    "\u200f", "\u202e", "\u2066",
    "<script>", "<img src=x onerror=alert(1)>", "&amp;", "|", "`", "#", "*b*",
    "=HYPERLINK(1)", "+", "@", "%", "$x$", "\\", "~", "^", "'", '"',
]  # fmt: skip
#: The longest name of a file or folder on the file systems the tests run on (bytes).
NAME_MAX = 255
#: What the Markdown and LaTeX reports add to their file's stem for their figures' folder.
FIGURES_SUFFIX = {".md": "_figures", ".tex": "_pdf_figures"}
#: Characters that may never reach a reader raw (a line break ends a printed line).
RAW = {chr(c) for c in CONTROLS} - {"\n"}
REPORT_FORMATS = (".html", ".md", ".json", ".tex")


def _name(pieces: list[str], padding: int) -> str:
    return "".join(pieces) + "x" * padding


def _fitted(name: str, suffix: str = "") -> str:
    """``name`` cut, character by character, until ``name + suffix`` fits in :data:`NAME_MAX` bytes."""
    while len(os.fsencode(name + suffix)) > NAME_MAX:
        name = name[:-1]
    return name + suffix


names = st.builds(_name, st.lists(st.sampled_from(PIECES), min_size=1, max_size=8), st.just(0))


def _fits(name: str) -> bool:
    """Whether ``name`` is a relative path below the folder it is joined to, each of its names of a length a
    file system takes. A ``/`` in it makes folders (``--out 'a[/]b'`` is ``b`` in the folder ``a[``)."""
    parts = name.split("/")
    return (
        not name.startswith("/")
        and any(parts)
        and not any(part in (".", "..") for part in parts)
        and all(len(os.fsencode(part)) <= NAME_MAX for part in parts)
    )


#: A file or folder name: awkward pieces, sometimes padded to the longest a file system allows.
file_names = (
    st.builds(_name, st.lists(st.sampled_from(PIECES), min_size=1, max_size=6), st.sampled_from([0, 0, 0, 200, 250]))
    .map(_fitted)
    .filter(_fits)
)


def _raw(text: str) -> set[str]:
    return {char for char in text if char in RAW}


class _Tags(HTMLParser):
    """The elements and attributes an HTML page holds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def _cells(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as file:
        return [cell for row in csv.reader(file) for cell in row]


def _named(dataset: Path, treatment: str, control: str, tasks: list[str], out: Path) -> Path:
    """The simulated Dataset at ``dataset`` with its systems and tasks renamed, written to ``out``."""
    ds = Dataset.open(dataset)
    runs = ds.collect("runs")
    cases = runs["case_id"].unique().sort().to_list()
    task_of = {case: tasks[i % len(tasks)] for i, case in enumerate(cases)}
    runs = runs.with_columns(
        task=pl.col("case_id").replace_strict(task_of),
        system=pl.col("system").replace_strict({"mas": treatment, "single": control}),
    )
    return Dataset({**{name: ds.scan(name) for name in ds.table_names}, "runs": runs.lazy()}).write(out)


def _succeeded(done: Outcome) -> None:
    assert done.code == 0, done.err
    assert not _raw(done.out + done.err), f"raw control characters printed: {done.out + done.err!r}"


# No shrinking: an example takes seconds, so shrinking a failure takes many minutes, and the
# failing example is printed as drawn (the pieces it is made of say what broke).
#: Three drawn examples in the suite (``FUZZ_NAMES_EXAMPLES=40`` for a longer hunt), beside the
#: hand-made example of every awkward piece at once below.
@settings(
    max_examples=int(os.environ.get("FUZZ_NAMES_EXAMPLES", "3")),
    phases=[Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    folder=file_names,
    outputs=file_names,
    treatment=names,
    control=names,
    tasks=st.lists(names, min_size=1, max_size=3, unique=True),
    title=names,
)
def test_awkward_paths_and_names_keep_every_promise(
    capsys: pytest.CaptureFixture[str],
    folder: str,
    outputs: str,
    treatment: str,
    control: str,
    tasks: list[str],
    title: str,
) -> None:
    _keep_every_promise(capsys, folder, outputs, treatment, control, tasks, title)


# Every kind of piece at once, in names as long as they may be: a test of its own, so that the
# two examples' minutes run on two workers instead of one after the other.
@pytest.mark.slow
def test_the_most_awkward_names_keep_every_promise(capsys: pytest.CaptureFixture[str]) -> None:
    _keep_every_promise(
        capsys,
        folder="[1]?*{a,b}[/]\x1b[31m\n\u202e" + "x" * 200,
        outputs="[draft]\r\t<script>=HYPERLINK(1)" + "y" * (NAME_MAX - 40),
        treatment="[/mg]<img src=x onerror=alert(1)>",
        control="=HYPERLINK(1)|\x1b]0;t\x07",
        tasks=["מ\u200f $x$ *b* \\", "-2+3\n\nlines", "@SUM(1)\t[bold]"],
        title="# [/] <script>alert(1)</script> \x1b[2J",
    )


def _keep_every_promise(
    capsys: pytest.CaptureFixture[str],
    folder: str,
    outputs: str,
    treatment: str,
    control: str,
    tasks: list[str],
    title: str,
) -> None:
    if treatment == control:
        control = control + "!"
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        # A neighbour that each glob pattern of the names would also match, so reading it would show.
        simulated = root / "simulated" / folder
        mas_eval.simulate(12, seed=9).write(simulated.parent / "neighbour")
        _succeeded(run(capsys, "simulate", "--runs", "40", "--seed", "3", "--out", simulated))
        dataset = _named(simulated, treatment, control, tasks, root / "named" / folder)
        shutil.rmtree(root / "simulated")

        # score, compare: whole outputs, the right runs, inputs untouched, nothing beside them
        work = root / "out"
        work.mkdir()
        before = tree(dataset)
        scores = work / outputs
        _succeeded(run(capsys, "score", dataset, "--out", scores))
        got = Scores.open(scores).runs
        assert got.height == 40 and set(got["system"]) == {treatment, control}
        assert set(got["task"]) <= set(tasks)
        comparisons = work / _fitted(outputs, ".csv")
        flags = [f"--treatment={treatment}", f"--control={control}", "--by", "task", "--metrics", "dqs"]
        _succeeded(run(capsys, "compare", scores, *flags, "--out", comparisons))
        table = read_comparisons(comparisons)
        assert set(table["task"]) == set(got["task"])  # every name read back exactly
        assert not [cell for cell in _cells(comparisons) if cell.startswith(FORMULA_START)]

        # report, in every format
        written = {scores, comparisons}
        for suffix in REPORT_FORMATS:
            report = work / _fitted(outputs, suffix)
            args = ["report", scores, "--comparisons", comparisons, "--dataset", dataset, "--out", report]
            done = run(capsys, *args, f"--title={title}", f"--treatment={treatment}", f"--control={control}")
            figures = report.with_name(report.stem + FIGURES_SUFFIX.get(suffix, ""))
            if suffix in FIGURES_SUFFIX and len(os.fsencode(figures.name)) > NAME_MAX:
                # The figures' folder cannot be named: refused before anything is written.
                assert_refused(done, says=(FIGURES_SUFFIX[suffix], "longer than"))
                assert not _raw(done.err)
                continue
            _succeeded(done)
            written.add(report)
            if suffix in FIGURES_SUFFIX:
                written.add(figures)
            _check_report(report, treatment, control, set(got["task"]), title)
        assert_unchanged(before, dataset)
        tops = {path.relative_to(work).parts[0] for path in written}
        assert sorted(p.name for p in work.iterdir()) == sorted(tops), "something was left beside the outputs"
        assert not [p for p in work.rglob(f"{STAGING_PREFIX}*")], "a staging folder was left"


def _check_report(report: Path, treatment: str, control: str, tasks: set[str], title: str) -> None:
    """Every name in ``report`` is text: none runs, none breaks the format, the JSON keeps each exactly."""
    text = report.read_text(encoding="utf-8")
    if report.suffix == ".json":
        loaded = load_json(report)
        assert set(loaded["tables"]["comparison"]["task"]) == tasks
        assert loaded["title"] == title
        return
    assert not _raw(text.replace("\t", "")), f"raw control characters in {report.suffix}"
    if report.suffix == ".html":
        page = _Tags()
        page.feed(text)
        assert "script" not in page.tags and "img" not in page.tags
        assert not [name for name in page.attributes if name.startswith("on")]
    elif report.suffix == ".md":
        assert "<script" not in text and "<img" not in text
        for line in text.splitlines():
            if line.startswith("|"):
                assert line.rstrip().endswith("|"), f"a name broke a table row: {line!r}"
    else:
        for body in text.split(r"\begin{tabular}")[1:]:
            rows = body.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
            assert all(row.endswith(r" \\") for row in rows), "a name broke a LaTeX table row"
