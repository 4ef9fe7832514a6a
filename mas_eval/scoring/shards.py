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
put the others back (repeated on every row, they were much of the writing: docs/performance.md).
With ``workers=K`` the shards
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
from typing import Any

import polars as pl

from mas_eval.constraints import validate_params
from mas_eval.errors import InvalidParameterError, option
from mas_eval.metrics.family import Params
from mas_eval.scoring.request import (
    ENGINES,
    MAX_WORKERS,
    MEMORY_WORKERS,
    SCORE_PARAMETERS,
    Engine,
    Progress,
    Request,
    Step,
    check_request,
    dask_client_class,
    default_workers,
    workers_score_alike,
)
from mas_eval.scoring.run import (
    joined_shards,
    named_union,
    score_in_memory,
    with_named_columns,
)
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.inputs import read_ipc, read_parquet
from mas_eval.storage.manifests import write_manifest
from mas_eval.storage.outputs import atomic_directory
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
    "default_workers",
    "score_shards",
    "score_shards_in_memory",
    "workers_score_alike",
    "write_shards",
]


def __getattr__(name: str) -> Any:
    """Return ``ShardsScored``, the old name of :meth:`~mas_eval.scoring.request.Step.shards`, with a warning."""
    if name == "ShardsScored":
        import warnings

        warnings.warn(
            "mas_eval.scoring.shards.ShardsScored is deprecated: every progress step is a "
            "mas_eval.scoring.request.Step; use Step.shards(done, total), and step.total is not None to tell it",
            DeprecationWarning,
            stacklevel=2,
        )
        return Step.shards
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def _score_one(
    source: Path | None,
    ds: Dataset | None,
    index: int,
    staging: Path,
    preset: str,
    params: dict[str, Params],
    compression: str = COMPRESSION,
    validate: bool = False,
) -> dict[str, Any]:
    """Score shard ``index`` (of ``ds``, or of the Dataset at ``source`` in a worker) and write its tables.

    With ``validate``, check the shard's rules first (:meth:`Dataset.validate_shard`).
    """
    dataset = (ds if ds is not None else Dataset.open(source)).shard(index)  # type: ignore[arg-type]
    facts = dataset.validate_shard() if validate else None
    # Tables but runs hold only run_id of the run's identifying columns (those they carry
    # themselves aside): Scores.open and Scores.scan join the others from runs.
    scores = score_in_memory(dataset, preset, params, None, run_columns=False)
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
    """Return the Dataset a pool worker scores, opened once per worker.

    The pool lives for one :func:`score_shards` call; opening lists and checks every table's files
    (docs/performance.md).
    """
    return Dataset.open(source)


def _score_in_worker(
    source: Path, index: int, staging: Path, preset: str, params: dict[str, Params], compression: str, validate: bool
) -> dict[str, Any]:
    """:func:`_score_one` in a process of :func:`score_shards`' pool."""
    return _score_one(None, _worker_dataset(source), index, staging, preset, params, compression, validate)


def _tables_in_worker(
    source: Path, index: int, folder: Path, preset: str, params: dict[str, Params], validate: bool
) -> dict[str, Any]:
    """Score shard ``index`` in a process of :func:`score_shards_in_memory`'s pool.

    Its tables are written to ``folder`` as Arrow IPC files for the caller to map (:func:`_gathered`).
    """
    dataset = _worker_dataset(source).shard(index)
    facts = dataset.validate_shard() if validate else None
    # As in a sharded Scores folder, tables but runs carry only run_id of the run's identifying
    # columns: fewer bytes to write, map, order and remove; the parent puts them back once ordered.
    scores = score_in_memory(dataset, preset, params, None, run_columns=False)
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
    """Return the file in which :func:`_tables_in_worker` hands back table ``name`` of shard ``index``."""
    return folder / f"{index}-{name}.arrow"


def _removed(files: list[Path]) -> None:
    """``files`` removed, as far as they can be (one still mapped on Windows stays for the folder's cleanup)."""
    for file in files:
        with contextlib.suppress(OSError):
            file.unlink()


