"""``mas-eval ingest``: logged runs into a Dataset, from canonical JSONL records, Local-DDx results or inspect_ai logs.

``--format jsonl`` runs :func:`~mas_eval.ingest.ingest_jsonl`, ``--format lddx``
:func:`~mas_eval.ingest.ingest_lddx`, ``--format inspect`` :func:`~mas_eval.ingest.ingest_inspect`;
the options take their defaults. A MedAISure report holds
a model's benchmark scores, not runs, so it makes no Dataset: ``mas-eval benchmark-report``
reads it (:mod:`mas_eval.cli.benchmark`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mas_eval.cli.common import OverwriteOpt, ShardsOpt, defaults_of, flag
from mas_eval.cli.terminal import console, literal, progress
from mas_eval.constraints import Interval, Options, check_parameter
from mas_eval.errors import InvalidParameterError
from mas_eval.ingest.inspect_logs import ingest_inspect
from mas_eval.ingest.jsonl import BYTES_CEILING, ingest_jsonl

__all__ = ["INGEST_FORMATS", "ingest"]

#: The formats `mas-eval ingest --format` reads.
INGEST_FORMATS = ("jsonl", "lddx", "inspect")
#: What each log format's files are called in messages.
_LOG_NAMES = {"lddx": "Local-DDx", "inspect": "inspect_ai"}
#: Warnings of a log ingest (lddx, inspect) printed at most (all are in the Python result's ``warnings``).
_WARNINGS_SHOWN = 20
#: The defaults of ``ingest_jsonl``'s parameters.
_INGEST = defaults_of(ingest_jsonl)
#: The defaults of ``ingest_inspect``'s parameters (``--system``).
_INSPECT = defaults_of(ingest_inspect)
#: ``--chunk-mb``'s default: ``ingest_jsonl``'s ``chunk_bytes``, in MiB.
_CHUNK_MB = _INGEST["chunk_bytes"] / 2**20
#: ``--max-line-mb``'s default: ``ingest_jsonl``'s ``max_line_bytes``, in MiB.
_MAX_LINE_MB = _INGEST["max_line_bytes"] / 2**20


def ingest(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="JSONL files of canonical run records (.jsonl or .jsonl.gz); with --format lddx, Local-DDx "
            "ddx_results_*.json files or folders holding them; with --format inspect, inspect_ai .eval or .json logs "
            "or folders holding them."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="Input format: jsonl (canonical run records), lddx (Local-DDx result files) or inspect (inspect_ai "
            "logs). A MedAISure report is not runs: `mas-eval benchmark-report` reads it.",
        ),
    ] = "jsonl",
    skip_invalid: Annotated[
        bool,
        flag(
            "--skip-invalid",
            help="Set malformed lines aside in the rejects file (lddx: skip the files that cannot be read; "
            "inspect: the logs and samples) instead of failing.",
        ),
    ] = _INGEST["skip_invalid"],
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            help="inspect: runs.system of every run read (default: each log's model, solver and task arguments).",
        ),
    ] = _INSPECT["system"],
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
            "at 12-30x its size). Raise it for records this large.",
        ),
    ] = _MAX_LINE_MB,
    shards: ShardsOpt = _INGEST["shards"],
    overwrite: OverwriteOpt = _INGEST["overwrite"],
) -> None:
    """Flatten canonical JSONL run records, Local-DDx results or inspect_ai logs into a Dataset."""
    from mas_eval.storage.sharding import check_shards

    if format_ == "medaisure":
        msg = (
            "ingest: a MedAISure report (--format medaisure) holds a model's benchmark scores, not runs, and makes "
            "no Dataset; write it as .json, .md or .html with: mas-eval benchmark-report REPORT --out OUT"
        )
        raise InvalidParameterError(msg)
    check_parameter("--format", format_, [Options(INGEST_FORMATS)], where="ingest")
    check_shards(shards, where="ingest")
    if system is not None and format_ != "inspect":
        msg = f"ingest: --system applies to --format inspect only ({format_} records name their systems); drop --system"
        raise InvalidParameterError(msg)
    if format_ in _LOG_NAMES:
        given = next(
            (
                name
                for name, is_given in [
                    ("--rejects", rejects is not None),
                    ("--chunk-mb", chunk_mb != _CHUNK_MB),
                    ("--max-line-mb", max_line_mb != _MAX_LINE_MB),
                ]
                if is_given
            ),
            None,
        )
        if given is not None:
            read = _LOG_NAMES[format_]
            msg = f"ingest: {given} applies to --format jsonl only ({read} files are read whole); drop {given}"
            raise InvalidParameterError(msg)
        _ingest_logs(format_, files, out, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards, system=system)
        return
    for name, value in [("--chunk-mb", chunk_mb), ("--max-line-mb", max_line_mb)]:
        check_parameter(name, value, [Interval(float, 0, BYTES_CEILING / 2**20, closed="right")], where="ingest")
    chunk_bytes = max(1, round(chunk_mb * 2**20))
    total = sum(f.stat().st_size for f in files if f.is_file())
    with progress(bytes_done=True) as bar:
        task = bar.add_task("ingesting", total=total or None)
        result = ingest_jsonl(
            files,
            out,
            overwrite=overwrite,
            skip_invalid=skip_invalid,
            rejects=rejects,
            chunk_bytes=chunk_bytes,
            max_line_bytes=max(1, round(max_line_mb * 2**20)),
            progress=lambda done: bar.update(task, completed=done),
            shards=shards,
        )
    console.print(f"ingested {result.runs:,} runs into {literal(result.out)}", highlight=False)
    if result.rejected:
        console.print(
            f"[yellow]skipped {result.rejected:,} malformed line(s); see {literal(result.rejects)}[/]", highlight=False
        )


def _ingest_logs(
    format_: str,
    files: list[Path],
    out: Path,
    *,
    overwrite: bool,
    skip_invalid: bool,
    shards: int | None,
    system: str | None,
) -> None:
    """``mas-eval ingest --format lddx|inspect``: the files read, the rows per table, what was skipped, the warnings."""
    from mas_eval.ingest import ingest_inspect, ingest_lddx

    if format_ == "inspect":
        result = ingest_inspect(
            files, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
        )
    else:
        result = ingest_lddx(files, out, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards)
    name = _LOG_NAMES[format_]
    rows = ", ".join(f"{table} {count:,}" for table, count in result.dataset.summary().select("table", "rows").rows())
    line = f"ingested {result.runs:,} runs from {len(result.files):,} {name} file(s) into {result.out}: {rows}"
    console.print(literal(line), highlight=False, soft_wrap=True)
    for file, reason in result.skipped:
        console.print(f"[yellow]skipped {literal(file)}: {literal(reason)}[/]", highlight=False, soft_wrap=True)
    for warning in result.warnings[:_WARNINGS_SHOWN]:
        console.print(f"[yellow]warning: {literal(warning)}[/]", highlight=False, soft_wrap=True)
    if len(result.warnings) > _WARNINGS_SHOWN:
        more = len(result.warnings) - _WARNINGS_SHOWN
        function = "ingest_inspect" if format_ == "inspect" else "ingest_lddx"
        console.print(f"[yellow]... and {more:,} more warning(s) ({function}(...).warnings lists them all)[/]")
