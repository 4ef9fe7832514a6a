"""Running the code blocks of a Markdown page (the README, a documentation page) as a reader would.

Blocks run in the order they appear, from a scratch folder that sees the bundled ``data/``:

* ``python`` blocks run in one namespace per page;
* ``pycon`` blocks are doctests in that same namespace: what they show is what they print;
* ``bash`` blocks run line by line (``mas-eval`` is this interpreter's script, importing the
  checkout under test); ``make`` lines are dry-run (``make -n``: the suite itself is ``make
  test``), and ``pip install`` lines are checked to name this checkout and extras it declares;
* ``json`` blocks are canonical run records (checked by the README's own test);
* ``text`` blocks are output or an illustration, never run.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import CHECKOUT, checkout_env

_FENCE = re.compile(r"^(`{3,}|:{3,})(\{?[\w-]*\}?)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
#: Languages a block may have; a block without one would escape these tests.
LANGUAGES = ("python", "pycon", "bash", "json", "text")
#: Directives of the documentation's pages (MyST), whose bodies are not code.
DIRECTIVES = ("{toctree}", "{eval-rst}", "{mas-eval-cli}", "{benchmark-table}", "{note}", "{contents}")
_OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks(path: Path) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of ``path``, in order (directives left out)."""
    found = [(lang, body) for _, lang, body in _FENCE.findall(path.read_text(encoding="utf-8"))]
    return [(lang, body) for lang, body in found if lang not in DIRECTIVES]


def _extras() -> set[str]:
    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"])


def check_pip_install(command: str) -> None:
    """A ``pip install`` line installs this checkout (``.`` or ``-e .``), with extras it declares."""
    words = shlex.split(command)
    targets = [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
    assert targets, command
    for target in targets:
        name, _, extras = target.partition("[")
        assert name == ".", f"{command!r}: installs {name!r}, not this checkout"
        assert set(filter(None, extras.rstrip("]").split(","))) <= _extras(), command


def run_shell(body: str, cwd: Path) -> int:
    """Run a ``bash`` block line by line in ``cwd``; the number of commands run."""
    env = checkout_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    ran = 0
    for line in body.splitlines():
        command = line.split("  #")[0].strip()
        if not command or command.startswith("#"):
            continue
        if " pip install " in f" {command} ":
            check_pip_install(command)
            ran += 1
            continue
        if command.startswith("make "):
            args = ["make", "-n", "-C", str(CHECKOUT), shlex.split(command)[1]]
        else:
            args = ["bash", "-c", command]
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{command!r} failed:\n{done.stdout}\n{done.stderr}"
        ran += 1
    return ran


def run_page(path: Path, scratch: Path) -> dict[str, int]:
    """Run every block of ``path`` from ``scratch`` (the caller chdirs there); counts per language."""
    if not (scratch / "data").exists():
        (scratch / "data").symlink_to(CHECKOUT / "data")
    namespace: dict[str, object] = {"__name__": f"__{path.stem}__"}
    counts = dict.fromkeys(LANGUAGES, 0)
    for number, (language, body) in enumerate(blocks(path), start=1):
        where = f"{path.name} block {number}"
        assert language in LANGUAGES, f"{where}: a block in {language or 'no language'!r}, not one of {LANGUAGES}"
        if language == "python":
            exec(compile(body, where, "exec"), namespace)
        elif language == "pycon":
            test = doctest.DocTestParser().get_doctest(body, namespace, where, str(path), 0)
            runner = doctest.DocTestRunner(optionflags=_OPTIONS)
            runner.run(test, out=_Collect.write, clear_globs=False)
            assert not runner.failures, f"{where}:\n{_Collect.take()}"
            namespace.update(test.globs)  # a DocTest runs in a copy of the namespace
        elif language == "bash":
            counts["bash"] += run_shell(body, scratch) - 1
        counts[language] += 1
    return counts


class _Collect:
    """What a doctest runner reports, kept for the assertion message."""

    lines: list[str] = []  # noqa: RUF012

    @classmethod
    def write(cls, text: str) -> None:
        cls.lines.append(text)

    @classmethod
    def take(cls) -> str:
        text, cls.lines = "".join(cls.lines), []
        return text
