"""The documentation's own Sphinx extension: pages generated from the code at build time.

* ``{mas-eval-cli}``: every ``mas-eval`` command's help, as the command line prints it
  (typer's own help of the click command, captured at a fixed width): never retyped.
* ``{benchmark-table}``: the benchmark table from ``reports/benchmarks/*.json``, written by
  ``benchmarks/readme_table.py`` (the script ``make bench`` runs).
* Executed notebooks are kept beside the doctrees (``build/docs/jupyter_execute``), not at the
  checkout's root, where MyST-NB would put them for an output folder ``site/``.
* ``MAS_EVAL_DOCS_NOTEBOOK_CELLS`` (for the test suite): a JSON file mapping a notebook's name to
  ``{"before": code, "after": code}``, cells run before and after its own and shown nowhere
  (tagged ``remove-cell``). The suite's checks read what they print from the executed copy.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
#: The width the command help is laid out at (columns of a wide terminal).
HELP_WIDTH = 100
CELLS_VARIABLE = "MAS_EVAL_DOCS_NOTEBOOK_CELLS"


def command_help(argv: list[str]) -> str:
    """What ``mas-eval ARGV --help`` prints, laid out at :data:`HELP_WIDTH` columns, without colour."""
    import typer

    from mas_eval.cli.app import app

    group = typer.main.get_command(app)
    out = io.StringIO()
    saved = {name: os.environ.get(name) for name in ("COLUMNS", "NO_COLOR", "TERM")}
    os.environ.update(COLUMNS=str(HELP_WIDTH), NO_COLOR="1", TERM="dumb")
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            group.main([*argv, "--help"], prog_name="mas-eval", standalone_mode=False)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    return "\n".join(lines).strip("\n")


def command_names() -> list[str]:
    """The commands in the order ``mas-eval --help`` lists them."""
    import click
    import typer

    from mas_eval.cli.app import app

    group = typer.main.get_command(app)
    return list(group.list_commands(click.Context(group, info_name="mas-eval")))


class CliDirective(SphinxDirective):
    """Every command's help, a section each, generated from the commands themselves."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        found: list[nodes.Node] = []
        for argv, title in [([], "mas-eval"), *(([name], f"mas-eval {name}") for name in command_names())]:
            section = nodes.section(ids=[nodes.make_id(title)], names=[nodes.fully_normalize_name(title)])
            section += nodes.title(text=title)
            text = command_help(argv)
            block = nodes.literal_block(text, text, classes=["cli-help"])
            block["language"] = "text"
            section += block
            self.state.document.note_implicit_target(section, section)
            found.append(section)
        return found


def _benchmark_module() -> Any:
    spec = importlib.util.spec_from_file_location("readme_table", ROOT / "benchmarks" / "readme_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BenchmarkTableDirective(SphinxDirective):
    """The benchmark table, from the JSON results the benchmark scripts wrote."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        module = _benchmark_module()
        for path in sorted((ROOT / "reports" / "benchmarks").glob("*.json")):
            self.env.note_dependency(str(path))
        container = nodes.container(classes=["benchmark-table"])
        self.state.nested_parse(StringList(module.table().splitlines(), source="reports/benchmarks"), 0, container)
        return [container]


def _keep_executed_notebooks_in_the_build(app: Sphinx) -> None:
    config = getattr(app.env, "mystnb_config", None)
    if config is not None:
        folder = Path(app.doctreedir).parent / "jupyter_execute"
        app.env.mystnb_config = config.copy(output_folder=str(folder.resolve()))


def _add_cells(app: Sphinx, docname: str, source: list[str]) -> None:
    listed = os.environ.get(CELLS_VARIABLE)
    if not listed or not docname.startswith("notebooks/"):
        return
    cells = json.loads(Path(listed).read_text(encoding="utf-8")).get(Path(docname).name + ".ipynb")
    if not cells:
        return
    import nbformat

    nb = nbformat.reads(source[0], as_version=4)
    hidden = {"tags": ["remove-cell"]}
    if cells.get("before"):
        nb.cells.insert(0, nbformat.v4.new_code_cell(cells["before"], id="docs-before", metadata=hidden))
    if cells.get("after"):
        nb.cells.append(nbformat.v4.new_code_cell(cells["after"], id="test-probe", metadata=hidden))
    source[0] = nbformat.writes(nb)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("mas-eval-cli", CliDirective)
    app.add_directive("benchmark-table", BenchmarkTableDirective)
    app.connect("builder-inited", _keep_executed_notebooks_in_the_build, priority=900)
    app.connect("source-read", _add_cells)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
