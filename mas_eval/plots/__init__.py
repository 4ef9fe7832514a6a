"""Paper-ready figures of scores and comparisons (matplotlib), one colour per system throughout.

* :func:`forest` — a comparison table's estimates and CIs, significant rows marked.
* :func:`distributions` — a metric per system (and group): boxes or violins, points, means with CIs.
* :func:`paired` — the per-case differences treatment − control, their mean and its CI.
* :func:`reliability` — reliability diagram per system, with its ECE.
* :func:`cost_quality` — mean quality against mean cost, with the Pareto front.
* :func:`frontier_curve` — each system's pass rate against its spending per case as k epochs grow (the table
  :func:`mas_eval.stats.accuracy_cost_frontier` drawn; ``accuracy_cost_frontier``, its old name, is a deprecated alias).
* :func:`pass_at_k` — pass@k and pass^k of each system against k, with their intervals as bands.
* :func:`design_power` — a comparison's power against cases, one curve per number of epochs.
* :func:`cost_effectiveness_plane`, :func:`acceptability_curve` — is the extra cost worth it: the bootstrap
  cloud of (difference in effect, difference in cost) with a price line, and the acceptability curve.
* :func:`failure_modes` — each failure mode's rate per system as a heat map, the paired differences marked.
* :func:`pass_rates` — each system's pass rate per task (and score) with its Wilson (or cluster-robust) interval.
* :func:`cost_per_correct` — tokens and cost per correct answer per system, per run marked.
* :func:`system_profile` — each system's mean of each measure with its interval, a small panel per measure.
* :func:`agent_shares` — each agent's share of its system's tokens, turns and tool calls.
* :func:`consensus_quality` — quality against consensus, with binned means per system.
* :func:`beliefs` — one run's agents × alternatives belief masses.
* :func:`collaboration` — a diagnostic team's TempoScore per round and credibility per agent.
* :func:`item_scores` — an answer-level metric (MedAISure) per task and system.
* :func:`system_colours`, :func:`compared_systems`, :func:`paper_style`, :func:`save` — the colours (the compared
  pair's whatever their names), the paper style, the writer.

Every function returns a :class:`matplotlib.figure.Figure` (never shows it: in Jupyter the
returned figure displays itself) built without pyplot, so nothing accumulates in pyplot's
state and it works headless; the single-panel ones draw into ``ax=`` when given one. Inside
:func:`paper_style` the figures are 3.5 in (one column) or 7 in (two columns) wide.

matplotlib loads with the first function used, not with this package:

>>> import mas_eval.plots as plots
>>> sorted(plots.system_colours(["single", "mas"]).items())
[('mas', '#0072B2'), ('single', '#E69F00')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mas_eval._lazy import lazy_attributes

if TYPE_CHECKING:
    from mas_eval.plots._style import OKABE_ITO, SYSTEM_COLOURS, compared_systems, paper_style, save, system_colours
    from mas_eval.plots.belief_map import beliefs
    from mas_eval.plots.calibration import reliability
    from mas_eval.plots.comparison import forest
    from mas_eval.plots.cost_effectiveness import acceptability_curve, cost_effectiveness_plane
    from mas_eval.plots.design import design_power
    from mas_eval.plots.failures import failure_modes
    from mas_eval.plots.frontier import accuracy_cost_frontier, frontier_curve
    from mas_eval.plots.items import item_scores
    from mas_eval.plots.outcomes import cost_per_correct, pass_rates
    from mas_eval.plots.pass_k import pass_at_k
    from mas_eval.plots.process import agent_shares, system_profile
    from mas_eval.plots.runs import consensus_quality, cost_quality, distributions, paired
    from mas_eval.plots.teamwork import collaboration

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "OKABE_ITO": "mas_eval.plots._style",
        "SYSTEM_COLOURS": "mas_eval.plots._style",
        "paper_style": "mas_eval.plots._style",
        "compared_systems": "mas_eval.plots._style",
        "save": "mas_eval.plots._style",
        "system_colours": "mas_eval.plots._style",
        "beliefs": "mas_eval.plots.belief_map",
        "reliability": "mas_eval.plots.calibration",
        "collaboration": "mas_eval.plots.teamwork",
        "forest": "mas_eval.plots.comparison",
        "acceptability_curve": "mas_eval.plots.cost_effectiveness",
        "cost_effectiveness_plane": "mas_eval.plots.cost_effectiveness",
        "accuracy_cost_frontier": "mas_eval.plots.frontier",
        "frontier_curve": "mas_eval.plots.frontier",
        "item_scores": "mas_eval.plots.items",
        "pass_at_k": "mas_eval.plots.pass_k",
        "cost_per_correct": "mas_eval.plots.outcomes",
        "pass_rates": "mas_eval.plots.outcomes",
        "agent_shares": "mas_eval.plots.process",
        "system_profile": "mas_eval.plots.process",
        "design_power": "mas_eval.plots.design",
        "failure_modes": "mas_eval.plots.failures",
        "consensus_quality": "mas_eval.plots.runs",
        "cost_quality": "mas_eval.plots.runs",
        "distributions": "mas_eval.plots.runs",
        "paired": "mas_eval.plots.runs",
    },
)

__all__ = [
    "OKABE_ITO",
    "SYSTEM_COLOURS",
    "acceptability_curve",
    "accuracy_cost_frontier",
    "agent_shares",
    "beliefs",
    "collaboration",
    "compared_systems",
    "consensus_quality",
    "cost_effectiveness_plane",
    "cost_per_correct",
    "cost_quality",
    "design_power",
    "distributions",
    "failure_modes",
    "forest",
    "frontier_curve",
    "item_scores",
    "paired",
    "paper_style",
    "pass_at_k",
    "pass_rates",
    "reliability",
    "save",
    "system_colours",
    "system_profile",
]
