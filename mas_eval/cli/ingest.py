"""``mas-eval ingest``: logged runs into a Dataset, from canonical JSONL records or another tool's logs.

``--format jsonl`` runs :func:`~mas_eval.ingest.ingest_jsonl`; each log format runs its adapter
(:data:`LOG_FORMATS`: Local-DDx results, inspect_ai logs, lm-evaluation-harness samples, OTLP
traces, a table of runs, failure-mode annotations); the options take their defaults, and an option
of another format is refused. A MedAISure report holds a model's benchmark scores, not runs, so it makes no Dataset:
``mas-eval benchmark-report`` reads it (:mod:`mas_eval.cli.benchmark`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mas_eval.cli.common import OverwriteOpt, ShardsOpt, defaults_of, flag
from mas_eval.cli.terminal import console, literal, progress
from mas_eval.constraints import Interval, Options, check_parameter
from mas_eval.errors import InvalidParameterError
from mas_eval.ingest.inspect_logs import ingest_inspect
from mas_eval.ingest.jsonl import BYTES_CEILING, ingest_jsonl
from mas_eval.ingest.logs import LogIngestResult
from mas_eval.ingest.otlp import ingest_otlp
from mas_eval.ingest.recipe import Paths, parse_paths
from mas_eval.ingest.table import ingest_table

__all__ = ["INGEST_FORMATS", "LOG_FORMATS", "ingest_command"]

#: The log formats, each with what its files are called in messages.
LOG_FORMATS = {
    "lddx": "Local-DDx",
    "inspect": "inspect_ai",
    "lm-eval": "lm-eval",
    "otlp": "OTLP",
    "table": "table",
    "annotations": "annotation",
}
#: The formats `mas-eval ingest --format` reads.
INGEST_FORMATS = ("jsonl", *LOG_FORMATS)
#: Warnings of a log ingest printed at most (all are in the Python result's ``warnings``).
_WARNINGS_SHOWN = 20
#: The defaults of ``ingest_jsonl``'s parameters.
_INGEST = defaults_of(ingest_jsonl)
#: ``--chunk-mb``'s default: ``ingest_jsonl``'s ``chunk_bytes``, in MiB.
_CHUNK_MB = _INGEST["chunk_bytes"] / 2**20
#: ``--max-line-mb``'s default: ``ingest_jsonl``'s ``max_line_bytes``, in MiB.
_MAX_LINE_MB = _INGEST["max_line_bytes"] / 2**20
#: The defaults of ``ingest_otlp``'s parameters.
_OTLP = defaults_of(ingest_otlp)
#: The defaults of ``ingest_table``'s parameters.
_TABLE = defaults_of(ingest_table)
#: The defaults of ``ingest_inspect``'s parameters, and ``--max-member-mb``'s in MiB.
_INSPECT = defaults_of(ingest_inspect)
_MAX_MEMBER_MB = _INSPECT["max_member_bytes"] / 2**20


def ingest_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="JSONL files of canonical run records (.jsonl or .jsonl.gz); with --format lddx, Local-DDx "
            "ddx_results_*.json files or folders holding them; inspect: inspect_ai .eval or .json logs or folders; "
            "lm-eval: results_*.json files (their samples_*.jsonl beside them) or folders; otlp: OTLP JSON trace "
            "files or folders; table: CSV or Parquet tables (or folders), a row per run; annotations: CSV or JSON "
            "files of failure-mode annotations (MAST's, Who&When's) or folders. With a log format, "
            "PATH=SYSTEM names the system of PATH's runs (two logs of one model under two names): a path that "
            "exists as written, '=' and all, is that path; else the text is split at the first '=' whose left "
            "part exists, and SYSTEM may hold '=' itself."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="Input format: jsonl (canonical run records), lddx (Local-DDx result files), inspect (inspect_ai "
            "eval logs), lm-eval (lm-evaluation-harness --log_samples output), otlp (OpenTelemetry GenAI traces as "
            "OTLP JSON), table (a CSV or Parquet table of runs) or annotations (failure-mode annotations of runs: "
            "docs/ingest/annotations.md). A MedAISure report is not runs: "
            "`mas-eval benchmark-report` reads it.",
        ),
    ] = "jsonl",
    skip_invalid: Annotated[
        bool,
        flag(
            "--skip-invalid",
            help="Set malformed lines aside in the rejects file (log formats: skip the files, samples or lines "
            "that cannot be read, and list them) instead of failing.",
        ),
    ] = _INGEST["skip_invalid"],
    rejects: Annotated[
        Path | None, typer.Option(help="Where skipped lines go (default: OUT.rejects.jsonl).")
    ] = _INGEST["rejects"],
    chunk_mb: Annotated[
        float,
        typer.Option(
            "--chunk-mb",
            help="MiB of JSONL decoded at a time; bounds memory (peak about 0.1 GB + 12-30x this, whatever the "
            "input's size).",
        ),
    ] = _CHUNK_MB,
    max_line_mb: Annotated[
        float,
        typer.Option(
            "--max-line-mb",
            help="Longest line read, in MiB: a longer one is a malformed line (never held whole; a line is decoded "
            "at 12-30x its size). Raise it for records this large. Also for --format lm-eval (a samples line), "
            "table (a CSV line) and otlp (a line, or the largest file read as one JSON document).",
        ),
    ] = _MAX_LINE_MB,
    shards: ShardsOpt = _INGEST["shards"],
    overwrite: OverwriteOpt = _INGEST["overwrite"],
    map_: Annotated[
        list[str] | None,
        typer.Option(
            "--map",
            help="--format table: the source column of each runs column, e.g. system=model,case_id=question; "
            "--format annotations: of each annotation column, e.g. run_id=trace,present=label (repeatable).",
        ),
    ] = None,
    scores: Annotated[
        list[str] | None,
        typer.Option(
            "--scores",
            help="--format table: the score columns, comma-separated (repeatable); every other column not mapped is "
            "kept as a run attribute (compare --by num_rounds). Default: every numeric or boolean column not mapped "
            "is a score.",
        ),
    ] = None,
    wide: Annotated[
        str | None,
        typer.Option(
            help="--format table: a paper's table, one column per system: each score column's cells are the runs of "
            "the system it is named after (or the task, variant or case_id named here).",
        ),
    ] = _TABLE["wide"],
    wide_score: Annotated[
        str, typer.Option("--wide-score", help="--format table with --wide: the name of the score its cells hold.")
    ] = _TABLE["wide_score"],
    system: Annotated[
        str | None,
        typer.Option(
            help="--format inspect, lm-eval, otlp or annotations: every run's system, instead of the one the log "
            "names (inspect: the model, solver and task arguments; lm-eval: the model; otlp: --system-attribute's "
            "value; annotations: MAST's mas_name, Who&When's folder)."
        ),
    ] = None,
    system_attribute: Annotated[
        str, typer.Option(help="--format otlp: the span or resource attribute holding a run's system.")
    ] = _OTLP["system_attribute"],
    case_attribute: Annotated[
        str, typer.Option(help="--format otlp: the span or resource attribute holding a run's case.")
    ] = _OTLP["case_attribute"],
    into: Annotated[
        Path | None,
        typer.Option(
            help="--format annotations: the Dataset whose runs the annotations are of; OUT is that Dataset with "
            "them added (an annotation of a run it does not hold is refused). Without it, the files give each "
            "run's system and case."
        ),
    ] = None,
    taxonomy: Annotated[
        str | None,
        typer.Option(
            help="--format annotations: the taxonomy every mode must be of (mast: MAST's 14 modes, by code or code "
            "and name), which fills each annotation's category."
        ),
    ] = None,
    annotator: Annotated[
        str | None,
        typer.Option(
            help="--format annotations: the annotator of a CSV without an annotator column, or of MAST's "
            "mast_annotation flags and Who&When's logs."
        ),
    ] = None,
    count_evaluator: Annotated[
        bool,
        flag(
            "--count-evaluator",
            help="--format inspect and otlp: count the model calls an evaluator made grading a run (an LLM "
            "judge's) in the run's tokens, calls and cost; by default they are left out (usage rows of their own, "
            "marked evaluator).",
        ),
    ] = _INSPECT["count_evaluator"],
    max_member_mb: Annotated[
        float,
        typer.Option(
            "--max-member-mb",
            help="--format inspect: the most a .eval log's member (a sample's JSON) is inflated to, in MiB: a "
            "larger one is refused, never held whole (a zip bomb). Raise it for samples this large.",
        ),
    ] = _MAX_MEMBER_MB,
) -> None:
    """Flatten canonical JSONL run records (see run_record.schema.json), or another tool's logs, into a Dataset."""
    from mas_eval.storage.sharding import check_shards

    if format_ == "medaisure":
        msg = (
            "ingest: a MedAISure report (--format medaisure) holds a model's benchmark scores, not runs, and makes "
            "no Dataset; write it as .json, .md or .html with: mas-eval benchmark-report REPORT --out OUT"
        )
        raise InvalidParameterError(msg)
    check_parameter("--format", format_, [Options(INGEST_FORMATS)], where="ingest")
    check_shards(shards, where="ingest")
    _refuse_others(
        format_,
        {
            "--map": (("table", "annotations"), map_ is not None),
            "--scores": (("table",), scores is not None),
            "--wide": (("table",), wide != _TABLE["wide"]),
            "--wide-score": (("table",), wide_score != _TABLE["wide_score"]),
            "--system": (("inspect", "lm-eval", "otlp", "annotations"), system is not None),
            "--into": (("annotations",), into is not None),
            "--taxonomy": (("annotations",), taxonomy is not None),
            "--annotator": (("annotations",), annotator is not None),
            "--system-attribute": (("otlp",), system_attribute != _OTLP["system_attribute"]),
            "--case-attribute": (("otlp",), case_attribute != _OTLP["case_attribute"]),
            "--rejects": (("jsonl",), rejects is not None),
            "--chunk-mb": (("jsonl",), chunk_mb != _CHUNK_MB),
            "--max-line-mb": (("jsonl", "lm-eval", "table", "otlp"), max_line_mb != _MAX_LINE_MB),
            "--count-evaluator": (("inspect", "otlp"), count_evaluator != _INSPECT["count_evaluator"]),
            "--max-member-mb": (("inspect",), max_member_mb != _MAX_MEMBER_MB),
        },
    )
    check_parameter(
        "--max-line-mb", max_line_mb, [Interval(float, 0, BYTES_CEILING / 2**20, closed="right")], where="ingest"
    )
    check_parameter("--max-member-mb", max_member_mb, [Interval(float, 0, None, closed="neither")], where="ingest")
    paths = parse_paths(files)
    if format_ in LOG_FORMATS:
        check_parameter(
            "--max-line-mb", max_line_mb, [Interval(float, 0, BYTES_CEILING / 2**20, closed="right")], where="ingest"
        )
        common = {"overwrite": overwrite, "skip_invalid": skip_invalid, "shards": shards}
        if format_ == "annotations":
            _print_log_result(_read_annotations(paths, out, map_, system, into, taxonomy, annotator, common))
            return
        line_bytes = max(1, round(max_line_mb * 2**20))
        own = {
            "lm-eval": {"system": system, "max_line_bytes": line_bytes},
            "inspect": {"system": system, "count_evaluator": count_evaluator,
                        "max_member_bytes": max(1, round(max_member_mb * 2**20))},
            "otlp": {"system": system, "system_attribute": system_attribute, "case_attribute": case_attribute,
                     "count_evaluator": count_evaluator, "max_line_bytes": line_bytes},
            "table": {"columns": map_, "scores": scores, "wide": wide, "wide_score": wide_score,
                      "max_line_bytes": line_bytes},
        }  # fmt: skip
        _print_log_result(_read_logs(format_, paths, out, own.get(format_, {}), common))
        return
    _ingest_records(
        paths,
        out,
        {"overwrite": overwrite, "skip_invalid": skip_invalid, "rejects": rejects, "shards": shards},
        chunk_mb=chunk_mb,
        max_line_mb=max_line_mb,
    )


