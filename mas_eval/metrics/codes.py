"""Integer codes for the key columns, so that scoring groups, joins and sorts integers.

Scoring groups and joins on ``(run_id, agent_id)``, ``(run_id, alternative)`` and
``(run_id, criterion)``. Keyed by strings, a group-by hashes and compares the strings of
every row; keyed by ``UInt32`` codes, a pair packs into one ``uint64``
(:func:`mas_eval.metrics.segments.pack`) and groups by direct addressing or a sort of integers.

The codes keep the order of the labels: a run's code is its ``run_id``'s rank among the
sorted run ids, and an agent's, alternative's or criterion's code is its label's rank among
the sorted labels of its kind. Sorting by codes therefore sorts by labels, and "the label
that sorts first" (the tie rule of every rank) is the smallest code. Encoded tables keep their
column names; the metric modules take them keyed by codes, and :mod:`mas_eval.scoring.pipeline`
decodes its outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import polars as pl

from mas_eval.data.schema import LABEL_COLUMNS, LABEL_KINDS, RUN_KEY

__all__ = ["CODE", "LABEL_COLUMNS", "KeyCodes"]

CODE = pl.UInt32
#: Up to this many labels of a kind, a label's code is found by comparing it with each label.
FEW_LABELS = 8


@dataclass(frozen=True)
class KeyCodes:
    """The code books of one scoring call: the runs' identifying columns and the labels of each kind.

    The runs' columns are in ``run_id`` order (a run's code is its row); the labels are sorted.
    """

    runs: pl.DataFrame
    labels: dict[str, pl.Series]

    @classmethod
    def of(cls, tables: Mapping[str, pl.LazyFrame], run_columns: list[str]) -> KeyCodes:
        """Code books for ``tables`` (one LazyFrame per table, ``runs`` required)."""
        queries = [tables["runs"].select(run_columns).sort(RUN_KEY)]
        kinds = LABEL_KINDS
        for kind in kinds:
            parts = [
                tables[name].select(pl.col(column).alias(kind))
                for name, columns in LABEL_COLUMNS.items()
                if name in tables
                for column, column_kind in columns.items()
                if column_kind == kind
            ]
            parts = parts or [pl.LazyFrame(schema={kind: pl.String})]
            queries.append(pl.concat(parts).drop_nulls().unique().sort(kind))
        runs, *labels = pl.collect_all(queries)
        return cls(runs=runs, labels={kind: frame[kind] for kind, frame in zip(kinds, labels, strict=True)})

    def encode(self, name: str, frame: pl.LazyFrame) -> pl.LazyFrame:
        """Table ``name`` with its ``run_id`` and label columns replaced by their codes.

        Rows whose ``run_id`` is not in ``runs`` are dropped (validation reports them). A table
        without ``run_id`` (``ground_truth``, keyed by case) keeps its rows; only its labels are coded.
        """
        codes = [self._label_codes[column, kind] for column, kind in LABEL_COLUMNS.get(name, {}).items()]
        if RUN_KEY not in frame.collect_schema():
            return frame.with_columns(*codes)
        # Cast to an Enum of the run ids, not a join: faster (docs/performance.md), and the table
        # keeps its order, sorted by run when the Dataset was written by mas_eval. Ids not in the
        # code book become null: dropped.
        return frame.with_columns(*codes, self._run_code).filter(pl.col(RUN_KEY).is_not_null())

    # The code expressions are built once per scoring call and reused by every table: building
    # a cast to an Enum copies its categories each time (docs/performance.md).
    @cached_property
    def _run_code(self) -> pl.Expr:
        return pl.col(RUN_KEY).cast(pl.Enum(self.runs[RUN_KEY]), strict=False).to_physical().cast(CODE)

    @cached_property
    def _label_codes(self) -> dict[tuple[str, str], pl.Expr]:
        return {
            (column, kind): self._label_code(column, kind)
            for columns in LABEL_COLUMNS.values()
            for column, kind in columns.items()
        }

    def _label_code(self, column: str, kind: str) -> pl.Expr:
        labels, label = self.labels[kind], pl.col(column)
        if len(labels) == 0:  # the column holds only nulls
            code = pl.lit(None, dtype=CODE)
        elif len(labels) <= FEW_LABELS:
            # One comparison per label: a short string compares faster than a cast to an Enum
            # hashes it (docs/performance.md).
            found = [(label == value).cast(CODE) * index for index, value in enumerate(labels)]
            code = pl.when(label.is_not_null()).then(pl.sum_horizontal(found).cast(CODE))
        else:
            code = label.cast(pl.Enum(labels)).to_physical().cast(CODE)
        return code.alias(column)

    def decode(self, frame: pl.LazyFrame, columns: Mapping[str, str]) -> pl.LazyFrame:
        """Turn those of the code ``columns`` that ``frame`` has back into labels.

        ``columns`` maps a column to its kind, ``"run_id"`` a kind too.
        """
        present = frame.collect_schema()
        books = self.labels | {RUN_KEY: self.runs[RUN_KEY]}
        return frame.with_columns(
            pl.lit(books[kind]).gather(pl.col(column)).alias(column)
            for column, kind in columns.items()
            if column in present
        )

    def labels_of(self, columns: Mapping[str, str]) -> Callable[[pl.LazyFrame], pl.LazyFrame]:
        """Return a function decoding the code ``columns`` (column → kind) of a frame: for error messages."""
        return lambda frame: self.decode(frame, columns)

    def run_columns(self, columns: list[str]) -> list[pl.Expr]:
        """Expressions giving a frame keyed by run codes the runs' identifying ``columns``."""
        return [pl.lit(self.runs[column]).gather(pl.col(RUN_KEY)).alias(column) for column in columns]
