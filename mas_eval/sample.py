"""Regenerate the bundled sample data (``make sample``): fixed seeds, so the output is reproducible.

``data/sample/`` is a simulated Dataset of a few thousand runs; ``data/sample.jsonl`` holds a
few hundred canonical run records. The demo and the notebooks read them as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mas_eval.ingest import export_jsonl
from mas_eval.simulation import simulate

SAMPLE_RUNS, SAMPLE_SEED = 4_000, 2026
RECORDS_RUNS, RECORDS_SEED = 300, 2027


def write_sample(folder: str | Path) -> None:
    """Write ``<folder>/sample/`` and ``<folder>/sample.jsonl``, replacing earlier ones."""
    root = Path(folder)
    simulate(SAMPLE_RUNS, seed=SAMPLE_SEED, effect=0.05, tasks=3, variants=2).write(root / "sample", overwrite=True)
    export_jsonl(simulate(RECORDS_RUNS, seed=RECORDS_SEED, effect=0.05), root / "sample.jsonl")


if __name__ == "__main__":
    write_sample(sys.argv[1] if len(sys.argv) > 1 else "data")