def _ingest_records(paths: Paths, out: Path, common: dict[str, Any], *, chunk_mb: float, max_line_mb: float) -> None:
    """Ingest canonical JSONL records with a progress bar and print what was written and skipped."""
    if isinstance(paths, dict):
        msg = (
            "ingest: PATH=SYSTEM names the system of a log format's runs; canonical JSONL records name their own "
            "(drop =SYSTEM, or pass --format)"
        )
        raise InvalidParameterError(msg)
    check_parameter("--chunk-mb", chunk_mb, [Interval(float, 0, BYTES_CEILING / 2**20, closed="right")], where="ingest")
    chunk_bytes = max(1, round(chunk_mb * 2**20))
    total = sum(f.stat().st_size for f in paths if f.is_file())
    with progress(bytes_done=True) as bar:
        task = bar.add_task("ingesting", total=total or None)
        result = ingest_jsonl(
            paths,
            out,
            chunk_bytes=chunk_bytes,
            max_line_bytes=max(1, round(max_line_mb * 2**20)),
            progress=lambda done: bar.update(task, completed=done),
            **common,
        )
    console.print(f"ingested {result.runs:,} runs into {literal(result.out)}", highlight=False)
    if result.rejected:
        console.print(
            f"[yellow]skipped {result.rejected:,} malformed line(s); see {literal(result.rejects)}[/]", highlight=False
        )


