"""Vectorised metric transforms: Polars lazy frames in, Polars lazy frames out."""

from mas_eval.metrics import namespace as namespace  # registers the `mas` expression namespace
