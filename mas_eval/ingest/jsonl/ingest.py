"""The ingest: JSONL files read a chunk at a time, each chunk's tables staged, the Dataset renamed into place."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mas_eval.constraints import CALLABLE, NONE, PATH, Boolean, Interval, sequence_of, validate_params
from mas_eval.errors import IngestError
from mas_eval.ingest.jsonl.arrow import arrow_tables
from mas_eval.ingest.jsonl.decoding import chunk_tables
from mas_eval.ingest.jsonl.lines import BYTES_CEILING, CHUNK_BYTES, MAX_LINE_BYTES, chunks
from mas_eval.ingest.jsonl.record import record_dtype
from mas_eval.ingest.jsonl.writing import (
    FORMAT_NAME,
    GROUND_TRUTH_SCRATCH,
    ChunkWriter,
    deduplicate_ground_truth,
    run_ids_unique,
    sort_shards,
    staged_dataset,
    table_folder,
)
from mas_eval.ingest.recipe import LFS_FIX, LFS_PROBLEM, is_lfs_pointer
from mas_eval.storage.dataset import MANIFEST
from mas_eval.storage.inputs import describe_path, parquet_files
from mas_eval.storage.manifests import write_manifest
from mas_eval.storage.outputs import atomic_directory, atomic_outputs
from mas_eval.storage.sharding import MAX_SHARDS, check_shards

__all__ = ["IngestResult", "ingest_jsonl"]


@dataclass(frozen=True)
class IngestResult:
    r"""What :func:`ingest_jsonl` wrote.

    Attributes
    ----------
    out
        The Dataset folder.
    runs
        Runs ingested (rows of ``runs``).
    rejected
        Malformed lines set aside (only with ``skip_invalid=True``; otherwise 0).
    rejects
        The rejects file (written whenever ``skip_invalid=True``, possibly empty), else None.

    Examples
    --------
    With ``skip_invalid``, a line without a case is set aside in the rejects file:

    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     logs = Path(folder) / "runs.jsonl"
    ...     _ = logs.write_text(
    ...         '{"run_id": "r1", "system": "mas", "case_id": "c1"}\n'
    ...         '{"run_id": "r2", "system": "mas"}\n'  # no case_id
    ...     )
    ...     result = ingest_jsonl(logs, Path(folder) / "ds", skip_invalid=True)
    ...     rejected = [json.loads(line) for line in result.rejects.read_text().splitlines()]
    >>> result.runs, result.rejected, result.out.name, result.rejects.name
    (1, 1, 'ds', 'ds.rejects.jsonl')
    >>> [(line["line"], line["error"]) for line in rejected]
    [(2, "required field 'case_id' is missing or null")]
    """

    out: Path
    runs: int
    rejected: int
    rejects: Path | None


def _check_inputs(paths: Sequence[str | Path] | str | Path) -> list[Path]:
    files = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not files:
        msg = "no input files given; pass one or more JSONL files of run records"
        raise IngestError(msg)
    for file in files:
        if not file.is_file():
            if not file.exists():
                msg = f"{file}: no such file; pass JSONL files of run records (one JSON object per line)"
                raise IngestError(msg)
            what = describe_path(file)
            fix = "it is ingested already" if what == "is a Dataset folder" else "pass JSONL files of run records"
            msg = f"{file} {what}, not a JSONL file; {fix} (ingest reads files of one JSON object per line)"
            raise IngestError(msg)
        if is_lfs_pointer(file):
            msg = f"{file}: {LFS_PROBLEM}; {LFS_FIX}"
            raise IngestError(msg)
    return files


@contextlib.contextmanager
def _staged(
    target: Path, rejects: Path | None, *, overwrite: bool, inputs: list[Path]
) -> Iterator[tuple[Path, IO[bytes] | None]]:
    """Stage the Dataset ``target`` and the ``rejects`` file together, yielding the folder and the rejects' handle.

    Both replace their paths together when the ingest succeeds (one output of two parts, checked
    before either is written), or neither does.
    """
    if rejects is None:
        with atomic_directory(target, overwrite=overwrite, inputs=inputs) as staging:
            yield staging, None
        return
    outputs = atomic_outputs((target, "folder"), (rejects, "file"), overwrite=overwrite, inputs=inputs)
    with outputs as (staging, temporary), temporary.open("wb") as handle:
        yield staging, handle


@validate_params(
    {
        "paths": [PATH, sequence_of((str, os.PathLike), "paths")],
        "out": [PATH],
        "overwrite": [Boolean()],
        "skip_invalid": [Boolean()],
        "rejects": [PATH, NONE],
        "chunk_bytes": [Interval(int, 0, BYTES_CEILING, closed="right")],
        "progress": [CALLABLE, NONE],
        "shards": [Interval(int, 1, MAX_SHARDS), NONE],
        "max_line_bytes": [Interval(int, 0, BYTES_CEILING, closed="right")],
    }
)
def ingest_jsonl(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    overwrite: bool = False,
    skip_invalid: bool = False,
    rejects: str | Path | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
    shards: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> IngestResult:
    r"""Flatten JSONL run records into a Dataset folder at ``out``.

    Parameters
    ----------
    paths
        JSONL files (``.jsonl.gz`` is read too), one canonical run record per line
        (``mas_eval/ingest/run_record.schema.json``), ingested in order; a single path is accepted
        too. Blank lines are skipped.
    out
        The Dataset folder to write: ``<out>/<table>/part-NNNNN.parquet``.
    overwrite
        Replace an existing ``out`` (and rejects file).
    skip_invalid
        Set malformed lines aside instead of failing: they are written verbatim to
        ``rejects`` and the rest is ingested.
    rejects
        Where the rejected lines go (with ``skip_invalid=True``): one JSON object per line,
        ``{"file", "line", "error", "text"}``. Default: ``<out>.rejects.jsonl`` beside ``out``.
    chunk_bytes
        Bytes of input decoded at a time: a chunk is whole lines, ending with the line that
        takes it past ``chunk_bytes`` (a longer line is a chunk of its own), each line counting
        its length plus :data:`LINE_OVERHEAD` bytes (so blank or tiny lines fill a chunk too).
        Memory is bounded by one chunk, 12 to 30 times ``chunk_bytes``, whatever the input's
        size; the default is 16 MiB.
    progress
        Called after each chunk with the number of bytes of the input files read so far (all
        files together; for a ``.gz`` file, compressed bytes, as stored), so its last call
        gives the sum of the files' sizes: the total of a progress bar.
    shards
        ``None`` or 1: one folder of part files per table. ``N`` (2 to 10,000): the sharded
        layout of :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>` (every run's rows in
        shard ``hash(run_id) % N`` of every table, sorted by key), one shard in memory at a time.
    max_line_bytes
        Longest line read, in bytes without its newline (default :data:`MAX_LINE_BYTES`,
        16 MiB). A longer line is malformed (``line too long``); it is never held whole, so a
        file without newlines costs no more memory than a chunk. With ``skip_invalid`` it goes
        to the rejects file, its ``text`` cut to the first 1,000 bytes.

    Returns
    -------
    IngestResult
        The folder, the number of runs ingested and of lines rejected, and the rejects file.

    Raises
    ------
    InvalidParameterError
        ``chunk_bytes`` or ``max_line_bytes`` is not an integer from 1 to :data:`BYTES_CEILING`
        (1 GiB), or ``shards`` not an integer from 1 to 10,000.
    IngestError
        An input file is missing or unreadable, or has a malformed line (without
        ``skip_invalid``): the message names the file, the 1-based line number and the problem.
        Also when no run record is found at all.
    MasEvalError
        ``out`` exists and ``overwrite`` is false, or the records break a rule of the Dataset
        (e.g. a repeated ``run_id``, a negative mass): :meth:`Dataset.validate`'s error.
        Nothing is written.

    Notes
    -----
    The record's top-level fields and its ``usage`` object give ``runs``, each list its table
    (``agents[]`` → ``agents``, ``agents[].beliefs[]`` → ``beliefs``, ...: docs/dataset.md lists
    them), every item a row; ``ground_truth[]`` is the union over the case's runs. Unknown fields
    are ignored, unless one resembles a field its object lacks (``usage.tokns`` without
    ``usage.tokens``): that line is malformed, as the value would otherwise vanish. Tables with
    no rows in the whole input are not written.

    A line is malformed when it is longer than ``max_line_bytes``, not JSON, not an object,
    lacks a required field (run_id, system, case_id, or an item's key), has an item that is
    null, or has a field of the wrong type: a container (object, array) where another is expected, or a number field
    holding a value that is not a number (``"confidence": "high"``, ``true``, ``1.5`` for an
    integer). Leniencies of the decoder that are kept: a number written as a string
    (``"0.5"``) is read as the number, a number or boolean given for a string field is read
    as its text (``"case_id": 17`` → ``"17"``), and a lone string given for an array of
    strings is read as a one-item array.

    The Dataset is staged in a temporary folder and renamed into place only if everything
    succeeded. It is validated chunk by chunk with :meth:`Dataset.validate` (a run is one line,
    so across chunks only a repeated run_id can break a rule), and as a whole when a chunk
    breaks a rule or a run_id repeats, so that the error names the offending keys of the whole
    input. A chunk is read by Arrow's JSON reader when that reads it exactly as the general path
    would (without the leniencies above), else by the general path; docs/performance.md says
    what each costs.

    Examples
    --------
    >>> import tempfile
    >>> from mas_eval import Dataset
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     logs = Path(folder) / "runs.jsonl"
    ...     _ = logs.write_text(
    ...         '{"run_id": "r1", "system": "mas", "case_id": "c1", "usage": {"tokens": 1200}}\n'
    ...         '{"run_id": "r2", "system": "single", "case_id": "c1", "usage": {"tokens": 300}}\n'
    ...     )
    ...     result = ingest_jsonl(logs, Path(folder) / "ds")
    ...     runs = Dataset.open(result.out).collect("runs").select("run_id", "system", "tokens").rows()
    >>> result.runs, result.rejected, result.rejects
    (2, 0, None)
    >>> runs
    [('r1', 'mas', 1200), ('r2', 'single', 300)]
    """
    count = check_shards(shards, where="ingest")
    files = _check_inputs(paths)
    target = Path(out)
    rejects_path = (
        (Path(rejects) if rejects is not None else target.parent / f"{target.name}.rejects.jsonl")
        if skip_invalid
        else None
    )
    permissive = record_dtype(permissive=True)
    counts = {"runs": 0, "rejected": 0, "chunks": 0}
    # Neither output may be, hold or lie inside an input, nor the rejects file inside the Dataset.
    with (
        _staged(target, rejects_path, overwrite=overwrite, inputs=files) as (staging, reject_handle),
        ChunkWriter(staging, count) as writer,
    ):
        read_before = 0  # bytes of the files before this one
        for file in files:
            position = 0
            for chunk in chunks(file, chunk_bytes, max_line_bytes):
                position = chunk.position
                if chunk.lines:
                    tables = arrow_tables(chunk)
                    if tables is None:
                        tables = chunk_tables(file, chunk, permissive, counts, reject_handle, max_line_bytes)
                    if tables:
                        counts["runs"] += tables["runs"].height
                        writer.put(tables, counts["chunks"])
                    counts["chunks"] += 1
                    del tables  # else they would live on while the next chunk is decoded
                del chunk
                if progress is not None:
                    progress(read_before + position)
            read_before += position
        # Every chunk written: what follows reads the staged files.
        chunks_valid = writer.finish()
        if counts["runs"] == 0:
            rejected = f" ({counts['rejected']} malformed line(s) set aside)" if counts["rejected"] else ""
            msg = f"no run records found in {', '.join(map(str, files))}{rejected}; nothing was written"
            raise IngestError(msg)
        scratch = staging / GROUND_TRUTH_SCRATCH
        if scratch.exists():
            deduplicate_ground_truth(scratch, staging / "ground_truth")
            shutil.rmtree(scratch)
        dataset = staged_dataset(staging, count)
        if not (chunks_valid and run_ids_unique(parquet_files(table_folder(staging, "runs", count)))):
            # Error path: the whole Dataset is validated, so that the error covers the whole input.
            dataset.validate()
        if count > 1:
            sort_shards(staging, dataset.table_names, count)
        else:
            write_manifest(staging, MANIFEST, {"tables": dataset.table_names, "formats": [FORMAT_NAME]})
    return IngestResult(target, counts["runs"], counts["rejected"], rejects_path)