def _refuse_others(format_: str, options: dict[str, tuple[tuple[str, ...], bool]]) -> None:
    """Raise :class:`InvalidParameterError` for the first option given that belongs to another format."""
    for name, (owners, given) in options.items():
        if given and format_ not in owners:
            which = " or ".join(owners)
            msg = f"ingest: {name} applies to --format {which} only; drop {name}"
            raise InvalidParameterError(msg)


def _read_logs(
    format_: str, files: Paths, out: Path, own: dict[str, Any], common: dict[str, Any]
) -> tuple[LogIngestResult, str]:
    """Run the adapter of log format ``format_`` on ``files`` with its ``own`` options; return what its files are.

    The second value is what the format's files are called in messages.
    """
    from mas_eval import ingest as adapters
    from mas_eval.ingest.table import parse_map, parse_scores

    if format_ == "lddx":
        result = adapters.ingest_lddx(files, out, **common)
    elif format_ == "inspect":
        result = adapters.ingest_inspect(files, out, **own, **common)
    elif format_ == "lm-eval":
        result = adapters.ingest_lm_eval(files, out, **own, **common)
    elif format_ == "otlp":
        result = ingest_otlp(files, out, **own, **common)
    else:
        mapped, named = own.pop("columns"), own.pop("scores")
        columns = parse_map(mapped) if mapped else None
        scores = parse_scores(named) if named is not None else None
        result = ingest_table(files, out, columns=columns, scores=scores, **own, **common)
    return result, LOG_FORMATS[format_]


