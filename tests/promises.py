"""The command line's promises, checked the same way by every test that plays a hostile user.

README: every failure is one line on stderr and exit code 2, never a traceback; an output
appears whole or not at all (nothing half-written, no staging entry left beside it); inputs are
never modified. A test snapshots the folders it works in with :func:`tree`, runs a command
(:func:`run` in this process, or :func:`tests.conftest.run_cli_process` in a fresh one) and
checks the outcome with :func:`assert_refused` and :func:`assert_unchanged`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["Outcome", "assert_refused", "assert_unchanged", "run", "tree"]


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (hidden ones too, symbolic links not followed) with a hash of each
    file's bytes: two calls compare equal exactly when nothing under ``root`` was added, removed or changed."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = f"<link to {path.readlink()}>"
        elif path.is_file():
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            out[key] = "<dir>"
        else:  # a FIFO, a socket, a device node
            out[key] = "<special>"
    return out


@dataclass(frozen=True)
class Outcome:
    """What a command did: its exit code and what it printed."""

    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> Outcome:
    """``mas-eval ARGS`` in this process (faster than a fresh one), as :func:`mas_eval.cli.main` runs it."""
    from mas_eval.cli import main

    capsys.readouterr()  # what earlier steps of the test printed is not this command's
    try:
        main([str(a) for a in args])
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else (0 if exited.code is None else 1)
    else:  # pragma: no cover - main always exits
        code = 0
    printed = capsys.readouterr()
    return Outcome(code, printed.out, printed.err)


def assert_refused(done: Outcome | object, *, says: str | Iterable[str] = ()) -> str:
    """The command failed as promised: exit code 2, one line on stderr starting with ``error:``, no
    traceback, and the line holds every text of ``says``. Returns the line."""
    code = getattr(done, "code", getattr(done, "returncode", None))
    err = getattr(done, "err", getattr(done, "stderr", ""))
    assert code == 2, f"exit code {code}, stderr: {err}"
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"{len(lines)} lines on stderr:\n{err}"
    line = lines[0]
    assert line.startswith("error: "), line
    for text in [says] if isinstance(says, str) else says:
        assert text in line, f"{text!r} not in {line!r}"
    return line


def assert_unchanged(before: dict[str, str], root: Path, *, except_for: Iterable[str] = ()) -> None:
    """Nothing under ``root`` changed since ``before`` (:func:`tree`), but the entries named in
    ``except_for`` (relative paths, with everything under them)."""
    skip = tuple(except_for)

    def kept(snapshot: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in snapshot.items() if not any(k == s or k.startswith(s + "/") for s in skip)}

    after = tree(root)
    added = sorted(set(kept(after)) - set(kept(before)))
    removed = sorted(set(kept(before)) - set(kept(after)))
    changed = sorted(k for k in set(kept(before)) & set(kept(after)) if before[k] != after[k])
    assert not (added or removed or changed), f"added {added}, removed {removed}, changed {changed}"
