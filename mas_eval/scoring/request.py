"""What one call of :func:`mas_eval.score` asks for, checked once: :class:`Request`, and the :class:`Step` it reports.

:func:`check_request` is the one place where ``score``'s arguments are checked against each other
and against the Dataset (its single arguments are checked by :data:`SCORE_PARAMETERS`, through
:func:`~mas_eval.constraints.validate_params`), where the preset and overrides are resolved into
each family's parameters, and where the way of scoring is chosen: in this process, shard by
shard in worker processes, or on a Dask cluster. What runs afterwards (:mod:`mas_eval.scoring.run`,
:mod:`mas_eval.scoring.shards`) takes the :class:`Request` as it is and checks nothing again.

>>> import mas_eval
>>> request = check_request(mas_eval.simulate(20, seed=1), "spec", {"gt_boost": None})
>>> request.preset, request.params["decision"].gt_boost, request.by_shard, request.workers
('spec', None, False, 1)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from mas_eval.constraints import CALLABLE, NONE, PATH, TEXT, Boolean, Constraint, Interval, Options, Predicate
from mas_eval.errors import InvalidParameterError, option
from mas_eval.metrics.family import Params, as_imported, resolve_params
from mas_eval.presets import as_shipped
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import COMPRESSIONS, check_target
from mas_eval.storage.scores_folder import COMPRESSION

__all__ = [
    "ENGINES",
    "MAX_WORKERS",
    "MEMORY_WORKERS",
    "SCORE_PARAMETERS",
    "Engine",
    "Progress",
    "Request",
    "Step",
    "check_request",
    "dask_client_class",
    "default_workers",
    "workers_score_alike",
]

#: The most worker processes: each holds a shard and a Polars thread pool.
MAX_WORKERS = 256
#: The most worker processes :func:`mas_eval.score` starts by default without ``out``: each holds a
#: shard's inputs and tables besides the tables the caller gathers.
MEMORY_WORKERS = 8
#: Where shards are scored: here or in local processes, or on a Dask distributed cluster.
Engine = Literal["processes", "dask"]
ENGINES: tuple[str, ...] = get_args(Engine)

#: What ``score`` scores: a path is opened first, so that the folder's problems are named as such.
_DATASET = Predicate(lambda value: isinstance(value, Dataset), "a Dataset (Dataset.open(path) opens a folder)")
#: A Dask client (``dask.distributed.Client``), told by what it does: Dask loads only when it is used.
_CLIENT = Predicate(
    lambda value: callable(getattr(value, "map", None)) and callable(getattr(value, "gather", None)),
    "a dask.distributed Client",
)

#: The constraints on each of ``score``'s arguments alone (:func:`~mas_eval.constraints.validate_params`);
#: :func:`check_request` checks them against each other.
SCORE_PARAMETERS: dict[str, list[Constraint]] = {
    "ds": [_DATASET],
    "preset": [TEXT],
    "progress": [CALLABLE, NONE],
    "out": [PATH, NONE],
    "workers": [Interval(int, 1, MAX_WORKERS), NONE],
    "validate": [Boolean()],
    "engine": [Options.of(Engine)],
    "client": [_CLIENT, NONE],
    "scheduler": [TEXT, NONE],
    "overwrite": [Boolean()],
    "compression": [Options(COMPRESSIONS), NONE],
}


class Step(str):
    """One step of scoring, as ``progress`` is called with it: its name, and the shards it counts, if any.

    Every step is a ``str`` (its name: ``"encoding keys"``, ``"family decision"``, ...), so a
    callback that takes text (``print``, ``list.append``) takes it as it is. A step that counts
    shards is named ``"scored 3 of 10 shards"`` and carries ``done`` and ``total`` for a progress
    bar; the others carry ``None`` in both.

    >>> step = Step.shards(3, 10)
    >>> step, step.done, step.total
    ('scored 3 of 10 shards', 3, 10)
    >>> Step("encoding keys").total is None
    True
    """

    __slots__ = ("done", "total")
    done: int | None
    total: int | None

    def __new__(cls, name: str, done: int | None = None, total: int | None = None) -> Step:
        """Make the step ``name``, which counts ``done`` of ``total`` shards when these are given."""
        step = super().__new__(cls, name)
        step.done, step.total = done, total
        return step

    @classmethod
    def shards(cls, done: int, total: int) -> Step:
        """Return the step that says ``done`` of ``total`` shards are scored.

        >>> Step.shards(0, 1_000)
        'scored 0 of 1,000 shards'
        """
        return cls(f"scored {done:,} of {total:,} shards", done, total)


class Progress(Protocol):
    """The type of ``score``'s ``progress``: a callable taking each :class:`Step` as it starts.

    >>> seen: list[str] = []
    >>> progress: Progress = seen.append
    >>> progress(Step("encoding keys")); seen
    ['encoding keys']
    """

    def __call__(self, step: Step, /) -> object:
        """Report ``step``."""


@dataclass(frozen=True)
class Request:
    """One call of :func:`mas_eval.score`, checked: what to score with, and how (:func:`check_request` makes it).

    Attributes
    ----------
    preset
        The preset the parameters start from.
    params
        Each family's parameters, resolved from ``preset`` and the overrides.
    progress
        The :class:`Progress` callback, or ``None``.
    out
        The Scores folder to write, or ``None`` to score in memory.
    by_shard
        Whether the shards are scored one by one, in this process or in workers: with ``out``,
        a sharded Dataset, more than one worker or the Dask engine; without it, a sharded Dataset.
    workers
        The processes that score shards side by side (1: this process alone).
    validate, engine, client, scheduler, overwrite
        As ``score`` was given them.
    compression
        With ``out``: the Parquet compression of the files, the default chosen for the layout.
    """

    preset: str
    params: dict[str, Params]
    progress: Progress | None
    out: Path | None
    by_shard: bool
    workers: int
    validate: bool
    engine: Engine
    client: Any
    scheduler: str | None
    overwrite: bool
    compression: str

    def step(self, name: str) -> None:
        """Report the step ``name`` to :attr:`progress`, if there is one."""
        if self.progress is not None:
            self.progress(Step(name))

    def counted(self) -> Callable[[int, int], None] | None:
        """Return ``progress(done, total)`` for the shard loops: each count reported as :meth:`Step.shards`."""
        progress = self.progress
        if progress is None:
            return None
        return lambda done, total: progress(Step.shards(done, total))


def default_workers(shards: int) -> int:
    """Return the processes scoring a sharded Dataset in memory by default.

    One per core this process may run on, at most :data:`MEMORY_WORKERS` and one per shard.

    >>> default_workers(1)
    1
    """
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        cores = count() or 1
    elif hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(cores, MEMORY_WORKERS, shards))


def workers_score_alike() -> bool:
    """Return whether a worker process scores as this one does.

    The metric families and presets must be those that importing ``mas_eval`` gives: a spawned
    worker has no others, and its results would silently differ.

    >>> workers_score_alike()
    True
    """
    return as_imported() and as_shipped()


def dask_client_class() -> Any:
    """Return ``dask.distributed.Client``; raise :class:`InvalidParameterError` saying how to install it."""
    try:
        from dask.distributed import Client
    except ImportError:
        msg = "score: engine='dask' needs Dask distributed; install it with: pip install 'mas_eval[distributed]'"
        raise InvalidParameterError(msg) from None
    return Client


def _check_engine(ds: Dataset, engine: str, client: object, scheduler: str | None, workers: int) -> None:
    """Raise :class:`InvalidParameterError` for options of writing by shard that do not go together."""
    if engine != "dask" and (client is not None or scheduler is not None):
        given = option("scheduler", scheduler) if scheduler is not None else "client"
        msg = f"score: {given} is an option of {option('engine', 'dask')}; pass {option('engine', 'dask')} or drop it"
        raise InvalidParameterError(msg)
    if (workers > 1 or engine == "dask") and ds.source is None:
        msg = (
            "score: workers > 1 and engine='dask' need a Dataset opened from a folder (Dataset.open), "
            "which each worker re-opens"
        )
        raise InvalidParameterError(msg)
    if engine == "dask":
        dask_client_class()  # a missing extra fails before any work
        if not workers_score_alike():
            msg = (
                "score: engine='dask' scores in processes that know only the metric families and presets "
                "mas_eval defines, and some were added or changed here; score with engine='processes'"
            )
            raise InvalidParameterError(msg)


def check_request(
    ds: Dataset,
    preset: str,
    overrides: Mapping[str, Any],
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
) -> Request:
    """Check ``score``'s arguments together, before any work, and return the :class:`Request` they make.

    Each argument alone is checked by :data:`SCORE_PARAMETERS`; here: the preset and overrides
    (resolved into each family's parameters), the options of the engine, which need ``out``
    and which a Dataset built in memory cannot have, and the output folder (:func:`check_target`).

    Raises
    ------
    InvalidParameterError
        An unknown preset or parameter, or options that do not go together.
    OutputError
        ``out`` cannot be written, or is (or lies inside) the Dataset's folder.

    Examples
    --------
    >>> import mas_eval
    >>> check_request(mas_eval.simulate(20, seed=1), "spec", {}, compression="lz4")
    Traceback (most recent call last):
    ...
    mas_eval.errors.InvalidParameterError: score: engine, client, scheduler and compression need out=PATH: ...
    """
    params = resolve_params(preset, overrides)  # a bad preset or value fails before any work
    if out is None:
        if engine != "processes" or client is not None or scheduler is not None or compression is not None:
            msg = (
                "score: engine, client, scheduler and compression need out=PATH: "
                "shards' tables are written as they finish"
            )
            raise InvalidParameterError(msg)
        by_shard, target = ds.shards > 1, None
        chosen = default_workers(ds.shards) if workers is None else workers
        if ds.source is None or not workers_score_alike():
            chosen = 1  # a worker opens the Dataset's folder itself, and knows only what mas_eval defines
    else:
        given = 1 if workers is None else workers
        _check_engine(ds, engine, client, scheduler, given)
        by_shard = ds.shards > 1 or given != 1 or engine != "processes"
        # A worker knows only what mas_eval defines: with a family or preset added here, this process scores.
        chosen = given if workers_score_alike() else 1
        target = check_target(out, overwrite=overwrite, inputs=[ds.source] if ds.source is not None else [])
    if compression is None:
        compression = COMPRESSION if by_shard else "zstd"
    return Request(
        preset=preset,
        params=params,
        progress=progress,
        out=target,
        by_shard=by_shard,
        workers=chosen,
        validate=validate,
        engine=engine,
        client=client,
        scheduler=scheduler,
        overwrite=overwrite,
        compression=compression,
    )
