"""Scoring a sharded Dataset shard by shard, so that memory is set by a shard and not by the Dataset.

:func:`score_shards` scores each shard of a Dataset written with ``shards=N``
(:mod:`mas_eval.storage.sharding`) on its own and writes its output tables at once, one Parquet file
per table and shard, into a sharded Scores folder (:mod:`mas_eval.storage.scores_folder`).

A run's rows never span two shards and no metric reads another run's rows, so the rows are those
that scoring the whole Dataset gives; :meth:`mas_eval.Scores.open` reads the folder back with
every table sorted by its key, as :func:`mas_eval.score` returns it. The run's identifying
columns (``system, case_id, task, variant``) are written once, in ``runs``: the files of the
other tables lead with ``run_id`` alone (and any identifying column the table carries itself,
such as an item's ``task``), and :meth:`~mas_eval.Scores.open` and :meth:`~mas_eval.Scores.scan`
put the others back. Repeated on every agent and alternative row, they had been a third of the
time of writing a shard's tables. With ``workers=K`` the shards
are scored in ``K`` processes, each with ``POLARS_MAX_THREADS`` set to its share of the cores.

:func:`score_shards_in_memory` scores the shards in worker processes as well, for
:func:`mas_eval.score` without ``out``, and gathers their tables here. With ``validate``, each
shard is validated in the process that scores it (:meth:`Dataset.validate_shard`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args

import polars as pl

from mas_eval.constraints import Interval, Options, check_parameter
from mas_eval.errors import InvalidParameterError, option
from mas_eval.metrics.family import as_imported, resolve_params
from mas_eval.presets import as_shipped
from mas_eval.scoring.run import (
    joined_shards,
    named_union,
    score_by_shard,
    score_in_memory,
    whole_dataset_errors,
    with_named_columns,
)
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.inputs import read_ipc, read_parquet
from mas_eval.storage.manifests import write_manifest
from mas_eval.storage.outputs import atomic_directory, check_compression
from mas_eval.storage.scores_folder import (
    COMPRESSION,
    MANIFEST,
    missing_run_columns,
    shard_file,
    with_run_columns,
)

__all__ = [
    "ENGINES",
    "MAX_WORKERS",
    "MEMORY_WORKERS",
    "Engine",
    "ShardsScored",
    "check_workers",
    "default_workers",
    "score_shards",
    "score_shards_in_memory",
]

#: The most worker processes: each holds a shard and a Polars thread pool.
MAX_WORKERS = 256
#: The most worker processes :func:`score_shards_in_memory` starts by default: each holds a
#: shard's inputs and tables besides the tables the caller gathers.
MEMORY_WORKERS = 8
#: Where shards are scored: here or in local processes, or on a Dask distributed cluster.
Engine = Literal["processes", "dask"]
ENGINES: tuple[str, ...] = get_args(Engine)


class ShardsScored(str):
    """The step :func:`mas_eval.score` reports while it scores shards: a step name, ``"scored 3 of
    10 shards"``, that carries its counts for a progress bar (``done``, ``total``).

    >>> step = ShardsScored(3, 10)
    >>> step, step.done, step.total
    ('scored 3 of 10 shards', 3, 10)
    """

    __slots__ = ("done", "total")
    done: int
    total: int

    def __new__(cls, done: int, total: int) -> ShardsScored:
        step = super().__new__(cls, f"scored {done:,} of {total:,} shards")
        step.done, step.total = done, total
        return step


def _score_one(
    source: Path | None,
    ds: Dataset | None,
    index: int,
    staging: Path,
    preset: str,
    overrides: dict[str, Any],
    compression: str = COMPRESSION,
    validate: bool = False,
) -> dict[str, Any]:
    """Score shard ``index`` (of ``ds``, or of the Dataset at ``source`` in a worker) and write its
    tables; with ``validate``, check the shard's rules first (:meth:`Dataset.validate_shard`)."""
    dataset = (ds if ds is not None else Dataset.open(source)).shard(index)  # type: ignore[arg-type]
    facts = dataset.validate_shard() if validate else None
    # Tables but runs hold only run_id of the run's identifying columns (those they carry
    # themselves aside): Scores.open and Scores.scan join the others from runs.
    scores = score_in_memory(dataset, preset, None, overrides, run_columns=False)
    for name, frame in scores.tables.items():
        file = shard_file(staging, name, index)
        # Never the staging folder itself: a task that runs on after scoring failed (a Dask task
        # cannot be stopped) finds it removed and fails, instead of making it anew.
        file.parent.parent.mkdir(exist_ok=True)
        file.parent.mkdir(exist_ok=True)
        frame.write_parquet(file, compression=compression)  # type: ignore[arg-type]
    return {
        "index": index,
        "tables": scores.names,
        "rows": {name: frame.height for name, frame in scores.tables.items()},
        "schemas": {name: frame.schema for name, frame in scores.tables.items()},
        "ran": scores.ran,
        "skipped": scores.skipped,
        "params": scores.params,
        "named": scores.named,
        "facts": facts,
    }


