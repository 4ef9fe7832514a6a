"""The ``mas`` expression namespace: our column maths, usable in any Polars query.

Registered when :mod:`mas_eval` is imported. Each method is an aggregation, so it works in
``select`` (over a whole column) and inside ``group_by(...).agg(...)`` (per group).

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

__all__ = ["MasExpr", "entropy_terms"]


def entropy_terms(mass: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Group sums from which the Shannon entropy of normalised masses follows.

    With ``T = Σ m`` and ``S = Σ m ln m`` (0 ln 0 = 0), the entropy of ``p = m / T`` is
    ``H = ln T - S / T``. Both sums merge across shards, unlike ``p`` itself.
    """
    total = mass.sum()
    m_log_m = pl.when(mass > 0).then(mass * mass.log()).otherwise(0.0).sum()
    return total, m_log_m


def entropy_from_sums(total: pl.Expr, m_log_m: pl.Expr) -> pl.Expr:
    """``H = ln T - S / T`` from :func:`entropy_terms`; null when ``T`` is 0."""
    return pl.when(total > 0).then(total.log() - m_log_m / total)


@pl.api.register_expr_namespace("mas")
class MasExpr:
    """Aggregations from the seed documents, as expressions."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def gini(self) -> pl.Expr:
        r"""Gini coefficient of the values, exactly as seed 004 writes it.

        Notes
        -----
        .. math:: G = \frac{\sum_{i=1}^{n} (2i - n - 1)\, w_{(i)}}{n \sum_i w_i}

        with :math:`w_{(1)} \le \dots \le w_{(n)}` (ascending), and no :math:`n/(n-1)`
        small-sample correction (SPEC.md §1). Nulls are ignored. All values zero (or a single
        value) give 0, by the convention that equal shares are perfectly balanced. Ties need
        no rule: tied values contribute the same whatever their order.

        Examples
        --------
        The help page of R's ``ineq::Gini`` uses this vector; ``Gini(x, corr = FALSE)`` gives
        0.4620911.

        >>> import polars as pl, mas_eval
        >>> x = [541, 1463, 2445, 3438, 4437, 5401, 6392, 8304, 11904, 22261]
        >>> round(pl.Series(x, dtype=pl.Float64).to_frame("x").select(pl.col("x").mas.gini()).item(), 7)
        0.4620911
        """
        w = self._expr.drop_nulls().cast(pl.Float64)
        n = w.len()
        order = w.rank("ordinal").cast(pl.Float64)
        total = w.sum()
        spread = (w * (2.0 * order - n - 1.0)).sum()  # w leftmost: the result keeps its name
        return pl.when(total > 0).then(spread / (n * total)).otherwise(0.0)

    def normalized_entropy(self, n: int | pl.Expr | None = None) -> pl.Expr:
        r"""Shannon entropy of the masses after renormalising them to sum 1, divided by ln N.

        Parameters
        ----------
        n
            N, the number of outcomes the masses range over. Defaults to the number of
            values; pass the run's number of alternatives when some have no row (a missing
            alternative has mass 0 and adds nothing to the entropy, but counts in N).

        Notes
        -----
        .. math:: H_{norm}(m) = \frac{-\sum_a p_a \ln p_a}{\ln N},\quad p_a = m_a / \sum_b m_b

        with 0 ln 0 = 0 and :math:`H_{norm} = 0` when N = 1 (seed 004, "Contribution
        Score"; SPEC.md §1). All masses zero give null: such an agent has no distribution.
        """
        mass = self._expr.cast(pl.Float64)
        outcomes = mass.len() if n is None else (pl.lit(n) if isinstance(n, int) else n)
        outcomes = outcomes.cast(pl.Float64)
        entropy = entropy_from_sums(*entropy_terms(mass))
        return pl.when(outcomes > 1).then(entropy / outcomes.log()).otherwise(entropy * 0.0)
