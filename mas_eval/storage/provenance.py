"""What a report records so that its numbers can be traced: version, parameters, input hashes."""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mas_eval._version import __version__

__all__ = ["file_sha256", "inputs_sha256", "provenance"]

_BLOCK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """Hash one file's bytes with SHA-256, read in 1 MiB blocks.

    Examples
    --------
    The digest of ``abc``, FIPS 180-2's first SHA-256 example:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "abc.txt").write_bytes(b"abc")
    ...     print(file_sha256(Path(tmp) / "abc.txt"))
    ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def inputs_sha256(path: str | Path) -> dict[str, str]:
    """Hash a file, or every file under a folder, with SHA-256 (keys relative to the folder, sorted)."""
    root = Path(path)
    if root.is_file():
        return {root.name: file_sha256(root)}
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))
    return {str(p.relative_to(root)): file_sha256(p) for p in files}


def provenance(
    *,
    inputs: Mapping[str, str | Path],
    parameters: Mapping[str, Any] | None = None,
    hashes: Mapping[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Make the block every report carries: package version, time, Python, parameters and input hashes.

    ``hashes``: the inputs' :func:`inputs_sha256`, by name, when computed already (a report
    hashes its inputs while it draws its figures); by default they are computed here.
    """
    if hashes is None:
        hashes = {name: inputs_sha256(p) for name, p in inputs.items()}
    return {
        "mas_eval_version": __version__,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "parameters": dict(parameters or {}),
        "inputs": {name: {"path": str(p), "sha256": hashes[name]} for name, p in inputs.items()},
    }
