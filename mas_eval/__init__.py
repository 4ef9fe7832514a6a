"""mas_eval: score logged runs of multi-agent LLM systems against single-agent baselines."""

from __future__ import annotations

from mas_eval.dataset import Dataset
from mas_eval.errors import DataError, IngestError, MasEvalError, SchemaError

__version__ = "0.1.0"

__all__ = ["DataError", "Dataset", "IngestError", "MasEvalError", "SchemaError", "__version__"]
