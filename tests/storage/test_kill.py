"""A command killed while it works leaves no process and, by the next run, no staging behind.

Before: SIGTERM (what ``timeout``, job schedulers and container stops send) skipped the cleanup
that Ctrl-C runs, and SIGTERM or SIGKILL to ``score --workers 2`` left its worker processes
running (about 210 MB each, blocked forever) and its staging folder (14 MB) for good.

Each test starts ``mas-eval`` in a fresh process, waits (by watching /proc, not by sleeping)
until the work is under way, signals it, and counts only that process's own descendants: other
tests may run beside it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import mas_eval
from mas_eval.storage.outputs import STAGING_PREFIX
from tests.conftest import checkout_env
from tests.promises import run, tree

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="watches processes in /proc (Linux)"),
]

#: Bounds on every wait, far above what it takes: a test fails on a hang, not on a slow machine.
START, STOP = 120.0, 30.0


def _stat(pid: int) -> tuple[int, str, int] | None:
    """A process's parent, state and start time (clock ticks since boot), or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return int(fields[1]), fields[0], int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every live descendant of ``root``, with its start time (so that a reused pid is not taken for it)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            children.setdefault(stat[0], []).append(int(entry))
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            stat = _stat(child)
            if stat is not None and child not in found:
                found[child] = stat[2]
                todo.append(child)
    return found


def alive(processes: dict[int, int]) -> list[int]:
    """Those of ``processes`` still running: not gone, not a zombie, not a new process with a reused pid."""
    return [pid for pid, start in processes.items() if (s := _stat(pid)) is not None and s[1] != "Z" and s[2] == start]


def wait_until(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still waiting after {timeout:.0f} s for {what}"
        time.sleep(0.02)


def staging_entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(STAGING_PREFIX))


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sharded Dataset that two workers take a few seconds to score: the signal comes while they do."""
    return mas_eval.simulate(20_000, seed=7).write(tmp_path_factory.mktemp("kill") / "ds", shards=4, validate=False)


def signalled_while_working(
    args: list[str],
    work: Path,
    sig: signal.Signals,
    under_way: Callable[[int], bool],
    *,
    group: bool = False,
    to: Callable[[int], int] | None = None,
) -> int:
    """Start ``mas-eval ARGS`` (or ``python ARGS`` when ``args[0]`` is a script) in ``work``, send
    ``sig`` once ``under_way(pid)`` (to its whole process group with ``group``, as a terminal
    sends Ctrl-C; to the process ``to(pid)`` names with ``to``); check that no process of it
    survives, and return its exit code. What it printed is in ``<work>.log``."""
    log = (work.parent / f"{work.name}.log").open("w")
    program = [] if args[0].endswith(".py") else ["-m", "mas_eval.cli"]
    child = subprocess.Popen(
        [sys.executable, *program, *args],
        cwd=work,
        env=checkout_env(COLUMNS="200"),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=group,
    )
    seen: dict[int, int] = {}
    try:

        def ready() -> bool:
            assert child.poll() is None, f"mas-eval ended before the signal: {child.returncode}"
            seen.update(descendants(child.pid))
            return under_way(child.pid)

        wait_until(ready, START, "the work to be under way")
        seen.update(descendants(child.pid))
        if group:
            os.killpg(child.pid, sig)
        elif to is not None:
            os.kill(to(child.pid), sig)
        else:
            child.send_signal(sig)
        code = child.wait(STOP)
        wait_until(lambda: not alive(seen), STOP, f"processes {alive(seen)} of the killed run to end")
    finally:
        for pid in alive(seen) if child.poll() is not None else []:  # a failed test leaves nothing running
            os.kill(pid, signal.SIGKILL)
        if child.poll() is None:
            child.kill()
            child.wait()
        log.close()
    return code


def _workers_scoring(work: Path) -> Callable[[int], bool]:
    """Both pool workers started and the output staged: the shards are being scored."""

    def under_way(pid: int) -> bool:
        workers = [p for p in descendants(pid) if b"spawn_main" in _cmdline(p)]
        return len(workers) >= 2 and bool(staging_entries(work))

    return under_way


@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGTERM, False), (signal.SIGKILL, False), (signal.SIGINT, True)],
    ids=["SIGTERM", "SIGKILL", "Ctrl-C"],
)
def test_killing_score_with_workers_leaves_no_process_and_no_staging(
    sharded: Path, tmp_path: Path, sig: signal.Signals, group: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    read = tree(sharded)
    args = ["score", str(sharded), "--out", "S", "--workers", "2", "--skip-validation"]
    code = signalled_while_working(args, work, sig, _workers_scoring(work), group=group)
    if sig != signal.SIGKILL:  # the staging is removed, exit code 128 + the signal's number
        assert code == 128 + sig
        assert list(work.iterdir()) == []
        # Ctrl-C reaches the workers too (the terminal's process group): they leave it to the parent.
        assert (tmp_path / "work.log").read_text() == ""
    else:  # nothing runs on SIGKILL: the staging stays, its lock released, for the next run to remove
        assert code == -signal.SIGKILL
        assert [p.name for p in work.iterdir()] == staging_entries(work) != []
    assert tree(sharded) == read
    assert run(capsys, "score", sharded, "--out", work / "S", "--skip-validation").code == 0
    assert [p.name for p in work.iterdir()] == ["S"]


def _workers_of(pid: int) -> list[int]:
    return [p for p in descendants(pid) if b"spawn_main" in _cmdline(p)]


@pytest.mark.parametrize("how", ["Ctrl-C", "a worker killed"])
def test_scoring_in_memory_with_workers_leaves_no_process_behind(sharded: Path, tmp_path: Path, how: str) -> None:
    # A notebook's (or a script's) score(ds) scores the shards in worker processes: Ctrl-C stops
    # them, and a worker that dies (the out-of-memory killer) fails the call instead of hanging it.
    work = tmp_path / "work"
    work.mkdir()
    script = work / "notebook.py"
    script.write_text(f"import mas_eval\nmas_eval.score(mas_eval.Dataset.open({str(sharded)!r}), workers=2)\n")
    if how == "Ctrl-C":
        code = signalled_while_working(
            [str(script)], work, signal.SIGINT, lambda pid: len(_workers_of(pid)) >= 2, group=True
        )
        assert code != 0
        # The workers leave Ctrl-C to this process: one traceback, not one per process.
        assert (tmp_path / "work.log").read_text().count("KeyboardInterrupt") == 1
    else:
        code = signalled_while_working(
            [str(script)],
            work,
            signal.SIGKILL,
            lambda pid: len(_workers_of(pid)) >= 2,
            to=lambda pid: _workers_of(pid)[0],
        )
        assert code == 1
        assert "BrokenProcessPool" in (tmp_path / "work.log").read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_cleans_up_as_ctrl_c_does(tmp_path: Path, sig: signal.Signals) -> None:
    work = tmp_path / "work"
    work.mkdir()
    code = signalled_while_working(
        ["simulate", "--runs", "60000", "--shards", "16", "--out", "ds"],
        work,
        sig,
        lambda pid: bool(staging_entries(work)),
    )
    assert code == 128 + sig
    assert list(work.iterdir()) == []


def test_sigterm_closes_a_dask_local_cluster(sharded: Path, tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed", reason="make test installs mas_eval[distributed]")
    work = tmp_path / "work"
    work.mkdir()
    args = ["score", str(sharded), "--out", "S", "--engine", "dask", "--workers", "2", "--skip-validation"]
    code = signalled_while_working(args, work, signal.SIGTERM, _workers_scoring(work))
    assert code == 143
    assert list(work.iterdir()) == []
