"""``mas-eval validate``, ``reshard`` and ``summary``: a Dataset's files checked, rewritten, counted.

Each opens the Dataset (:meth:`~mas_eval.Dataset.open`) and calls one of its methods:
:meth:`~mas_eval.Dataset.validate`, :meth:`~mas_eval.Dataset.write` with ``shards``,
:meth:`~mas_eval.Dataset.summary`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from mas_eval.cli.common import DatasetArg, OverwriteOpt, defaults_of, flag
from mas_eval.cli.terminal import console, literal, print_frame, steps
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import check_target

__all__ = ["reshard", "summary", "validate"]

#: The defaults of :meth:`~mas_eval.Dataset.write`'s parameters.
_WRITE = defaults_of(Dataset.write)


def validate(dataset: DatasetArg) -> None:
    """Check a Dataset against the schema; exit 2 with one message if a rule is broken."""
    ds = Dataset.open(dataset).validate()
    console.print(f"{literal(dataset)}: valid", highlight=False)
    note = ds.check_stored_codes()
    if note is not None:
        console.print(f"note: {literal(note)}", highlight=False)


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


def summary(
    dataset: DatasetArg,
    as_json: Annotated[bool, flag("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Rows per table and the systems, cases and tasks they cover."""
    frame = Dataset.open(dataset).summary()
    if as_json:
        console.print_json(json.dumps(frame.to_dicts()))
    else:
        print_frame(frame, title=str(dataset))
