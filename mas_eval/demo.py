"""The demo `make demo` runs: the main job on the bundled sample, printed and written out."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from rich.console import Console

from mas_eval.dataset import Dataset
from mas_eval.ingest import ingest_jsonl
from mas_eval.output import atomic_directory
from mas_eval.provenance import provenance
from mas_eval.scoring import score
from mas_eval.stats import compare, summary_view, write_comparisons
from mas_eval.terminal import print_frame

__all__ = ["run_demo"]


def run_demo(data: Path, out: Path, *, console: Console) -> Path:
    """Validate, summarise and score ``data/sample``, ingest ``data/sample.jsonl``; write to ``out``.

    Outputs (replacing an earlier demo as a whole): ``summary.json`` (provenance and every
    table), ``summary.md``, ``scores/`` (the sample's Scores), ``comparisons.parquet`` (MAS vs
    single by task, paired on case) and ``ingested/`` (the Dataset ingested from the JSONL).
    """
    sample, records = data / "sample", data / "sample.jsonl"
    sections: dict[str, pl.DataFrame] = {}
    with atomic_directory(out, overwrite=True) as staging:
        console.rule(f"[bold]Bundled sample dataset[/] {sample}")
        ds = Dataset.open(sample).validate()
        sections["sample"] = ds.summary()
        print_frame(
            sections["sample"], title="rows per table, and the runs, systems, cases, tasks they cover", out=console
        )
        console.print(_systems(ds))

        console.rule("[bold]Decision metrics (seed 004, preset 'spec')[/]")
        scores = score(ds)
        scores.write(staging / "scores")
        sections["headline"] = headline(scores.runs)
        print_frame(
            sections["headline"], title="mean per system (gt_match: share of runs matching ground truth)", out=console
        )

        console.rule("[bold]MAS vs single-agent[/] by task, paired on case_id, Holm-adjusted across the table")
        comparison = compare(
            scores, ["dqs", "decision_confidence"], by="task", pair_on="case_id", test="paired", correction="holm"
        )
        write_comparisons(comparison, staging / "comparisons.parquet")
        sections["comparison"] = summary_view(comparison)
        print_frame(
            comparison.select("task", "metric", "n_pairs", "difference", "ci_low", "ci_high", "p_adjusted", "cohens_d"),
            title="mas - single, paired t on per-case differences (every column: comparisons.parquet)",
            out=console,
        )

        console.rule(f"[bold]Ingest of canonical JSONL records[/] {records}")
        result = ingest_jsonl([records], staging / "ingested")
        sections["ingested"] = Dataset.open(staging / "ingested").summary()
        print_frame(sections["ingested"], title=f"{result.runs} runs ingested", out=console)

        report = provenance(inputs={"sample": sample, "records": records}, parameters={"job": "demo"})
        report["summaries"] = {name: frame.to_dicts() for name, frame in sections.items()}
        (staging / "summary.json").write_text(json.dumps(report, indent=2) + "\n")
        (staging / "summary.md").write_text(_markdown(sections))
    console.print(f"\n[green]demo outputs written to {out}/[/]")
    return out


HEADLINE = [
    "dqs", "gt_match", "decision_confidence", "consensus_level", "agreement_percentage", "balance_score",
    "efficiency_score", "er_unassigned", "cost_usd",
]  # fmt: skip


def headline(run_metrics: pl.DataFrame) -> pl.DataFrame:
    """Mean of the headline metrics per system, with the number of runs."""
    return (
        run_metrics.group_by("system")
        .agg(pl.len().alias("runs"), *(pl.col(c).cast(pl.Float64).mean() for c in HEADLINE))
        .sort("system")
    )


def _systems(ds: Dataset) -> str:
    per_system = (
        ds["runs"].group_by("system").agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort("system").collect()
    )
    return "; ".join(f"{r['system']}: {r['runs']:,} runs on {r['cases']:,} cases" for r in per_system.to_dicts())


def _markdown(sections: dict[str, pl.DataFrame]) -> str:
    lines = ["# mas_eval demo", ""]
    for name, frame in sections.items():
        lines += [f"## {name}", "", "| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.width]
        lines += ["| " + " | ".join("" if v is None else str(v) for v in row) + " |" for row in frame.rows()]
        lines.append("")
    return "\n".join(lines)
