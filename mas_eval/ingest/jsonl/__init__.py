"""Flatten canonical JSONL run records (``run_record.schema.json``) into a Dataset folder.

The record's nesting, and the Polars dtype it is decoded with, are derived from
:mod:`mas_eval.data.schema`; :mod:`mas_eval.ingest.export` writes the same records back. The
modules follow the data: the record's layout (:mod:`~.record`), reading lines and chunks
(:mod:`~.lines`), decoding and checks (:mod:`~.decoding`, :mod:`~.misspelt`), Arrow's fast path
(:mod:`~.arrow`), the ingest (:mod:`~.ingest`) and its staged, sharded writing (:mod:`~.writing`).
"""

from __future__ import annotations

from mas_eval.ingest.jsonl.arrow import arrow_record
from mas_eval.ingest.jsonl.ingest import IngestResult, ingest_jsonl
from mas_eval.ingest.jsonl.lines import BYTES_CEILING, CHUNK_BYTES, LINE_OVERHEAD, MAX_LINE_BYTES
from mas_eval.ingest.jsonl.record import RECORD_LISTS, USAGE, USAGE_FIELD, RecordList, record_dtype
from mas_eval.ingest.recipe import json_type

__all__ = [
    "BYTES_CEILING",
    "CHUNK_BYTES",
    "LINE_OVERHEAD",
    "MAX_LINE_BYTES",
    "RECORD_LISTS",
    "USAGE",
    "USAGE_FIELD",
    "IngestResult",
    "RecordList",
    "arrow_record",
    "ingest_jsonl",
    "json_type",
    "record_dtype",
]
