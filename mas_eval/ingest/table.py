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

from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, InvalidParameterError, option
from mas_eval.ingest.logs import LogIngestResult, conform, dataset_of
from mas_eval.storage.inputs import input_file, read_csv, read_parquet
from mas_eval.storage.outputs import check_target
from mas_eval.storage.sharding import check_shards

__all__ = ["AUTO_MAPPED", "CSV_SUFFIXES", "PARQUET_SUFFIXES", "RUN_COLUMNS", "ingest_table", "parse_map"]

#: The ``runs`` columns a table's column can be mapped to.
RUN_COLUMNS: tuple[str, ...] = tuple(TABLES["runs"].names)
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
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
        msg = f"{file}: not a .csv or .parquet file; pass a CSV or Parquet table of runs, one row per run"
        raise IngestError(msg)
    try:
        return read()
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        msg = f"{file}: cannot be read as {kind} ({first}); check that it is a {kind} table of runs"
        raise IngestError(msg) from None


class _Part:
    """One file's runs rows, outcome rows, invalid rows and warnings."""

    def __init__(self, file: Path, index: int, frame: pl.DataFrame, columns: dict[str, str]) -> None:
        self.file, self.warnings = file, []
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
            if column not in mapping:
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
        for column in _REQUIRED:
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


def ingest_table(
    paths: Sequence[str | Path] | str | Path,
    out: str | Path | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    """Read CSV or Parquet tables of per-run results (one row per run) into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        ``.csv`` or ``.parquet`` files (a single path is accepted too); the files are only read
        and their rows are stacked, in order.
    out
        The Dataset folder to write, atomically; it may not be, hold or lie inside one of
        ``paths``. None: the Dataset is returned in memory.
    columns
        For each ``runs`` column, the file's column holding it: ``{"system": "model",
        "case_id": "question"}``. A file's column already named like a ``runs`` column
        (:data:`AUTO_MAPPED`: all but ``recommended``, ``correct`` and ``confidence``) is mapped to
        it without being named here. ``system`` and ``case_id`` must be given either way.
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
    count = check_shards(shards, where="ingest")
    mapping = _check_columns(columns)
    given = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not given:
        msg = "no input given; pass CSV or Parquet tables of runs"
        raise IngestError(msg)
    target = check_target(out, overwrite=overwrite, inputs=given) if out is not None else None
    files = [
        input_file(p, "a CSV or Parquet file", "pass CSV or Parquet tables of runs", error=IngestError) for p in given
    ]
    parts = [_Part(file, index, _read(file), mapping) for index, file in enumerate(files)]
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
    invalid = pl.concat([invalid, _duplicate_problems(duplicates, files)])
    if invalid.height:
        invalid = invalid.sort("file", "row")
        if not skip_invalid:
            file, row, problem = invalid.row(0)
            fix = f"fix the table, or pass {option('skip_invalid')} to skip such rows"
            msg = f"{files[file]}: row {row}: {problem}; {fix}"
            raise IngestError(msg)
        runs = runs.join(invalid.select("file", "row"), on=["file", "row"], how="anti", maintain_order="left")
    if not runs.height:
        msg = f"no run could be ingested ({invalid.height} row(s) skipped); nothing was written"
        raise IngestError(msg)
    frames = {"runs": conform(runs, "runs")}
    outcomes = _outcome_rows(parts, runs)
    if outcomes.height:
        frames["outcomes"] = outcomes
    dataset = dataset_of(frames, target, overwrite=overwrite, inputs=given, shards=count)
    return LogIngestResult(
        out=target,
        dataset=dataset,
        runs=runs.height,
        files=tuple(files),
        skipped=tuple((files[f], f"row {r}: {p}") for f, r, p in invalid.rows()) if skip_invalid else (),
        warnings=tuple(w for part in parts for w in part.warnings),
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
