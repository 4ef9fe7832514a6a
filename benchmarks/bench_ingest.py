"""Benchmark of `mas_eval.ingest.ingest_jsonl`: ingest N simulated runs from canonical JSONL records.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_ingest.py                          # 1,000,000 records
    .venv/bin/python benchmarks/bench_ingest.py 100000 300000 1000000    # several sizes
    .venv/bin/python benchmarks/bench_ingest.py 100000 --chunk-bytes 8388608

Each size is simulated (``mas_eval.simulate(N, seed=...)``) and exported with
``mas_eval.ingest.export_jsonl`` to a temporary JSONL file (about 2.2 kB a record) in one
child process, then ingested in another, so that the ingest's peak RSS is its own, not the
generator's. The peak is the child's ``VmHWM`` (Linux; elsewhere ``ru_maxrss``): a child's
``ru_maxrss`` starts at its parent's RSS when it was forked, which the generator would inflate
had it run in this process. It includes importing the package, as ``mas-eval ingest`` does.
A third child only parses the same file with Arrow's JSON reader, as the ingest's fast path
does, and drops what it read: the floor of an ingest with that parser on this machine, beside
which the ingest's time is given as a ratio (``ingest_to_parse_ratio``).
Writes ``reports/benchmarks/ingest.json`` and prints one line per size. Input MB are 10**6
bytes; RSS MB are 2**20 bytes, as in the other benchmarks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, run_fresh, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

from mas_eval.ingest import export_jsonl, ingest_jsonl  # noqa: E402
from mas_eval.ingest.jsonl import CHUNK_BYTES, arrow_record  # noqa: E402
from mas_eval.simulation.decision import simulate  # noqa: E402

SEED = 20240917
OUT = ROOT / "reports" / "benchmarks" / "ingest.json"


def _ru_maxrss_mb() -> float:
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _peak_rss_mb() -> float:
    """This process's peak RSS in MB (2**20 bytes) since it started (exec), not counting its parent's."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return _ru_maxrss_mb()


def generate_in_this_process(records: int, seed: int, path: Path) -> dict[str, Any]:
    """Simulate ``records`` runs and export them to ``path``: seconds and records."""
    start = time.perf_counter()
    exported = export_jsonl(simulate(records, seed=seed), path)
    return {"seconds": time.perf_counter() - start, "records": exported}


def ingest_in_this_process(path: Path, out: Path, chunk_bytes: int) -> dict[str, Any]:
    """Ingest ``path`` into ``out``: seconds, runs, chunks and peak RSS (this process's)."""
    rss_before = _peak_rss_mb()
    chunks: list[int] = []
    start = time.perf_counter()
    result = ingest_jsonl([path], out, chunk_bytes=chunk_bytes, progress=chunks.append)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "runs": result.runs,
        "chunks": len(chunks),
        "peak_rss_mb": _peak_rss_mb(),
        "ru_maxrss_mb": _ru_maxrss_mb(),
        "rss_after_import_mb": rss_before,
        "parquet_files": sum(1 for _ in out.rglob("*.parquet")),
    }


def parse_in_this_process(path: Path, chunk_bytes: int) -> dict[str, Any]:
    """Only parse ``path``, as the ingest's fast path parses it: Arrow's JSON reader with the record's
    schema (:func:`~mas_eval.ingest.jsonl.arrow_record`), on pieces of about ``chunk_bytes`` ending at
    a newline, blocks of 1 MiB parsed on every core, each table dropped. No checks, no flattening,
    nothing written: the floor of an ingest with this parser on this machine."""
    import pyarrow as pa
    import pyarrow.json as pj

    options = pj.ParseOptions(explicit_schema=arrow_record(), unexpected_field_behavior="error")
    reading = pj.ReadOptions(use_threads=True, block_size=2**20)
    rows = 0
    start = time.perf_counter()
    with path.open("rb") as handle:
        rest = b""
        while block := handle.read(chunk_bytes):
            piece, _, rest = (rest + block).rpartition(b"\n")
            if piece:
                rows += pj.read_json(pa.BufferReader(piece), read_options=reading, parse_options=options).num_rows
        if rest.strip():
            rows += pj.read_json(pa.BufferReader(rest), read_options=reading, parse_options=options).num_rows
    return {"seconds": time.perf_counter() - start, "runs": rows, "peak_rss_mb": _peak_rss_mb()}


