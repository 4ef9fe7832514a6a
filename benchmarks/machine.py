"""What every benchmark's JSON records about the machine and the software it ran on."""

from __future__ import annotations

import os
import platform
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
