"""``mas-eval score`` and ``reproduce``: a Dataset's runs scored with a preset's parameters.

``score`` calls :func:`mas_eval.score` with ``out``, which chooses how to score (in memory, or
shard by shard over processes or a Dask cluster) and writes the Scores folder; ``reproduce``
calls :func:`~mas_eval.scoring.reproduction.reproduce`. Both take ``--preset`` and ``--set``,
and their options take the functions' defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mas_eval.cli.common import DatasetArg, OverwriteOpt, RawCsvOpt, defaults_of, flag
from mas_eval.cli.terminal import Steps, console, literal, print_frame, steps
from mas_eval.constraints import Interval, check_parameter
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics.family import parse_override, resolve_params
from mas_eval.presets import PRESETS
from mas_eval.scoring.pipeline import score
from mas_eval.scoring.reproduction import Reproduction, reproduce
from mas_eval.scoring.request import Progress, Step
from mas_eval.scoring.scores import Scores
from mas_eval.scoring.shards import score_shards
from mas_eval.storage.outputs import check_target
from mas_eval.storage.scores_folder import stored_rows

__all__ = ["reproduce_command", "score_command"]

#: The defaults of the functions the commands call.
_SCORE = defaults_of(score)
_REPRODUCE = defaults_of(reproduce)
_WRITE_REPRODUCTION = defaults_of(Reproduction.write)


def _overrides(items: list[str] | None) -> dict[str, object]:
    """``--set key=value`` options as parameter overrides."""
    return dict(parse_override(item) for item in items or [])


def score_command(
    dataset: DatasetArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Scores folder to write.")],
    preset: Annotated[str, typer.Option(help=f"Parameter preset: {', '.join(PRESETS)}.")] = _SCORE["preset"],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a parameter, key=value (repeatable), e.g. --set gt_boost=none."),
    ] = None,
    pairwise: Annotated[
        bool, flag("--pairwise", help="Also write pairwise agent similarities (--set pairwise=true).")
    ] = False,
    skip_validation: Annotated[
        bool,
        flag(
            "--skip-validation",
            help="Skip the full validation, done where each shard is read (scoring still refuses data that "
            "break the rules its formulas rely on).",
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Score and validate the shards of a sharded Dataset in this many processes "
            "(each with POLARS_MAX_THREADS = cores / workers); default 1.",
            min=1,
        ),
    ] = _SCORE["workers"],
    engine: Annotated[
        str,
        typer.Option(
            help="Where a sharded Dataset's shards are scored: processes (here, or --workers local processes) "
            "or dask (a Dask distributed cluster; needs mas_eval\\[distributed]).",
        ),
    ] = _SCORE["engine"],
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="With --engine dask: the address of a running scheduler (tcp://host:8786); "
            "default: a local cluster of --workers processes on 127.0.0.1.",
        ),
    ] = _SCORE["scheduler"],
    compression: Annotated[
        str | None,
        typer.Option(
            help="Parquet compression of the Scores files: uncompressed, lz4, snappy, zstd, gzip or brotli "
            "(default: zstd for one file per table, none for a sharded Dataset's shards).",
        ),
    ] = _SCORE["compression"],
    overwrite: OverwriteOpt = _SCORE["overwrite"],
) -> None:
    """Score every run with every metric family whose tables the Dataset has.

    A sharded Dataset (written with --shards) is scored shard by shard, each shard's tables
    written as it finishes, so memory is set by a shard; the Scores folder is sharded alike.
    Each shard is validated where it is scored (by its worker with --workers), then the few
    rules that compare runs across shards; a broken rule is reported for the whole Dataset.
    """
    from mas_eval.storage.dataset import Dataset

    overrides = _overrides(set_)
    if pairwise:
        overrides["pairwise"] = True
    ds = Dataset.open(dataset)
    if workers is not None and workers > 1 and ds.shards == 1 and engine != "dask":
        msg = (
            f"score: --workers {workers} needs a sharded Dataset, and {dataset} has one file per table; "
            f"write one with: mas-eval reshard {dataset} --shards N --out NEW"
        )
        raise InvalidParameterError(msg)
    common: dict[str, Any] = {
        "validate": not skip_validation,
        "engine": engine,
        "scheduler": scheduler,
        "overwrite": overwrite,
        **({} if compression is None else {"compression": compression}),
        **overrides,
    }
    with steps() as shown:
        if ds.shards > 1 or (workers or 1) > 1 or engine != "processes":
            # Shard by shard, the folder not read back: a Dataset larger than memory stays out of it.
            folder = score_shards(ds, out, preset, workers=workers or 1, progress=_shown_by(shown), **common)
        else:
            folder = score(ds, preset, out=out, workers=workers, progress=_shown_by(shown), **common).source
        elapsed = shown.elapsed
    _print_scored(folder, preset, elapsed, f" ({workers or 1} worker(s), {engine})")


def _print_scored(folder: Path, preset: str, elapsed: float, how: str) -> None:
    """Print what ``mas-eval score`` wrote: the runs, the layout, each table's rows, the families skipped.

    The rows are the manifest's (a sharded folder records them) or the tables' footers: nothing is read back.
    """
    manifest = Scores.manifest(folder)
    shards = manifest.get("shards")
    rows = manifest.get("rows") or stored_rows(folder, manifest["tables"], shards)
    tables = ", ".join(f"{name} ({rows[name]:,} rows)" for name in manifest["tables"])
    layout = "" if shards is None else f" in {shards:,} shards{how}"
    console.print(
        f"scored {rows['runs']:,} runs{layout} with preset {literal(repr(preset))} in {elapsed:.1f} s "
        f"into {literal(folder)}: {literal(tables)}",
        highlight=False,
    )
    for name, reason in manifest.get("families", {}).get("skipped", {}).items():
        console.print(f"[yellow]skipped the {literal(name)} family: {literal(reason)}[/]", highlight=False)


def _shown_by(shown: Steps) -> Progress:
    """Return ``score``'s progress shown by a :func:`~mas_eval.cli.terminal.steps` display.

    Each step is shown with its duration, and the shards of a sharded Dataset with a bar.
    """

    def step(name: Step) -> None:
        if name.total is not None and name.done is not None:
            shown.count("scoring shards", name.done, name.total)
        else:
            shown.start(name)

    return step


def _short(text: str) -> str:
    """Return a number written as text with 6 significant digits; any other text as it is."""
    try:
        return f"{float(text):.6g}"
    except ValueError:
        return text


def reproduce_command(
    dataset: DatasetArg,
    preset: Annotated[str, typer.Option(help=f"Parameter preset: {', '.join(PRESETS)}.")] = _REPRODUCE["preset"],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a parameter, key=value (repeatable), e.g. --set caa_mentions=2."),
    ] = None,
    tolerance: Annotated[
        float, typer.Option(help="Largest difference for a score to count as reproduced.")
    ] = _REPRODUCE["tolerance"],
    aggregate_tolerance: Annotated[
        float,
        typer.Option(
            help="Relative tolerance for a log's own aggregates (inspect_ai's accuracy and stderr, lm-eval's "
            "acc and acc_stderr) recomputed from its outcomes."
        ),
    ] = _REPRODUCE["aggregate_tolerance"],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder for summary.csv, disagreements.csv and reproduction.json."),
    ] = None,
    show: Annotated[int, typer.Option(help="Disagreements to print (all are written with --out).")] = 20,
    overwrite: OverwriteOpt = _WRITE_REPRODUCTION["overwrite"],
    raw_csv: RawCsvOpt = _WRITE_REPRODUCTION["raw_csv"],
) -> None:
    """Recompute what the reference system recorded (the Dataset's reported table) and say how often it agrees.

    Local-DDx's numbers are recomputed by scoring under --preset; a log's own aggregates
    (inspect_ai, lm-eval) from its outcomes, log by log.
    """
    from mas_eval.storage.dataset import Dataset

    overrides = _overrides(set_)
    resolve_params(preset, overrides)
    check_parameter("--tolerance", tolerance, [Interval(float, 0)], where="reproduce")
    check_parameter("--aggregate-tolerance", aggregate_tolerance, [Interval(float, 0)], where="reproduce")
    check_parameter("--show", show, [Interval(int, 0)], where="reproduce")
    if raw_csv and out is None:
        msg = "reproduce: --raw-csv applies to the CSV files of --out; pass --out FOLDER, or drop --raw-csv"
        raise InvalidParameterError(msg)
    if out is not None:
        check_target(out, overwrite=overwrite, inputs=[dataset])
    ds = Dataset.open(dataset)
    with steps() as shown:
        shown.start("validate")
        ds.validate()
        result = reproduce(
            ds,
            preset,
            tolerance=tolerance,
            aggregate_tolerance=aggregate_tolerance,
            progress=shown.start,
            **overrides,
        )
        if out is not None:
            shown.start("write")
            result.write(out, overwrite=overwrite, dataset=dataset, raw_csv=raw_csv)
    summary = result.summary.select("metric", "basis", "reproduced", "items", "share")
    if result.preset is None:
        title = f"recorded vs recomputed from outcomes (within {aggregate_tolerance:g} relative; counts equal)"
    else:
        title = f"recorded vs recomputed, preset {preset!r} (scores within {tolerance:g})"
    print_frame(summary, title=title)
    if not result.not_compared.is_empty():
        console.print("recorded but not recomputed:")
        for metric, logs, reason in result.not_compared.rows():
            where = f" ({logs} log{'s' if logs != 1 else ''})" if logs else ""
            console.print(f"  {literal(metric)}{where}: {literal(reason)}", highlight=False, soft_wrap=True)
    shown_rows = min(show, result.disagreements.height)  # a --show beyond every row shows them all
    if shown_rows:
        console.print(f"first {shown_rows} of {result.disagreements.height} disagreements:")
        for row in result.disagreements.head(shown_rows).iter_rows(named=True):
            item = f" · {row['item']}" if row["item"] is not None else ""
            values = f"recorded {_short(row['recorded'])}, recomputed {_short(row['recomputed'])}"
            console.print(f"  {literal(row['run_id'])} · {literal(row['metric'] + item)}: {literal(values)}")
    if out is not None:
        console.print(
            f"wrote the summary and {result.disagreements.height} disagreements to {literal(out)}", highlight=False
        )
