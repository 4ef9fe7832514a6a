"""``score``: run every metric family whose tables are present, and the ``Scores`` it returns.

Orchestration only (the formulas live in :mod:`mas_eval.metrics`): encode the keys of every
table the families read once, run each family whose required tables are present, decode the
outputs, and record which families ran and which were skipped, and why.

>>> import mas_eval
>>> scores = mas_eval.score(mas_eval.simulate(200, seed=1))
>>> scores.names, scores.ran, scores.runs.height
(['runs', 'agents', 'alternatives', 'conflicts'], ['decision'], 200)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, overload

from mas_eval.constraints import CALLABLE, NONE, PATH, TEXT, Boolean, Interval, Options, Predicate, validate_params
from mas_eval.errors import InvalidParameterError
from mas_eval.scoring.run import score_in_memory
from mas_eval.scoring.scores import Scores
from mas_eval.scoring.shards import (
    Engine,
    ShardsScored,
    check_workers,
    default_workers,
    score_shards,
    score_shards_in_memory,
)
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import COMPRESSIONS, check_compression, check_target
from mas_eval.storage.scores_folder import COMPRESSION

__all__ = ["Scores", "score"]


#: What ``score`` scores: a path is opened first, so that the folder's problems are named as such.
_DATASET = Predicate(lambda value: isinstance(value, Dataset), "a Dataset (Dataset.open(path) opens a folder)")
#: A Dask client (``dask.distributed.Client``), told by what it does: Dask loads only when it is used.
_CLIENT = Predicate(
    lambda value: callable(getattr(value, "map", None)) and callable(getattr(value, "gather", None)),
    "a dask.distributed Client",
)


@overload
def score(
    ds: Dataset,
    preset: str = ...,
    *,
    progress: Callable[[str], object] | None = ...,
    out: None = ...,
    workers: int | None = ...,
    validate: bool = ...,
    engine: str = ...,
    client: Any = ...,
    scheduler: str | None = ...,
    overwrite: bool = ...,
    compression: str | None = ...,
    **overrides: Any,
) -> Scores: ...


@overload
def score(
    ds: Dataset,
    preset: str = ...,
    *,
    progress: Callable[[str], object] | None = ...,
    out: str | Path,
    workers: int | None = ...,
    validate: bool = ...,
    engine: str = ...,
    client: Any = ...,
    scheduler: str | None = ...,
    overwrite: bool = ...,
    compression: str | None = ...,
    **overrides: Any,
) -> Path: ...


@validate_params(
    {
        "ds": [_DATASET],
        "preset": [TEXT],
        "progress": [CALLABLE, NONE],
        "out": [PATH, NONE],
        "workers": [Interval(int, 1), NONE],
        "validate": [Boolean()],
        "engine": [Options.of(Engine)],
        "client": [_CLIENT, NONE],
        "scheduler": [TEXT, NONE],
        "overwrite": [Boolean()],
        "compression": [Options(COMPRESSIONS), NONE],
    }
)
def score(
    ds: Dataset,
    preset: str = "spec",
    *,
    progress: Callable[[str], object] | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    validate: bool = False,
    engine: str = "processes",
    client: Any = None,
    scheduler: str | None = None,
    overwrite: bool = False,
    compression: str | None = None,
    **overrides: Any,
) -> Scores | Path:
    """Score every run of ``ds`` with every metric family whose tables it has.

    Parameters
    ----------
    ds
        The Dataset. ``runs`` is required; each family states the tables it needs and reads
        (:mod:`mas_eval.metrics.family`). The decision family (the crisis-MAS methodology) needs only ``runs``:
        its belief metrics read ``beliefs`` (and ``agents`` for confidences and ER weights), its
        criteria metrics ``scores`` (and ``criteria``).
    preset
        ``"spec"`` (the source documents' formulas, default) or a reference system's preset,
        e.g. ``"crisis-mas-poc"`` (:mod:`mas_eval.presets`).
    progress : callable, optional
        Called with the name of each step as it starts: ``"validate"`` (with ``validate``),
        ``"encoding keys"``, then ``"family <name>"`` for each family that runs, then
        ``"assembling tables"`` (and ``"write"`` with ``out``); meant for a progress display
        (the CLI shows each step with its elapsed time). A sharded Dataset scored with ``out``
        or in worker processes reports instead, before the first shard and after each, a
        :class:`~mas_eval.scoring.shards.ShardsScored` step, ``"scored 3 of 10 shards"``, whose
        ``done`` and ``total`` feed a progress bar.
    out : str or Path, optional
        Write the Scores folder here instead of returning the tables, and return its path. A
        sharded Dataset (``write(shards=N)``) is then scored shard by shard, each shard's tables
        written as it finishes, so memory is set by a shard, not by the Dataset
        (:func:`~mas_eval.scoring.shards.score_shards`); :meth:`Scores.open` reads the folder.
    workers : int, optional
        Processes scoring the shards of a sharded Dataset side by side (1: one after another,
        in this process). With ``out``, 1 by default. Without it, by default one per core this
        process may use, at most :data:`~mas_eval.scoring.shards.MEMORY_WORKERS` and one per
        shard; each worker sends its shard's tables back through a temporary file, and the
        tables are those of scoring in this process, bit for bit. The shards are scored in this
        process, whatever ``workers``, for a Dataset built in memory (:meth:`Dataset.from_frames`:
        a worker opens the Dataset's folder itself) and when a metric family or preset was added
        or changed at run time (a worker would not have it). Workers are spawned without running
        the caller's script again: a script needs no ``if __name__ == "__main__":`` guard.
    validate : bool, default False
        Check every rule of :meth:`Dataset.validate` too, where the data are read: a sharded
        Dataset's shards each in the worker that scores it (:meth:`Dataset.validate_shard`),
        then the few rules across shards (:meth:`Dataset.validate_across`); an unsharded one
        before it is scored. A broken rule is raised as :meth:`Dataset.validate` words it for
        the whole Dataset. ``mas-eval score`` validates unless given ``--skip-validation``.
    engine, client, scheduler
        With ``out``: ``engine="dask"`` maps the shards over a Dask distributed cluster, the
        ``client`` given, or one of ``scheduler`` (an address), or a ``LocalCluster`` of
        ``workers`` processes on loopback (:func:`~mas_eval.scoring.shards.score_shards`).
    overwrite : bool, default False
        With ``out``: replace an existing folder (never the Dataset's own).
    compression : str, optional
        With ``out``: the Parquet compression of the files, one of ``uncompressed, lz4,
        snappy, zstd, gzip, brotli``. By default ``zstd`` for one file per table, and none for
        a sharded folder (:data:`~mas_eval.storage.scores_folder.COMPRESSION`: written shard by shard,
        the scores barely compress and writing them is a third of the work).
    **overrides
        Any family's parameter, e.g. ``gt_boost=None`` or ``pairwise=True``
        (:class:`~mas_eval.metrics.decision.params.DecisionParams`).

    Returns
    -------
    Scores
        The named tables (``runs``, and per family ``agents``, ``alternatives``, ...), each row
        led by ``run_id, system, case_id, task, variant`` and sorted by its key; the parameters;
        the families that ran and those skipped, with the reason. With ``out``: the folder's path.

    Raises
    ------
    InvalidParameterError
        An unknown preset or parameter, or a parameter value out of its range; ``ds`` not a
        Dataset (a path is opened with :meth:`Dataset.open` first).
    DataError
        Data that break a rule the formulas rely on, found from sums the scoring passes
        compute anyway (so it costs little): a null or repeated ``run_id``; an agent whose
        masses are negative, NaN, sum to more than 1 or are all zero; a confidence outside
        [0, 1], a negative or non-finite usage value or agent or criterion weight; a NaN score
        or a satisfaction-scale score outside [0, 1]. With ``validate``, every rule of
        :meth:`Dataset.validate` (types, duplicate keys in every table, dangling references,
        unknown kinds too); the CLI validates by default.
    UnreadableFileError
        A file of the Dataset is truncated or corrupt (the message names it).

    Notes
    -----
    Every output is bit-for-bit reproducible: two calls on the same data give identical
    tables, whatever ``POLARS_MAX_THREADS``, and scoring a sharded Dataset shard by shard
    gives the tables of scoring it whole. Each group's sum adds its own rows, one by one, in
    key order (:mod:`mas_eval.metrics.segments`, :mod:`mas_eval.metrics.ordered`), where a
    hash aggregation would merge partial sums across threads in no fixed order. Ranks still
    treat values within ``1e-12 * max(1, |value|)`` as ties: two alternatives that the formula
    ranks equal may be computed by different sums.
    """
    chosen_workers = None if workers is None else check_workers(workers)
    if out is not None:
        workers = 1 if chosen_workers is None else chosen_workers
        if ds.shards > 1 or workers != 1 or engine != "processes":
            if progress is not None:
                progress(ShardsScored(0, ds.shards))
            return score_shards(
                ds,
                out,
                preset,
                workers=workers,
                engine=engine,  # type: ignore[arg-type]
                client=client,
                scheduler=scheduler,
                overwrite=overwrite,
                progress=None if progress is None else _counting(progress),
                compression=COMPRESSION if compression is None else compression,
                validate=validate,
                **overrides,
            )
        chosen = check_compression("zstd" if compression is None else compression)
        inputs = [ds.source] if ds.source is not None else []
        check_target(out, overwrite=overwrite, inputs=inputs)  # before the work, not after it
        scores = score(ds, preset, progress=progress, validate=validate, **overrides)
        if progress is not None:
            progress("write")
        return scores.write(out, overwrite=overwrite, compression=chosen)
    if engine != "processes" or client is not None or scheduler is not None or compression is not None:
        msg = (
            "score: engine, client, scheduler and compression need out=PATH: shards' tables are written as they finish"
        )
        raise InvalidParameterError(msg)
    if ds.shards > 1:
        workers = default_workers(ds.shards) if chosen_workers is None else chosen_workers
        return score_shards_in_memory(ds, preset, progress, overrides, workers=workers, validate=validate)
    if validate:
        if progress is not None:
            progress("validate")
        ds.validate()
    return score_in_memory(ds, preset, progress, overrides)


def _counting(progress: Callable[[str], object]) -> Callable[[int, int], None]:
    """``score_shards``' ``progress(done, total)`` as a step of ``score``'s ``progress``."""

    def counted(done: int, total: int) -> None:
        progress(ShardsScored(done, total))

    return counted
