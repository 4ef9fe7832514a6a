"""What every log adapter shares: its result, and how its tables become a Dataset (in memory or a folder).

A log adapter (:mod:`~mas_eval.ingest.lddx`, and one module per evaluation tool's format) reads
files another tool wrote, turns them into the frames of :mod:`mas_eval.data.schema`, and hands
them to :func:`dataset_of`, which validates them and writes the folder atomically when asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.storage.dataset import MANIFEST, Dataset
from mas_eval.storage.manifests import write_manifest
from mas_eval.storage.outputs import atomic_directory

__all__ = ["LogIngestResult", "conform", "dataset_of"]


@dataclass(frozen=True)
class LogIngestResult:
    r"""What a log adapter read and wrote.

    Attributes
    ----------
    out
        The Dataset folder written, or None when no ``out`` was given.
    dataset
        The Dataset: opened from ``out``, or held in memory when no ``out`` was given.
    runs
        Runs ingested.
    files
        The files read, in order (a folder stands for the files of the format in it, sorted).
    skipped
        ``(file, reason)`` of each file (or sample: the reason names it) set aside, only with
        ``skip_invalid=True``; otherwise empty.
    warnings
        What was read with a gap, each naming the file and where in it.
    read_as
        ``(file, how)`` of each file read, for a format whose files come in several shapes (an
        OTLP file's shape and layout: ``"Grafana Tempo trace (batches), one document"``); else empty.

    Examples
    --------
    What :func:`~mas_eval.ingest.ingest_table` returns for a table of two runs, kept in memory:

    >>> import tempfile
    >>> from mas_eval.ingest import ingest_table
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     table = Path(folder) / "runs.csv"
    ...     _ = table.write_text("model,question,correct\nmas,q1,true\nsingle,q1,false\n")
    ...     result = ingest_table(table, columns={"system": "model", "case_id": "question"})
    >>> result.runs, [file.name for file in result.files], result.skipped, result.out
    (2, ['runs.csv'], (), None)
    >>> result.dataset.collect("runs").select("run_id", "system").rows()
    [('mas/q1/1', 'mas'), ('single/q1/1', 'single')]
    """

    out: Path | None
    dataset: Dataset
    runs: int
    files: tuple[Path, ...]
    skipped: tuple[tuple[Path, str], ...]
    warnings: tuple[str, ...]
    read_as: tuple[tuple[Path, str], ...] = ()


def dataset_of(
    frames: Mapping[str, pl.DataFrame],
    target: Path | None,
    *,
    overwrite: bool,
    inputs: Sequence[Path],
    shards: int,
    notes: Sequence[str] = (),
    formats: Sequence[str] = (),
) -> Dataset:
    """Return the validated Dataset of ``frames``; write it atomically to ``target`` (``shards`` > 1: sharded) if given.

    ``target`` comes from :func:`~mas_eval.storage.outputs.check_target`, checked before any input
    was read; ``inputs`` are the files read, which the output may not replace. ``notes`` (what
    was read with a gap, or set to null because no run can have it) go into the folder's
    manifest, so that the Dataset says what its tables leave out, and so do ``formats`` (what
    the runs were ingested from: :attr:`Dataset.formats <mas_eval.storage.dataset.Dataset.formats>`).
    """
    dataset = Dataset.from_frames(**frames).validate()
    if target is None:
        return dataset.with_origin(formats=formats, notes=notes)
    with atomic_directory(target, overwrite=overwrite, inputs=list(inputs)) as staging:
        if shards > 1:
            dataset.write_tables(staging, shards=shards, notes=list(notes), formats=list(formats))
        else:
            for name, frame in frames.items():
                frame.write_parquet(staging / f"{name}.parquet")
            manifest: dict[str, Any] = {"tables": list(frames)}
            if notes:
                manifest["notes"] = list(notes)
            if formats:
                manifest["formats"] = list(formats)
            write_manifest(staging, MANIFEST, manifest)
    return Dataset.open(target)


def conform(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    """Return ``frame`` with exactly the columns of ``table``, in the schema's order and types; those it lacks null."""
    schema = TABLES[table].polars_schema
    return frame.select(
        [pl.col(c).cast(t) if c in frame.columns else pl.lit(None, t).alias(c) for c, t in schema.items()]
    )
