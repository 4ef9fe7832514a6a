"""Shared fixtures: a small valid Dataset that every table-level test starts from."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, settings

from mas_eval import Dataset

#: The checkout under test (this process imports its mas_eval: pytest puts it first on sys.path).
CHECKOUT = Path(__file__).resolve().parents[1]
SHARED = CHECKOUT.parent / "shared"
FIXTURES = SHARED / "fixtures"
LDDX = FIXTURES / "lddx"
#: For tests of Local-DDx's own files: CI clones the project with ../shared beside it; a clone
#: without it skips them, and says why.
needs_lddx = pytest.mark.skipif(not LDDX.is_dir(), reason=f"{LDDX} is not beside this clone (CI has it)")


# Hypothesis times nothing: no deadline per example (200 ms by default) and no health check on the
# time spent drawing examples. Both fail a test on a slow or busy machine, never on a wrong result.
# Test modules are imported after this file, so their own settings start from this profile.
settings.register_profile("no_timing", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("no_timing")


#: The width of the terminal the tests' commands print into, in a fresh process or in this one:
#: wider than any path (Linux's PATH_MAX is 4096) with its message, so that no line a test reads
#: is wrapped, however long the checkout's or the temporary folder's path. (At 400 columns a
#: 439-character TMPDIR split "wrote the report to PATH" over two lines.) A test of what fits a
#: terminal passes its own width.
COLUMNS = 5000


@pytest.fixture(autouse=True)
def plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run in this process print as into the pipe of :func:`run_cli_process`: ``COLUMNS``
    wide, no colours, no live display.

    ``mas_eval.cli.terminal`` makes its consoles at import, from whatever runs the tests: COLUMNS,
    LINES, FORCE_COLOR, TERM, a terminal on stdin. A test that reads what a command printed
    would otherwise pass in one terminal and fail in another (at 40 columns a line wraps; with
    FORCE_COLOR numbers come wrapped in escape codes).
    """
    from rich.console import Console

    from mas_eval.cli import terminal

    plain = {
        "width": COLUMNS, "height": 25, "color_system": None, "force_terminal": False, "force_interactive": False,
        "emoji": False,  # as the terminal's own consoles: a name ":thumbs_up:" is printed as it is
    }  # fmt: skip
    out, err = Console(**plain), Console(stderr=True, **plain)  # type: ignore[arg-type]
    import mas_eval.cli  # noqa: F401  (its command modules hold their own references to the consoles)

    # Every name bound to the terminal's consoles, whatever it is called where it was imported.
    replace = {id(terminal.console): out, id(terminal.err_console): err}
    for name, module in list(sys.modules.items()):
        if name == "mas_eval.cli" or name.startswith("mas_eval.cli."):
            for attribute, value in list(vars(module).items()):
                if id(value) in replace:
                    monkeypatch.setattr(module, attribute, replace[id(value)])


def checkout_env(base: Mapping[str, str] | None = None, **variables: str) -> dict[str, str]:
    """``base`` (this process's environment by default) and ``variables``, with :data:`CHECKOUT`
    first on ``PYTHONPATH``: a child Python imports the mas_eval under test, as this process does.

    Without it a child imports whichever mas_eval the virtualenv's editable install points to
    when it does not start in the checkout's root folder (a notebook kernel starts in
    notebooks/, the README's shell lines in a scratch folder), which can be another checkout.
    """
    env = {**(os.environ if base is None else base), **variables}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    return env


