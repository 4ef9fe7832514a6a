"""Read failure-mode annotations of runs (MAST's, Who&When's, a table's) into a Dataset's ``annotations``.

Studies of why multi-agent systems fail label each run with the failure modes annotators found
in it: MAST (Cemri et al. 2025) publishes per trace a dict of its 14 modes, each 0 or 1, and per
annotator a flag for each mode of its agreement study; Who&When (Zhang et al. 2025) names per
failure log the agent and the step of the decisive error. :func:`ingest_annotations` reads

* a CSV with one row per run, mode and annotator (``run_id, mode, annotator, present``; other
  names mapped with ``columns``), or a *wide* CSV with one 0/1 column per mode (a row per run
  and annotator), as MAST's tables have;
* JSON in MAST's layouts (``mast_annotation``, or the human-labelled ``annotations`` list of
  ``failure mode`` and ``annotator_N`` flags) or Who&When's (``mistake_agent``,
  ``mistake_step``);

and either joins them onto the runs of an existing Dataset (``into``: an annotation of a run it
does not hold is refused) or makes the runs from what the files say of them (their system and
case). With ``taxonomy="mast"`` every mode must be one of MAST's, is stored as its label
(``"1.1 Disobey task specification"``) and gets its category. The mapping is in
``docs/ingest/annotations.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import MAPPING, NAME, NONE, PATH, TEXT, Instance, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.data.taxonomies import TAXONOMIES, Taxonomy, mode_of, modes
from mas_eval.errors import IngestError, InvalidParameterError, option
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import (
    LOG_PARAMETERS,
    Ingest,
    InvalidInputError,
    LogFormat,
    Paths,
    ingest_logs,
    json_type,
    read_json,
)
from mas_eval.ingest.values import flag, identifier, text
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.inputs import read_csv

__all__ = ["ANNOTATION_COLUMNS", "FORMAT", "WHO_WHEN_MODE", "ingest_annotations"]

#: The columns a file's column can be mapped to (``columns``, ``--map``): the annotation's and its run's.
ANNOTATION_COLUMNS: tuple[str, ...] = (
    "run_id", "mode", "annotator", "present", "agent_id", "round", "category", "system", "case_id",
)  # fmt: skip
#: The mode of a Who&When log's annotation: the decisive error that made the run fail.
WHO_WHEN_MODE = "decisive error"
#: The annotator of a layout that names none: MAST's per-trace flags, Who&When's agreed label.
_MAST_ANNOTATOR, _WHO_WHEN_ANNOTATOR = "mast_annotation", "Who&When"

FORMAT = LogFormat(
    name="annotation",
    files="CSV or JSON files of annotations",
    suffixes=(".csv", ".json"),
    in_folder="no .csv or .json files",
    record="annotation",
    skips="file(s), row(s) or record(s)",
)

_ANNOTATION = TABLES["annotations"].polars_schema
_RUN_FIELDS = ("run_id", "system", "case_id", "task", "variant", "target", "metadata")


def _fix_map(column: str) -> str:
    return option("columns", {column: "COLUMN"}, cli=f"--map {column}=COLUMN")


def _check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    mapping = dict(columns or {})
    unknown = [c for c in mapping if c not in ANNOTATION_COLUMNS]
    if unknown:
        msg = f"columns: {unknown[0]!r} is not an annotation column; map one of: {', '.join(ANNOTATION_COLUMNS)}"
        raise InvalidParameterError(msg)
    empty = [c for c, source in mapping.items() if not isinstance(source, str) or not source]
    if empty:
        msg = f"columns: {empty[0]!r} is mapped to {mapping[empty[0]]!r}, not a column's name; name the source column"
        raise InvalidParameterError(msg)
    return mapping


def _check_name(value: object, what: str) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        msg = f"ingest_annotations: {what}={value!r} is not a name; pass a non-empty string, or None"
        raise InvalidParameterError(msg)
    return value if isinstance(value, str) else None


def _into(into: Dataset | str | Path | None) -> tuple[Dataset | None, list[Path]]:
    """Return the Dataset the annotations join, and its folder (an input the output may not replace)."""
    if into is None:
        return None, []
    if isinstance(into, Dataset):
        return into, [] if into.source is None else [Path(into.source)]
    if isinstance(into, str | Path):
        return Dataset.open(into), [Path(into)]
    msg = f"ingest_annotations: into must be a Dataset or its folder, not {type(into).__name__}"
    raise InvalidParameterError(msg)


class _Reader:
    """Annotation rows and run rows of every file read; checked against each other once all are read."""

    def __init__(
        self, columns: dict[str, str], into: Dataset | None, taxonomy: Taxonomy | None, annotator: str | None
    ) -> None:
        self.columns, self.into, self.taxonomy, self.annotator = columns, into, taxonomy, annotator
        self.files: list[Path] = []
        #: Per annotation: its columns, the file's index and where in it.
        self.rows: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []

    # -- one file ---------------------------------------------------------------------------

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        rows: list[dict[str, Any]] = []
        runs: list[dict[str, Any]] = []
        index = len(self.files)
        if file.name.lower().endswith(".csv"):
            self._read_csv(file, index, system, ingest, rows, runs)
        else:
            self._read_json(file, index, system, ingest, rows, runs)
        self.files.append(file)
        self.rows.extend(rows)
        self.runs.extend(runs)

    def _mode(self, given: str) -> tuple[str, str | None]:
        """Return the mode as stored and its taxonomy category (None without one); refuse an unknown mode."""
        if self.taxonomy is None:
            return given, None
        found = mode_of(given, self.taxonomy)
        if found is None:
            listed = ", ".join(m.code for m in modes(self.taxonomy))
            msg = (
                f"mode {given!r} is not a mode of the {self.taxonomy!r} taxonomy (its modes: {listed}, by code or "
                "by code and name)"
            )
            raise InvalidInputError(
                msg,
                fix=f"name one of its modes, or leave out {option('taxonomy', self.taxonomy, cli='--taxonomy')}",
            )
        return found.label, found.category

    def _annotation(
        self, index: int, where: str, run_id: str, mode: str, annotator: str, present: bool, **other: Any
    ) -> dict[str, Any]:
        label, category = self._mode(mode)
        given = other.pop("category", None)
        return {
            "run_id": run_id,
            "mode": label,
            "annotator": annotator,
            "present": present,
            "agent_id": other.get("agent_id"),
            "round": other.get("round"),
            "category": given if given is not None else category,
            "_file": index,
            "_where": where,
        }

    def _run(self, index: int, where: str, **fields: Any) -> dict[str, Any]:
        return {**dict.fromkeys(_RUN_FIELDS), **fields, "_file": index, "_where": where}

    # -- CSV ---------------------------------------------------------------------------------

    def _read_csv(
        self, file: Path, index: int, system: str | None, ingest: Ingest, rows: list[dict[str, Any]], runs: list
    ) -> None:
        try:
            frame = read_csv(file, infer_schema=False)
        except (OSError, pl.exceptions.PolarsError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            msg = f"cannot be read as CSV ({first})"
            raise InvalidInputError(msg, fix="check that it is a CSV table") from None
        present = frame.columns
        mapping = {c: c for c in ANNOTATION_COLUMNS if c in present and c not in self.columns} | self.columns
        for column, source in mapping.items():
            if source not in present:
                msg = (
                    f"{file}: no column {source!r} (for {column}); its columns are: {', '.join(present)}; "
                    f"name one of them in {_fix_map(column)}"
                )
                raise IngestError(msg)
        wide = "mode" not in mapping
        needed = ["run_id"] + ([] if wide else ["present"])
        needed += [] if self.into is not None else ["case_id"] + ([] if system is not None else ["system"])
        for column in needed:
            if column not in mapping:
                into = "" if self.into is not None else f" or {option('into', 'DATASET', cli='--into DATASET')}"
                msg = (
                    f"{file}: no column gives {column} (its columns are: {', '.join(present)}); pass {_fix_map(column)}"
                )
                raise IngestError(msg + (into if column in ("system", "case_id") else ""))
        if "annotator" not in mapping and self.annotator is None:
            msg = (
                f"{file}: no column gives the annotator (its columns are: {', '.join(present)}); pass "
                f"{_fix_map('annotator')} or {option('annotator', 'NAME', cli='--annotator NAME')}"
            )
            raise IngestError(msg)
        used = set(mapping.values())
        mode_columns = [c for c in present if c not in used] if wide else []
        if wide and not mode_columns:
            msg = (
                f"{file}: no mode column: a table without a mode column has one column per mode (0/1), and every "
                f"column of this one is mapped; pass {_fix_map('mode')} for a table with a row per mode"
            )
            raise IngestError(msg)
        # An error path over a small table's rows: each cell checked by values.py before it is a value.
        for number, row in enumerate(frame.iter_rows(named=True), start=1):
            with ingest.attempt(f"row {number}"):
                self._csv_row(row, mapping, mode_columns, index, f"row {number}", system, rows, runs)

    def _csv_row(
        self,
        row: dict[str, Any],
        mapping: dict[str, str],
        mode_columns: list[str],
        index: int,
        where: str,
        system: str | None,
        rows: list[dict[str, Any]],
        runs: list[dict[str, Any]],
    ) -> None:
        def cell(column: str) -> Any:
            value = row[mapping[column]] if column in mapping else None
            return None if value is None or not value.strip() else value

        run_id = identifier(cell("run_id"), mapping["run_id"])
        annotator = identifier(cell("annotator"), mapping["annotator"]) if "annotator" in mapping else self.annotator
        other = {c: text(cell(c), mapping[c]) for c in ("agent_id", "round", "category") if c in mapping}
        found = []
        if mode_columns:
            for column in mode_columns:
                value = flag(row[column], column, strings=True)
                if value is not None:
                    found.append(self._annotation(index, where, run_id, column, annotator, value, **other))
        else:
            value = flag(row[mapping["present"]], mapping["present"], strings=True)
            if value is None:
                msg = f"field {mapping['present']!r} is empty: the annotation says nothing"
                raise InvalidInputError(msg)
            mode = identifier(cell("mode"), mapping["mode"])
            found.append(self._annotation(index, where, run_id, mode, annotator, value, **other))
        rows.extend(found)
        if self.into is None:
            named = system if system is not None else identifier(cell("system"), mapping["system"])
            runs.append(
                self._run(
                    index, where, run_id=run_id, system=named, case_id=identifier(cell("case_id"), mapping["case_id"])
                )
            )

    # -- JSON --------------------------------------------------------------------------------

    def _read_json(
        self, file: Path, index: int, system: str | None, ingest: Ingest, rows: list[dict[str, Any]], runs: list
    ) -> None:
        document = read_json(file, what="annotations (MAST's or Who&When's JSON)")
        if isinstance(document, dict):
            records, single = [document], True
        elif isinstance(document, list):
            records, single = document, False
        else:
            msg = f"holds {json_type(document)}, not a record of annotations or a list of them"
            raise InvalidInputError(
                msg,
                fix="pass MAST's or Who&When's JSON, or a CSV",
            )
        for number, record in enumerate(records, start=1):
            where = "" if single else f"record {number}"
            with ingest.attempt(where):
                self._json_record(file, index, where, record, system, rows, runs)

    def _json_record(
        self,
        file: Path,
        index: int,
        where: str,
        record: object,
        system: str | None,
        rows: list[dict[str, Any]],
        runs: list[dict[str, Any]],
    ) -> None:
        if not isinstance(record, dict):
            msg = f"is {json_type(record)}, not an object"
            raise InvalidInputError(msg)
        if "mast_annotation" in record:
            read = self._mast_judged
        elif "mistake_agent" in record:
            read = self._who_when
        elif isinstance(record.get("annotations"), list):
            read = self._mast_human
        else:
            keys = ", ".join(sorted(map(str, record))[:8]) or "none"
            msg = (
                f"is in none of the layouts read here (its keys: {keys}): MAST's traces have 'mast_annotation' or "
                "'annotations', Who&When's logs 'mistake_agent'"
            )
            raise InvalidInputError(
                msg,
                fix="pass MAST's or Who&When's JSON, or a CSV",
            )
        found, run = read(file, record, system)
        rows.extend(self._annotation(index, where, **row) for row in found)
        if self.into is None:
            runs.append(self._run(index, where, **run))

    def _mast_run(self, record: dict[str, Any], system: str | None, run_id: str) -> dict[str, Any]:
        """Read a MAST trace's run: MAS and benchmark named, each trace its own case.

        The files do not say which problem a trace solved, so no two systems are paired on one.
        """
        named = system if system is not None else identifier(record.get("mas_name"), "mas_name")
        return {
            "run_id": run_id,
            "system": named,
            "case_id": run_id,
            "task": text(record.get("benchmark_name"), "benchmark_name"),
            "variant": text(record.get("llm_name"), "llm_name"),
        }

    def _mast_judged(
        self,
        file: Path,  # noqa: ARG002 -- the signature of the three layouts' readers; Who&When's reads it
        record: dict[str, Any],
        system: str | None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        flags = record["mast_annotation"]
        if not isinstance(flags, dict):
            msg = f"'mast_annotation' is {json_type(flags)}, not an object of mode: 0 or 1"
            raise InvalidInputError(msg)
        trace = record.get("trace")
        key = trace.get("key") if isinstance(trace, dict) else None
        trace_id = identifier(record.get("trace_id"), "trace_id")
        run_id = f"{text(key, 'trace.key')}/{trace_id}" if key is not None else trace_id
        annotator = self.annotator or _MAST_ANNOTATOR
        found = []
        for mode, value in flags.items():
            present = flag(value, f"mast_annotation.{mode}")
            if present is not None:  # null: the judge gave no label for the trace
                found.append({"run_id": run_id, "mode": mode, "annotator": annotator, "present": present})
        return found, self._mast_run(record, system, run_id)

    def _mast_human(
        self,
        file: Path,  # noqa: ARG002 -- the signature of the three layouts' readers; Who&When's reads it
        record: dict[str, Any],
        system: str | None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        run_id = identifier(record.get("trace_id"), "trace_id")
        found = []
        for number, item in enumerate(record["annotations"], start=1):
            field = f"annotations[{number}]"
            if not isinstance(item, dict) or not isinstance(item.get("failure mode"), str):
                msg = f"{field} is not an object with a 'failure mode' text"
                raise InvalidInputError(msg)
            # The text is the mode's code and name, then its definition after a blank line.
            mode = identifier(item["failure mode"].strip().split("\n", 1)[0].strip(), f"{field}.failure mode")
            for annotator, value in item.items():
                if annotator == "failure mode":
                    continue
                present = flag(value, f"{field}.{annotator}")
                if present is not None:  # NaN: this annotator gave no label
                    found.append({"run_id": run_id, "mode": mode, "annotator": annotator, "present": present})
        run = self._mast_run(record, system, run_id)
        round_ = text(record.get("round"), "round")
        run["metadata"] = json.dumps({"round": round_}) if round_ is not None else None
        return found, run

    def _who_when(
        self, file: Path, record: dict[str, Any], system: str | None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        run_id = f"{file.parent.name}/{file.stem}" if file.parent.name else file.stem
        step = record.get("mistake_step")
        step_text = identifier(step, "mistake_step") if step is not None else None
        found = [
            {
                "run_id": run_id,
                "mode": WHO_WHEN_MODE,
                "annotator": self.annotator or _WHO_WHEN_ANNOTATOR,
                "present": True,
                "agent_id": identifier(record.get("mistake_agent"), "mistake_agent"),
                "round": step_text,
            }
        ]
        truth = record.get("ground_truth")
        metadata = {k: text(record.get(k), k) for k in ("question", "mistake_reason") if record.get(k) is not None}
        if record.get("level") is not None:
            metadata["level"] = text(str(record["level"]), "level")
        run = {
            "run_id": run_id,
            "system": system if system is not None else identifier(file.parent.name or None, "system (the folder)"),
            "case_id": identifier(record.get("question_ID"), "question_ID"),
            "target": text(truth if truth is None or isinstance(truth, str) else json.dumps(truth), "ground_truth"),
            "metadata": json.dumps(metadata, ensure_ascii=False) if metadata else None,
        }
        return found, run

    # -- all files ---------------------------------------------------------------------------

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        located = {"_file": pl.Int64(), "_where": pl.String()}
        rows = pl.DataFrame(self.rows, schema={**_ANNOTATION, **located}, orient="row").with_row_index("_row")
        runs, clashing = self._runs(ingest)
        rows = rows.join(clashing, on=["_file", "_where"], how="anti", maintain_order="left")
        if self.into is not None:
            rows = self._known_runs(rows, self.into.collect("runs").select("run_id"), ingest)
        rows = self._unique(rows, ingest)
        if not rows.height:
            raise ingest.nothing_read()
        annotations = conform(rows.sort("_row"), "annotations")
        if self.into is None:
            kept = runs.join(annotations.select("run_id").unique(), on="run_id", how="semi", maintain_order="left")
            return {"runs": conform(kept, "runs"), "annotations": annotations}
        frames = {name: self.into.collect(name) for name in self.into.table_names}
        earlier = frames.get("annotations")
        frames["annotations"] = (
            annotations if earlier is None else pl.concat([conform(earlier, "annotations"), annotations])
        )
        ingest.warnings.extend(self.into.notes)
        return frames

    def _set_aside(self, ingest: Ingest, bad: pl.DataFrame, problem: pl.Expr, fix: str) -> None:
        """Set aside (or refuse) every row of ``bad`` with its ``problem`` and the ``fix``; an error path."""
        for file, where, said in bad.select("_file", "_where", problem.alias("_problem")).iter_rows():
            invalid = InvalidInputError(said, where=where, fix=fix, skip="skip such rows", file=self.files[file])
            ingest.set_aside(invalid)

    def _place(self, file: str, where: str) -> pl.Expr:
        """Where a row is, for a message: ``"a.csv row 3"``."""
        path = pl.col(file).replace_strict(
            list(range(len(self.files))), [str(f) for f in self.files], return_dtype=pl.String
        )
        return pl.concat_str(path, pl.lit(" "), pl.col(where))

    def _runs(self, ingest: Ingest) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Return the runs the files describe, one row per run id (as first described), and the others.

        The others are ``_file, _where`` of the records that describe a run otherwise (set aside, with their
        annotations).
        """
        located = {"_file": pl.Int64(), "_where": pl.String()}
        schema = {c: TABLES["runs"].polars_schema[c] for c in _RUN_FIELDS} | located
        runs = pl.DataFrame(self.runs, schema=schema, orient="row")
        first = runs.group_by("run_id", maintain_order=True).first()
        compared = runs.join(first, on="run_id", suffix="_first", maintain_order="left")
        differs = pl.any_horizontal(pl.col(c).ne_missing(pl.col(f"{c}_first")) for c in ("system", "case_id"))
        clashing = compared.filter(differs)
        if clashing.height:
            shown = [pl.col(c).cast(pl.String).fill_null("(none)") for c in ("run_id", "system", "case_id")]
            problem = pl.format(
                "run {} is of system {}, case {} here, but of system {}, case {} at {}",
                *shown,
                pl.col("system_first"),
                pl.col("case_id_first"),
                self._place("_file_first", "_where_first"),
            )
            self._set_aside(ingest, clashing, problem, "give each run one system and case")
        return first.drop("_file", "_where"), clashing.select("_file", "_where")

    def _known_runs(self, rows: pl.DataFrame, known: pl.DataFrame, ingest: Ingest) -> pl.DataFrame:
        """Return the rows of runs the Dataset ``into`` holds; set the others aside."""
        unknown = rows.join(known, on="run_id", how="anti", maintain_order="left")
        if unknown.height:
            examples = ", ".join(repr(r) for r in known["run_id"].head(3).to_list()) or "(none)"
            problem = pl.format(
                "an annotation of run {}, which the Dataset does not hold (its runs are e.g. {})",
                pl.col("run_id"),
                pl.lit(examples),
            )
            self._set_aside(ingest, unknown, problem, "fix the run id, or ingest that run into the Dataset first")
        return rows.join(unknown.select("_row"), on="_row", how="anti", maintain_order="left")

    def _unique(self, rows: pl.DataFrame, ingest: Ingest) -> pl.DataFrame:
        """Keep one annotation per run, mode and annotator: set aside a repeat (or one the Dataset holds already)."""
        key = ["run_id", "mode", "annotator"]
        first = rows.group_by(key, maintain_order=True).agg(
            pl.col("_row").first().alias("_first"),
            pl.col("_file").first().alias("_first_file"),
            pl.col("_where").first().alias("_first_where"),
        )
        marked = rows.join(first, on=key, maintain_order="left")
        repeats = marked.filter(pl.col("_row") != pl.col("_first"))
        if repeats.height:
            problem = pl.format(
                "run {}, mode {}, annotator {} is annotated twice (first at {})",
                *(pl.col(c) for c in key),
                self._place("_first_file", "_first_where"),
            )
            self._set_aside(ingest, repeats, problem, "keep one annotation per run, mode and annotator")
        kept = marked.filter(pl.col("_row") == pl.col("_first")).drop("_first", "_first_file", "_first_where")
        if self.into is None or "annotations" not in self.into:
            return kept
        held = self.into.collect("annotations").select(key)
        again = kept.join(held, on=key, how="semi", maintain_order="left")
        if again.height:
            problem = pl.format(
                "run {}, mode {}, annotator {} is annotated in the Dataset already",
                *(pl.col(c) for c in key),
            )
            self._set_aside(ingest, again, problem, "keep one annotation per run, mode and annotator")
        return kept.join(held, on=key, how="anti", maintain_order="left")


