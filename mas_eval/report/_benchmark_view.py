"""What the Markdown and HTML benchmark reports show, and the Markdown itself (:class:`BenchmarkReport`).

:func:`benchmark_view` turns a report into strings (escaping is the renderer's); :func:`render_markdown`
writes them as Markdown, every piece of user text escaped; the HTML template
(``templates/benchmark.html.j2``) reads the same view. Only ``report/`` uses this module.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mas_eval._version import __version__
from mas_eval.escaping import markdown_text
from mas_eval.formatting import format_number


class ShownReport(Protocol):
    """What the view reads of a :class:`~mas_eval.report.BenchmarkReport`.

    Named here, not imported: the report's module imports this one.
    """

    task_scores: dict[str, dict[str, Any]]
    overall_scores: dict[str, Any]
    detailed_results: Sequence[Any]
    metadata: dict[str, Any]

    @property
    def placeholder_tasks(self) -> list[str]:
        """Tasks whose every detailed result is a placeholder."""
        ...


#: The sections of the Markdown and HTML reports: (HTML id, title).
SECTIONS = (
    ("overall", "Overall Scores"),
    ("tasks", "Task Scores"),
    ("details", "Detailed Results"),
    ("metadata", "Metadata"),
)
#: Inputs and outputs shown per detailed result in Markdown and HTML (the JSON keeps them all).
DETAIL_ITEMS = 50


@dataclass(frozen=True)
class CombinedView:
    name: str
    overall: float | None
    weights: dict[str, float]
    renormalised: bool
    tasks: int
    #: (task, weight key, where its value came from), as ``add_combined_score`` recorded them.
    sources: list[tuple[str, str, str]] = field(default_factory=list)

    def weights_text(self) -> str:
        total = math.fsum(self.weights.values())
        if not self.weights or total <= 0:
            return "weights not recorded"
        return ", ".join(f"{k} {w:g} ({w / total:.0%})" for k, w in self.weights.items())

    def summary(self, tasks: int) -> str:
        over = f"mean over {self.tasks} of {tasks} task(s)"
        how = (
            "weights renormalised over the categories present in each task"
            if self.renormalised
            else "a missing category counts 0"
        )
        return f"{over}; {how}"


@dataclass(frozen=True)
class BenchmarkView:
    """What the Markdown and HTML show, as strings (escaping is the renderer's)."""

    model_id: str
    timestamp: str
    schema_version: int
    combined: CombinedView | None
    combined_value: str
    combined_summary: str
    warning: str
    overall: list[tuple[str, str, bool]]
    task_headers: list[str]
    task_rows: list[list[str]]
    results: list[dict[str, Any]]
    metadata: list[tuple[str, str]]


def _item(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def benchmark_view(report: ShownReport, combined: CombinedView | None) -> BenchmarkView:
    """Return what the Markdown and HTML show of ``report``, ``combined`` its score to highlight."""
    name = combined.name if combined else None
    placeholders = report.placeholder_tasks
    warning = ""
    if placeholders:
        warning = (
            f"{len(placeholders)} of {len(report.task_scores)} task(s) hold only placeholder results "
            f"(the evaluation failed): {', '.join(placeholders)}. Their scores are stand-ins, not measurements."
        )
    overall = sorted(
        ((metric, format_number(value), metric == name) for metric, value in report.overall_scores.items()),
        key=lambda row: not row[2],
    )
    metrics: list[str] = list(dict.fromkeys(m for s in report.task_scores.values() for m in s))
    if name in metrics:
        metrics = [name, *(m for m in metrics if m != name)]
    rows = [
        [
            task,
            *(format_number(scores.get(m)) for m in metrics),
            "placeholder (evaluation failed)" if task in placeholders else "",
        ]
        for task, scores in report.task_scores.items()
    ]
    results = []
    for index, result in enumerate(report.detailed_results, start=1):
        pairs = []
        for position in range(min(DETAIL_ITEMS, max(len(result.inputs), len(result.model_outputs)))):
            given = result.inputs[position] if position < len(result.inputs) else None
            output = result.model_outputs[position] if position < len(result.model_outputs) else None
            pairs.append(("" if given is None else _item(given), "" if output is None else _item(output)))
        hidden = max(len(result.inputs), len(result.model_outputs)) - len(pairs)
        results.append(
            {
                "index": index,
                "task_id": result.task_id,
                "timestamp": result.timestamp.isoformat() if result.timestamp else "",
                "metrics": ", ".join(f"{m} {format_number(v)}" for m, v in result.metrics_results.items()),
                "inputs": len(result.inputs),
                "outputs": len(result.model_outputs),
                "flag": result.flag,
                "error": result.error or "",
                "pairs": pairs,
                "hidden": hidden,
            }
        )
    metadata = [(str(k), _item(v)) for k, v in report.metadata.items()]
    return BenchmarkView(
        model_id=report.model_id,
        timestamp=report.timestamp.isoformat() if report.timestamp else "not recorded",
        schema_version=report.schema_version,
        combined=combined,
        combined_value=format_number(combined.overall) if combined and combined.overall is not None else "none",
        combined_summary=combined.summary(len(report.task_scores)) if combined else "",
        warning=warning,
        overall=overall,
        task_headers=["task", *metrics, "flag"],
        task_rows=rows,
        results=results,
        metadata=metadata,
    )


#: User text for Markdown: one line, its HTML and Markdown syntax escaped.
_md = markdown_text


def _md_table(headers: list[str], rows: list[list[str]], numeric: list[bool], bold: Sequence[bool] = ()) -> list[str]:
    """Return a pipe table of user text; the rows marked in ``bold`` in bold."""
    align = ["---:" if is_number else "---" for is_number in numeric]
    lines = ["| " + " | ".join(map(_md, headers)) + " |", "| " + " | ".join(align) + " |"]
    for index, row in enumerate(rows):
        cells = [_md(cell) for cell in row]
        if index < len(bold) and bold[index]:
            cells = [f"**{cell}**" if cell else cell for cell in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(view: BenchmarkView) -> str:
    """Return the Markdown report of ``view``: its heading, then :data:`SECTIONS`."""
    titles = dict(SECTIONS)
    lines = [
        *_md_heading(view),
        f"## {titles['overall']}",
        "",
        *_md_overall(view),
        f"## {titles['tasks']}",
        "",
        *_md_tasks(view),
        f"## {titles['details']}",
        "",
        *_md_details(view),
        f"## {titles['metadata']}",
        "",
        *_md_metadata(view),
    ]
    return "\n".join(lines)


def _md_heading(view: BenchmarkView) -> list[str]:
    """Return the Markdown report's title, its line of facts, the combined score and the warning."""
    lines = [
        f"# Benchmark report: {_md(view.model_id)}",
        "",
        f"Model {_md(view.model_id)}, {_md(view.timestamp)}, schema version {view.schema_version}; "
        f"written by mas_eval {__version__}.",
        "",
    ]
    if view.combined:
        lines += [
            f"**{_md(view.combined.name)}: {view.combined_value}** ({_md(view.combined_summary)})",
            "",
            f"Weights: {_md(view.combined.weights_text())}.",
            "",
        ]
        if view.combined.sources:
            rows = [list(row) for row in view.combined.sources]
            lines += [
                "Values combined, per task:",
                "",
                *_md_table(["task", "key", "value from"], rows, [False] * 3),
                "",
            ]
    if view.warning:
        lines += [f"> **Warning:** {_md(view.warning)}", ""]
    return lines


def _md_overall(view: BenchmarkView) -> list[str]:
    """Return the overall scores' table, the combined ones in bold."""
    overall, combined = [[m, v] for m, v, _ in view.overall], [c for _, _, c in view.overall]
    if overall:
        return [*_md_table(["metric", "score"], overall, [False, True], bold=combined), ""]
    return ["*No scores.*", ""]


def _md_tasks(view: BenchmarkView) -> list[str]:
    """Return the task scores' table."""
    if view.task_rows:
        numeric = [False, *[True] * (len(view.task_headers) - 2), False]
        return [*_md_table(view.task_headers, view.task_rows, numeric), ""]
    return ["*No tasks.*", ""]


def _md_details(view: BenchmarkView) -> list[str]:
    """Return the detailed results' table, then each result's error and inputs with their outputs."""
    if not view.results:
        return ["*No detailed results.*", ""]
    headers = ["#", "task", "metrics", "inputs", "outputs", "timestamp", "flag"]
    rows = [
        [str(r["index"]), r["task_id"], r["metrics"], str(r["inputs"]), str(r["outputs"]), r["timestamp"], r["flag"]]
        for r in view.results
    ]
    lines = [*_md_table(headers, rows, [True, False, False, True, True, False, False]), ""]
    for r in view.results:
        if not (r["pairs"] or r["error"]):
            continue
        lines += [f"### Result {r['index']}: {_md(r['task_id'])}", ""]
        if r["error"]:
            lines += [f"Error: {_md(r['error'])}", ""]
        for position, (given, output) in enumerate(r["pairs"], start=1):
            lines.append(f"{position}. input: {_md(given) or '—'}; output: {_md(output) or '—'}")
        if r["pairs"]:
            lines.append("")
        if r["hidden"]:
            lines += [f"*... and {r['hidden']} more (all are in the JSON).*", ""]
    return lines


def _md_metadata(view: BenchmarkView) -> list[str]:
    """Return the metadata's table."""
    if view.metadata:
        return [*_md_table(["key", "value"], [[k, v] for k, v in view.metadata], [False, False]), ""]
    return ["*No metadata.*", ""]