def session_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The temporary folder that every pytest-xdist worker of this session shares (its own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


def built_once(root: Path, name: str, make: Callable[[Path], dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    """Folder ``root/name`` made by ``make`` once in the whole session, and what ``make`` returned.

    The first worker to ask makes it (holding a lock on ``root/name.lock``), the others wait and
    read it: a build that takes seconds (the documentation site, the demo, inspect_ai's logs)
    is paid once, not once per worker. ``make`` returns a JSON object, recorded beside the folder.
    A build that raised is tried again by the next caller, in a fresh folder.
    """
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = root / f"{name}.json"
        if not record.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            record.write_text(json.dumps(make(folder)), encoding="utf-8")
        return folder, json.loads(record.read_text(encoding="utf-8"))


def run_python(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in a fresh process of this interpreter that imports this checkout (output read as UTF-8)."""
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, encoding="utf-8", env=checkout_env(env), check=False
    )


def run_cli_process(*args: str | Path, columns: int = COLUMNS) -> subprocess.CompletedProcess[str]:
    """``mas-eval ARGS`` in a fresh process, as a user's shell runs it (a terminal ``columns`` wide, no colours).

    The child writes UTF-8 whatever the locale (``PYTHONUTF8``), and its output is read as UTF-8.
    """
    env = {"COLUMNS": str(columns), "PATH": "", "PYTHONUTF8": "1"}
    return run_python("-m", "mas_eval.cli", *map(str, args), env=env)


def mixed_dataset(decision: int, diagnosis: int, answers: int, seed: int) -> Dataset:
    """Decision, diagnosis and answer runs in one Dataset: every table, ground truth and every kind
    of label included (simulated with seeds ``seed``, ``seed + 1`` and ``seed + 2``)."""
    import mas_eval
    from mas_eval.simulation.sample import with_id_prefix

    return Dataset.concat(
        [
            mas_eval.simulate(decision, seed=seed),
            with_id_prefix(mas_eval.simulate_diagnosis(diagnosis, seed=seed + 1), "dx-"),
            with_id_prefix(mas_eval.simulate_answers(answers, seed=seed + 2), "qa-"),
        ]
    )


def tiny_frames() -> dict[str, pl.DataFrame]:
    """Two cases, a MAS run with two agents and a single-agent run, on every decision table."""
    return {
        "runs": pl.DataFrame(
            {
                "run_id": ["r1", "r2", "r3"],
                "system": ["mas", "single", "mas"],
                "case_id": ["c1", "c1", "c2"],
                "task": ["t1", "t1", "t2"],
                "recommended": ["x", "y", "x"],
                "confidence": [None, 0.8, None],
                "iterations": [2, 1, 3],
                "seconds": [10.0, 3.5, 12.0],
            }
        ),
        "agents": pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r2", "r3"],
                "agent_id": ["a1", "a2", "a1", "a1"],
                "confidence": [0.7, 0.9, 0.8, 0.6],
                "weight": [1.0, 2.0, None, 1.0],
            }
        ),
        "beliefs": pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r1", "r1", "r2", "r3"],
                "agent_id": ["a1", "a1", "a2", "a2", "a1", "a1"],
                "alternative": ["x", "y", "x", "y", "y", "x"],
                "mass": [0.6, 0.4, 0.5, 0.3, 1.0, 0.9],
            }
        ),
        "criteria": pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r2"],
                "criterion": ["safety", "cost", "safety"],
                "weight": [0.6, 0.4, 1.0],
                "kind": ["benefit", "cost", "benefit"],
                "scale": ["satisfaction", "raw", None],
            }
        ),
        "scores": pl.DataFrame(
            {
                "run_id": ["r1", "r1", "r1", "r1", "r2"],
                "alternative": ["x", "x", "y", "y", "y"],
                "criterion": ["safety", "cost", "safety", "cost", "safety"],
                "score": [0.9, 120.0, 0.4, 80.0, 0.7],
            }
        ),
        "ground_truth": pl.DataFrame({"case_id": ["c1", "c1"], "diagnosis": ["flu", "covid"]}),
    }


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody can write into: permissions for a normal user, a read-only mount for root."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True, check=False
    )
    if mounted.returncode != 0:  # pragma: no cover - root without mount (a container without the capability)
        pytest.skip(f"cannot make a read-only folder as root here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.fixture
def frames() -> dict[str, pl.DataFrame]:
    return tiny_frames()


@pytest.fixture
def tiny(frames: dict[str, pl.DataFrame]) -> Dataset:
    return Dataset.from_frames(**frames)


#: The questions and epochs of the session's inspect_ai logs (``inspect_logs``).
INSPECT_SAMPLES, INSPECT_EPOCHS = 4, 3


@dataclass(frozen=True)
class Logs:
    """inspect_ai logs of a session: the ``.eval`` logs, the same converted to ``.json``, a failed one."""

    eval_dir: Path
    json_dir: Path
    failing: Path

    @property
    def files(self) -> list[Path]:
        return sorted(self.eval_dir.glob("*.eval"))


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Logs:
    """Two ``.eval`` logs, a single agent's and a two-role debate's, written by inspect_ai itself
    (:mod:`tests.inspect_logs`: offline, its mock model, ``INSPECT_SAMPLES`` questions x
    ``INSPECT_EPOCHS``), the same converted to ``.json`` and a log whose evaluation failed: written
    once per session (:func:`built_once`) and read by every module. Skips the test when
    inspect_ai is not installed."""
    pytest.importorskip("inspect_ai")

    def make(root: Path) -> dict[str, Any]:
        from inspect_ai.log import read_eval_log, write_eval_log

        from tests.inspect_logs import write_failing_log, write_logs

        write_logs(root / "eval", samples=INSPECT_SAMPLES, epochs=INSPECT_EPOCHS)
        (root / "json").mkdir()
        for file in sorted((root / "eval").glob("*.eval")):
            log = read_eval_log(str(file))
            write_eval_log(log, str(root / "json" / file.with_suffix(".json").name), format="json")
        return {"failing": str(write_failing_log(root / "failing"))}

    root, made = built_once(session_root(tmp_path_factory, worker_id), "inspect-logs", make)
    return Logs(root / "eval", root / "json", Path(made["failing"]))


@pytest.fixture(scope="session")
def inspect_eval_dir(inspect_logs: Logs) -> Path:
    """The folder of ``inspect_logs``' ``.eval`` logs (read only)."""
    return inspect_logs.eval_dir


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Any:
    """The documentation site built once for the whole session (``tests/docs/docs_site.py``), shared by
    pytest-xdist's workers, with the notebooks' probes of ``tests/docs/test_notebooks.py``."""
    from tests.docs.docs_site import shared_build
    from tests.docs.test_notebooks import PROBES

    return shared_build(session_root(tmp_path_factory, worker_id), PROBES)


@pytest.fixture(scope="session")
def demo_at_80_columns(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``mas-eval demo`` of the bundled data in a fresh process and an 80-column terminal, and the
    folder it wrote (read only): run once in the session (:func:`built_once`).

    The data and outputs sit below a folder whose path alone is wider than the terminal, so a
    path printed in a one-line title would be cut on every machine, not only on one with a long
    checkout. The demo takes seconds (its figures): one run serves what it prints and what it writes.
    """

    def make(folder: Path) -> dict[str, Any]:
        deep = folder / ("a-folder-with-a-long-name-" * 4)
        shutil.copytree(CHECKOUT / "data", deep / "data")
        done = run_cli_process("demo", "--data", deep / "data", "--out", deep / "demo", columns=80)
        return {"args": list(map(str, done.args)), "code": done.returncode, "out": done.stdout, "err": done.stderr}

    folder, made = built_once(session_root(tmp_path_factory, worker_id), "demo-80-columns", make)
    done = subprocess.CompletedProcess(made["args"], made["code"], made["out"], made["err"])
    assert done.returncode == 0, done.stderr
    return done, folder / ("a-folder-with-a-long-name-" * 4) / "demo"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that build what the session shares first, the documentation site's before all.

    pytest-xdist hands tests out in this order, so the site's build (the longest setup of the
    suite, over a minute) starts with the session on one worker while the others take the rest;
    collected late, it ran alone at the end. Otherwise the order is pytest's.
    """
    first = ("docs_site", "demo_at_80_columns")
    items.sort(key=lambda item: next((i for i, name in enumerate(first) if name in item.fixturenames), len(first)))


def pytest_itemcollected(item: pytest.Item) -> None:
    """A hypothesis property test is marked ``slow``: it scores tens of drawn Datasets, one by one.

    ``make test`` runs it as every test; ``make test-fast`` leaves it out with the other tiers.
    """
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        item.add_marker(pytest.mark.slow)