@validate_params(
    {
        **LOG_PARAMETERS,
        "into": [Instance(Dataset, "a Dataset"), PATH, NONE],
        "columns": [MAPPING, NONE],
        "taxonomy": [TEXT, NONE],
        "annotator": [NAME, NONE],
    }
)
def ingest_annotations(
    paths: Paths,
    out: str | Path | None = None,
    *,
    into: Dataset | str | Path | None = None,
    columns: Mapping[str, str] | None = None,
    taxonomy: Taxonomy | None = None,
    annotator: str | None = None,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    r"""Read failure-mode annotations into a Dataset's ``annotations`` table, written to ``out`` if given.

    Parameters
    ----------
    paths
        ``.csv`` or ``.json`` files, or folders standing for those directly in them (sorted); a
        single path is accepted, and ``{path: system}`` names the system of a path's runs.
    out
        The Dataset folder to write, atomically; it may not be, hold or lie inside an input (nor
        ``into``). None: the Dataset is returned in memory.
    into
        A Dataset (or its folder) whose runs the annotations are of: the result is that Dataset
        with the annotations added (it is not changed itself). An annotation of a run it does
        not hold, or one it holds already, is refused. None: the runs are made from the files,
        which must say each run's system and case.
    columns
        For each annotation column (:data:`ANNOTATION_COLUMNS`), the CSV's column holding it:
        ``{"run_id": "trace", "present": "label"}``. A column named like one is mapped unasked.
        A CSV with a ``mode`` column has a row per run, mode and annotator; one without has a
        row per run (and annotator) and every column not mapped is a mode holding 0 or 1.
    taxonomy
        ``"mast"``: every mode must be one of MAST's 14 (by code, ``"1.1"``, or code and name),
        is stored as its label (``"1.1 Disobey task specification"``) and gets its category.
        None: modes are kept as written, with the category a file gives.
    annotator
        The annotator of a CSV without an annotator column; for MAST's ``mast_annotation`` (by
        default ``"mast_annotation"``) and Who&When's logs (by default ``"Who&When"``), instead
        of the default.
    system
        The system of every run of a path not named in ``paths``, instead of the one the file
        names (MAST: ``mas_name``; Who&When: the log's folder).
    overwrite, skip_invalid, shards
        As every log adapter takes them: replace ``out``; set aside the rows or records that
        cannot be ingested (listed in ``skipped``) instead of refusing the input; ``shards``
        files per table.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and files read, what was set aside, the warnings.

    Raises
    ------
    InvalidParameterError
        A bad option (``columns`` naming no annotation column, an unknown taxonomy).
    IngestError
        A file cannot be read, a mapped column is missing, no column gives a needed field; or
        (without ``skip_invalid``) an annotation of a run not in ``into``, a ``present`` that is
        not a boolean, a mode not in the taxonomy named, or a run, mode and annotator annotated
        twice: one line naming the file and the row or record. Nothing is written.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     table = Path(folder) / "labels.csv"
    ...     _ = table.write_text("run_id,system,case_id,annotator,1.1,2.6\n"
    ...                          "r1,mas,q1,ann_a,1,0\nr1,mas,q1,ann_b,1,1\nr2,single,q1,ann_a,0,0\n")
    ...     result = ingest_annotations(table, taxonomy="mast")
    >>> result.dataset.collect("annotations").select("run_id", "mode", "annotator", "present").head(3).rows()
    [('r1', '1.1 Disobey task specification', 'ann_a', True), ('r1', '1.1 Disobey task specification', 'ann_b', True), ('r1', '2.6 Reasoning-action mismatch', 'ann_a', False)]
    >>> result.dataset.collect("annotations")["category"].unique().sort().to_list()
    ['Inter-agent misalignment', 'System design issues']
    """  # noqa: E501
    mapping = _check_columns(columns)
    if taxonomy is not None and taxonomy not in TAXONOMIES:
        msg = (
            f"ingest_annotations: taxonomy={taxonomy!r} is not one shipped; name one of {', '.join(TAXONOMIES)} or None"
        )
        raise InvalidParameterError(msg)
    named = _check_name(annotator, "annotator")
    dataset, beside = _into(into)
    return ingest_logs(
        FORMAT,
        _Reader(mapping, dataset, taxonomy, named),
        paths,
        out,
        system=system,
        overwrite=overwrite,
        skip_invalid=skip_invalid,
        shards=shards,
        beside=beside,
    )