def _gathered(folder: Path, result: dict[str, Any]) -> Scores:
    """Return a shard's :class:`Scores` from the files :func:`_tables_in_worker` wrote: memory-mapped, not copied."""
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
    """Return ``scores`` with every table led by the run's identifying columns again, taken from ``runs``.

    Tables but ``runs`` are led by ``run_id`` alone, as :func:`_tables_in_worker` writes them.
    """
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
    shard takes a page fault for every 4 KiB it touches (the counts: docs/performance.md). Set only in
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
    """Start a process of :func:`score_shards`' pool (its initializer)."""
    _die_with(parent)
    _keep_freed_memory()


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Block SIGINT while the pool's workers start.

    They keep it blocked (a signal mask outlives ``exec``), so Ctrl-C, which the terminal sends to every process of
    the command, reaches this process alone, which stops them (:func:`_stop`), and not each worker, which printed
    its own KeyboardInterrupt traceback. One that comes meanwhile is delivered here when the block ends.
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


@contextmanager
def _main_hidden() -> Iterator[None]:
    """Replace ``__main__`` by an empty module while the pool's workers start.

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
    """Run ``task(*args)`` for each of ``arguments`` in ``workers`` spawned processes; return the results.

    They come as they finish, each followed by ``progress(done, total)``.

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
    # Every task is done: the workers are told to end and left to do so (their memory given back)
    # while the caller goes on; the pool's own thread reaps them.
    pool.shutdown(wait=False)
    return results


#: Seconds to reach a Dask scheduler given by its address before giving up (Dask's own default
#: is 30 s): a wrong address or a scheduler that is down is said at once.
DASK_CONNECT_TIMEOUT = 5


def _dask_client(stack: contextlib.ExitStack, scheduler: str | None, workers: int) -> Any:
    """Return a Dask client of ``scheduler``, or of a new ``LocalCluster`` of ``workers`` processes.

    The client (and the cluster) close with ``stack``.

    Raises
    ------
    InvalidParameterError
        ``scheduler`` is not an address, or no scheduler answers there within
        :data:`DASK_CONNECT_TIMEOUT` seconds.
    """
    client_class = dask_client_class()
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
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in _HELD}  # noqa: ARG005 -- a handler's signature
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
    params: dict[str, Params],
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
        [params] * total,
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
    """Give every shard's ``runs`` file every run column named by the data (:func:`named_union`); return the names.

    A shard whose runs lack a name some other shard found is written again with it, null.
    """
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