@functools.cache
def _worker_dataset(source: Path) -> Dataset:
    """The Dataset a pool worker scores, opened once per worker: the pool lives for one
    :func:`score_shards` call. (Opening lists and checks every table's files: 15-40 ms a shard.)"""
    return Dataset.open(source)


def _score_in_worker(
    source: Path, index: int, staging: Path, preset: str, overrides: dict[str, Any], compression: str, validate: bool
) -> dict[str, Any]:
    """:func:`_score_one` in a process of :func:`score_shards`' pool."""
    return _score_one(None, _worker_dataset(source), index, staging, preset, overrides, compression, validate)


def _tables_in_worker(
    source: Path, index: int, folder: Path, preset: str, overrides: dict[str, Any], validate: bool
) -> dict[str, Any]:
    """Shard ``index`` scored in a process of :func:`score_shards_in_memory`'s pool, its tables
    written to ``folder`` as Arrow IPC files for the caller to map (:func:`_gathered`)."""
    dataset = _worker_dataset(source).shard(index)
    facts = dataset.validate_shard() if validate else None
    # As in a sharded Scores folder, tables but runs carry only run_id of the run's identifying
    # columns: fewer bytes to write, map, order and remove; the parent puts them back once ordered.
    scores = score_in_memory(dataset, preset, None, overrides, run_columns=False)
    for name, frame in scores.tables.items():
        frame.write_ipc(_ipc_file(folder, index, name), compression="uncompressed")
    return {
        "index": index,
        "tables": scores.names,
        "preset": scores.preset,
        "params": scores.params,
        "ran": scores.ran,
        "skipped": scores.skipped,
        "named": scores.named,
        "facts": facts,
    }


def _ipc_file(folder: Path, index: int, name: str) -> Path:
    """The file in which :func:`_tables_in_worker` hands back table ``name`` of shard ``index``."""
    return folder / f"{index}-{name}.arrow"


def _removed(files: list[Path]) -> None:
    """``files`` removed, as far as they can be (one still mapped on Windows stays for the folder's cleanup)."""
    for file in files:
        with contextlib.suppress(OSError):
            file.unlink()


def _gathered(folder: Path, result: dict[str, Any]) -> Scores:
    """A shard's :class:`Scores` from the files :func:`_tables_in_worker` wrote: memory-mapped, not copied."""
    index = result["index"]
    tables = {name: read_ipc(_ipc_file(folder, index, name)) for name in result["tables"]}
    return Scores(
        tables=tables,
        preset=result["preset"],
        params=result["params"],
        ran=result["ran"],
        skipped=result["skipped"],
        named=result["named"],
    )


def _with_run_columns_back(scores: Scores) -> Scores:
    """``scores`` (tables but ``runs`` led by ``run_id`` alone, as :func:`_tables_in_worker` writes
    them) with every table led by the run's identifying columns again, taken from ``runs``."""
    runs = scores.tables["runs"]
    for name, table in scores.tables.items():
        missing = missing_run_columns(table.columns)
        if name == "runs" or not missing:
            continue
        restored = with_run_columns(table, runs, missing)
        if restored is None:  # a worker scored rows of a run that its runs table lacks
            msg = f"table {name!r} holds runs that 'runs' does not: a bug in scoring, please report it"
            raise RuntimeError(msg)
        scores.tables[name] = restored
    return scores


