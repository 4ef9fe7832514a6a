"""The documentation site, built once per test session, strictly, with every notebook executed.

``make docs`` and this build are the same ``sphinx-build -W --keep-going``: a warning (a broken
link, a missing reference, a docstring docutils cannot parse) or a notebook cell that raises fails
it. The suite adds to each notebook, through the site's ``MAS_EVAL_DOCS_NOTEBOOK_CELLS`` hook, a
first cell that points its figures at a folder of its own and a last cell (the probe of
``tests/docs/test_notebooks.py``) that prints facts from the kernel; both are hidden from the pages.
The executed notebooks are read back from the build by ``tests/docs/test_notebooks.py``, so each runs
once in the whole suite.

The kernel is this interpreter: a kernelspec named ``python3`` (the notebooks' own) whose command
is ``sys.executable`` is put first on ``JUPYTER_PATH``, so neither a user's ``python3`` kernel nor
one installed elsewhere can run another Python, and ``PYTHONPATH`` leads to this checkout.

One test uses the site (``tests/docs/test_doc_pages.py::test_the_site``, its checks as subtests), so
one pytest-xdist worker builds it; should another ask, it waits on a lock and reads the same folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import CHECKOUT, built_once, checkout_env

NOTEBOOKS = sorted((CHECKOUT / "notebooks").glob("*.ipynb"))
BEFORE = "import os as _os\n_os.environ['MAS_EVAL_FIGURES'] = {folder!r}\n"


@dataclass(frozen=True)
class Site:
    """A finished build: where it went and how it went."""

    folder: Path
    returncode: int
    log: str
    seconds: float

    @property
    def html(self) -> Path:
        return self.folder / "site"

    @property
    def executed(self) -> Path:
        """The executed notebooks (MyST-NB's copies, with every output)."""
        return self.folder / "build" / "jupyter_execute" / "notebooks"

    def figures(self, notebook: str) -> Path:
        """The folder notebook ``notebook`` (a file name) saved its figures into."""
        return self.folder / "figures" / Path(notebook).stem


def _kernel(folder: Path) -> None:
    from ipykernel.kernelspec import write_kernel_spec

    write_kernel_spec(
        folder / "kernels" / "python3",
        overrides={"display_name": f"mas_eval tests ({sys.executable})"},
        extra_arguments=["--InteractiveShell.colors=nocolor"],  # plain tracebacks in the report
    )


def build(folder: Path, probes: dict[str, str]) -> Site:
    """Build the site into ``folder/site``, each notebook's probe (by file name) appended."""
    folder.mkdir(parents=True, exist_ok=True)
    jupyter = folder / "jupyter"
    _kernel(jupyter)
    cells = {
        path.name: {"before": BEFORE.format(folder=str(folder / "figures" / path.stem)), "after": probes.get(path.name)}
        for path in NOTEBOOKS
    }
    listed = folder / "cells.json"
    listed.write_text(json.dumps(cells), encoding="utf-8")
    env = checkout_env(
        JUPYTER_PATH=os.pathsep.join(filter(None, [str(jupyter), os.environ.get("JUPYTER_PATH")])),
        IPYTHONDIR=str(jupyter / "ipython"),  # no user profile or startup files
        MAS_EVAL_DOCS_NOTEBOOK_CELLS=str(listed),
    )
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "2", "-q"]
    command += ["-d", str(folder / "build" / "doctrees"), str(CHECKOUT / "docs"), str(folder / "site")]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    noise = "Kernel is running over TCP without encryption"
    log = "\n".join(line for line in (done.stdout + done.stderr).splitlines() if noise not in line)
    return Site(folder, done.returncode, log, seconds)


def shared_build(root: Path, probes: dict[str, str]) -> Site:
    """The session's site under ``root``: built by the first caller, read by the others."""

    def make(folder: Path) -> dict[str, object]:
        site = build(folder, probes)
        return {"returncode": site.returncode, "log": site.log, "seconds": site.seconds}

    folder, done = built_once(root, "docs-site", make)
    return Site(folder, done["returncode"], done["log"], done["seconds"])
