"""The ``mas-eval`` command line.

Every sub-command is a thin shell over a Python function. Its arguments are checked before
any work (an output path that exists, lies inside an input or cannot be written; a bad
parameter value), and an error about the user's input — a
:class:`~mas_eval.errors.MasEvalError` or an ``OSError`` — prints one line on stderr and exits
with code 2, never a traceback. Heavy modules (the statistics layer, the simulator, ingest)
are imported by the commands that use them, so that ``mas-eval --help`` answers at once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from mas_eval._version import __version__
from mas_eval.cli.terminal import console, err_console, print_comparisons, print_frame, progress, steps
from mas_eval.errors import InvalidParameterError, MasEvalError, command_line
from mas_eval.ingest.jsonl import CHUNK_BYTES
from mas_eval.metrics.family import parameter_help, parse_override, resolve_params
from mas_eval.presets import PRESETS
from mas_eval.stats.options import BootCI, Correction, Method, Test
from mas_eval.storage.outputs import check_target


class _NoFlagTypes:
    """Help that shows no ``<bool>`` type beside ``--help``: a flag takes no value."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class _Command(_NoFlagTypes, TyperCommand):
    pass


class _Group(_NoFlagTypes, TyperGroup):
    pass


app = typer.Typer(
    cls=_Group,
    name="mas-eval",
    help="Score logged runs of multi-agent LLM systems against single-agent baselines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _choices(options: Any) -> str:
    """The values of a ``Literal`` type, for help texts (the checks read the same type)."""
    return ", ".join(get_args(options))


def _flag(*names: str, help: str) -> Any:
    """An on/off option: given or not, it takes no value (so its help shows no type)."""
    return typer.Option(*names, help=help, metavar="")


DatasetArg = Annotated[Path, typer.Argument(help="Dataset folder (one Parquet file or folder per table).")]
OverwriteOpt = Annotated[bool, _flag("--overwrite", help="Replace OUT if it exists (never an input).")]
ShardsOpt = Annotated[
    int | None,
    typer.Option(
        help="Write every table keyed by run_id in N shards (hash(run_id) % N, each sorted by run; "
        "1: unsharded, the default).",
        metavar="N",
        show_default=False,
    ),
]


def _version(value: bool) -> None:
    if value:
        console.print(f"mas-eval {__version__}")
        raise typer.Exit


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_version, is_eager=True, metavar=""),
    ] = False,
) -> None:
    """Score logged runs of multi-agent LLM systems against single-agent baselines."""


#: The kinds of synthetic runs `mas-eval simulate --kind` writes.
SIMULATE_KINDS = ("decision", "diagnosis", "answers")
#: Options of `mas-eval simulate` that only answer runs take.
_ANSWER_OPTIONS = ("items", "entities", "answer_chars", "task_names")


def _int_pair(name: str, text: str) -> tuple[int, int]:
    """``--items 20,40`` as ``(20, 40)``; one integer ``N`` as ``(N, N)`` (the range checks are the simulator's)."""
    parts = [part.strip() for part in text.split(",")]
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (1, 2):
        msg = f"simulate: --{name} {text!r} is invalid; write MIN,MAX (two integers, e.g. 20,40) or one integer"
        raise InvalidParameterError(msg)
    return (numbers[0], numbers[-1])


def _answer_tasks(count: int | None, names: str | None) -> tuple[str, ...]:
    """The task names of answer runs: ``--task-names`` as given, else the first ``--tasks`` default names."""
    from mas_eval.simulation.answers import TASKS

    if names is not None:
        if count is not None:
            msg = "simulate: --tasks and --task-names are both given; give one (--task-names names the tasks)"
            raise InvalidParameterError(msg)
        return tuple(name.strip() for name in names.split(","))
    count = len(TASKS) if count is None else count
    if count < 1:
        msg = f"simulate: tasks={count} is invalid; tasks must be an integer >= 1"
        raise InvalidParameterError(msg)
    return (*TASKS, *(f"task{i}" for i in range(len(TASKS) + 1, count + 1)))[:count]