@contextmanager
def _thread_share(workers: int) -> Iterator[None]:
    """``POLARS_MAX_THREADS`` set, while the workers start, to each one's share of the cores (at least 1).

    A spawned worker imports Polars afresh and sizes its thread pool from the variable then, so K
    workers do not each start one thread per core and oversubscribe the machine.
    """
    cores = os.cpu_count() or 1
    before = os.environ.get("POLARS_MAX_THREADS")
    os.environ["POLARS_MAX_THREADS"] = str(max(1, cores // workers))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("POLARS_MAX_THREADS", None)
        else:
            os.environ["POLARS_MAX_THREADS"] = before


#: glibc ``mallopt`` parameters and the values a worker sets (:func:`_keep_freed_memory`).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 512 * 2**20


def _keep_freed_memory() -> None:
    """Have glibc's allocator keep freed memory in the process instead of returning it to the system.

    A shard allocates and frees hundreds of megabytes of numpy arrays. By default glibc serves
    the larger ones with fresh ``mmap`` pages and gives freed memory back at once, so the next
    shard takes a page fault for every 4 KiB it touches. Scoring 8 shards of 62,500 runs in one
    process: 350,000 minor page faults and 1.3-1.6 s of system time by default, 140,000 and
    0.6-0.7 s with these settings, and 5.4-5.6 s of wall time against 6.3-6.4 s. Set only in
    the worker processes :func:`score_shards` starts (their peak memory is a shard's), never in
    the caller's. Without glibc (macOS, musl) it does nothing.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """Have this worker killed (SIGKILL) when ``parent``, the process that started it, ends.

    Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG)``): a worker of a parent that was
    killed (SIGKILL, the out-of-memory killer) would otherwise live on, holding its shard's
    memory, blocked forever on a queue no one reads. If the parent died before this ran, the
    worker has been handed to another process already: it exits at once. Elsewhere it does
    nothing (the parent's pipe closing still ends an idle worker).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


def _start_worker(parent: int) -> None:
    """The initializer of :func:`score_shards`' pool processes."""
    _die_with(parent)
    _keep_freed_memory()


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked while the pool's workers start: they keep it blocked (a signal mask outlives
    ``exec``), so Ctrl-C, which the terminal sends to every process of the command, reaches this
    process alone, which stops them (:func:`_stop`), and not each worker, which printed its own
    KeyboardInterrupt traceback. One that comes meanwhile is delivered here when the block ends.
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: its workers are terminated, not waited for (their shards' files are discarded).

    Without it an error or a signal (Ctrl-C, SIGTERM) waits for every running shard to finish.
    """
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
    else:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(OSError, ValueError):
                process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def check_workers(workers: object) -> int:
    check_parameter("workers", workers, [Interval(int, 1, MAX_WORKERS)], where="score")
    return int(workers)  # type: ignore[call-overload]


def default_workers(shards: int) -> int:
    """The processes :func:`score_shards_in_memory` starts by default: one per core this process may
    run on, at most :data:`MEMORY_WORKERS` and one per shard."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        cores = count() or 1
    elif hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(cores, MEMORY_WORKERS, shards))


def workers_score_alike() -> bool:
    """Whether a worker process scores as this one: the metric families and presets are those that
    importing ``mas_eval`` gives (a spawned worker has no others; scored there, the results would
    silently differ)."""
    return as_imported() and as_shipped()


