"""Build small decision datasets by hand for pinned-value tests."""

from __future__ import annotations

import polars as pl

from mas_eval import Dataset
from mas_eval.scoring import Scores, score


def one_run(
    *,
    beliefs: dict[str, dict[str, float]] | None = None,
    confidences: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
    scores: dict[str, dict[str, float]] | None = None,
    criteria: dict[str, dict] | None = None,
    run: dict | None = None,
    preset: str = "spec",
    **overrides: object,
) -> Scores:
    """Score a single run ``r`` described by plain dicts."""
    frames: dict[str, pl.DataFrame] = {
        "runs": pl.DataFrame([{"run_id": "r", "system": "mas", "case_id": "c", **(run or {})}])
    }
    agent_ids = sorted(set(beliefs or {}) | set(confidences or {}) | set(weights or {}))
    if agent_ids:
        frames["agents"] = pl.DataFrame(
            {
                "run_id": "r",
                "agent_id": agent_ids,
                "confidence": [(confidences or {}).get(a) for a in agent_ids],
                "weight": [(weights or {}).get(a) for a in agent_ids],
            },
            schema_overrides={"confidence": pl.Float64, "weight": pl.Float64},
        )
    if beliefs:
        frames["beliefs"] = pl.DataFrame(
            [
                {"run_id": "r", "agent_id": g, "alternative": a, "mass": float(m)}
                for g, masses in beliefs.items()
                for a, m in masses.items()
            ]
        )
    if scores:
        frames["scores"] = pl.DataFrame(
            [
                {"run_id": "r", "alternative": a, "criterion": c, "score": float(s)}
                for a, row in scores.items()
                for c, s in row.items()
            ]
        )
    if criteria:
        frames["criteria"] = pl.DataFrame(
            [{"run_id": "r", "criterion": c, **spec} for c, spec in criteria.items()],
            schema_overrides={"weight": pl.Float64},
        )
    return score(Dataset.from_frames(**frames).validate(), preset=preset, **overrides)


def run_row(scores: Scores) -> dict:
    return scores.runs.row(0, named=True)


def column_by(frame: pl.DataFrame, key: str, column: str) -> dict[str, object]:
    return dict(zip(frame[key].to_list(), frame[column].to_list(), strict=True))