@app.command(cls=_Command)
def simulate(
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    runs: Annotated[int, typer.Option("--runs", "-n", help="Number of runs (both systems together).")] = 10_000,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same dataset.")] = 0,
    effect: Annotated[
        float | None,
        typer.Option(
            help="The planted MAS − single difference: in mean dqs_raw for decision runs (default 0.05; "
            "DQS before the ground-truth boost, which widens the dqs gap as the MAS also picks the correct "
            "alternative more often), in expected recall for diagnosis runs (default 0.15), in the probability "
            "of reproducing each entity and reasoning step of the reference for answer runs (default 0.1).",
            show_default=False,
        ),
    ] = None,
    mas_share: Annotated[float, typer.Option(help="Share of runs made by the MAS.")] = 0.5,
    repeats: Annotated[int, typer.Option(help="Runs per system per case (decision runs).")] = 1,
    tasks: Annotated[
        int | None,
        typer.Option(
            help="Number of tasks (default 3); answer runs take the first of diagnostic_reasoning, "
            "clinical_summarization, patient_communication, then task4, task5, ...",
            show_default=False,
        ),
    ] = None,
    variants: Annotated[int, typer.Option(help="Number of variants (decision runs).")] = 2,
    items: Annotated[
        str | None,
        typer.Option(
            help="Items per case as MIN,MAX or N (answer runs; default 20,40).", metavar="MIN,MAX", show_default=False
        ),
    ] = None,
    entities: Annotated[
        str | None,
        typer.Option(
            help="Clinical entities per reference answer as MIN,MAX or N, at most 10 (answer runs; default 2,5).",
            metavar="MIN,MAX",
            show_default=False,
        ),
    ] = None,
    answer_chars: Annotated[
        int | None,
        typer.Option(
            help="Wanted length in characters of each answer, rationale and reference, 1 to 10000 "
            "(answer runs; default 300).",
            show_default=False,
        ),
    ] = None,
    task_names: Annotated[
        str | None,
        typer.Option(help="Task names, comma-separated, instead of --tasks (answer runs).", show_default=False),
    ] = None,
    kind: Annotated[
        str,
        typer.Option(
            help="decision (seed 004's tables), diagnosis (seed 000's: differentials, transcripts, "
            "ground truth; --effect is then the MAS − single difference in recall, default 0.15) or answers "
            "(seed 001's: MAS and single agent answering the same benchmark items; --effect default 0.1)."
        ),
    ] = "decision",
    shards: ShardsOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Write a synthetic dataset of MAS and single-agent runs over shared cases."""
    from mas_eval.storage.sharding import check_shards

    check_shards(shards, where="simulate")
    if kind not in SIMULATE_KINDS:
        msg = f"--kind {kind!r} is invalid; it must be one of {', '.join(map(repr, SIMULATE_KINDS))}"
        raise InvalidParameterError(msg)
    given = {"items": items, "entities": entities, "answer_chars": answer_chars, "task_names": task_names}
    misplaced = [f"--{name.replace('_', '-')}" for name in _ANSWER_OPTIONS if given[name] is not None]
    if kind != "answers" and misplaced:
        verb, them = ("applies", "it") if len(misplaced) == 1 else ("apply", "them")
        msg = (
            f"simulate: {', '.join(misplaced)} {verb} only to --kind answers (this is --kind {kind}); leave {them} out"
        )
        raise InvalidParameterError(msg)
    answer_options: dict[str, Any] = {}
    if kind == "answers":
        answer_options = {
            "items": (20, 40) if items is None else _int_pair("items", items),
            "entities": (2, 5) if entities is None else _int_pair("entities", entities),
            "answer_chars": 300 if answer_chars is None else answer_chars,
            "tasks": _answer_tasks(tasks, task_names),
        }
    check_target(out, overwrite=overwrite)
    with progress() as bar:
        task = bar.add_task("simulating", total=None)

        def advance(step: str) -> None:
            bar.update(task, description=f"simulating {step}")

        if kind == "decision":
            from mas_eval.simulation.decision import simulate as simulate_dataset

            ds = simulate_dataset(
                runs,
                seed=seed,
                effect=0.05 if effect is None else effect,
                mas_share=mas_share,
                repeats=repeats,
                tasks=3 if tasks is None else tasks,
                variants=variants,
                progress=advance,
            )
        elif kind == "diagnosis":
            from mas_eval.simulation.diagnosis import simulate_diagnosis

            ds = simulate_diagnosis(
                runs,
                seed=seed,
                effect=0.15 if effect is None else effect,
                mas_share=mas_share,
                tasks=3 if tasks is None else tasks,
                progress=advance,
            )
        else:
            from mas_eval.simulation.answers import simulate_answers

            ds = simulate_answers(
                runs,
                seed=seed,
                effect=0.1 if effect is None else effect,
                mas_share=mas_share,
                progress=advance,
                **answer_options,
            )
        bar.update(task, description="writing")
        # Valid by construction (tests/test_simulate.py validates it); skipping saves ~12 s per 1M runs.
        ds.write(out, overwrite=overwrite, validate=False, shards=shards)
    console.print(f"wrote {runs:,} runs to {out}" + (f" in {shards} shards" if shards and shards > 1 else ""))


#: The formats `mas-eval ingest --format` reads.
INGEST_FORMATS = ("jsonl", "lddx", "medaisure")
#: Warnings of an lddx ingest printed at most (all are in the Python result's ``warnings``).
_WARNINGS_SHOWN = 20


@app.command(cls=_Command)
def ingest(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="JSONL files of canonical run records (.jsonl or .jsonl.gz); with --format lddx, Local-DDx "
            "ddx_results_*.json files or folders holding them; with --format medaisure, one MedAISure report JSON."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Dataset folder to write (--format medaisure: the report, .json, .md or .html)."
        ),
    ],
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="Input format: jsonl (canonical run records), lddx (Local-DDx result files) or medaisure "
            "(MedAISure's BenchmarkReport JSON; placeholder results kept and flagged).",
        ),
    ] = "jsonl",
    skip_invalid: Annotated[
        bool,
        _flag(
            "--skip-invalid",
            help="Set malformed lines aside in the rejects file (lddx: skip the files that cannot be read) "
            "instead of failing.",
        ),
    ] = False,
    rejects: Annotated[Path | None, typer.Option(help="Where skipped lines go (default: OUT.rejects.jsonl).")] = None,
    chunk_mb: Annotated[
        float,
        typer.Option(
            "--chunk-mb",
            help="MiB of JSONL decoded at a time; bounds memory (peak about 0.1 GB + 12-30x this, whatever the "
            "input's size).",
        ),
    ] = CHUNK_BYTES / 2**20,
    shards: ShardsOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Flatten canonical JSONL run records (see run_record.schema.json), or Local-DDx results, into a Dataset."""
    from mas_eval.ingest import ingest_jsonl
    from mas_eval.storage.sharding import check_shards

    if format_ not in INGEST_FORMATS:
        msg = f"ingest: --format {format_} is invalid; --format must be one of {', '.join(INGEST_FORMATS)}"
        raise InvalidParameterError(msg)
    check_shards(shards, where="ingest")
    if format_ == "medaisure" and shards is not None:
        msg = "ingest: --shards does not apply to --format medaisure (a report, not a Dataset); drop --shards"
        raise InvalidParameterError(msg)
    if format_ in ("lddx", "medaisure"):
        given = "--rejects" if rejects is not None else "--chunk-mb" if chunk_mb != CHUNK_BYTES / 2**20 else None
        if given is not None:
            read = "Local-DDx files are" if format_ == "lddx" else "a MedAISure report is"
            msg = f"ingest: {given} applies to --format jsonl only ({read} read whole); drop {given}"
            raise InvalidParameterError(msg)
    if format_ == "lddx":
        _ingest_lddx(files, out, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards)
        return
    if format_ == "medaisure":
        if skip_invalid:
            msg = "ingest: --skip-invalid does not apply to --format medaisure (one report file); drop it"
            raise InvalidParameterError(msg)
        _ingest_medaisure(files, out, overwrite=overwrite)
        return
    if not chunk_mb > 0:
        msg = f"ingest: --chunk-mb {chunk_mb:g} is invalid; --chunk-mb must be a positive number of MiB"
        raise InvalidParameterError(msg)
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
            progress=lambda done: bar.update(task, completed=done),
            shards=shards,
        )
    console.print(f"ingested {result.runs:,} runs into {result.out}")
    if result.rejected:
        console.print(f"[yellow]skipped {result.rejected:,} malformed line(s); see {result.rejects}[/]")


