"""Writing outputs: atomic folders and files, their manifests, and the "already exists" refusal.

Every writer of the package (Dataset, Scores, comparison tables, JSONL export and rejects,
the demo) goes through here, so that each output appears whole or not at all, an existing
output is replaced only when asked, and every manifest carries the package version.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mas_eval._version import __version__
from mas_eval.errors import OutputExistsError

__all__ = ["atomic_directory", "atomic_file", "check_target", "read_manifest", "write_manifest"]


def check_target(path: str | Path, *, overwrite: bool) -> Path:
    """``path`` as a Path; :class:`~mas_eval.errors.OutputExistsError` if it exists and ``overwrite`` is off."""
    target = Path(path)
    if target.exists() and not overwrite:
        msg = f"{target} already exists; pass overwrite=True (CLI: --overwrite) to replace it"
        raise OutputExistsError(msg)
    return target


#: How long a failed write's leftovers are chased: a failing Polars sink can still create its file
#: a moment after it raised, and a removal that ran meanwhile leaves the folder behind (measured:
#: 17 of 300 failed Dataset writes left their staging folder with the other core busy).
_REMOVE_ATTEMPTS, _REMOVE_PAUSE = 50, 0.02


def _remove(path: Path) -> None:
    """Remove a file or folder, again while something still writes into it (at most about 1 s)."""
    for _ in range(_REMOVE_ATTEMPTS):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        if not path.exists() and not path.is_symlink():
            return
        time.sleep(_REMOVE_PAUSE)


def _staging_name(target: Path, kind: str) -> Path:
    return target.parent / f".{target.name}.{kind}-{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside ``path`` that replaces ``path`` only if the block succeeds.

    A failure anywhere leaves no trace: the temporary folder is removed and an existing
    ``path`` is untouched. An existing ``path`` is replaced only with ``overwrite=True``.
    """
    target = check_target(path, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = _staging_name(target, "tmp")
    staging.mkdir()
    try:
        yield staging
        if target.exists():
            retired = _staging_name(target, "old")
            target.rename(retired)
            staging.rename(target)
            _remove(retired)
        else:
            staging.rename(target)
    finally:
        if staging.exists():
            _remove(staging)


@contextlib.contextmanager
def atomic_file(path: str | Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary file path beside ``path``, renamed over ``path`` only if the block succeeds."""
    target = check_target(path, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = _staging_name(target, "tmp")
    try:
        yield staging
        staging.replace(target)
    finally:
        staging.unlink(missing_ok=True)


def write_manifest(folder: Path, name: str, content: Mapping[str, Any]) -> None:
    """Write ``content`` as ``<folder>/<name>`` (JSON), led by the package version."""
    manifest = {"mas_eval_version": __version__, **content}
    (folder / name).write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(folder: Path, name: str) -> dict[str, Any]:
    """The manifest ``<folder>/<name>``, or ``{}`` when there is none."""
    path = folder / name
    return json.loads(path.read_text()) if path.is_file() else {}
