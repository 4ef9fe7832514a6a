"""The report as JSON: every table in full precision with its schema, the text, the figures, the provenance.

Each figure is there as the SVG the HTML page shows and, when the report kept it, the data it draws
(``schema`` and ``rows``, as a table). :func:`load_json` reads it back, each table (and each
figure's data) as the frame it was (NaN is written as null, as JSON has no NaN).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mas_eval.constraints import PATH, validate_params
from mas_eval.errors import SchemaError
from mas_eval.report.parts import arrange
from mas_eval.report.svg import figure_svg
from mas_eval.storage.inputs import input_file
from mas_eval.storage.manifests import JSON, Integer, ListOf, MapOf, Obj, check_shape, read_json

if TYPE_CHECKING:
    from mas_eval.report.parts import Document

__all__ = ["SCHEMA_VERSION", "load_json", "render_json"]

SCHEMA_VERSION = 1

#: The column types a report's tables hold, by the name JSON records.
_DTYPES: dict[str, pl.DataType] = {
    str(dtype): dtype
    for dtype in (
        pl.Float64(), pl.Float32(), pl.Int64(), pl.Int32(), pl.UInt32(), pl.UInt64(), pl.Int8(), pl.Int16(),
        pl.UInt8(), pl.UInt16(), pl.String(), pl.Boolean(), pl.Null(),
    )
}  # fmt: skip


#: A table as the JSON holds it.
_TABLE = Obj({"schema": MapOf(str), "rows": ListOf(ListOf(JSON))}, required=("schema", "rows"))

#: What :func:`render_json` writes, as :func:`load_json` checks it.
SHAPE = Obj(
    {
        "schema_version": Integer(),
        "title": str,
        "provenance": JSON,
        "sections": ListOf(Obj({"key": str, "title": str, "text": JSON, "omitted": JSON})),
        "tables": MapOf(_TABLE),
    },
    required=("schema_version", "tables"),
)


def _finite(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _table(frame: pl.DataFrame) -> dict[str, Any]:
    return {
        "schema": {name: str(dtype) for name, dtype in frame.schema.items()},
        "rows": [[_finite(v) for v in row] for row in frame.iter_rows()],
    }


def render_json(report: Document) -> str:
    """Render the report as a JSON document (see the module docstring)."""
    shown = arrange(report.sections)[0]
    document = {
        "schema_version": SCHEMA_VERSION,
        "title": report.title,
        "provenance": report.provenance,
        "sections": [
            {
                "key": section.key,
                "title": section.title,
                "text": section.text,
                "items": section.items,
                "omitted": section.omitted,
                "tables": [{"name": t.name, "caption": t.caption} for t in section.tables],
                "figures": [
                    {
                        "name": f.name,
                        "caption": f.caption,
                        "svg": figure_svg(f),
                        **({"data": _table(f.data)} if f.data is not None else {}),
                    }
                    for f in section.figures
                ],
            }
            for section in shown
        ],
        "tables": {table.name: _table(table.frame) for s in shown for table in s.tables},
    }
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


@validate_params({"path": [PATH]})
def load_json(path: str | Path) -> dict[str, Any]:
    """Read a report's JSON: the document, with ``"tables"`` as name → :class:`polars.DataFrame`.

    Raises
    ------
    SchemaError
        The file is not a mas_eval report's JSON (not UTF-8, not JSON, nested too deeply, or
        not of the shape :func:`render_json` writes), or a table has a type this version cannot read.
    UnreadableFileError
        The path is a folder or a special file, or cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import polars as pl
    >>> from mas_eval.report import Report, ReportTable, Section
    >>> ece = ReportTable("calibration", "ECE", pl.DataFrame({"system": ["mas", "single"], "ece": [0.05, 0.11]}))
    >>> report = Report("Pilot", [Section("calibration", "Calibration", tables=[ece])],
    ...                 {"mas_eval_version": "0.1.0", "created_utc": "2026-01-01T00:00:00+00:00"})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     document = load_json(report.write(Path(folder) / "pilot.json"))
    >>> document["title"], document["tables"]["calibration"].equals(ece.frame)
    ('Pilot', True)
    """
    fix = "pass a report written by `mas-eval report` as .json"
    source = input_file(path, "a report's JSON file", fix, error=SchemaError)
    document = read_json(source, fix=fix)
    problem = check_shape(document, SHAPE)
    if problem is not None:
        msg = f"{source}: not a mas_eval report ({problem}); {fix}"
        raise SchemaError(msg)
    tables = {name: _frame(table, f"table {name!r}", source, fix) for name, table in document["tables"].items()}
    for section in document["sections"]:
        for figure in section.get("figures") or []:
            data = figure.get("data") if isinstance(figure, dict) else None
            if data is not None:
                problem = check_shape(data, _TABLE)
                if problem is not None:
                    msg = f"{source}: not a mas_eval report (figure data: {problem}); {fix}"
                    raise SchemaError(msg)
                figure["data"] = _frame(data, f"the data of figure {figure.get('name')!r}", source, fix)
    return {**document, "tables": tables}


def _frame(table: dict[str, Any], what: str, source: Path, fix: str) -> pl.DataFrame:
    """Read a table of the JSON (``schema`` and ``rows``) back as the frame it was."""
    unknown = sorted({t for t in table["schema"].values() if t not in _DTYPES})
    if unknown:
        msg = f"{source}: {what} has column type(s) {', '.join(unknown)} this version cannot read"
        raise SchemaError(msg)
    schema = {column: _DTYPES[dtype] for column, dtype in table["schema"].items()}
    try:
        return pl.DataFrame(table["rows"], schema=schema, orient="row")
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError) as exc:
        first = str(exc).strip().splitlines()
        msg = f"{source}: {what} does not hold its schema's rows ({first[0] if first else exc!r}); {fix}"
        raise SchemaError(msg) from None