def _read_annotations(
    files: Paths,
    out: Path,
    map_: list[str] | None,
    system: str | None,
    into: Path | None,
    taxonomy: str | None,
    annotator: str | None,
    common: dict[str, Any],
) -> tuple[LogIngestResult, str]:
    """:func:`~mas_eval.ingest.ingest_annotations` on ``files``, and what its files are called."""
    from mas_eval.data.taxonomies import TAXONOMIES
    from mas_eval.ingest.annotations import ingest_annotations
    from mas_eval.ingest.table import parse_map

    check_parameter("--taxonomy", taxonomy, [Options((*TAXONOMIES, None))], where="ingest")
    columns = parse_map(map_, target="ANNOTATION_COLUMN", example="run_id=trace,present=label") if map_ else None
    result = ingest_annotations(
        files, out, into=into, columns=columns, taxonomy=taxonomy, annotator=annotator, system=system, **common
    )
    return result, LOG_FORMATS["annotations"]


def _print_log_result(read: tuple[LogIngestResult, str]) -> None:
    """Print the files read, the rows per table, what was skipped and the warnings of a log adapter's ingest."""
    result, kind = read
    rows = ", ".join(f"{table} {count:,}" for table, count in result.dataset.summary().select("table", "rows").rows())
    shapes: dict[str, int] = {}
    for _, shape in result.read_as:
        shapes[shape] = shapes.get(shape, 0) + 1
    read_as = "; ".join(shape if len(shapes) == 1 else f"{n:,} as {shape}" for shape, n in shapes.items())
    read_as = f" (read as {read_as})" if read_as else ""
    line = f"ingested {result.runs:,} runs from {len(result.files):,} {kind} file(s){read_as} into {result.out}: {rows}"
    console.print(literal(line), highlight=False, soft_wrap=True)
    for file, reason in result.skipped:
        console.print(f"[yellow]skipped {literal(file)}: {literal(reason)}[/]", highlight=False, soft_wrap=True)
    for warning in result.warnings[:_WARNINGS_SHOWN]:
        console.print(f"[yellow]warning: {literal(warning)}[/]", highlight=False, soft_wrap=True)
    if len(result.warnings) > _WARNINGS_SHOWN:
        more = len(result.warnings) - _WARNINGS_SHOWN
        console.print(f"[yellow]... and {more:,} more warning(s) (the Python result's warnings lists them all)[/]")
