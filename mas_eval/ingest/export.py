"""Write a Dataset back as canonical JSONL run records: the inverse of :func:`ingest_jsonl`."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mas_eval.constraints import PATH, Instance, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.ingest.jsonl import RECORD_LISTS, USAGE, USAGE_FIELD, RecordList
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import atomic_file

__all__ = ["export_jsonl", "records"]


def _items(ds: Dataset, lst: RecordList) -> pl.LazyFrame | None:
    """Return ``<inherited key>, <field>``: each parent's list of items, children nested; None if nothing to list.

    The items are those of ``lst.table`` plus any key that only a child table names (beliefs of
    an agent missing from ``agents``), so that no row is lost; such items get null attributes.
    """
    children = [(child, _items(ds, child)) for child in RECORD_LISTS if child.parent == lst.table]
    nested = [(child, frame) for child, frame in children if frame is not None]
    if lst.table not in ds and not nested:
        return None
    spec = TABLES[lst.table]
    key = list(spec.key)
    if lst.table in ds:
        rows = ds.scan(lst.table).select(spec.names)
        if nested:
            keys = pl.concat([rows.select(key), *(frame.select(key) for _, frame in nested)]).unique()
            rows = keys.join(rows, on=key, how="left")
    else:
        keys = pl.concat([frame.select(key) for _, frame in nested]).unique()
        rows = keys.with_columns(pl.lit(None, dtype=c.dtype).alias(c.name) for c in spec.columns if c.name not in key)
    for child, frame in nested:
        rows = rows.join(frame, on=list(child.inherit), how="left")
    own_key = [c for c in key if c not in lst.inherit]
    if lst.scalar:
        item = pl.col(lst.own[0]).sort()
    else:
        item = pl.struct(*lst.own, *(child.field for child, _ in nested)).sort_by(own_key)
    return rows.group_by(list(lst.inherit)).agg(item.alias(lst.field))


def records(ds: Dataset) -> pl.LazyFrame:
    """Return one canonical run record per run, as a LazyFrame of nested columns sorted by ``run_id``.

    Fields of tables the Dataset does not have are left out; a run with no rows in a table
    it has gets null for that list. ``usage`` is always an object.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"], "tokens": [1200]})
    >>> ds = Dataset.from_frames(runs=runs)
    >>> record = records(ds).collect().row(0, named=True)
    >>> record["run_id"], record["usage"]["tokens"]
    ('r1', 1200)
    """
    runs = TABLES["runs"]
    record = ds.scan("runs").select(
        *(c for c in runs.names if c not in USAGE),
        pl.struct(*USAGE).alias(USAGE_FIELD),
    )
    for lst in RECORD_LISTS:
        if lst.parent != "runs":
            continue
        frame = _items(ds, lst)
        if frame is not None:
            record = record.join(frame, on=list(lst.inherit), how="left")
    return record.sort(runs.key)


@validate_params({"ds": [Instance(Dataset, "a Dataset")], "path": [PATH]})
def export_jsonl(ds: Dataset, path: str | Path) -> int:
    """Write one canonical run record per run of ``ds`` to the JSONL file ``path``.

    Parameters
    ----------
    ds
        The Dataset to export.
    path
        The JSONL file to write (gzip-compressed if it ends in ``.gz``). It is replaced
        atomically (temporary file, then rename); nothing is left behind on failure. It may
        not lie inside the Dataset's folder (:class:`~mas_eval.errors.OutputError`).

    Returns
    -------
    int
        The number of records (runs) written.

    Notes
    -----
    The inverse of :func:`~mas_eval.ingest.ingest_jsonl`: ingesting the file gives back the
    same tables, with two exceptions the record cannot express: ground truth of a case no
    run refers to is dropped, and a belief (score) whose agent (alternative) is missing from
    ``agents`` (``alt_scores``) comes back with a row there with null attributes.
    Records are sorted by ``run_id`` and list items by their key. Columns outside the schema
    are not exported.

    Examples
    --------
    >>> import json, tempfile
    >>> runs = pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"], "tokens": [1200]})
    >>> ds = Dataset.from_frames(runs=runs)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "runs.jsonl"
    ...     written = export_jsonl(ds, path)
    ...     record = json.loads(path.read_text())
    >>> written, record["run_id"], record["case_id"], record["usage"]["tokens"]
    (1, 'r1', 'c1', 1200)
    """
    target = Path(path)
    inputs = [ds.source] if ds.source is not None else []
    # Replaces an existing file, as it always has (export has no overwrite switch), but never the Dataset's own.
    with atomic_file(target, overwrite=True, inputs=inputs) as temporary, ds.reading():
        compression = "gzip" if target.suffix == ".gz" else "uncompressed"
        records(ds).sink_ndjson(temporary, compression=compression, check_extension=False)
    return ds.scan("runs").select(pl.len()).collect().item()
