"""The ``mas`` expression namespace: our column maths, usable in any Polars query.

Registered when :mod:`mas_eval` is imported, for users' own queries. The scoring pipeline
computes the same formulas in numpy, as ordered segment reductions that repeat bit for bit
(:mod:`mas_eval.metrics.decision.contribution`); ``tests/metrics/test_segments.py`` checks that the two
agree on random inputs.

>>> import polars as pl
>>> import mas_eval  # registers the namespace
>>> pl.DataFrame({"w": [1.0, 2.0, 3.0, 4.0]}).select(pl.col("w").mas.gini()).item()
0.25
>>> frame = pl.DataFrame({"agent": ["a", "a", "b", "b"], "mass": [0.5, 0.5, 1.0, 0.0]})
>>> frame.group_by("agent").agg(pl.col("mass").mas.normalized_entropy()).sort("agent").rows()
[('a', 1.0), ('b', 0.0)]
"""

from __future__ import annotations

import polars as pl

__all__ = ["MasExpr", "entropy_sums", "normalized_entropy_from_sums"]


def entropy_sums(mass: pl.Expr) -> dict[str, pl.Expr]:
    """Group sums from which the entropy of the masses follows: ``mass_total`` (T) and ``m_log_m`` (S).

    With ``T = Σ m`` and ``S = Σ m ln m`` (0 ln 0 = 0), the entropy of ``p = m / T`` is
    ``H = ln T - S / T``. Both sums merge across shards, unlike ``p`` itself.
    """
    return {
        "mass_total": mass.sum(),
        "m_log_m": pl.when(mass > 0).then(mass * mass.log()).otherwise(0.0).sum(),
    }


def normalized_entropy_from_sums(
    mass_total: pl.Expr, m_log_m: pl.Expr, outcomes: pl.Expr, *, renormalise: bool = True
) -> pl.Expr:
    r""":math:`H / \ln N` from :func:`entropy_sums` and the number of outcomes N (0 when N <= 1).

    ``renormalise=True``: :math:`H = \ln T - S/T`, the entropy of the masses scaled to sum 1 (null
    when T is 0). ``renormalise=False``: :math:`H = -S`, the masses taken as the probabilities
    (crisis_mas_poc).
    """
    entropy = pl.when(mass_total > 0).then(mass_total.log() - m_log_m / mass_total) if renormalise else -m_log_m
    outcomes = outcomes.cast(pl.Float64)
    return pl.when(outcomes > 1).then(entropy / outcomes.log()).otherwise(entropy * 0.0)


@pl.api.register_expr_namespace("mas")
class MasExpr:
    """Formulas from the three source documents, as expressions."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def gini(self) -> pl.Expr:
        r"""Gini coefficient of the values, exactly as the crisis-MAS evaluation methodology writes it (an aggregation).

        Notes
        -----
        .. math:: G = \frac{\sum_{i=1}^{n} (2i - n - 1)\, w_{(i)}}{n \sum_i w_i}

        with :math:`w_{(1)} \le \dots \le w_{(n)}` (ascending), and no :math:`n/(n-1)`
        small-sample correction. Nulls are ignored; no values give null. All
        values zero (or a single value) give 0, by the convention that equal shares are
        perfectly balanced. Ties need no rule: tied values contribute the same whatever
        their order. Computed as :meth:`gini_of_sorted_list` of the sorted values.

        Examples
        --------
        The help page of R's ``ineq::Gini`` uses this vector; ``Gini(x, corr = FALSE)`` gives
        0.4620911.

        >>> import polars as pl, mas_eval
        >>> x = [541, 1463, 2445, 3438, 4437, 5401, 6392, 8304, 11904, 22261]
        >>> round(pl.Series(x, dtype=pl.Float64).to_frame("x").select(pl.col("x").mas.gini()).item(), 7)
        0.4620911
        """
        values = self._expr.drop_nulls().cast(pl.Float64).sort().implode()
        return values.mas.gini_of_sorted_list().first()

    def gini_of_sorted_list(self) -> pl.Expr:
        """:meth:`gini` of each row's list of values, already sorted ascending (null for an empty list).

        For values already gathered per row: list arithmetic, faster than an order statistic
        inside a group-by aggregation (docs/performance.md).

        >>> import polars as pl, mas_eval
        >>> pl.DataFrame({"w": [[1.0, 2.0, 3.0, 4.0], [0.0, 0.0], []]}).select(pl.col("w").mas.gini_of_sorted_list())
        shape: (3, 1)
        ┌──────┐
        │ w    │
        │ ---  │
        │ f64  │
        ╞══════╡
        │ 0.25 │
        │ 0.0  │
        │ null │
        └──────┘
        """
        values = self._expr
        n = values.list.len()
        positions = pl.int_ranges(1, n + 1).cast(pl.List(pl.Float64))
        spread = (values * (2.0 * positions - n - 1.0)).list.sum()
        total = values.list.sum()
        # spread leads the chain, so that the result keeps the input's name.
        return pl.when(total > 0).then(spread / (n * total)).when(n > 0).then(0.0)

    def normalized_entropy(self, n: int | pl.Expr | None = None, *, renormalise: bool = True) -> pl.Expr:
        r"""Shannon entropy of the masses, divided by ln N (an aggregation).

        Parameters
        ----------
        n
            N, the number of outcomes the masses range over. Defaults to the number of
            values; pass the run's number of alternatives when some have no row (a missing
            alternative has mass 0 and adds nothing to the entropy, but counts in N).
        renormalise
            Scale the masses to sum 1 first (the crisis-MAS methodology) or take them as the probabilities
            (preset ``crisis-mas-poc``).

        Notes
        -----
        .. math:: H_{norm}(m) = \frac{-\sum_a p_a \ln p_a}{\ln N},\quad p_a = m_a / \sum_b m_b

        with 0 ln 0 = 0 and :math:`H_{norm} = 0` when N = 1 (the crisis-MAS methodology,
        "Contribution Score per Agent"). All masses zero give null: such an agent has no distribution.
        Computed by :func:`normalized_entropy_from_sums` from :func:`entropy_sums`.
        """
        mass = self._expr.cast(pl.Float64)
        outcomes = mass.len() if n is None else (pl.lit(n) if isinstance(n, int) else n)
        sums = entropy_sums(mass)
        return normalized_entropy_from_sums(sums["mass_total"], sums["m_log_m"], outcomes, renormalise=renormalise)