def _ingest_lddx(files: list[Path], out: Path, *, overwrite: bool, skip_invalid: bool, shards: int | None) -> None:
    """``mas-eval ingest --format lddx``: the files read, the rows per table, the files skipped and the warnings."""
    from mas_eval.ingest import ingest_lddx

    result = ingest_lddx(files, out, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards)
    rows = ", ".join(f"{table} {count:,}" for table, count in result.dataset.summary().select("table", "rows").rows())
    line = f"ingested {result.runs:,} runs from {len(result.files):,} Local-DDx file(s) into {result.out}: {rows}"
    console.print(escape(line), highlight=False, soft_wrap=True)
    for file, reason in result.skipped:
        console.print(f"[yellow]skipped {escape(str(file))}: {escape(reason)}[/]", highlight=False, soft_wrap=True)
    for warning in result.warnings[:_WARNINGS_SHOWN]:
        console.print(f"[yellow]warning: {escape(warning)}[/]", highlight=False, soft_wrap=True)
    if len(result.warnings) > _WARNINGS_SHOWN:
        more = len(result.warnings) - _WARNINGS_SHOWN
        console.print(f"[yellow]... and {more:,} more warning(s) (ingest_lddx(...).warnings lists them all)[/]")


def _ingest_medaisure(files: list[Path], out: Path, *, overwrite: bool) -> None:
    """``mas-eval ingest --format medaisure``: one MedAISure report, written as .json, .md or .html."""
    from mas_eval.report import read_medaisure_report
    from mas_eval.report.benchmark import check_benchmark_path

    if len(files) != 1:
        msg = f"ingest: --format medaisure reads one report file, not {len(files)}; pass one MedAISure report JSON"
        raise InvalidParameterError(msg)
    check_benchmark_path(out)  # before the work, not after it
    check_target(out, overwrite=overwrite, inputs=files)
    report = read_medaisure_report(files[0])
    report.write(out, overwrite=overwrite, inputs=files)
    line = (
        f"ingested MedAISure's report of {report.model_id} ({len(report.task_scores):,} task(s), "
        f"{len(report.detailed_results):,} detailed result(s)) into {out}"
    )
    console.print(escape(line), highlight=False, soft_wrap=True)
    _warn_placeholders(report)


