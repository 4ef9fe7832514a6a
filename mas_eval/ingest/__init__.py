"""Ingest run logs into a Dataset, and export a Dataset back to run records.

The canonical run record (``mas_eval/ingest/run_record.schema.json``) is one JSON object per run,
one per line (JSONL). :func:`ingest_jsonl` flattens such files into the Dataset's tables;
:func:`export_jsonl` writes a Dataset back as records, so that ingest(export(ds)) == ds.
:func:`ingest_lddx` reads Local-DDx's ``ddx_results_*.json`` files; :func:`ingest_inspect`
inspect_ai's ``.eval`` and ``.json`` logs; :func:`ingest_lm_eval`
lm-evaluation-harness ``--log_samples`` output (``results_*.json`` and ``samples_*.jsonl``);
:func:`ingest_otlp` OpenTelemetry traces of agents (OTLP JSON, Grafana Tempo, Jaeger);
:func:`ingest_table` a CSV or Parquet table of runs; :func:`ingest_annotations` failure-mode
annotations of runs (MAST's, Who&When's, a CSV's), joined onto a Dataset or with their runs.
"""

from __future__ import annotations

from mas_eval.ingest.annotations import ingest_annotations
from mas_eval.ingest.export import export_jsonl
from mas_eval.ingest.inspect_logs import ingest_inspect
from mas_eval.ingest.jsonl import IngestResult, ingest_jsonl, record_dtype
from mas_eval.ingest.lddx import LddxIngestResult, ingest_lddx
from mas_eval.ingest.lm_eval import ingest_lm_eval
from mas_eval.ingest.logs import LogIngestResult
from mas_eval.ingest.otlp import ingest_otlp
from mas_eval.ingest.table import ingest_table

__all__ = [
    "IngestResult",
    "LddxIngestResult",
    "LogIngestResult",
    "export_jsonl",
    "ingest_annotations",
    "ingest_inspect",
    "ingest_jsonl",
    "ingest_lddx",
    "ingest_lm_eval",
    "ingest_otlp",
    "ingest_table",
    "record_dtype",
]