@validate_params({name: SCORE_PARAMETERS[name] for name in SCORE_PARAMETERS if name != "out"}, where="score")
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
    progress: Progress | None = None,
    compression: str = COMPRESSION,
    validate: bool = False,
    **overrides: Any,
) -> Path:
    """Score a Dataset shard by shard into the sharded Scores folder ``out``; return its path.

    :func:`mas_eval.score` with ``out`` does this for a sharded Dataset (and returns the
    folder's :class:`~mas_eval.Scores`); this writes a sharded folder for any Dataset.

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
        Called with a :class:`~mas_eval.scoring.request.Step` before the first shard and after
        each (``Step.shards(done, total)``); meant for a progress bar.
    compression
        The Parquet compression of the files, one of :data:`~mas_eval.storage.outputs.COMPRESSIONS`;
        by default none (:data:`COMPRESSION`: the scores barely compress, and writing them is
        much of the work).
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
        write_shards(ds, request, Path(out))
    return Path(out)


def write_shards(ds: Dataset, request: Request, out: Path) -> None:
    """Score ``ds`` shard by shard into the Scores folder ``out``, as :func:`check_request` chose.

    The arguments are checked already (:func:`~mas_eval.scoring.request.check_request`); what
    :func:`score_shards` documents follows from them. ``progress`` gets ``Step.shards(0, total)``
    before the first shard and a step after each. The caller words a broken rule for the whole
    Dataset (:meth:`Dataset.worded_whole <mas_eval.storage.dataset.Dataset.worded_whole>`).
    """
    counted = request.counted()
    if counted is not None:
        counted(0, ds.shards)
    with contextlib.ExitStack() as dask:
        # The cluster is reached (or started) before anything is written, and closed (its worker
        # processes with it) however scoring ends, by an error or a signal.
        client = request.client
        if request.engine == "dask" and client is None:
            client = _dask_client(dask, request.scheduler, request.workers)
        _score_into(ds, request, out, client, dask.close)


def _scored_shards(
    ds: Dataset, request: Request, staging: Path, client: Any, close_cluster: Callable[[], object]
) -> list[dict[str, Any]]:
    """Every shard of ``ds`` scored into ``staging`` where ``request`` says; their results."""
    total = ds.shards
    progress = request.counted()
    compression, validate = request.compression, request.validate
    if request.engine == "dask":
        try:
            return _on_dask(
                client, ds.source, total, staging, request.preset, request.params, progress, compression, validate
            )
        except BaseException:
            # A cancelled task runs on to its end: the cluster we started stops first (its workers
            # with it), then the staging is removed.
            close_cluster()
            raise
    if request.workers == 1 or total == 1:
        results = []
        for index in range(total):
            results.append(_score_one(None, ds, index, staging, request.preset, request.params, compression, validate))
            if progress is not None:
                progress(len(results), total)
        return results
    arguments = [
        (ds.source, index, staging, request.preset, request.params, compression, validate) for index in range(total)
    ]
    return _in_pool(_score_in_worker, arguments, request.workers, progress)


def _score_into(ds: Dataset, request: Request, out: Path, client: Any, close_cluster: Callable[[], object]) -> None:
    """Write the sharded Scores folder of :func:`write_shards` once its Dask client (if any) is there."""
    inputs = [ds.source] if ds.source is not None else []
    with atomic_directory(out, overwrite=request.overwrite, inputs=inputs) as staging:
        results = _scored_shards(ds, request, staging, client, close_cluster)
        if request.validate:
            ds.validate_across([r["facts"] for r in results])
        names = _fill_empty(staging, results)
        named = _same_named_columns(staging, results, request.compression)
        first = min(results, key=lambda r: r["index"])
        manifest = {
            "preset": request.preset,
            "params": first["params"],
            "families": {"ran": first["ran"], "skipped": first["skipped"]},
            "tables": names,
            "shards": ds.shards,
            "rows": {name: sum(r["rows"].get(name, 0) for r in results) for name in names},
            **({"named": named} if named else {}),
        }
        write_manifest(staging, MANIFEST, manifest)


def score_shards_in_memory(ds: Dataset, request: Request) -> Scores:
    """Score a sharded Dataset in memory, its shards in ``request.workers`` processes (more than one).

    The tables are those of :func:`~mas_eval.scoring.run.score_by_shard`, bit for bit. Each
    worker scores a shard as :func:`~mas_eval.scoring.run.score_by_shard` does and writes its
    tables as uncompressed Arrow IPC files in a temporary folder, which this process maps into
    memory and joins (:func:`~mas_eval.scoring.run.joined_shards`): handed back pickled, every
    table would be copied twice more (docs/performance.md). As in a sharded Scores folder,
    tables but ``runs`` come back led by ``run_id`` alone, and the run's other identifying
    columns are put back once they are in run order. The files are removed on a thread that
    this call does not wait for. ``progress`` gets ``Step.shards(done, total)`` before the first
    shard and after each. With ``validate``, each shard is validated where it is scored, as by
    :func:`score_shards`; the caller words a broken rule for the whole Dataset
    (:meth:`Dataset.worded_whole <mas_eval.storage.dataset.Dataset.worded_whole>`).

    :func:`~mas_eval.scoring.request.check_request` chooses one worker, and so
    :func:`~mas_eval.scoring.run.score_by_shard` in this process, for a Dataset built in memory
    and when a metric family or preset was added or changed at run time.
    """
    total = ds.shards
    counted = request.counted()
    if counted is not None:
        counted(0, total)
    folder = Path(tempfile.mkdtemp(prefix="mas_eval_shards_"))
    # Removes the workers' files, each table's once it is joined and let go, then the folder; never
    # waited for: whoever removes a file pays for freeing its pages (docs/performance.md).
    removing = ThreadPoolExecutor(1, thread_name_prefix="mas_eval_remove")
    try:
        arguments = [
            (ds.source, index, folder, request.preset, request.params, request.validate) for index in range(total)
        ]
        results = sorted(_in_pool(_tables_in_worker, arguments, request.workers, counted), key=lambda r: r["index"])
        if request.validate:
            ds.validate_across([r["facts"] for r in results])
        joined = joined_shards(
            [_gathered(folder, result) for result in results],
            lambda name: removing.submit(_removed, [_ipc_file(folder, r["index"], name) for r in results]),
        )
    finally:
        removing.submit(shutil.rmtree, folder, ignore_errors=True)
        removing.shutdown(wait=False)  # the interpreter waits for it before it exits
    return _with_run_columns_back(joined)