def _warn_placeholders(report: Any) -> None:
    """Name the tasks whose scores are MedAISure's stand-ins for a failed evaluation."""
    if report.flagged_results:
        tasks = ", ".join(report.placeholder_tasks) or "none"
        line = (
            f"{len(report.flagged_results):,} placeholder result(s) kept and flagged (the evaluation failed); "
            f"tasks with only placeholders, whose scores are stand-ins: {tasks}"
        )
        console.print(f"[yellow]warning: {escape(line)}[/]", highlight=False, soft_wrap=True)


@app.command(cls=_Command, name="combined-score")
def combined_score(
    report: Annotated[
        Path,
        typer.Argument(help="A BenchmarkReport JSON: MedAISure's, or one written by mas-eval ingest/combined-score."),
    ],
    weights: Annotated[
        str,
        typer.Option(
            help="Weight per category (or metric), key=value,...: e.g. "
            "diagnostics=0.4,safety=0.3,communication=0.2,summarization=0.1. Finite, >= 0, positive sum."
        ),
    ],
    no_renormalize: Annotated[
        bool,
        _flag(
            "--no-renormalize",
            help="Divide by the sum of all weights, so a category missing from a task counts 0 "
            "(default: renormalise over the task's present categories).",
        ),
    ] = False,
    name: Annotated[str, typer.Option(help="Metric name of the combined score.")] = "combined_score",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the report with the combined score added (.json, .md or .html)."),
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """The weighted combined score of a benchmark report's categories, per task and overall (seed 001)."""
    from mas_eval.report import read_medaisure_report
    from mas_eval.report.benchmark import check_benchmark_path
    from mas_eval.report.combined import format_weights, parse_weights

    parsed = parse_weights(weights)
    if out is not None:  # before the work, not after it
        check_benchmark_path(out)
        check_target(out, overwrite=overwrite, inputs=[report])
    document = read_medaisure_report(report)
    result = document.add_combined_score(parsed, name, renormalize_missing=not no_renormalize)
    how = "renormalised over present categories" if not no_renormalize else "missing categories count 0"
    table = result.table(name)
    # Categories no task has take width from the ones it has; they are named below the table instead.
    absent = [c for c in result.weights if table.height and table[c].null_count() == table.height]
    print_frame(table.drop(absent), title=f"{name} ({format_weights(result.weights)}; {how})")
    if absent:
        console.print(f"no task has a value of: {escape(', '.join(absent))}", highlight=False, soft_wrap=True)
    overall = "none (no task has a weighted category)" if result.overall is None else f"{result.overall:.4f}"
    console.print(f"{escape(name)} overall: {overall} over {len(result.per_task):,} task(s)", highlight=False)
    if result.missing:
        line = f"no weighted category, so no {name}, in task(s): {', '.join(result.missing)}"
        console.print(f"[yellow]warning: {escape(line)}[/]", highlight=False, soft_wrap=True)
    _warn_placeholders(document)
    if out is not None:
        document.write(out, overwrite=overwrite, inputs=[report])
        console.print(f"wrote the report to {escape(str(out))}", highlight=False)


@app.command(
    cls=_Command, epilog="Parameters for --set (key=value; none for None):\n\n" + parameter_help().replace("\n", "\n\n")
)
def score(
    dataset: DatasetArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Scores folder to write.")],
    preset: Annotated[str, typer.Option(help=f"Parameter preset: {', '.join(PRESETS)}.")] = "spec",
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a parameter, key=value (repeatable), e.g. --set gt_boost=none."),
    ] = None,
    pairwise: Annotated[
        bool, _flag("--pairwise", help="Also write pairwise agent similarities (--set pairwise=true).")
    ] = False,
    skip_validation: Annotated[
        bool,
        _flag(
            "--skip-validation",
            help="Skip the full validation (scoring still refuses data that break the rules its formulas rely on).",
        ),
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            help="Score the shards of a sharded Dataset in this many processes "
            "(each with POLARS_MAX_THREADS = cores / workers).",
            min=1,
        ),
    ] = 1,
    engine: Annotated[
        str,
        typer.Option(
            help="Where a sharded Dataset's shards are scored: processes (here, or --workers local processes) "
            "or dask (a Dask distributed cluster; needs mas_eval[distributed]).",
        ),
    ] = "processes",
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="With --engine dask: the address of a running scheduler (tcp://host:8786); "
            "default: a local cluster of --workers processes on 127.0.0.1.",
        ),
    ] = None,
    compression: Annotated[
        str | None,
        typer.Option(
            help="Parquet compression of the Scores files: uncompressed, lz4, snappy, zstd, gzip or brotli "
            "(default: zstd for one file per table, none for a sharded Dataset's shards).",
        ),
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Score every run with every metric family whose tables the Dataset has.

    A sharded Dataset (written with --shards) is scored shard by shard, each shard's tables
    written as it finishes, so memory is set by a shard; the Scores folder is sharded alike.
    """
    from mas_eval.scoring.pipeline import score as score_dataset
    from mas_eval.storage.dataset import Dataset

    overrides = dict(parse_override(item) for item in set_ or [])
    if pairwise:
        overrides["pairwise"] = True
    resolve_params(preset, overrides)  # a bad preset or value fails now, not after validation
    check_target(out, overwrite=overwrite, inputs=[dataset])
    from mas_eval.scoring.shards import ENGINES
    from mas_eval.storage.outputs import COMPRESSIONS
    from mas_eval.storage.scores_folder import COMPRESSION

    if compression is not None and compression not in COMPRESSIONS:
        msg = f"score: --compression {compression} is invalid; it must be one of {', '.join(COMPRESSIONS)}"
        raise InvalidParameterError(msg)
    if engine not in ENGINES:
        msg = f"score: --engine {engine} is invalid; it must be one of {', '.join(ENGINES)}"
        raise InvalidParameterError(msg)
    if scheduler is not None and engine != "dask":
        msg = "score: --scheduler is an option of --engine dask; pass --engine dask or drop it"
        raise InvalidParameterError(msg)
    ds = Dataset.open(dataset)
    if ds.shards > 1 or engine == "dask":
        _score_sharded(
            ds,
            out,
            preset,
            overrides,
            workers=workers,
            engine=engine,
            scheduler=scheduler,
            overwrite=overwrite,
            validate=not skip_validation,
            compression=COMPRESSION if compression is None else compression,
        )
        return
    if workers > 1:
        msg = (
            f"score: --workers {workers} needs a sharded Dataset, and {dataset} has one file per table; "
            f"write one with: mas-eval reshard {dataset} --shards N --out NEW"
        )
        raise InvalidParameterError(msg)
    with steps() as shown:
        if not skip_validation:
            shown.start("validate")
            ds.validate()
        scores = score_dataset(ds, preset=preset, progress=shown.start, **overrides)
        shown.start("write")
        scores.write(out, overwrite=overwrite, compression=compression or "zstd")
        elapsed = shown.elapsed
    tables = ", ".join(f"{name} ({frame.height:,} rows)" for name, frame in scores.items())
    console.print(f"scored {scores.runs.height:,} runs with preset {preset!r} in {elapsed:.1f} s into {out}: {tables}")
    for name, reason in scores.skipped.items():
        console.print(f"[yellow]skipped the {name} family: {reason}[/]")


def _score_sharded(
    ds: Any,
    out: Path,
    preset: str,
    overrides: dict[str, Any],
    *,
    workers: int,
    engine: str,
    scheduler: str | None,
    overwrite: bool,
    validate: bool,
    compression: str,
) -> None:
    """``mas-eval score`` of a sharded Dataset: shard by shard, with a progress bar over the shards."""
    import time

    from mas_eval.scoring.scores import Scores
    from mas_eval.scoring.shards import score_shards

    start = time.perf_counter()
    if validate:
        with steps() as shown:
            shown.start("validate")
            ds.validate()
    with progress() as bar:
        task = bar.add_task(f"scoring {ds.shards:,} shards", total=ds.shards)
        score_shards(
            ds,
            out,
            preset,
            workers=workers,
            engine=engine,  # type: ignore[arg-type]
            scheduler=scheduler,
            overwrite=overwrite,
            compression=compression,
            progress=lambda done, _total: bar.update(task, completed=done),
            **overrides,
        )
    elapsed = time.perf_counter() - start
    manifest = Scores.manifest(out)
    tables = ", ".join(f"{name} ({rows:,} rows)" for name, rows in manifest["rows"].items())
    runs = manifest["rows"].get("runs", 0)
    console.print(
        f"scored {runs:,} runs in {ds.shards:,} shards ({workers} worker(s), {engine}) with preset {preset!r} "
        f"in {elapsed:.1f} s into {out}: {tables}"
    )
    for name, reason in manifest["families"]["skipped"].items():
        console.print(f"[yellow]skipped the {name} family: {reason}[/]")


@app.command(cls=_Command)
@app.command(cls=_Command)
def compare(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    metrics: Annotated[
        str, typer.Option("--metrics", "-m", help="Comma-separated run metrics, e.g. dqs,decision_confidence.")
    ] = "dqs,decision_confidence",
    by: Annotated[str | None, typer.Option(help="Comma-separated grouping columns, e.g. task.")] = None,
    pair_on: Annotated[
        str | None, typer.Option("--pair-on", help="Case column both systems ran (paired tests), e.g. case_id.")
    ] = None,
    cluster: Annotated[str | None, typer.Option(help="Cluster column: cluster-robust standard errors.")] = None,
    test: Annotated[
        str, typer.Option(help=f"One of {_choices(Test)} (auto: paired with --pair-on, else welch).")
    ] = "auto",
    correction: Annotated[str, typer.Option(help=f"Across all rows: one of {_choices(Correction)}.")] = "holm",
    treatment: Annotated[str, typer.Option(help="Treatment system (difference = treatment - control).")] = "mas",
    control: Annotated[str, typer.Option(help="Control system.")] = "single",
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    confidence: Annotated[float, typer.Option(help="Confidence level of the CIs.")] = 0.95,
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples for the CI (0: t-based CI).")] = 0,
    seed: Annotated[int | None, typer.Option(help="Seed of the bootstrap.")] = None,
    boot_ci: Annotated[str, typer.Option("--boot-ci", help=f"Bootstrap interval: one of {_choices(BootCI)}.")] = "bca",
    method: Annotated[
        str, typer.Option(help=f"One of {_choices(Method)} (mixed: a random intercept per --pair-on case).")
    ] = "default",
    allow_mixed_methods: Annotated[
        bool, _flag("--allow-mixed-methods", help="Compare dqs across dqs_method values, with a warning.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the full table (.parquet, .csv or .json).")
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Compare treatment vs control per group and metric: test, CI, effect size, adjusted p."""
    from mas_eval.scoring.scores import Scores
    from mas_eval.stats import compare as compare_runs
    from mas_eval.stats import write_comparisons
    from mas_eval.stats.report import check_comparisons_path
    from mas_eval.storage.inputs import reading

    if out is not None:  # before the work, not after it
        check_comparisons_path(out)
        check_target(out, overwrite=overwrite, inputs=[scores])
    # Only the runs table, lazily: the comparison reads just the columns it needs.
    runs = Scores.scan(scores, "runs")
    with reading(Scores.table_files(scores, "runs")):
        table = compare_runs(
            runs,
            metrics,
            treatment=treatment,
            control=control,
            by=by.split(",") if by else None,
            pair_on=pair_on,
            cluster=cluster,
            test=test,  # type: ignore[arg-type]
            correction=correction,  # type: ignore[arg-type]
            alpha=alpha,
            confidence=confidence,
            n_boot=n_boot,
            seed=seed,
            method=method,  # type: ignore[arg-type]
            allow_mixed_methods=allow_mixed_methods,
            boot_ci=boot_ci,  # type: ignore[arg-type]
        )
    title = f"{treatment} - {control}: {table.height} comparisons, p adjusted by {correction} (* p_adj <= {alpha:g})"
    print_comparisons(table, title=title, confidence=confidence)
    if out is not None:
        write_comparisons(table, out, overwrite=overwrite)
        console.print(f"wrote {table.height} comparisons to {out}")


@app.command(cls=_Command)
def report(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The report: .html (one page), .md (figures beside it), .json or .tex.")
    ],
    comparisons: Annotated[
        Path | None,
        typer.Option(help="A table written by `mas-eval compare --out` (default: by task, paired on case, Holm)."),
    ] = None,
    dataset: Annotated[
        Path | None, typer.Option(help="The scored Dataset: its summary and files' hashes go in the report.")
    ] = None,
    title: Annotated[str, typer.Option(help="The report's title.")] = "MAS vs single-agent baseline",
    treatment: Annotated[str, typer.Option(help="Treatment system (difference = treatment - control).")] = "mas",
    control: Annotated[str, typer.Option(help="Control system.")] = "single",
    overwrite: OverwriteOpt = False,
) -> None:
    """Write the MAS-vs-baseline report: tables, figures, calibration, cost, provenance."""
    import shlex

    from mas_eval.report import build
    from mas_eval.report.document import check_report_path
    from mas_eval.stats.report import read_comparisons

    inputs = [p for p in (scores, comparisons, dataset) if p is not None]
    check_report_path(out)  # before the work, not after it
    check_target(out, overwrite=overwrite, inputs=inputs)
    table = read_comparisons(comparisons) if comparisons is not None else None
    with steps() as shown:
        shown.start("building the report (figures, statistics)")
        document = build(
            scores,
            table,
            title=title,
            dataset=dataset,
            treatment=treatment,
            control=control,
            command=shlex.join(["mas-eval", *sys.argv[1:]]),
        )
        shown.start(f"writing {out.suffix.lstrip('.').upper()}")
        document.write(out, overwrite=overwrite, inputs=inputs)
    omitted = [f"{s.key} ({s.omitted})" for s in document.sections if s.omitted]
    for line in omitted:
        console.print(f"[dim]omitted: {escape(line)}[/]", highlight=False)
    console.print(f"wrote the report to {out}", highlight=False)