def bench(records: int, seed: int, chunk_bytes: int, workdir: Path) -> dict[str, Any]:
    path = workdir / f"runs_{records}.jsonl"
    generated = run_fresh(__file__, "--generate-only", records, seed, path)
    assert generated["records"] == records, generated
    size = path.stat().st_size
    size_mb = size / 1e6
    out = workdir / f"ds_{records}"
    ingested = run_fresh(__file__, "--ingest-only", path, out, "--chunk-bytes", chunk_bytes)
    assert ingested["runs"] == records, ingested
    parsed = run_fresh(__file__, "--parse-only", path, "--chunk-bytes", chunk_bytes)
    assert parsed["runs"] == records, parsed
    # The next size's file must fit on the disk too.
    path.unlink()
    shutil.rmtree(out)
    seconds = ingested["seconds"]
    row = {
        "records": records,
        "input_mb": round(size_mb, 1),
        "input_bytes": size,
        "simulate_and_export_seconds": round(generated["seconds"], 2),
        "ingest_seconds": round(seconds, 2),
        "records_per_second": round(records / seconds),
        "mb_per_second": round(size_mb / seconds, 1),
        "parse_only_seconds": round(parsed["seconds"], 2),
        "parse_only_records_per_second": round(records / parsed["seconds"]),
        "ingest_to_parse_ratio": round(seconds / parsed["seconds"], 2),
        "peak_rss_mb": round(ingested["peak_rss_mb"], 1),
        "ru_maxrss_mb": round(ingested["ru_maxrss_mb"], 1),
        "rss_after_import_mb": round(ingested["rss_after_import_mb"], 1),
        "chunks": ingested["chunks"],
        "parquet_files": ingested["parquet_files"],
    }
    print(
        f"ingest {records:,} records ({size_mb:,.0f} MB): {seconds:.1f} s ({records / seconds:,.0f} records/s, "
        f"{size_mb / seconds:.1f} MB/s); peak RSS {row['peak_rss_mb']:,.0f} MB in {row['chunks']} chunks; "
        f"Arrow's parse alone {parsed['seconds']:.1f} s ({records / parsed['seconds']:,.0f} records/s), "
        f"ingest {row['ingest_to_parse_ratio']:.2f}x it",
        flush=True,
    )
    return row


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="*", type=int, default=[1_000_000], help="records per file; default 1000000")
    parser.add_argument("--seed", type=int, default=SEED, help=f"simulation seed (default {SEED})")
    parser.add_argument(
        "--chunk-bytes", type=int, default=CHUNK_BYTES, help=f"ingest_jsonl's chunk_bytes (default {CHUNK_BYTES:,})"
    )
    parser.add_argument("--output", type=Path, default=OUT, help="JSON result file")
    parser.add_argument("--ingest-only", nargs=2, type=Path, metavar=("JSONL", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--parse-only", type=Path, metavar="JSONL", help=argparse.SUPPRESS)
    parser.add_argument("--generate-only", nargs=3, metavar=("RECORDS", "SEED", "JSONL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ingest_only:
        print(json.dumps(ingest_in_this_process(*args.ingest_only, args.chunk_bytes)))
        return None
    if args.parse_only:
        print(json.dumps(parse_in_this_process(args.parse_only, args.chunk_bytes)))
        return None
    if args.generate_only:
        records, seed, path = args.generate_only
        print(json.dumps(generate_in_this_process(int(records), int(seed), Path(path))))
        return None

    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as tmp:
        rows = [bench(n, args.seed, args.chunk_bytes, Path(tmp)) for n in args.records]
    result: dict[str, Any] = {
        "benchmark": "ingest_jsonl",
        "parameters": {"records": args.records, "seed": args.seed, "chunk_bytes": args.chunk_bytes},
        "results": rows,
        "environment": environment(),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json(args.output, result)
    return result


if __name__ == "__main__":
    main()
