"""The documentation: its site builds strictly, what it generates is there, and its pages run.

The site (``tests/docs/docs_site.py``) is built once per session, by one test; a warning fails it. Its pages'
code blocks run as the README's do (``tests/docs/doc_blocks.py``), so no page can drift from the
code. The README and the pages describe the tool as it is: no issue numbers, no commit hashes,
no paths outside the repository (history goes to CHANGELOG.md).
"""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

from tests.conftest import CHECKOUT
from tests.docs.doc_blocks import blocks, run_page
from tests.docs.docs_site import Site
from tests.docs.test_notebooks import NOTEBOOKS, check_notebook

pytestmark = pytest.mark.docs

DOCS = CHECKOUT / "docs"
PAGES = sorted(path for path in DOCS.rglob("*.md") if "notebooks" not in path.relative_to(DOCS).parts)
WITH_CODE = [page for page in PAGES if any(lang in ("python", "pycon", "bash") for lang, _ in blocks(page))]
README = CHECKOUT / "README.md"

#: What a page about the tool as it is does not name: its development history and places outside it.
HISTORY = {
    "an issue number": re.compile(r"\bissues?\s+#?\d+|(?<![\w&/])#\d+\b", re.IGNORECASE),
    "a commit hash": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "a path outside the repository": re.compile(r"\.\./"),
}


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Text(HTMLParser):
    """A page's text, without its scripts and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def text_of(page: Path) -> str:
    parser = _Text()
    parser.feed(page.read_text(encoding="utf-8"))
    return "".join(parser.parts).replace("\u2019", "'")  # docutils' smart quotes, back to the source's


def history_in(text: str) -> list[str]:
    return [f"{what}: {found.group()!r}" for what, pattern in HISTORY.items() for found in pattern.finditer(text)]


# --- the README and the pages name no history ---------------------------------------------------


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(CHECKOUT)))
def test_a_page_names_no_issue_commit_or_outside_path(page: Path) -> None:
    assert not history_in(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("notebook", sorted((CHECKOUT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_a_notebooks_text_names_no_issue_commit_or_outside_path(notebook: Path) -> None:
    nb = nbformat.read(notebook, as_version=4)
    assert not history_in("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("fixed in issue 12", True), ("see #12", True), ("as of 9abde18", True), ("../shared/x", True),
        ("`#fff` colours, &#8212; entities, ## headings", False), ("1,000,000 runs", False), ("deadline", False),
    ],
)  # fmt: skip
def test_the_history_check_finds_what_it_should(text: str, found: bool) -> None:
    assert bool(history_in(text)) is found


# --- every example runs ----------------------------------------------------------------------


@pytest.mark.parametrize("page", WITH_CODE, ids=lambda p: str(p.relative_to(DOCS)))
def test_a_pages_code_runs_as_written(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    counts = run_page(page, tmp_path)
    assert sum(counts.values()) > 0


def test_the_readme_headlines_are_the_benchmark_results() -> None:
    headlines = _module(CHECKOUT / "benchmarks" / "readme_table.py", "readme_table").headlines()
    text = README.read_text(encoding="utf-8")
    listed = text.split("<!-- benchmarks:start -->\n")[1].split("\n<!-- benchmarks:end -->")[0]
    assert listed.splitlines() == headlines


# --- the site ----------------------------------------------------------------------------------
#
# One test, its checks as subtests: the site is built once, by whichever worker runs this test
# (pytest-xdist's load distribution would otherwise send site checks to both workers, one of them
# waiting for the other's build).


def test_the_site(docs_site: Site, subtests: pytest.Subtests) -> None:
    with subtests.test("builds strictly"):
        check_builds_strictly(docs_site)
    for name, check in SITE_CHECKS.items():
        with subtests.test(name):
            check(docs_site)
    for notebook in NOTEBOOKS:
        with subtests.test(notebook.name):
            check_notebook(notebook, docs_site)


def check_builds_strictly(docs_site: Site) -> None:
    assert docs_site.returncode == 0, docs_site.log
    for page in ("index", "getting_started", "dataset", "statistics", "cli", "performance", "correctness"):
        assert (docs_site.html / f"{page}.html").is_file(), page
    for family in ("decision", "diagnosis", "answers", "outcomes"):
        assert (docs_site.html / f"metrics_{family}.html").is_file(), family


def check_the_cli_page_is_each_commands_own_help(docs_site: Site) -> None:
    extension = _module(DOCS / "_ext" / "mas_eval_docs.py", "mas_eval_docs")
    text = text_of(docs_site.html / "cli.html")
    names = extension.command_names()
    assert "compare" in names and "score" in names
    for name in names:
        help_text = extension.command_help([name])
        usage = next(line for line in help_text.splitlines() if "Usage:" in line)
        assert usage.strip() in text, name


def check_the_performance_page_has_every_benchmark_row(docs_site: Site) -> None:
    table = _module(CHECKOUT / "benchmarks" / "readme_table.py", "readme_table").table()
    text = text_of(docs_site.html / "performance.html")
    rows = table.splitlines()[2:]
    assert rows
    for row in rows:
        label = row.strip("|").split(" | ")[0].strip()
        assert label in text, label


def check_the_api_reference_and_family_pages_come_from_the_docstrings(docs_site: Site) -> None:
    import mas_eval
    from mas_eval.stats import compare, display

    stats = text_of(docs_site.html / "api" / "stats.html")
    assert compare.__doc__.splitlines()[0].strip() in stats
    assert "table as mas-eval compare prints it" in display.__doc__.replace("``", "")
    assert "table as mas-eval compare prints it" in stats
    top = text_of(docs_site.html / "api" / "mas_eval.html")
    assert mas_eval.Scores.__doc__.splitlines()[0].split(":")[0].replace(":func:`score`", "score") in top
    decision = text_of(docs_site.html / "metrics_decision.html")
    assert "Mean pairwise cosine" in decision or "consensus" in decision


def check_notebook_pages_show_their_outputs_not_the_probe(docs_site: Site) -> None:
    page = docs_site.html / "notebooks" / "01_quickstart.html"
    html = page.read_text(encoding="utf-8")
    assert "<img" in html  # the forest plot the notebook drew
    assert 'class="mas-eval-summary"' in html  # the Scores' own HTML display
    assert "_facts" not in html and "MAS_EVAL_FIGURES'] =" not in html  # the suite's hidden cells


SITE_CHECKS = {
    "the command-line page": check_the_cli_page_is_each_commands_own_help,
    "the performance page": check_the_performance_page_has_every_benchmark_row,
    "the API reference": check_the_api_reference_and_family_pages_come_from_the_docstrings,
    "a notebook page": check_notebook_pages_show_their_outputs_not_the_probe,
}
