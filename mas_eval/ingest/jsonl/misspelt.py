"""Fields of a run record that look like misspellings of the record's own (``usage.tokns``, ``confidnce``).

The JSON decoder keeps the fields the record's dtype names and drops the rest, so a misspelt
field would vanish with its value. Unknown fields are allowed (a user's own metadata), but one
that closely resembles a field the same object lacks is a misspelling, as for the columns of
a Parquet table (:mod:`mas_eval.storage.dataset`), and the line is malformed.

Finding them costs one regular-expression pass per chunk: the record's own keys are removed
from every line, and only lines where a key is left, one that resembles a known name, are
read in Python to see where the key sits and whether the field it resembles is missing there.

>>> import polars as pl
>>> dtype = pl.Struct({"run_id": pl.String, "usage": pl.Struct({"tokens": pl.Int64})})
>>> lines = pl.Series(['{"run_id": "r1", "usage": {"tokns": 5}}', '{"run_id": "r2", "note": "x"}'])
>>> misspelt_fields(lines, dtype).to_dicts()
[{'position': 0, 'error': "field 'usage.tokns' is not in the run record and 'usage.tokens' is missing: a misspelling? rename it"}]
"""  # noqa: E501

from __future__ import annotations

import difflib
import json
import re
from typing import Any

import polars as pl

__all__ = ["misspelt_fields"]

#: How alike two names must be (difflib's ratio) for one to pass for a misspelling of the other,
#: as for Parquet columns.
SIMILARITY = 0.8
_KEY = r'"([^"\\]{1,64})"\s*:'


def _fields(dtype: pl.DataType, where: str, out: dict[str, set[str]]) -> dict[str, set[str]]:
    """Field names by the path of the object holding them (``""``, ``"usage"``, ``"agents[]"``...)."""
    if isinstance(dtype, pl.List):
        return _fields(dtype.inner, f"{where}[]", out)
    if isinstance(dtype, pl.Struct):
        out[where] = {field.name for field in dtype.fields}
        for field in dtype.fields:
            _fields(field.dtype, f"{where}.{field.name}" if where else field.name, out)
    return out


def _misspelling(value: Any, fields: dict[str, set[str]], where: str = "", shown: str = "") -> str | None:
    """Return the first key of ``value`` that is not a field at its place and resembles one missing there."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _misspelling(item, fields, f"{where}[]", f"{shown}[{index}]")
            if problem:
                return problem
        return None
    if not isinstance(value, dict) or where not in fields:
        return None
    known = fields[where]
    missing = sorted(known - value.keys())
    for key, inner in value.items():
        if key in known:
            problem = _misspelling(
                inner, fields, f"{where}.{key}" if where else key, f"{shown}.{key}" if shown else key
            )
            if problem:
                return problem
            continue
        close = difflib.get_close_matches(key, missing, n=1, cutoff=SIMILARITY)
        if close:
            prefix = f"{shown}." if shown else ""
            return (
                f"field '{prefix}{key}' is not in the run record and '{prefix}{close[0]}' is missing: "
                "a misspelling? rename it"
            )
    return None


def misspelt_fields(texts: pl.Series, dtype: pl.DataType) -> pl.DataFrame:
    """Return ``position, error`` of the lines among ``texts`` (JSON objects) with a misspelt field.

    ``dtype`` is the record's Polars dtype (:func:`~mas_eval.ingest.jsonl.record_dtype`).
    Lines that are not valid JSON are left to the decoder's checks.
    """
    fields = _fields(dtype, "", {})
    names = sorted(set().union(*fields.values()))
    own_keys = '"(?:' + "|".join(re.escape(name) for name in names) + r')"\s*:'
    # A line whose every `":` ends one of the record's own keys has no other key: two counts, rather
    # than removing the own keys and looking at what is left (docs/performance.md).
    with_others = texts.str.count_matches('":', literal=True) != texts.str.count_matches(own_keys)
    empty = pl.DataFrame(schema={"position": pl.Int64, "error": pl.String})
    if not with_others.any():
        return empty
    # What is left once the record's own keys are gone: other keys (and, rarely, text that looks like one).
    left = texts.str.replace_all(own_keys, "")
    others = left.filter(with_others).str.extract_all(_KEY).explode().drop_nulls().unique()
    resembling = [
        key
        for key in (match.strip()[1:].split('"')[0] for match in others.to_list())
        if difflib.get_close_matches(key, names, n=1, cutoff=SIMILARITY)
    ]
    if not resembling:
        return empty
    suspect = "|".join(re.escape(f'"{key}"') for key in resembling)
    positions = (with_others & left.str.contains(suspect)).arg_true().to_list()
    found = []
    # A loop over the few lines that hold a key resembling a field, to place it: error path only.
    for position in positions:
        try:
            problem = _misspelling(json.loads(texts[position]), fields)
        except ValueError:
            continue
        if problem:
            found.append((position, problem))
    return pl.DataFrame(found, schema=empty.schema, orient="row")
