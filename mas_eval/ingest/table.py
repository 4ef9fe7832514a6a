"""Read a plain table of per-run results (CSV or Parquet, one row per run) into a Dataset.

People keep results in a notebook's table: a row per run with the model or system, the question,
a few scores and the cost. :func:`ingest_table` maps named columns onto the ``runs`` table and
makes every other numeric or boolean column a score in ``outcomes``. The mapping is in
``docs/ingest/table.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from mas_eval.constraints import MAPPING, NONE, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, InvalidParameterError, option
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import LOG_PARAMETERS, Ingest, InvalidInputError, LogFormat, Paths, ingest_logs
from mas_eval.storage.inputs import read_csv, read_parquet

__all__ = ["AUTO_MAPPED", "CSV_SUFFIXES", "FORMAT", "PARQUET_SUFFIXES", "RUN_COLUMNS", "ingest_table", "parse_map"]

#: The ``runs`` columns a table's column can be mapped to.
RUN_COLUMNS: tuple[str, ...] = tuple(TABLES["runs"].names)
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Tables of runs, for the recipe of every log adapter.
FORMAT = LogFormat(
    name="table",
    files="CSV or Parquet tables of runs",
    suffixes=CSV_SUFFIXES + PARQUET_SUFFIXES,
    in_folder="no .csv or .parquet files",
    record="run",
    skips="file(s) or row(s)",
)
#: The runs columns a file's column of the same name is mapped to unasked: what identifies a run and what it
#: cost. A decision's ``recommended``, ``correct`` and ``confidence`` are mapped only when named in
#: ``columns``, since a notebook's ``correct`` column is usually a score.
AUTO_MAPPED: tuple[str, ...] = tuple(c for c in RUN_COLUMNS if c not in ("recommended", "correct", "confidence"))
#: The columns every run needs; the rest may be absent.
_REQUIRED = ("system", "case_id")
#: Parts of a generated ``run_id``, in order; null parts are left out.
_ID_PARTS = ("system", "case_id", "task", "variant")


def _fix_map(column: str) -> str:
    return option("columns", {column: "COLUMN"}, cli=f"--map {column}=COLUMN")


def parse_map(specs: str | Sequence[str]) -> dict[str, str]:
    """``--map`` text as the ``columns`` of :func:`ingest_table`: ``"system=model,case_id=question"``.

    Several texts (the option given more than once) are read as one, comma-separated list.

    >>> parse_map(["system=model,case_id=question", "tokens=total"])
    {'system': 'model', 'case_id': 'question', 'tokens': 'total'}

    Raises
    ------
    InvalidParameterError
        An item is not ``COLUMN=SOURCE``, names no ``runs`` column, or a column is mapped twice.
    """
    texts = [specs] if isinstance(specs, str) else list(specs)
    mapping: dict[str, str] = {}
    for item in (part.strip() for text in texts for part in text.split(",")):
        column, equals, source = (s.strip() for s in item.partition("="))
        if not (equals and column and source):
            msg = f"--map: {item!r} is not RUNS_COLUMN=SOURCE_COLUMN; write e.g. --map system=model,case_id=question"
            raise InvalidParameterError(msg)
        if column in mapping:
            msg = f"--map: {column} is mapped twice ({mapping[column]!r} and {source!r}); map each runs column once"
            raise InvalidParameterError(msg)
        mapping[column] = source
    return mapping


def _check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    mapping = dict(columns or {})
    unknown = [c for c in mapping if c not in RUN_COLUMNS]
    if unknown:
        msg = f"columns: {unknown[0]!r} is not a runs column; map one of: {', '.join(RUN_COLUMNS)}"
        raise InvalidParameterError(msg)
    empty = [c for c, source in mapping.items() if not isinstance(source, str) or not source]
    if empty:
        msg = f"columns: {empty[0]!r} is mapped to {mapping[empty[0]]!r}, not a column's name; name the source column"
        raise InvalidParameterError(msg)
    return mapping


def _read(file: Path) -> pl.DataFrame:
    """The file's table; an unreadable one named, with why."""
    name = file.name.lower()
    if name.endswith(CSV_SUFFIXES):
        kind, read = "CSV", lambda: read_csv(file, infer_schema_length=None)
    elif name.endswith(PARQUET_SUFFIXES):
        kind, read = "Parquet", lambda: read_parquet(file)
    else:
        raise InvalidInputError(
            "not a .csv or .parquet file", fix="pass a CSV or Parquet table of runs, one row per run"
        )
    try:
        return read()
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fix = f"check that it is a {kind} table of runs"
        raise InvalidInputError(f"cannot be read as {kind} ({first})", fix=fix) from None


