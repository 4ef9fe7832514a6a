"""``mas-eval validate``, ``reshard``, ``summary`` and ``combine``: a Dataset's files checked, rewritten, counted.

``combine`` puts several Datasets together.

Each opens the Dataset (:meth:`~mas_eval.Dataset.open`) and calls one of its methods:
:meth:`~mas_eval.Dataset.validate`, :meth:`~mas_eval.Dataset.write` with ``shards``,
:meth:`~mas_eval.Dataset.summary`; ``combine`` opens several and writes :meth:`~mas_eval.Dataset.concat`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from mas_eval.cli.common import DatasetArg, OverwriteOpt, ShardsOpt, defaults_of, flag
from mas_eval.cli.terminal import console, literal, print_frame, steps
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import atomic_directory, check_target

__all__ = ["combine_command", "reshard_command", "summary_command", "validate_command"]

#: The defaults of :meth:`~mas_eval.Dataset.write`'s parameters.
_WRITE = defaults_of(Dataset.write)


def validate_command(dataset: DatasetArg) -> None:
    """Check a Dataset against the schema; exit 2 with one message if a rule is broken."""
    ds = Dataset.open(dataset).validate()
    console.print(f"{literal(dataset)}: valid", highlight=False)
    note = ds.check_stored_codes()
    if note is not None:
        console.print(f"note: {literal(note)}", highlight=False)


def reshard_command(
    dataset: DatasetArg,
    shards: Annotated[
        int,
        typer.Option(
            help="Number of shards of the new Dataset: 2 to 10,000, or 1 for one file per table (unsharded).",
            metavar="N",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write (not DATASET itself).")],
    overwrite: OverwriteOpt = _WRITE["overwrite"],
) -> None:
    """Rewrite a Dataset, sharded or not, in N shards by hash(run_id) % N (1: unsharded)."""
    from mas_eval.storage.sharding import check_shards

    check_shards(shards, where="reshard")
    check_target(out, overwrite=overwrite, inputs=[dataset])
    ds = Dataset.open(dataset)
    with steps() as shown:
        shown.start(f"writing {shards} shard(s)")
        # The rows are moved, not changed: `mas-eval validate` checks them, on either layout.
        ds.write(out, overwrite=overwrite, validate=False, shards=shards)
    layout = f"{shards} shards" if shards > 1 else "one file per table (unsharded)"
    console.print(f"wrote {literal(dataset)} to {literal(out)} in {layout}", highlight=False)


def summary_command(
    dataset: DatasetArg,
    as_json: Annotated[bool, flag("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Rows per table and the systems, cases and tasks they cover."""
    frame = Dataset.open(dataset).summary()
    if as_json:
        console.print_json(json.dumps(frame.to_dicts()))
    else:
        print_frame(frame, title=str(dataset))


def combine_command(
    datasets: Annotated[
        list[Path], typer.Argument(help="Dataset folders to put together (two or more), e.g. each system's ingest.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write (not one of the inputs).")],
    shards: ShardsOpt = _WRITE["shards"],
    overwrite: OverwriteOpt = _WRITE["overwrite"],
) -> None:
    """Put Datasets together into one (the MAS's runs and the baseline's, ingested apart).

    Every table is stacked; a run id held by two of them is refused, naming both. The notes
    their ingests left (``_dataset.json``) and the formats their runs came from are carried over.
    """
    from mas_eval.errors import InvalidParameterError
    from mas_eval.storage.sharding import check_shards

    count = check_shards(shards, where="combine")
    if len(datasets) < 2:
        msg = "combine: give two Dataset folders or more (one is already a Dataset; copy it, or `mas-eval reshard` it)"
        raise InvalidParameterError(msg)
    check_target(out, overwrite=overwrite, inputs=datasets)
    opened = [Dataset.open(path) for path in datasets]
    with steps() as shown:
        shown.start("checking run ids")
        combined = Dataset.concat(opened)
        shown.start("validating")
        combined.validate()
        shown.start("writing")
        with atomic_directory(out, overwrite=overwrite, inputs=datasets) as staging:
            combined.write_tables(staging, shards=count)
    runs = combined.scan("runs").select(pl.len()).collect().item()
    notes = f"; {len(combined.notes):,} note(s) of their ingests kept" if combined.notes else ""
    console.print(
        f"combined {len(datasets)} Datasets ({runs:,} runs) into {literal(out)}{literal(notes)}", highlight=False
    )
