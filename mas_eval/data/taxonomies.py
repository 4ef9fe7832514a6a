"""Failure-mode taxonomies: their modes, each mode's category, and the texts that name a mode.

A taxonomy ships as a small CSV in ``mas_eval/data/taxonomies/`` (one row per mode: its code, its
name, its category, other spellings of its name): :data:`TAXONOMIES` lists them. MAST (Cemri et al.
2025, "Why Do Multi-Agent LLM Systems Fail?", arXiv:2503.13657) is the first: 14 modes in 3
categories. An annotation's ``mode`` is stored as the mode's label, its code and name
(``"1.1 Disobey task specification"``), and its ``category`` as the taxonomy names it.

Nothing here reads the user's files: the shipped CSVs are package resources, read with the
standard library.

>>> mode_of("FM-2.4", "mast").label, mode_of("2.4 Information Witholding", "mast").category
('2.4 Information withholding', 'Inter-agent misalignment')
>>> mode_of("1.2 Inconsistency between reasoning and action", "mast") is None
True
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal, get_args

__all__ = ["TAXONOMIES", "Mode", "Taxonomy", "mode_of", "modes"]

#: The taxonomies shipped, by the name an ingest's ``taxonomy=`` takes.
Taxonomy = Literal["mast"]
TAXONOMIES: tuple[str, ...] = get_args(Taxonomy)


@dataclass(frozen=True)
class Mode:
    """One failure mode of a taxonomy.

    Attributes
    ----------
    code
        Its number in the taxonomy, ``"1.1"``.
    name
        Its name, ``"Disobey task specification"``.
    category
        The category it belongs to, ``"System design issues"``.
    aliases
        Other spellings of its name that the taxonomy's own files use.

    Examples
    --------
    >>> mode = Mode("2.3", "Task derailment", "Inter-agent misalignment")
    >>> mode.label
    '2.3 Task derailment'
    """

    code: str
    name: str
    category: str
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How ``annotations.mode`` holds it: the code and the name, ``"1.1 Disobey task specification"``."""
        return f"{self.code} {self.name}"


def _key(text: str) -> str:
    """``text`` compared as words: case, punctuation and spacing ignored (``"Agents' Input"`` = ``"agent's input"``)."""
    return re.sub(r"[^0-9a-z]+", " ", text.casefold().replace("'", "").replace("\u2019", "")).strip()


@cache
def modes(taxonomy: Taxonomy) -> tuple[Mode, ...]:
    """Return the modes of ``taxonomy`` (one of :data:`TAXONOMIES`), in its order.

    >>> len(modes("mast")), sorted({m.category for m in modes("mast")})
    (14, ['Inter-agent misalignment', 'System design issues', 'Task verification'])
    """
    text = resources.files("mas_eval.data").joinpath("taxonomies", f"{taxonomy}.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO("".join(line for line in text.splitlines(True) if not line.startswith("#"))))
    return tuple(
        Mode(row["code"], row["name"], row["category"], tuple(a for a in (row["aliases"] or "").split("|") if a))
        for row in rows
    )


@cache
def _names(taxonomy: Taxonomy) -> dict[str, Mode]:
    names: dict[str, Mode] = {}
    for mode in modes(taxonomy):
        for name in (mode.name, *mode.aliases):
            for prefix in (mode.code, f"FM-{mode.code}"):
                names[_key(f"{prefix} {name}")] = mode
        names[_key(mode.code)] = names[_key(f"FM-{mode.code}")] = mode
    return names


def mode_of(text: str, taxonomy: Taxonomy) -> Mode | None:
    """Return the mode of ``taxonomy`` that ``text`` names, or None.

    A mode is named by its code (``"1.1"``, ``"FM-1.1"``) or by its code and name
    (``"1.1 Disobey Task Specification"``, or one of its aliases), compared as words: case,
    punctuation and spacing do not matter. A code with another name is not the mode: MAST's
    earlier drafts numbered other modes 1.1 to 4.3.

    Examples
    --------
    >>> mode_of("1.1", "mast").label
    '1.1 Disobey task specification'
    >>> mode_of("2.5 Ignored Other Agents' Input", "mast").code
    '2.5'
    """
    return _names(taxonomy).get(_key(text))
