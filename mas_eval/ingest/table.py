"""Read a plain table of per-run results (CSV or Parquet, one row per run) into a Dataset.

People keep results in a notebook's table: a row per run with the model or system, the question,
a few scores, the cost, and the settings of the run (its rounds, its agents). :func:`ingest_table`
maps named columns onto the ``runs`` table, makes the score columns ``outcomes``, and keeps every
other column as a run attribute: a column of ``runs`` of its own, which ``Scores.runs`` carries
(``compare(by="num_rounds")``). A paper's table of one column per system reads with ``wide``.
The mapping is in ``docs/ingest/table.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mas_eval.constraints import MAPPING, NONE, TEXT, TEXTS, Interval, Options, check_parameter, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, InvalidParameterError, option
from mas_eval.ingest.jsonl import BYTES_CEILING, MAX_LINE_BYTES
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import LOG_PARAMETERS, Ingest, InvalidInputError, LogFormat, Paths, ingest_logs
from mas_eval.storage.inputs import read_csv, read_parquet

__all__ = [
    "AUTO_MAPPED",
    "CSV_SUFFIXES",
    "FORMAT",
    "PARQUET_SUFFIXES",
    "RUN_COLUMNS",
    "WIDE_COLUMNS",
    "ingest_table",
    "parse_map",
    "parse_scores",
]

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
#: The runs columns a wide table's column names can give (``wide=``): one column per system (or task...).
WIDE_COLUMNS = ("system", "case_id", "task", "variant")
#: The columns every run needs; the rest may be absent.
_REQUIRED = ("system", "case_id")
#: Parts of a generated ``run_id``, in order; null parts are left out.
_ID_PARTS = ("system", "case_id", "task", "variant")
#: Counts and durations a run cannot have below 0: a negative one is set to null for its run and said.
_USAGE = ("iterations", "api_calls", "seconds", "tokens", "input_tokens", "output_tokens", "cost_usd", "tool_calls",
          "tool_errors")  # fmt: skip
#: The columns the reading adds, named so that no file's column can be one of them.
_FILE, _ROW, _SLOT, _WIDE, _VALUE = "\x00file", "\x00row", "\x00slot", "\x00wide", "\x00value"
#: A CSV is checked for long lines in pieces of at most this many bytes.
_PIECE = 2**20


def _fix_map(column: str) -> str:
    return option("columns", {column: "COLUMN"}, cli=f"--map {column}=COLUMN")


def parse_map(
    specs: str | Sequence[str], *, target: str = "RUNS_COLUMN", example: str = "system=model,case_id=question"
) -> dict[str, str]:
    """Parse ``--map`` text into the ``columns`` of :func:`ingest_table`: ``"system=model,case_id=question"``.

    Several texts (the option given more than once) are read as one, comma-separated list.
    ``target`` and ``example`` word the error for another adapter's columns
    (:func:`~mas_eval.ingest.ingest_annotations` maps annotation columns).

    Raises
    ------
    InvalidParameterError
        An item is not ``COLUMN=SOURCE``, names no ``runs`` column, or a column is mapped twice.

    Examples
    --------
    >>> parse_map(["system=model,case_id=question", "tokens=total"])
    {'system': 'model', 'case_id': 'question', 'tokens': 'total'}
    """
    texts = [specs] if isinstance(specs, str) else list(specs)
    mapping: dict[str, str] = {}
    for item in (part.strip() for text in texts for part in text.split(",")):
        column, equals, source = (s.strip() for s in item.partition("="))
        if not (equals and column and source):
            msg = f"--map: {item!r} is not {target}=SOURCE_COLUMN; write e.g. --map {example}"
            raise InvalidParameterError(msg)
        if column in mapping:
            msg = f"--map: {column} is mapped twice ({mapping[column]!r} and {source!r}); map each column once"
            raise InvalidParameterError(msg)
        mapping[column] = source
    return mapping


def parse_scores(specs: str | Sequence[str]) -> list[str]:
    """Parse ``--scores`` text into the ``scores`` of :func:`ingest_table`: the score columns, comma-separated.

    Raises
    ------
    InvalidParameterError
        An empty name, or a column named twice.

    Examples
    --------
    >>> parse_scores(["accuracy,f1", "cost per answer"])
    ['accuracy', 'f1', 'cost per answer']
    """
    texts = [specs] if isinstance(specs, str) else list(specs)
    names = [part.strip() for text in texts for part in text.split(",")]
    if any(not name for name in names):
        msg = f"--scores: {', '.join(texts)!r} holds an empty name; write the score columns, e.g. --scores accuracy,f1"
        raise InvalidParameterError(msg)
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        msg = f"--scores: {twice[0]!r} is named twice; name each score column once"
        raise InvalidParameterError(msg)
    return names


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


@dataclass(frozen=True)
class _Options:
    """What the caller said of the tables: the mapping, the score columns, the wide layout."""

    mapping: dict[str, str]
    scores: tuple[str, ...] | None
    wide: str | None
    wide_score: str
    max_line_bytes: int


def _options(
    columns: Mapping[str, str] | None,
    scores: Sequence[str] | str | None,
    wide: str | None,
    wide_score: str,
    max_line_bytes: int,
) -> _Options:
    """Return the parameters of :func:`ingest_table`, checked."""
    mapping = _check_columns(columns)
    named = None
    if scores is not None:
        if isinstance(scores, str):
            scores = [scores]
        if not all(isinstance(s, str) and s for s in scores) or len(set(scores)) != len(scores):
            msg = (
                f"ingest_table: scores={list(scores)!r} is invalid; name each score column once, as a non-empty string"
            )
            raise InvalidParameterError(msg)
        named = tuple(scores)
        taken = [s for s in named if s in mapping.values()]
        if taken:
            column = next(c for c, source in mapping.items() if source == taken[0])
            msg = f"ingest_table: {taken[0]!r} is both a score and mapped to runs.{column}; name it in one of them"
            raise InvalidParameterError(msg)
    check_parameter("wide", wide, [Options((None, *WIDE_COLUMNS))], where="ingest_table")
    if wide is not None and wide in mapping:
        msg = (
            f"ingest_table: wide={wide!r} takes runs.{wide} from the score columns' names, and columns maps it to "
            f"{mapping[wide]!r}; drop one of them"
        )
        raise InvalidParameterError(msg)
    if not isinstance(wide_score, str) or not wide_score.strip():
        msg = f"ingest_table: wide_score={wide_score!r} is invalid; name the score the wide table's cells hold"
        raise InvalidParameterError(msg)
    check_parameter("max_line_bytes", max_line_bytes, [Interval(int, 1, BYTES_CEILING)], where="ingest_table")
    return _Options(mapping, named, wide, wide_score, int(max_line_bytes))


# -- reading a file ----------------------------------------------------------------------------


def _check_lines(file: Path, max_bytes: int) -> None:
    """Return an :class:`InvalidInputError` naming the first line of the CSV ``file`` longer than ``max_bytes``.

    Read in pieces of at most ``max_bytes``, so that memory stays bounded whatever the file holds
    (Polars' CSV reader holds a line whole, and aborts on one of a gigabyte): a line longer than
    ``max_bytes`` runs on past a piece's end.
    """
    piece = min(_PIECE, max_bytes)
    line, run = 1, 0  # the line being read (1 = the first), and its bytes so far
    with file.open("rb") as handle:
        while chunk := handle.read(piece):
            first = chunk.find(b"\n")
            if first < 0:
                run += len(chunk)
                if run > max_bytes:
                    break
                continue
            if run + first > max_bytes:
                break
            # The lines that start and end within the piece are shorter than it, so than the limit.
            line += chunk.count(b"\n")
            run = len(chunk) - chunk.rfind(b"\n") - 1
        else:
            return
    limit = option("max_line_bytes", max_bytes, cli=f"--max-line-mb {max_bytes / 2**20:g}")
    problem = f"line {line} is longer than the longest line read ({limit}): more than {max_bytes:,} bytes"
    raise InvalidInputError(problem, fix="check that it is a CSV table of runs, or raise the limit")


def _read(file: Path, max_line_bytes: int) -> pl.DataFrame:
    """Read the file's table; name an unreadable or empty one, with why."""
    name = file.name.lower()
    if name.endswith(CSV_SUFFIXES):
        kind = "CSV"
        try:
            _check_lines(file, max_line_bytes)
        except OSError as exc:
            msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
            raise InvalidInputError(msg) from None

        def read() -> pl.DataFrame:
            return read_csv(file, infer_schema_length=None)

    elif name.endswith(PARQUET_SUFFIXES):
        kind = "Parquet"

        def read() -> pl.DataFrame:
            return read_parquet(file)

    else:
        msg = "not a .csv or .parquet file"
        raise InvalidInputError(msg, fix="pass a CSV or Parquet table of runs, one row per run")
    try:
        frame = read()
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fix = f"check that it is a {kind} table of runs"
        msg = f"cannot be read as {kind} ({first})"
        raise InvalidInputError(msg, fix=fix) from None
    if frame.height == 0:
        what = f"a header ({', '.join(frame.columns[:5])}{', ...' if frame.width > 5 else ''})" if frame.width else ""
        problem = f"holds no rows{': only ' + what if what else ''}"
        raise InvalidInputError(problem, fix="pass a table with a row per run")
    return frame


def _numeric(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or dtype == pl.Boolean()


def _quoted(text: str) -> pl.Expr:
    """Return a literal piece of a message: never read as a template (a column may be named ``sys{}``)."""
    return pl.lit(text, dtype=pl.String())


class _Part:
    """One file's runs rows, outcome rows, invalid rows and warnings; ``system`` names every run's system."""

    def __init__(self, file: Path, index: int, frame: pl.DataFrame, options: _Options, system: str | None) -> None:
        self.file, self.warnings, self.system, self.options = file, [], system, options
        present = frame.columns
        columns, wide = options.mapping, options.wide
        mapping = {c: c for c in AUTO_MAPPED if c in present and c not in columns and c != wide} | columns
        for column, source in mapping.items():
            if source not in present:
                msg = (
                    f"{file}: no column {source!r} (for runs.{column}); its columns are: {', '.join(present)}; "
                    f"name one of them in {_fix_map(column)}"
                )
                raise IngestError(msg)
        for column in _REQUIRED:
            given = column == wide or (column == "system" and system is not None)
            if column not in mapping and not given:
                msg = (
                    f"{file}: no column gives runs.{column} (its columns are: {', '.join(present)}); "
                    f"pass {_fix_map(column)}"
                )
                raise IngestError(msg)
        sources = set(mapping.values())
        clashing = [c for c in present if c in AUTO_MAPPED and c not in sources]
        if clashing:
            column = clashing[0]
            if column == wide:
                msg = (
                    f"{file}: column {column!r} would give runs.{column}, which {option('wide', wide)} takes from "
                    "the score columns' names; rename or drop it"
                )
            else:
                msg = (
                    f"{file}: column {column!r} is named like runs.{column}, which comes from {mapping[column]!r}: "
                    "it would be both a runs column and a score; rename or drop one of them"
                )
            raise IngestError(msg)
        if wide == "system" and system is not None:
            msg = (
                f"{file}: is named the system {system!r}, and {option('wide', wide)} takes each run's system from the "
                "score columns' names; drop one of them"
            )
            raise IngestError(msg)
        left = [c for c in present if c not in sources]
        scores = self._scores(frame, left)
        # A column named like a runs column it does not give (a decision's `correct`) cannot be an attribute.
        unmapped = [c for c in left if c not in scores and c in RUN_COLUMNS]
        if unmapped:
            self.warnings.append(
                f"{file}: column(s) {', '.join(map(repr, unmapped))} named like runs columns but neither mapped nor "
                f"scores; ignored (map one with {_fix_map(unmapped[0])} to keep it)"
            )
        self.attributes = [c for c in left if c not in scores and c not in RUN_COLUMNS]
        self.mapping = mapping
        rows = frame.with_row_index(_ROW, offset=1).with_columns(pl.lit(index, pl.Int64()).alias(_FILE))
        if wide is not None:
            rows = self._wide(rows, scores)
            self.mapping = {**mapping, wide: _WIDE}
            scores = [_VALUE]
        else:
            rows = rows.with_columns(pl.lit(0, pl.Int64()).alias(_SLOT))
        self.runs, self.invalid = self._runs(rows)
        self.outcomes, self.pass_fail = self._outcomes(rows, scores)

    def _scores(self, frame: pl.DataFrame, left: list[str]) -> list[str]:
        """Return the score columns: those ``scores`` names (checked), else every numeric or boolean column left."""
        named, file = self.options.scores, self.file
        if named is None:
            scores = [c for c in left if _numeric(frame.schema[c])]
            self._warn_of_design(frame, scores)
            return scores
        absent = [c for c in named if c not in frame.columns]
        if absent:
            msg = (
                f"{file}: no column {absent[0]!r} (a score in {option('scores', list(named))}); its columns are: "
                f"{', '.join(frame.columns)}"
            )
            raise IngestError(msg)
        mapped = [c for c in named if c not in left]
        if mapped:
            msg = f"{file}: column {mapped[0]!r} is named like a runs column, which it gives; it cannot be a score too"
            raise IngestError(msg)
        for column in named:
            if not _numeric(frame.schema[column]):
                as_number = pl.col(column).cast(pl.Float64(), strict=False)
                bad = frame.with_row_index(_ROW, offset=1).filter(pl.col(column).is_not_null() & as_number.is_null())
                where = f" (row {bad[_ROW][0]}: {str(bad[column][0])[:40]!r})" if bad.height else ""
                msg = (
                    f"{file}: score column {column!r} holds {frame.schema[column]} values{where}, not numbers; leave "
                    "a missing score's cell empty, or keep the column as a run attribute (not in scores)"
                )
                raise IngestError(msg)
        return list(named)

    def _warn_of_design(self, frame: pl.DataFrame, scores: list[str]) -> None:
        """Return a warning when, no score being named, whole-number columns beyond 0 and 1 were taken as scores.

        They may be the runs' settings (rounds, agents), which ``scores`` would keep as attributes.
        """
        integral = [c for c in scores if frame.schema[c].is_integer()]
        if not integral:
            return
        binary = frame.select(pl.col(c).drop_nulls().is_in([0, 1]).all() for c in integral).row(0)
        counts = [c for c, only_01 in zip(integral, binary, strict=True) if not only_01]
        if counts:
            named = ", ".join(map(repr, counts))
            fix = option("scores", ["SCORE", "..."], cli="--scores SCORE,...")
            self.warnings.append(
                f"{self.file}: took column(s) {named} (whole numbers beyond 0 and 1) as scores; if they describe the "
                f"runs (rounds, agents), name the score columns with {fix} and the others are kept as run attributes"
            )

    def _wide(self, rows: pl.DataFrame, scores: list[str]) -> pl.DataFrame:
        """Return a row per (row, score column) with a value: its column's name in ``_WIDE``, value in ``_VALUE``."""
        wide, file = self.options.wide, self.file
        if not scores:
            msg = (
                f"{file}: no score column to read as one {wide} each ({option('wide', wide)}); its columns are: "
                f"{', '.join(c for c in rows.columns if c not in (_ROW, _FILE))}"
            )
            raise IngestError(msg)
        blank = [c for c in scores if not c.strip()]
        if blank:
            msg = f"{file}: a score column is named {blank[0]!r}, which names no {wide}; name the column"
            raise IngestError(msg)
        keep = [c for c in rows.columns if c not in scores]
        parts = [
            rows.select(
                *keep,
                pl.lit(slot, pl.Int64()).alias(_SLOT),
                pl.lit(column, pl.String()).alias(_WIDE),
                pl.col(column).cast(pl.Float64()).alias(_VALUE),
            )
            for slot, column in enumerate(scores)
        ]
        long = pl.concat(parts).filter(pl.col(_VALUE).is_not_null() & pl.col(_VALUE).is_not_nan())
        # A score is pass/fail when every system's column is: boolean, or whole numbers 0 and 1 only.
        kinds = [rows.schema[c] == pl.Boolean() or rows.schema[c].is_integer() for c in scores]
        binary = long[_VALUE].is_in([0.0, 1.0]).all()
        self.wide_pass_fail = all(kinds) and bool(binary)
        return long.sort(_ROW, _SLOT)

    def _runs(self, rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Return the runs columns in the schema's types with the run attributes, and the rows that cannot be runs.

        The rows refused are ``file, row, slot, problem``. A negative count or duration is set to null,
        with a warning.
        """
        schema = TABLES["runs"].polars_schema
        values, problems = [], []
        for column, source in self.mapping.items():
            given = pl.col(source)
            source_type, target = rows.schema[source], schema[column]
            if source_type.is_float():
                given = given.fill_nan(None)  # a NaN is a missing number
            cast = given.cast(target, strict=False)
            wrong = given.is_not_null() & cast.is_null()
            shown = given.cast(pl.String(), strict=False)
            said = f"{source!r} (runs.{column}) holds "
            if target.is_integer():
                # Never truncated: 100.7 tokens and epoch 1.6 are errors, not 100 and 1.
                fraction = given.is_not_null() & (given != given.round(0)) if source_type.is_float() else pl.lit(False)
                too_large = source_type.is_numeric() & ~fraction
                wrong = wrong | fraction
                problem = pl.concat_str(
                    _quoted(said),
                    shown,
                    pl.when(too_large)
                    .then(_quoted(", beyond the largest integer a column holds (2**63 - 1)"))
                    .otherwise(_quoted(", not a whole number")),
                )
            elif target.is_float():
                wrong = wrong | (cast.is_infinite().fill_null(False))
                problem = pl.concat_str(_quoted(said), shown, _quoted(", not a finite number"))
            else:
                problem = pl.concat_str(_quoted(said), shown, _quoted(f", not {target}"))
            if column in _USAGE:
                negative = cast < 0
                count = rows.select(negative.fill_null(False).sum()).item()
                if count:
                    self.warnings.append(
                        f"{self.file}: {source!r} (runs.{column}) was negative in {count:,} row(s), which no run can "
                        "have; set to null there"
                    )
                cast = pl.when(negative).then(None).otherwise(cast)
            values.append(cast.alias(column))
            problems.append(pl.when(wrong).then(problem))
            if column in ("run_id", *_REQUIRED) and source != _WIDE:
                blank = given.cast(pl.String(), strict=False).str.strip_chars() == ""
                empty = pl.when(given.is_null()).then(_quoted("is empty")).when(blank).then(_quoted("is blank"))
                problems.append(pl.concat_str(_quoted(f"{source!r} (runs.{column}) "), empty))
        if self.system is not None:  # the system named for the file, whatever a column says
            values = [value for value in values if value.meta.output_name() != "system"]
            values.append(pl.lit(self.system, schema["system"]).alias("system"))
        problem = pl.coalesce(problems) if problems else pl.lit(None, pl.String())
        checked = rows.select(_FILE, _ROW, _SLOT, *values, *self.attributes, problem.alias("problem"))
        invalid = checked.filter(pl.col("problem").is_not_null()).select(_FILE, _ROW, _SLOT, "problem")
        return checked.filter(pl.col("problem").is_null()).drop("problem"), invalid

    def _outcomes(self, rows: pl.DataFrame, scores: list[str]) -> tuple[pl.DataFrame, dict[str, bool]]:
        """Return ``file, row, slot, name, value`` of each score, and whether each score is pass/fail in this file."""
        empty = pl.DataFrame(
            schema={_FILE: pl.Int64(), _ROW: pl.UInt32(), _SLOT: pl.Int64(), "name": pl.String(), "value": pl.Float64()}
        )
        if not scores:
            return empty, {}
        if self.options.wide is not None:
            name = self.options.wide_score
            long = rows.select(_FILE, _ROW, _SLOT, pl.lit(name).alias("name"), pl.col(_VALUE).alias("value"))
            return long, {name: self.wide_pass_fail}
        integral = [c for c in scores if rows.schema[c].is_integer()]
        zero_one = rows.select(pl.col(c).drop_nulls().is_in([0, 1]).all() for c in integral).row(0) if integral else ()
        pass_fail = {c: rows.schema[c] == pl.Boolean() for c in scores} | dict(zip(integral, zero_one, strict=True))
        long = rows.select(_FILE, _ROW, _SLOT, *(pl.col(c).cast(pl.Float64()) for c in scores)).unpivot(
            scores, index=[_FILE, _ROW, _SLOT], variable_name="name", value_name="value"
        )
        return long.filter(pl.col("value").is_finite()), pass_fail


class _Reader:
    """Tables read one at a time; their rows checked together once all are read (a run id spans files)."""

    def __init__(self, options: _Options) -> None:
        self.options = options
        self.parts: list[_Part] = []

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        part = _Part(file, len(self.parts), _read(file, self.options.max_line_bytes), self.options, system)
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
        identity = pl.struct(_FILE, _ROW, _SLOT)
        repeated = runs.filter(pl.col("run_id").is_null() | pl.col("run_id").is_duplicated()).with_columns(
            identity.first().over("run_id").alias("first")
        )
        duplicates = repeated.filter(pl.col("run_id").is_null() | (identity != pl.col("first")))
        invalid = pl.concat([invalid, _duplicate_problems(duplicates, files)]).sort(_FILE, _ROW, _SLOT)
        # An error path: a loop over the rows that cannot be runs, each said once (a wide row is several runs).
        for file, row, problem in (
            invalid.unique([_FILE, _ROW, "problem"], maintain_order=True).select(_FILE, _ROW, "problem").rows()
        ):
            where = f"row {row}"
            ingest.set_aside(
                InvalidInputError(problem, where=where, fix="fix the table", skip="skip such rows", file=files[file])
            )
        if invalid.height:
            runs = runs.join(invalid.select(_FILE, _ROW, _SLOT), on=[_FILE, _ROW, _SLOT], how="anti",
                             maintain_order="left")  # fmt: skip
        attributes = list(dict.fromkeys(name for part in parts for name in part.attributes))
        frames = {"runs": pl.concat([conform(runs, "runs"), runs.select(attributes)], how="horizontal")}
        outcomes = _outcome_rows(parts, runs)
        if outcomes.height:
            frames["outcomes"] = outcomes
        return frames


@validate_params(
    {
        "scores": [TEXTS, NONE],
        "wide": [TEXT, NONE],
        "wide_score": [TEXT],
        "max_line_bytes": [Interval(int, 1, BYTES_CEILING)],
        **LOG_PARAMETERS,
        "columns": [MAPPING, NONE],
    }
)
def ingest_table(
    paths: Paths,
    out: str | Path | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    scores: Sequence[str] | None = None,
    wide: str | None = None,
    wide_score: str = "score",
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> LogIngestResult:
    r"""Read CSV or Parquet tables of per-run results (one row per run) into a Dataset, written to ``out`` if given.

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
        it without being named here. ``system`` (unless named for the path, or ``wide``) and
        ``case_id`` must be given either way.
    scores
        The score columns (``outcomes``, one per column and run). Every other column not mapped
        is a run attribute: a column of ``runs`` of its own (``num_rounds``, ``n_agents``), which
        ``Scores.runs`` carries for ``compare(by=...)``. None: every numeric or boolean column
        not mapped is a score (and the rest are attributes).
    wide
        A paper's table: one row per case (or task), one column per system, each cell a
        system's score. ``wide="system"`` makes each score column's cells the runs of the system
        the column is named after (a ``runs`` column of :data:`WIDE_COLUMNS`); an empty cell is no run.
    wide_score
        The name of the score a wide table's cells hold (``outcomes.name``).
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
    max_line_bytes
        Longest line of a CSV read, in bytes (default 16 MiB); a longer one refuses the file, read
        past in bounded pieces.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and files read, the rows skipped, the warnings.

    Raises
    ------
    InvalidParameterError
        ``columns`` names something other than a ``runs`` column; ``scores`` names a column twice or a
        mapped one; ``wide`` is not one of :data:`WIDE_COLUMNS`, or is mapped too.
    IngestError
        A path is not a CSV or Parquet file, cannot be read, holds no rows, or has a line longer than
        ``max_line_bytes``; a mapped or score column is not in a file (the message lists the file's
        columns); a score column holds text; no column gives ``system`` or ``case_id``; a column is
        named like a ``runs`` column that another column is mapped to; or (without
        ``skip_invalid``) a row cannot be a run, or a run id is there twice (file and row named).
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read.

    Notes
    -----
    ``run_id``, when not mapped, is ``system/case_id[/task][/variant]/n``: ``n`` is the mapped
    ``epoch``, else the row's place among the rows of that system, case, task and variant (1 =
    first, in file order). A score (``outcomes``: its name, the row's value; null and NaN values
    are left out) is pass/fail (``passed`` set) when boolean, or integer with only the values 0
    and 1, in every file. A value is cast to its ``runs`` column's type strictly: a fraction in an
    integer column (100.7 tokens, epoch 1.6) refuses the row, never truncated.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     table = Path(folder) / "runs.csv"
    ...     _ = table.write_text("model,question,num_rounds,correct\nmas,q1,3,true\nsingle,q1,1,false\n")
    ...     result = ingest_table(table, columns={"system": "model", "case_id": "question"}, scores=["correct"])
    >>> result.dataset.collect("runs").select("run_id", "system", "num_rounds").rows()
    [('mas/q1/1', 'mas', 3), ('single/q1/1', 'single', 1)]
    >>> result.dataset.collect("outcomes").select("run_id", "name", "passed").rows()
    [('mas/q1/1', 'correct', True), ('single/q1/1', 'correct', False)]
    """
    options = _options(columns, scores, wide, wide_score, max_line_bytes)
    return ingest_logs(
        FORMAT,
        _Reader(options),
        paths,
        out,
        system=system,
        overwrite=overwrite,
        skip_invalid=skip_invalid,
        shards=shards,
    )


def _duplicate_problems(duplicates: pl.DataFrame, files: list[Path]) -> pl.DataFrame:
    """Return ``file, row, slot, problem`` of each run whose run id is null or an earlier run's."""
    file = pl.col("first").struct.field(_FILE).replace_strict(range(len(files)), [str(f) for f in files])
    where = pl.concat_str(
        _quoted("run_id '"),
        pl.col("run_id"),
        _quoted("' is that of "),
        file,
        _quoted(" row "),
        pl.col("first").struct.field(_ROW).cast(pl.String()),
        _quoted(" too; give each run its own id (or an epoch)"),
    )
    problem = pl.when(pl.col("run_id").is_null()).then(_quoted("run_id is empty")).otherwise(where)
    return duplicates.select(_FILE, _ROW, _SLOT, problem.alias("problem"))


def _outcome_rows(parts: list[_Part], runs: pl.DataFrame) -> pl.DataFrame:
    """Return the ``outcomes`` of the runs kept; a score is pass/fail when it is in every file that has it."""
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
        long.join(runs.select(_FILE, _ROW, _SLOT, "run_id"), on=[_FILE, _ROW, _SLOT], maintain_order="left")
        .join(pass_fail, on="name", how="left", maintain_order="left")
        .with_columns(pl.when(pl.col("pass_fail")).then(pl.col("value") == 1).alias("passed")),
        "outcomes",
    )