class _Part:
    """One file's runs rows, outcome rows, invalid rows and warnings; ``system`` names every run's system."""

    def __init__(
        self, file: Path, index: int, frame: pl.DataFrame, columns: dict[str, str], system: str | None
    ) -> None:
        self.file, self.warnings, self.system = file, [], system
        present = frame.columns
        mapping = {c: c for c in AUTO_MAPPED if c in present and c not in columns} | columns
        for column, source in mapping.items():
            if source not in present:
                msg = (
                    f"{file}: no column {source!r} (for runs.{column}); its columns are: {', '.join(present)}; "
                    f"name one of them in {_fix_map(column)}"
                )
                raise IngestError(msg)
        for column in _REQUIRED:
            if column not in mapping and not (column == "system" and system is not None):
                msg = (
                    f"{file}: no column gives runs.{column} (its columns are: {', '.join(present)}); "
                    f"pass {_fix_map(column)}"
                )
                raise IngestError(msg)
        sources = set(mapping.values())
        clashing = [c for c in present if c in AUTO_MAPPED and c not in sources]
        if clashing:
            column = clashing[0]
            msg = (
                f"{file}: column {column!r} is named like runs.{column}, which comes from {mapping[column]!r}: it "
                "would be both a runs column and a score; rename or drop one of them"
            )
            raise IngestError(msg)
        self.mapping = mapping
        rows = frame.with_row_index("row", offset=1).with_columns(pl.lit(index, pl.Int64()).alias("file"))
        self.runs, self.invalid = self._runs(rows)
        self.outcomes, self.pass_fail = self._outcomes(rows, [c for c in present if c not in sources])

    def _runs(self, rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The runs columns in the schema's types; and ``file, row, problem`` of the rows that cannot be runs."""
        schema = TABLES["runs"].polars_schema
        values, problems = [], []
        for column, source in self.mapping.items():
            given = pl.col(source)
            if rows.schema[source] in (pl.Float32(), pl.Float64()):
                given = given.fill_nan(None)  # a NaN is a missing number
            cast = given.cast(schema[column], strict=False)
            values.append(cast.alias(column))
            wrong = given.is_not_null() & cast.is_null()
            shown = given.cast(pl.String(), strict=False)
            problems.append(
                pl.when(wrong).then(pl.format(f"{source!r} (runs.{column}) holds {{}}, not {schema[column]}", shown))
            )
        if self.system is not None:  # the system named for the file, whatever a column says
            values = [value for value in values if value.meta.output_name() != "system"]
            values.append(pl.lit(self.system, schema["system"]).alias("system"))
        for column in _REQUIRED:
            if column == "system" and self.system is not None:
                continue
            source = self.mapping[column]
            problems.append(pl.when(pl.col(source).is_null()).then(pl.lit(f"{source!r} (runs.{column}) is empty")))
        checked = rows.select("file", "row", *values, pl.coalesce(problems).alias("problem"))
        invalid = checked.filter(pl.col("problem").is_not_null()).select("file", "row", "problem")
        return checked.filter(pl.col("problem").is_null()).drop("problem"), invalid

    def _outcomes(self, rows: pl.DataFrame, left: list[str]) -> tuple[pl.DataFrame, dict[str, bool]]:
        """``file, row, name, value`` of each numeric or boolean column left; whether each is pass/fail here."""
        scores = [c for c in left if rows.schema[c].is_numeric() or rows.schema[c] == pl.Boolean()]
        ignored = [c for c in left if c not in scores]
        if ignored:
            self.warnings.append(
                f"{self.file}: column(s) {', '.join(map(repr, ignored))} neither mapped nor numeric or boolean; "
                f"ignored (map one with {_fix_map('COLUMN')} to keep it)"
            )
        if not scores:
            return pl.DataFrame(
                schema={"file": pl.Int64(), "row": pl.UInt32(), "name": pl.String(), "value": pl.Float64()}
            ), {}
        integral = [c for c in scores if rows.schema[c].is_integer()]
        zero_one = rows.select(pl.col(c).drop_nulls().is_in([0, 1]).all() for c in integral).row(0) if integral else ()
        pass_fail = {c: rows.schema[c] == pl.Boolean() for c in scores} | dict(zip(integral, zero_one, strict=True))
        long = rows.select("file", "row", *(pl.col(c).cast(pl.Float64()) for c in scores)).unpivot(
            scores, index=["file", "row"], variable_name="name", value_name="value"
        )
        return long.filter(pl.col("value").is_finite()), pass_fail


class _Reader:
    """Tables read one at a time; their rows checked together once all are read (a run id spans files)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping
        self.parts: list[_Part] = []

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        part = _Part(file, len(self.parts), _read(file), self.mapping, system)
        self.parts.append(part)
        ingest.warnings.extend(part.warnings)

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        if not self.parts:
            return {"runs": pl.DataFrame(schema=TABLES["runs"].polars_schema)}
        parts, files = self.parts, [part.file for part in self.parts]
        runs = pl.concat([part.runs for part in parts], how="diagonal_relaxed")
        invalid = pl.concat([part.invalid for part in parts])
        if "run_id" not in runs.columns:
            group = [c for c in _ID_PARTS if c in runs.columns]
            number = pl.col("epoch") if "epoch" in runs.columns else pl.int_range(1, pl.len() + 1).over(group)
            parts_of_id = [*(pl.col(c) for c in group), number.cast(pl.String())]
            runs = runs.with_columns(pl.concat_str(parts_of_id, separator="/", ignore_nulls=True).alias("run_id"))
        # A run id seen before, or null (a mapped run_id column with a gap), makes a row invalid too.
        first = pl.struct("file", "row").first().over("run_id")
        repeated = runs.filter(pl.col("run_id").is_null() | pl.col("run_id").is_duplicated()).with_columns(
            first.alias("first")
        )
        duplicates = repeated.filter(pl.col("run_id").is_null() | (pl.struct("file", "row") != pl.col("first")))
        invalid = pl.concat([invalid, _duplicate_problems(duplicates, files)]).sort("file", "row")
        # An error path: a loop over the rows that cannot be runs.
        for file, row, problem in invalid.rows():
            where = f"row {row}"
            ingest.set_aside(
                InvalidInputError(problem, where=where, fix="fix the table", skip="skip such rows", file=files[file])
            )
        if invalid.height:
            runs = runs.join(invalid.select("file", "row"), on=["file", "row"], how="anti", maintain_order="left")
        frames = {"runs": conform(runs, "runs")}
        outcomes = _outcome_rows(parts, runs)
        if outcomes.height:
            frames["outcomes"] = outcomes
        return frames


@validate_params({**LOG_PARAMETERS, "columns": [MAPPING, NONE]})
def ingest_table(
    paths: Paths,
    out: str | Path | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    """Read CSV or Parquet tables of per-run results (one row per run) into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        ``.csv`` or ``.parquet`` files, or folders (a folder stands for the ``.csv``,
        ``.parquet`` and ``.pq`` files directly in it, sorted by name); a single path is
        accepted too, and ``{path: system}`` names the system of every run of a path (None:
        ``system``). The files are only read and their rows are stacked, in order.
    out
        The Dataset folder to write, atomically; it may not be, hold or lie inside one of
        ``paths``. None: the Dataset is returned in memory.
    columns
        For each ``runs`` column, the file's column holding it: ``{"system": "model",
        "case_id": "question"}``. A file's column already named like a ``runs`` column
        (:data:`AUTO_MAPPED`: all but ``recommended``, ``correct`` and ``confidence``) is mapped to
        it without being named here. ``system`` (unless named for the path) and ``case_id``
        must be given either way.
    system
        ``runs.system`` of every run of a path not named in ``paths``, instead of a column's.
    overwrite
        Replace an existing ``out``.
    skip_invalid
        Set aside the rows that cannot be runs (a value that is not of its column's type, an
        empty system or case, a run id seen before), listed with their reasons in ``skipped``,
        instead of failing at the first.
    shards
        ``None`` or 1: one file per table. ``N``: the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and files read, the rows skipped, the warnings
        (columns ignored).

    Raises
    ------
    InvalidParameterError
        ``columns`` names something other than a ``runs`` column.
    IngestError
        A path is not a CSV or Parquet file, or cannot be read; a mapped column is not in a file
        (the message lists the file's columns); no column gives ``system`` or ``case_id``; a
        column is named like a ``runs`` column that another column is mapped to; or (without
        ``skip_invalid``) a row cannot be a run, or a run id is there twice (file and row named).
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read.

    Notes
    -----
    ``run_id``, when not mapped, is ``system/case_id[/task][/variant]/n``: ``n`` is the mapped
    ``epoch``, else the row's place among the rows of that system, case, task and variant (1 =
    first, in file order). Every column neither mapped nor named like an :data:`AUTO_MAPPED` column is a
    score when numeric or boolean (``outcomes``: its name, the row's value; null and NaN values
    are left out): pass/fail (``passed`` set) when boolean, or integer with only the values 0
    and 1, in every file; string (and other) columns are ignored with a warning.
    """
    return ingest_logs(
        FORMAT,
        _Reader(_check_columns(columns)),
        paths,
        out,
        system=system,
        overwrite=overwrite,
        skip_invalid=skip_invalid,
        shards=shards,
    )


def _duplicate_problems(duplicates: pl.DataFrame, files: list[Path]) -> pl.DataFrame:
    """``file, row, problem`` of each row whose run id is null or an earlier row's."""
    file = pl.col("first").struct.field("file").replace_strict(range(len(files)), [str(f) for f in files])
    where = pl.format(
        "run_id '{}' is that of {} row {} too; give each run its own id (or an epoch)",
        pl.col("run_id"),
        file,
        pl.col("first").struct.field("row"),
    )
    problem = pl.when(pl.col("run_id").is_null()).then(pl.lit("run_id is empty")).otherwise(where)
    return duplicates.select("file", "row", problem.alias("problem"))


def _outcome_rows(parts: list[_Part], runs: pl.DataFrame) -> pl.DataFrame:
    """``outcomes`` of the runs kept; a score is pass/fail when it is in every file that has it."""
    kinds: dict[str, bool] = {}
    for part in parts:
        for name, pass_fail in part.pass_fail.items():
            kinds[name] = kinds.get(name, True) and pass_fail
    pass_fail = pl.DataFrame(
        {"name": list(kinds), "pass_fail": list(kinds.values())},
        schema={"name": pl.String(), "pass_fail": pl.Boolean()},
    )
    long = pl.concat([part.outcomes for part in parts])
    return conform(
        long.join(runs.select("file", "row", "run_id"), on=["file", "row"], maintain_order="left")
        .join(pass_fail, on="name", how="left", maintain_order="left")
        .with_columns(pl.when(pl.col("pass_fail")).then(pl.col("value") == 1).alias("passed")),
        "outcomes",
    )
