"""The demo `make demo` runs: the main job on the bundled sample, printed and written out."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from rich.console import Console

from mas_eval.dataset import Dataset
from mas_eval.formatting import format_ci, format_number, format_p, format_value, system_means_rows
from mas_eval.ingest import ingest_jsonl
from mas_eval.output import atomic_directory
from mas_eval.provenance import provenance
from mas_eval.scoring import score
from mas_eval.stats import compare, write_comparisons
from mas_eval.terminal import print_comparisons, print_frame, print_system_means

__all__ = ["HEADLINE", "headline", "run_demo"]

#: The demo's comparison: MAS vs single per task, paired on case, Holm-adjusted.
_COMPARISON = {"by": "task", "pair_on": "case_id", "test": "paired", "correction": "holm"}
_COMPARED = ["dqs", "decision_confidence"]


def run_demo(data: Path, out: Path, *, console: Console) -> Path:
    """Validate, summarise and score ``data/sample``, ingest ``data/sample.jsonl``; write to ``out``.

    Outputs (replacing an earlier demo as a whole): ``summary.json`` (provenance and every
    table), ``summary.md`` (the same for a reader: prose, rounded tables, p-values),
    ``scores/`` (the sample's Scores), ``comparisons.parquet`` (MAS vs single by task, paired
    on case) and ``ingested/`` (the Dataset ingested from the JSONL).
    """
    sample, records = data / "sample", data / "sample.jsonl"
    sections: dict[str, pl.DataFrame] = {}
    with atomic_directory(out, overwrite=True, inputs=[sample, records]) as staging:
        console.rule(f"[bold]Bundled sample dataset[/] {sample}")
        ds = Dataset.open(sample).validate()
        sections["sample"] = ds.summary()
        print_frame(sections["sample"], title="rows per table; the runs, systems, cases, tasks they cover", out=console)
        console.print(_systems(ds))

        console.rule("[bold]Decision metrics (seed 004, preset 'spec')[/]")
        scores = score(ds)
        scores.write(staging / "scores")
        sections["headline"] = headline(scores.runs)
        print_system_means(
            sections["headline"], title="mean per system (gt_match: share of runs matching ground truth)", out=console
        )

        console.rule("[bold]MAS vs single-agent[/] by task, paired on case_id")
        comparison = compare(scores, _COMPARED, **_COMPARISON)  # type: ignore[arg-type]
        write_comparisons(comparison, staging / "comparisons.parquet")
        sections["comparison"] = comparison
        print_comparisons(
            comparison,
            title="mas - single: paired t on per-case differences, Holm-adjusted across the table (* p_adj <= 0.05)",
            out=console,
        )  # fmt: skip

        console.rule(f"[bold]Ingest of canonical JSONL records[/] {records}")
        result = ingest_jsonl([records], staging / "ingested")
        sections["ingested"] = Dataset.open(staging / "ingested").summary()
        print_frame(sections["ingested"], title=f"{result.runs} runs ingested", out=console)

        report = provenance(
            inputs={"sample": sample, "records": records},
            parameters={"job": "demo", "preset": scores.preset, "comparison": _COMPARISON, "metrics": _COMPARED},
        )
        report["summaries"] = {name: frame.to_dicts() for name, frame in sections.items()}
        (staging / "summary.json").write_text(json.dumps(report, indent=2) + "\n")
        (staging / "summary.md").write_text(_markdown(sections, report))
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


# -- summary.md -------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]], numeric: list[bool]) -> list[str]:
    """A Markdown table, numbers right-aligned."""
    align = ["---:" if is_number else "---" for is_number in numeric]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _frame_table(frame: pl.DataFrame) -> list[str]:
    rows = [[format_value(name, value) for name, value in row.items()] for row in frame.iter_rows(named=True)]
    return _table(frame.columns, rows, [dtype.is_numeric() for dtype in frame.dtypes])


def _means_table(means: pl.DataFrame) -> list[str]:
    """Metrics as rows, one column per system, and the difference of the first two."""
    headers, rows = system_means_rows(means.to_dicts())
    return _table(headers, rows, [False, *[True] * (len(headers) - 1)])


def _comparison_table(comparison: pl.DataFrame) -> list[str]:
    headers = ["task", "metric", "pairs", "mas", "single", "difference", "95% CI", "p", "p (Holm)", "d", "effect"]
    rows = [
        [
            str(r["task"]),
            r["metric"],
            format_number(r["n_pairs"]),
            format_number(r["mean_treatment"]),
            format_number(r["mean_control"]),
            format_number(r["difference"]),
            format_ci(r["ci_low"], r["ci_high"]),
            format_p(r["p_value"]),
            format_p(r["p_adjusted"]) + (" *" if r["significant"] else ""),
            format_number(r["cohens_d"], 2),
            r["effect_size"] or "",
        ]
        for r in comparison.iter_rows(named=True)
    ]
    return _table(headers, rows, [False, False, *[True] * 8, False])


def _findings(comparison: pl.DataFrame) -> list[str]:
    """One sentence per metric: where the MAS differs significantly, and by how much."""
    lines = []
    for metric in comparison["metric"].unique(maintain_order=True).to_list():
        rows = comparison.filter(pl.col("metric") == metric)
        significant = rows.filter(pl.col("significant").fill_null(False))
        if significant.height == 0:
            lines.append(f"- **{metric}**: no task shows a significant difference after the Holm correction.")
            continue
        parts = [
            f"{r['task']} {r['difference']:+.3f} (95% CI {format_ci(r['ci_low'], r['ci_high'], 3)}, "
            f"p (Holm) {format_p(r['p_adjusted'])}, d = {r['cohens_d']:.2f})"
            for r in significant.iter_rows(named=True)
        ]
        positive = int((significant["difference"] > 0).sum())
        direction = {significant.height: "higher", 0: "lower"}.get(positive, "higher in some, lower in others, of")
        lines.append(
            f"- **{metric}**: the MAS is {direction} in {significant.height} of {rows.height} tasks: "
            + "; ".join(parts)
        )
    return lines


def _paired_cases(comparison: pl.DataFrame) -> int:
    first = comparison.filter(pl.col("metric") == comparison["metric"][0])
    return int(first["n_pairs"].sum())


def _markdown(sections: dict[str, pl.DataFrame], report: dict[str, object]) -> str:
    comparison = sections["comparison"]
    hashes = report["inputs"]
    hashed = hashes["sample"]["sha256"] if isinstance(hashes, dict) else {}  # type: ignore[index]
    sample_files = sum(name.endswith(".parquet") for name in hashed)
    lines = [
        "# mas_eval demo: a multi-agent system against a single agent",
        "",
        f"mas_eval {report['mas_eval_version']}, {report['created_utc']}. Inputs: the bundled sample "
        f"(`data/sample`, {sample_files} Parquet files) and `data/sample.jsonl`; their SHA-256 hashes, "
        "the parameters and every table below in full precision are in `summary.json`.",
        "",
        "## The sample",
        "",
        "Rows per table, and the runs, systems, cases and tasks they cover. "
        f"{_paired_cases(comparison):,} cases were run by both systems: the comparison below pairs them.",
        "",
        *_frame_table(sections["sample"]),
        "",
        "## Decision metrics per system",
        "",
        "Means over runs, preset `spec` (the seed document's formulas). `dqs` is decision quality, "
        "`gt_match` the share of runs recommending the correct alternative, `decision_confidence` "
        "0.6 × consensus + 0.4 × mean agent confidence for teams (the self-reported confidence for a "
        "single agent).",
        "",
        *_means_table(sections["headline"]),
        "",
        "## MAS vs single agent, by task",
        "",
        f"Paired t-tests on the per-case mean differences (MAS − single), {comparison.height} comparisons, "
        "p-values adjusted across all of them by Holm's method; `*` marks p (Holm) ≤ 0.05. "
        "`d` is Cohen's d_z of the paired differences.",
        "",
        *_findings(comparison),
        "",
        *_comparison_table(comparison),
        "",
        "## Ingest of canonical JSONL records",
        "",
        "`data/sample.jsonl` ingested into a Dataset (`ingested/`):",
        "",
        *_frame_table(sections["ingested"]),
        "",
    ]
    return "\n".join(lines)
