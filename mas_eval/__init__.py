"""mas_eval: score logged runs of multi-agent LLM systems against single-agent baselines.

>>> import mas_eval
>>> ds = mas_eval.simulate(100, seed=7)
>>> scores = mas_eval.score(ds)
>>> sorted(scores.runs["system"].unique())
['mas', 'single']
"""

from __future__ import annotations

from mas_eval import metrics as metrics  # registers the `mas` expression namespace
from mas_eval._version import __version__
from mas_eval.dataset import Dataset
from mas_eval.errors import (
    DataError,
    IngestError,
    InvalidParameterError,
    MasEvalError,
    MixedDqsMethodsError,
    OutputExistsError,
    SchemaError,
)
from mas_eval.scoring import Scores, score
from mas_eval.simulation import simulate
from mas_eval.stats import baseline_comparison, calibration, compare, power, reliability_table

__all__ = [
    "DataError",
    "Dataset",
    "IngestError",
    "InvalidParameterError",
    "MasEvalError",
    "MixedDqsMethodsError",
    "OutputExistsError",
    "SchemaError",
    "Scores",
    "__version__",
    "baseline_comparison",
    "calibration",
    "compare",
    "power",
    "reliability_table",
    "score",
    "simulate",
]