def _short(text: str) -> str:
    """A number written as text with 6 significant digits; any other text as it is."""
    try:
        return f"{float(text):.6g}"
    except ValueError:
        return text


@app.command(
    cls=_Command, epilog="Parameters for --set (key=value; none for None):\n\n" + parameter_help().replace("\n", "\n\n")
)
def reproduce(
    dataset: DatasetArg,
    preset: Annotated[str, typer.Option(help=f"Parameter preset: {', '.join(PRESETS)}.")] = "lddx-v6",
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a parameter, key=value (repeatable), e.g. --set caa_mentions=2."),
    ] = None,
    tolerance: Annotated[float, typer.Option(help="Largest difference for a score to count as reproduced.")] = 1e-6,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder for summary.csv, disagreements.csv and reproduction.json."),
    ] = None,
    show: Annotated[int, typer.Option(help="Disagreements to print (all are written with --out).")] = 20,
    overwrite: OverwriteOpt = False,
) -> None:
    """Recompute what the reference system recorded (the Dataset's reported table) and say how often it agrees."""
    from mas_eval.scoring.reproduction import reproduce as reproduce_dataset
    from mas_eval.storage.dataset import Dataset

    overrides = dict(parse_override(item) for item in set_ or [])
    resolve_params(preset, overrides)
    if not (tolerance >= 0 and tolerance < float("inf")):
        msg = f"--tolerance {tolerance!r} is invalid; it must be a finite number >= 0"
        raise InvalidParameterError(msg)
    if show < 0:
        msg = f"--show {show} is invalid; it must be >= 0"
        raise InvalidParameterError(msg)
    if out is not None:
        check_target(out, overwrite=overwrite, inputs=[dataset])
    ds = Dataset.open(dataset)
    with steps() as shown:
        shown.start("validate")
        ds.validate()
        result = reproduce_dataset(ds, preset, tolerance=tolerance, progress=shown.start, **overrides)
        if out is not None:
            shown.start("write")
            result.write(out, overwrite=overwrite, dataset=dataset)
    summary = result.summary.select("metric", "basis", "reproduced", "items", "share")
    print_frame(summary, title=f"recorded vs recomputed, preset {preset!r} (scores within {tolerance:g})")
    if show and result.disagreements.height:
        console.print(f"first {min(show, result.disagreements.height)} of {result.disagreements.height} disagreements:")
        for row in result.disagreements.head(show).iter_rows(named=True):
            item = f" · {row['item']}" if row["item"] is not None else ""
            values = f"recorded {_short(row['recorded'])}, recomputed {_short(row['recomputed'])}"
            console.print(f"  {escape(row['run_id'])} · {escape(row['metric'] + item)}: {escape(values)}")
    if out is not None:
        console.print(f"wrote the summary and {result.disagreements.height} disagreements to {out}")


