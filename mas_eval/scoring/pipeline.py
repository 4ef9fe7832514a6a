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

from pathlib import Path
from typing import Any

from mas_eval.constraints import validate_params
from mas_eval.scoring.request import SCORE_PARAMETERS, Engine, Progress, Request, check_request
from mas_eval.scoring.run import score_by_shard, score_in_memory
from mas_eval.scoring.scores import Scores, write_scores
from mas_eval.scoring.shards import score_shards_in_memory, write_shards
from mas_eval.storage.dataset import Dataset

__all__ = ["Scores", "score"]


@validate_params(SCORE_PARAMETERS)
def score(
    ds: Dataset,
    preset: str = "spec",
    *,
    progress: Progress | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    validate: bool = False,
    engine: Engine = "processes",
    client: Any = None,
    scheduler: str | None = None,
    overwrite: bool = False,
    compression: str | None = None,
    **overrides: Any,
) -> Scores:
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
    progress : Progress, optional
        Called with each :class:`~mas_eval.scoring.request.Step` as it starts (the type is
        :class:`~mas_eval.scoring.request.Progress`). A step is a ``str``, its name:
        ``"validate"`` (with ``validate``), ``"encoding keys"``, then ``"family <name>"`` for
        each family that runs, then ``"assembling tables"`` (and ``"write"`` with ``out``); so
        ``print`` or ``list.append`` will do. A sharded Dataset scored with ``out`` or in worker
        processes reports instead, before the first shard and after each, the step
        ``"scored 3 of 10 shards"``, whose ``done`` and ``total`` (``None`` in other steps)
        feed a progress bar; the CLI shows each step with its elapsed time.
    out : str or Path, optional
        Write the Scores folder here too, and return it as :meth:`Scores.open` reads it back
        (its ``source`` is the folder). A sharded Dataset (``write(shards=N)``) is then scored
        shard by shard, each shard's tables written as it finishes, so scoring's memory is set
        by a shard, not by the Dataset (:func:`~mas_eval.scoring.shards.score_shards`); the
        folder is then read back whole. To keep memory at a shard's, call
        :func:`~mas_eval.scoring.shards.score_shards`, which returns the folder's path, and
        read the folder with :meth:`Scores.scan`.
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
        the families that ran and those skipped, with the reason. With ``out``: the folder
        written, as :meth:`Scores.open` reads it.

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

    Examples
    --------
    >>> import tempfile, mas_eval
    >>> from pathlib import Path
    >>> ds = mas_eval.simulate(100, seed=1)
    >>> scores = mas_eval.score(ds, gt_boost=None)
    >>> scores.ran, scores.runs.height, scores.params["gt_boost"]
    (['decision'], 100, None)
    >>> steps = []
    >>> _ = mas_eval.score(ds, progress=steps.append)
    >>> steps
    ['encoding keys', 'family decision', 'assembling tables']
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     written = mas_eval.score(ds, out=Path(tmp) / "scores")
    ...     written.source.name, written.runs.equals(mas_eval.score(ds).runs)
    ('scores', True)
    """
    request = check_request(
        ds,
        preset,
        overrides,
        progress=progress,
        out=out,
        workers=workers,
        validate=validate,
        engine=engine,
        client=client,
        scheduler=scheduler,
        overwrite=overwrite,
        compression=compression,
    )
    with ds.worded_whole(validate=validate):
        if request.out is None:
            return _scored(ds, request)
        if request.by_shard:
            write_shards(ds, request, request.out)
        else:
            scores = _scored(ds, request)
            request.step("write")
            write_scores(scores, request.out, overwrite=overwrite, compression=request.compression)
    return Scores.open(out)  # type: ignore[arg-type]  # out is not None: request.out is its checked Path


def _scored(ds: Dataset, request: Request) -> Scores:
    """Return the Scores of ``ds`` in memory: its shards in worker processes, or the Dataset here."""
    if request.by_shard:
        return score_shards_in_memory(ds, request) if request.workers > 1 else score_by_shard(ds, request)
    if request.validate:
        request.step("validate")
        ds.validate()
    return score_in_memory(ds, request.preset, request.params, request.progress)
