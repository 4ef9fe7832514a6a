"""What every benchmark's JSON records about the machine and the software it ran on, and how a
scoring is measured on its own: in a fresh interpreter, by its peak RSS."""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval import __version__


def environment(**extra: Any) -> dict[str, Any]:
    """Versions, cores, architecture and the 1-minute load average (this machine is shared), and ``extra``."""
    return {
        "mas_eval": __version__,
        "python": platform.python_version(),
        "polars": pl.__version__,
        **extra,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def peak_rss_gb() -> float:
    """This process's peak resident set size so far, in GiB.

    On Linux, ``VmHWM`` of ``/proc/self/status``: ``ru_maxrss`` survives ``exec``, so a fresh
    interpreter started by a benchmark that had simulated a large Dataset reported that
    benchmark's peak whenever its own was lower (the 100,000-run rows showed 1.26 GB, the
    simulating parent's peak).
    """
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20  # KiB
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**30


def run_fresh(script: str, *args: str | int | Path) -> dict[str, Any]:
    """Run ``python script *args`` in a fresh interpreter (so its peak RSS is its own) and return the JSON
    object its last line of output prints; a failure exits, quoting the end of its stderr."""
    command = [sys.executable, script, *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        name = os.path.basename(script).removesuffix(".py")
        sys.exit(f"{name} {' '.join(command[2:])}: failed (exit {done.returncode}):\n{done.stderr.strip()[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write a benchmark's result to ``path`` (its folder made if need be), indented, and say so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {path}")