@app.command(cls=_Command)
def validate(dataset: DatasetArg) -> None:
    """Check a Dataset against the schema; exit 2 with one message if a rule is broken."""
    from mas_eval.storage.dataset import Dataset

    Dataset.open(dataset).validate()
    console.print(f"{dataset}: valid")


@app.command(cls=_Command)
def reshard(
    dataset: DatasetArg,
    shards: Annotated[
        int,
        typer.Option(
            help="Number of shards of the new Dataset: 2 to 10,000, or 1 for one file per table (unsharded).",
            metavar="N",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write (not DATASET itself).")],
    overwrite: OverwriteOpt = False,
) -> None:
    """Rewrite a Dataset, sharded or not, in N shards by hash(run_id) % N (1: unsharded)."""
    from mas_eval.storage.dataset import Dataset
    from mas_eval.storage.sharding import check_shards

    check_shards(shards, where="reshard")
    check_target(out, overwrite=overwrite, inputs=[dataset])
    ds = Dataset.open(dataset)
    with steps() as shown:
        shown.start(f"writing {shards} shard(s)")
        # The rows are moved, not changed: `mas-eval validate` checks them, on either layout.
        ds.write(out, overwrite=overwrite, validate=False, shards=shards)
    layout = f"{shards} shards" if shards > 1 else "one file per table (unsharded)"
    console.print(f"wrote {escape(str(dataset))} to {escape(str(out))} in {layout}", highlight=False)


@app.command(cls=_Command)
def summary(
    dataset: DatasetArg,
    as_json: Annotated[bool, _flag("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Rows per table and the systems, cases and tasks they cover."""
    from mas_eval.storage.dataset import Dataset

    frame = Dataset.open(dataset).summary()
    if as_json:
        console.print_json(json.dumps(frame.to_dicts()))
    else:
        print_frame(frame, title=str(dataset))


@app.command(cls=_Command)
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the demo's outputs.")] = Path("reports/demo"),
    data: Annotated[Path, typer.Option(help="Folder holding the bundled sample.")] = Path("data"),
) -> None:
    """Run the main job on the bundled sample (what `make demo` runs); replaces OUT."""
    from mas_eval.cli.demo import run_demo

    run_demo(data, out, console=console)


def _one_line(exc: BaseException) -> str:
    """An error as the single line the user sees."""
    if isinstance(exc, OSError) and not isinstance(exc, MasEvalError):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"{where}{exc.strerror or exc}"
    return " ".join(str(exc).split())


def _usage_line(exc: typer.TyperException) -> str:
    """A usage error of the command line itself (a missing argument, an unknown option) as one line."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "mas-eval"
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    return f"{where}: {' '.join(message.split()).rstrip('.')}; see `{where} --help`"


def _fail(line: str, code: int) -> None:
    err_console.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``mas-eval`` console script."""
    try:
        with command_line():
            # Not standalone: the command line's own usage errors come here too, to be one line.
            code = app(args=list(argv) if argv is not None else None, prog_name="mas-eval", standalone_mode=False)
    except (MasEvalError, OSError) as exc:
        _fail(_one_line(exc), 2)
    except typer.Abort:
        _fail("aborted", 1)
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed already, as typer does it
            sys.exit(2)
        _fail(_usage_line(exc), getattr(exc, "exit_code", 2))
    else:
        # Exit as a standalone click program does, success included (callers of main() rely on it).
        sys.exit(code if isinstance(code, int) else 0)
