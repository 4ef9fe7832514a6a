"""mas_eval: score logged runs of multi-agent LLM systems against single-agent baselines.

>>> import mas_eval
>>> ds = mas_eval.simulate(100, seed=7)
>>> scores = mas_eval.score(ds)
>>> sorted(scores.runs["system"].unique())
['mas', 'single']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mas_eval import metrics as metrics  # registers the `mas` expression namespace
from mas_eval import plots as plots  # matplotlib loads with the first figure drawn
from mas_eval import report as report  # Jinja2 and the figures load with the first report built
from mas_eval._lazy import lazy_attributes
from mas_eval._version import __version__
from mas_eval.errors import (
    DataError,
    IngestError,
    InvalidParameterError,
    MasEvalError,
    MixedDqsMethodsError,
    OutputError,
    OutputExistsError,
    SchemaError,
    UnreadableFileError,
)
from mas_eval.scoring import Scores, score
from mas_eval.storage.dataset import Dataset

if TYPE_CHECKING:
    from mas_eval.simulation.answers import simulate_answers
    from mas_eval.simulation.decision import simulate, simulate_decision
    from mas_eval.simulation.diagnosis import simulate_diagnosis
    from mas_eval.simulation.outcomes import simulate_outcomes
    from mas_eval.stats import (
        baseline_comparison,
        calibration,
        compare,
        cost_effectiveness,
        power,
        reliability_table,
    )

# The statistics layer (SciPy, statsmodels) and the simulator load when first used.
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "simulate": "mas_eval.simulation.decision",
        "simulate_decision": "mas_eval.simulation.decision",
        "simulate_answers": "mas_eval.simulation.answers",
        "simulate_diagnosis": "mas_eval.simulation.diagnosis",
        "simulate_outcomes": "mas_eval.simulation.outcomes",
        **dict.fromkeys(
            ("baseline_comparison", "calibration", "compare", "cost_effectiveness", "power", "reliability_table"),
            "mas_eval.stats",
        ),
    },
)

__all__ = [
    "DataError",
    "Dataset",
    "IngestError",
    "InvalidParameterError",
    "MasEvalError",
    "MixedDqsMethodsError",
    "OutputError",
    "OutputExistsError",
    "SchemaError",
    "Scores",
    "UnreadableFileError",
    "__version__",
    "baseline_comparison",
    "calibration",
    "compare",
    "cost_effectiveness",
    "plots",
    "power",
    "reliability_table",
    "report",
    "score",
    "simulate",
    "simulate_answers",
    "simulate_decision",
    "simulate_diagnosis",
    "simulate_outcomes",
]
