r"""What of a trace is the system's own work: the messages its agents generated, its usage rows, the words of a text.

A **turn** is a ``messages`` row that an agent generated: not the system prompt, a user's prompt
or a tool's result (``role`` in :data:`~mas_eval.data.vocabulary.NOT_AGENT_ROLES`), and not the
sample's input (``source`` = :data:`~mas_eval.data.vocabulary.INPUT_SOURCE`, a few-shot
example given as an assistant message among them). A null ``role`` or ``source`` excludes
nothing: transcripts that record neither (Local-DDx's) are the agents' messages throughout.

A **system usage row** is a ``usage`` row whose ``evaluator`` is not true: a scorer's or judge's
calls grade the run and are not the system's (a null ``evaluator`` is read as the system's, as
the schema says).

The **words** of a text are the maximal runs of word characters (the regular expression
``\w+``, Unicode-aware: letters, marks, digits and connector punctuation) of the text in lower
case, taken as a set. The redundancy between messages (:mod:`~mas_eval.metrics.process.redundancy`)
compares these sets.

>>> import polars as pl
>>> frame = pl.DataFrame({"text": ["The plan: evacuate, the plan!", None], "role": ["assistant", "user"],
...                       "source": [None, "input"]})
>>> frame.select(words(pl.col("text")).list.sort(), is_turn()).rows()
[(['evacuate', 'plan', 'the'], True), ([], False)]
"""

from __future__ import annotations

import polars as pl

from mas_eval.data.vocabulary import INPUT_SOURCE, NOT_AGENT_ROLES

__all__ = ["WORD", "agent_messages", "is_turn", "system_usage", "words"]

#: A word: a maximal run of word characters (Unicode ``\w``), matched in the lower-cased text.
WORD = r"\w+"


def is_turn() -> pl.Expr:
    """Whether a ``messages`` row is a turn: an agent generated it (module docstring).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.process.trace import is_turn
    >>> messages = pl.DataFrame({"role": ["user", "assistant", "assistant"], "source": [None, "generate", "input"]})
    >>> messages.select(is_turn()).to_series().to_list()
    [False, True, False]
    """
    prompt = pl.col("role").is_in(NOT_AGENT_ROLES).fill_null(False)
    given = (pl.col("source") == INPUT_SOURCE).fill_null(False)
    return ~prompt & ~given


def agent_messages(messages: pl.LazyFrame) -> pl.LazyFrame:
    """Return the turns of ``messages`` (:func:`is_turn`)."""
    return messages.filter(is_turn())


def system_usage(usage: pl.LazyFrame) -> pl.LazyFrame:
    """Return the rows of ``usage`` that are the system's calls: ``evaluator`` not true."""
    return usage.filter(~pl.col("evaluator").fill_null(False))


def words(text: pl.Expr) -> pl.Expr:
    r"""Return the set of words of each text (:data:`WORD` in its lower case), as a list; a null text has none.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.process.trace import words
    >>> pl.select(words(pl.Series(["Agree: the MI, the MI.", None])).list.sort()).to_series().to_list()
    [['agree', 'mi', 'the'], []]
    """
    return text.fill_null("").str.to_lowercase().str.extract_all(WORD).list.unique()
