"""Synthetic Datasets with a known MAS effect, one module per metric family, and the bundled sample.

The public functions are :func:`mas_eval.simulate_decision` (short name :func:`mas_eval.simulate`),
:func:`mas_eval.simulate_diagnosis`, :func:`mas_eval.simulate_answers` and :func:`mas_eval.simulate_outcomes`.
"""