@contextmanager
def _main_hidden() -> Iterator[None]:
    """``__main__`` replaced by an empty module while the pool's workers start.

    A spawned worker runs the parent's main script (or module) again, as ``__mp_main__``, before
    it takes a task (``multiprocessing.spawn.get_preparation_data`` records its path, which
    ``_fixup_main_from_path`` runs): a script that scores at its top level, without
    ``if __name__ == "__main__":``, would score again in each worker, whose own pool then fails.
    The workers run functions of ``mas_eval`` alone, on arguments of plain types, so they need
    nothing of ``__main__``: with an empty one there, nothing is recorded and they import only
    ``mas_eval``. Workers start in this thread, as the tasks are submitted.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = main


def _in_pool(
    task: Callable[..., dict[str, Any]],
    arguments: list[tuple[Any, ...]],
    workers: int,
    progress: Callable[[int, int], object] | None,
) -> list[dict[str, Any]]:
    """``task(*args)`` for each of ``arguments`` in ``workers`` spawned processes; the results, as
    they finish (each followed by ``progress(done, total)``).

    Polars is not safe to fork (its thread pools would be copied mid-use), so the workers are
    spawned, with ``__main__`` hidden (:func:`_main_hidden`) and SIGINT blocked
    (:func:`_sigint_blocked`); each dies with this process (:func:`_die_with`). An error in a
    task, a worker that died, or a signal here stops every worker at once (:func:`_stop`).
    """
    total = len(arguments)
    spawn = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        min(workers, total), mp_context=spawn, initializer=_start_worker, initargs=(os.getpid(),)
    )
    results: list[dict[str, Any]] = []
    with _thread_share(workers):
        with _sigint_blocked(), _main_hidden():  # the workers start as the tasks are submitted
            pending: set[Future[dict]] = {pool.submit(task, *args) for args in arguments}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    results.append(future.result())  # a task's error is raised here, as it was raised
                    if progress is not None:
                        progress(len(results), total)
        except BaseException:
            _stop(pool)  # no shard starts, nor runs on, after one failed or a signal came
            raise
    # Every task is done: the workers are told to end and left to do so (0.27 s at 1M runs, their
    # memory given back) while the caller goes on; the pool's own thread reaps them.
    pool.shutdown(wait=False)
    return results


def _dask_client_class() -> Any:
    """``dask.distributed.Client``, or an :class:`InvalidParameterError` saying how to install it."""
    try:
        from dask.distributed import Client
    except ImportError:
        msg = "score: engine='dask' needs Dask distributed; install it with: pip install 'mas_eval[distributed]'"
        raise InvalidParameterError(msg) from None
    return Client


#: Seconds to reach a Dask scheduler given by its address before giving up (Dask's own default
#: is 30 s): a wrong address or a scheduler that is down is said at once.
DASK_CONNECT_TIMEOUT = 5


def _dask_client(stack: contextlib.ExitStack, scheduler: str | None, workers: int) -> Any:
    """A Dask client of ``scheduler``, or of a new ``LocalCluster`` of ``workers`` processes, closed with ``stack``.

    Raises
    ------
    InvalidParameterError
        ``scheduler`` is not an address, or no scheduler answers there within
        :data:`DASK_CONNECT_TIMEOUT` seconds.
    """
    client_class = _dask_client_class()
    if scheduler is not None:
        try:
            return stack.enter_context(client_class(scheduler, timeout=DASK_CONNECT_TIMEOUT))
        except (OSError, ValueError, TypeError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            msg = (
                f"score: no Dask scheduler answers at {scheduler!r} ({reason}); pass "
                f"{option('scheduler', 'tcp://HOST:PORT')} of a running scheduler (`dask scheduler` prints "
                "its address), or leave it out to score on a local cluster"
            )
            raise InvalidParameterError(msg) from None
    from dask.distributed import LocalCluster

    stack.enter_context(_thread_share(workers))
    with _signals_held():
        cluster = stack.enter_context(
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                # A shard's error reaches the user once, as the one line of the error raised here: the
                # workers' own logs (the failed task's traceback, the tasks cancelled after it) stay quiet.
                silence_logs=logging.CRITICAL,
            )
        )
    return stack.enter_context(client_class(cluster))


@contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM held back while the block runs, and delivered after it.

    A ``LocalCluster`` interrupted while it starts cannot be closed (Dask's exit hook then fails
    on its half-started workers, with a traceback); once started, it is closed with its worker
    processes by the ``with`` that holds it. Only the main thread can set signal handlers:
    elsewhere the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in _HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        for sig in dict.fromkeys(held):
            signal.raise_signal(sig)


_HELD = (signal.SIGINT, signal.SIGTERM)


def _on_dask(
    client: Any,
    source: Path | None,
    total: int,
    staging: Path,
    preset: str,
    overrides: dict[str, Any],
    progress: Callable[[int, int], object] | None,
    compression: str,
    validate: bool,
) -> list[dict[str, Any]]:
    """Every shard scored as one task of a Dask cluster (module docstring); their results, as they finish."""
    from dask.distributed import as_completed

    futures = client.map(
        _score_one,
        [source] * total,
        [None] * total,
        range(total),
        [staging] * total,
        [preset] * total,
        [overrides] * total,
        [compression] * total,
        [validate] * total,
        pure=False,
    )
    results = []
    try:
        for future in as_completed(futures):
            results.append(future.result())  # a shard's error is raised here, as it was raised
            if progress is not None:
                progress(len(results), total)
    except BaseException:
        client.cancel(futures)
        raise
    return results


def _fill_empty(staging: Path, results: list[dict]) -> list[str]:
    """Every table in every shard: a shard without a table another shard has gets an empty file of its schema."""
    names = list(dict.fromkeys(name for r in sorted(results, key=lambda r: r["index"]) for name in r["tables"]))
    schemas: dict[str, Any] = {}
    for r in results:
        for name, schema in r["schemas"].items():
            schemas.setdefault(name, schema)
    for r in results:
        for name in names:
            if name not in r["tables"]:
                file = shard_file(staging, name, r["index"])
                file.parent.mkdir(parents=True, exist_ok=True)
                pl.DataFrame(schema=schemas[name]).write_parquet(file)
    return ["runs", *(n for n in names if n != "runs")]


def _same_named_columns(staging: Path, results: list[dict], compression: str) -> dict[str, list[str]]:
    """Every shard's ``runs`` file with every run column named by the data (:func:`named_union`): a shard
    whose runs lack a name some other shard found is written again with it, null. Returns the names."""
    ordered = sorted(results, key=lambda r: r["index"])
    named = named_union([r["named"] for r in ordered])
    columns = [c for family_columns in named.values() for c in family_columns]
    dtypes = {c: t for r in reversed(ordered) for c, t in r["schemas"]["runs"].items() if c in columns}
    for r in ordered:
        if r["named"] != named:
            file = shard_file(staging, "runs", r["index"])
            runs = with_named_columns(read_parquet(file), columns, dtypes)
            runs.write_parquet(file, compression=compression)  # type: ignore[arg-type]
    return named


def score_shards(
    ds: Dataset,
    out: str | Path,
    preset: str = "spec",
    *,
    workers: int = 1,
    engine: Engine = "processes",
    client: Any = None,
    scheduler: str | None = None,
    overwrite: bool = False,
    progress: Callable[[int, int], object] | None = None,
    compression: str = COMPRESSION,
    validate: bool = False,
    **overrides: Any,
) -> Path:
    """Score a sharded Dataset shard by shard into the Scores folder ``out``; return its path.

    Parameters
    ----------
    ds
        A Dataset opened from a folder written with ``shards=N`` (an unsharded one is one shard).
    out
        The Scores folder to write: one file per table and shard (module docstring), written
        atomically (nothing is left behind if a shard fails). :meth:`mas_eval.Scores.open` reads it.
    preset, **overrides
        As for :func:`mas_eval.score`; checked before any shard is scored.
    workers
        Processes scoring shards side by side (1: in this process). Each worker opens the
        Dataset's folder itself and runs with ``POLARS_MAX_THREADS`` = cores // workers. The
        workers are spawned (Polars is not safe to fork) without running the caller's main
        script again, so a script needs no ``if __name__ == "__main__":`` around the call. With
        a metric family or preset added or changed at run time (which a worker would not have),
        the shards are scored in this process.
    engine
        ``"processes"`` (default: this process, or ``workers`` local processes) or ``"dask"``:
        the shards are mapped over a Dask distributed cluster (``client.map``), each task
        opening the Dataset's folder and writing its shard's files, then the small results are
        gathered. Needs the ``mas_eval[distributed]`` extra.
    client
        With ``engine="dask"``: a ``dask.distributed.Client`` to use. Without one, a client of
        ``scheduler`` if given, else of a ``LocalCluster`` of ``workers`` processes on loopback
        (``127.0.0.1``, no dashboard), closed afterwards. The Dataset and ``out`` must be on a
        file system every worker sees.
    scheduler
        With ``engine="dask"`` and no ``client``: the address of a running scheduler
        (``tcp://host:8786``).
    overwrite
        Replace ``out`` if it exists (never the Dataset's own folder).
    progress
        Called as ``progress(done, total)`` after each shard; meant for a progress bar.
    compression
        The Parquet compression of the files, one of :data:`~mas_eval.storage.outputs.COMPRESSIONS`; by default none
        (:data:`COMPRESSION`: the scores barely compress, and writing them is a third of the work).
    validate
        Check every rule of :meth:`Dataset.validate` as well, each shard's where it is scored
        (:meth:`Dataset.validate_shard`, in the worker that reads it), then the few that compare
        runs across shards and ``ground_truth``'s own here (:meth:`Dataset.validate_across`).
        A broken rule is raised as :meth:`Dataset.validate` words it for the whole Dataset (its
        counts and keys): on that error path only, the Dataset is validated whole here.

    Returns
    -------
    Path
        ``out``.

    Notes
    -----
    Peak memory is about that of scoring the largest shard (times ``workers``), whatever the
    number of shards. Families and parameters are the same for every shard: a family runs when
    the Dataset has its tables, and a shard's tables are the Dataset's, perhaps empty.

    Examples
    --------
    >>> import tempfile, mas_eval
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = mas_eval.simulate(200, seed=1).write(Path(tmp) / "ds", shards=3)
    ...     out = score_shards(Dataset.open(folder), Path(tmp) / "scores")
    ...     mas_eval.Scores.open(out).runs.height
    200
    """
    workers = check_workers(workers)
    check_parameter("engine", engine, [Options.of(Engine)], where="score")
    if engine != "dask" and (client is not None or scheduler is not None):
        msg = "score: client and scheduler are options of engine='dask'; pass engine='dask' or drop them"
        raise InvalidParameterError(msg)
    resolve_params(preset, overrides)  # a bad preset or value fails before any work
    compression = check_compression(compression)
    if (workers > 1 or engine == "dask") and ds.source is None:
        msg = (
            "score: workers > 1 and engine='dask' need a Dataset opened from a folder (Dataset.open), "
            "which each worker re-opens"
        )
        raise InvalidParameterError(msg)
    if engine == "dask":
        _dask_client_class()  # a missing extra fails before any work
    if not workers_score_alike():
        if engine == "dask":
            msg = (
                "score: engine='dask' scores in processes that know only the metric families and presets "
                "mas_eval defines, and some were added or changed here; score with engine='processes'"
            )
            raise InvalidParameterError(msg)
        workers = 1  # a worker would score without them: here, the results are the same as ever
    inputs = [ds.source] if ds.source is not None else []
    with contextlib.ExitStack() as dask, whole_dataset_errors(ds, validate=validate):
        # The cluster is reached (or started) before anything is written, and closed (its worker
        # processes with it) however scoring ends, by an error or a signal.
        if engine == "dask" and client is None:
            client = _dask_client(dask, scheduler, workers)
        return _score_into(
            ds,
            Path(out),
            inputs,
            preset,
            overrides,
            workers,
            engine,
            client,
            dask.close,
            overwrite,
            progress,
            compression,
            validate,
        )


def _score_into(
    ds: Dataset,
    out: Path,
    inputs: list[Path],
    preset: str,
    overrides: dict[str, Any],
    workers: int,
    engine: Engine,
    client: Any,
    close_cluster: Callable[[], object],
    overwrite: bool,
    progress: Callable[[int, int], object] | None,
    compression: str,
    validate: bool,
) -> Path:
    """:func:`score_shards` once its arguments are checked (and its Dask client is there)."""
    total = ds.shards
    with atomic_directory(out, overwrite=overwrite, inputs=inputs) as staging:
        results: list[dict] = []
        if engine == "dask":
            try:
                results = _on_dask(
                    client, ds.source, total, staging, preset, overrides, progress, compression, validate
                )
            except BaseException:
                # A cancelled task runs on to its end: the cluster we started stops first (its workers
                # with it), then the staging is removed.
                close_cluster()
                raise
        elif workers == 1 or total == 1:
            for index in range(total):
                results.append(_score_one(None, ds, index, staging, preset, overrides, compression, validate))
                if progress is not None:
                    progress(len(results), total)
        else:
            arguments = [
                (ds.source, index, staging, preset, overrides, compression, validate) for index in range(total)
            ]
            results = _in_pool(_score_in_worker, arguments, workers, progress)
        if validate:
            ds.validate_across([r["facts"] for r in results])
        names = _fill_empty(staging, results)
        named = _same_named_columns(staging, results, compression)
        first = min(results, key=lambda r: r["index"])
        manifest = {
            "preset": preset,
            "params": first["params"],
            "families": {"ran": first["ran"], "skipped": first["skipped"]},
            "tables": names,
            "shards": total,
            "rows": {name: sum(r["rows"].get(name, 0) for r in results) for name in names},
            **({"named": named} if named else {}),
        }
        write_manifest(staging, MANIFEST, manifest)
    return out


def score_shards_in_memory(
    ds: Dataset,
    preset: str,
    progress: Callable[[str], object] | None,
    overrides: dict[str, Any],
    *,
    workers: int,
    validate: bool = False,
) -> Scores:
    """A sharded Dataset scored in memory, its shards in ``workers`` processes; the tables of
    :func:`~mas_eval.scoring.run.score_by_shard`, bit for bit.

    Each worker scores a shard as :func:`~mas_eval.scoring.run.score_by_shard` does and writes
    its tables as uncompressed Arrow IPC files in a temporary folder, which this process maps
    into memory and joins (:func:`~mas_eval.scoring.run.joined_shards`). Handing them back
    pickled instead copies every table twice more, through a pipe that this process reads one
    result at a time. As in a sharded Scores folder, tables but ``runs`` come back led by
    ``run_id`` alone, and the run's other identifying columns are put back once they are in run
    order. The files are removed on a thread that this call does not wait for.

    The shards are scored in this process, one after another, when ``workers`` is 1, when the
    Dataset was not opened from a folder (a worker opens it itself) and when a metric family or
    preset was added or changed at run time (:func:`workers_score_alike`). ``progress`` gets a
    :class:`ShardsScored` step before the first shard and after each (in this process: each
    shard's steps, as :func:`mas_eval.score` reports them). With ``validate``, each shard is
    validated where it is scored, as by :func:`score_shards`.
    """
    total = ds.shards
    if workers == 1 or total == 1 or ds.source is None or not workers_score_alike():
        with whole_dataset_errors(ds, validate=validate):
            return score_by_shard(ds, preset, progress, overrides, validate=validate)
    resolve_params(preset, overrides)  # a bad preset or value fails before any worker starts
    if progress is not None:
        progress(ShardsScored(0, total))
    counted = None if progress is None else (lambda done, total: progress(ShardsScored(done, total)))
    folder = Path(tempfile.mkdtemp(prefix="mas_eval_shards_"))
    # Removes the workers' files, each table's once it is joined and let go, then the folder;
    # never waited for. A removed file's pages are freed, and its writeback waited for, by whoever
    # removes it: 1.3 s for the 1.3 GB of 1M runs, here in this thread while the next table is joined.
    removing = ThreadPoolExecutor(1, thread_name_prefix="mas_eval_remove")
    try:
        with whole_dataset_errors(ds, validate=validate):
            arguments = [(ds.source, index, folder, preset, overrides, validate) for index in range(total)]
            results = sorted(_in_pool(_tables_in_worker, arguments, workers, counted), key=lambda r: r["index"])
            if validate:
                ds.validate_across([r["facts"] for r in results])
            joined = joined_shards(
                [_gathered(folder, result) for result in results],
                lambda name: removing.submit(_removed, [_ipc_file(folder, r["index"], name) for r in results]),
            )
    finally:
        removing.submit(shutil.rmtree, folder, ignore_errors=True)
        removing.shutdown(wait=False)  # the interpreter waits for it before it exits
    return _with_run_columns_back(joined)
