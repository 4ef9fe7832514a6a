r"""The case viewer: one self-contained HTML page of the cases, each system's transcripts side by side.

:func:`case_viewer` gathers what the page shows: the rows of :func:`~mas_eval.report.discordance.cases`
(the discordant cases first), the paired comparison they add up to (:func:`mas_eval.stats.compare`),
and for every run of the two systems its messages, tool calls, scorer results and the tables of
its family (beliefs, differential diagnoses and their labels, answers ...). :meth:`CaseViewer.write`
writes the page: CSS and JavaScript inline, nothing fetched, no server.

How the page stays fast at 10,000 cases of 50 messages each:

* the data are JSON in ``<script type="application/json">`` elements, column by column, with the
  repeated strings (agents, roles, rounds, tools, targets) interned into one table of strings;
* the cases and runs are parsed when the page loads; the runs' tables (transcripts first) are
  cut into chunks of :data:`CHUNK_RUNS` runs, each parsed only when a case of its runs opens;
* only the table rows in view are in the document (virtual scrolling), and a case's transcripts
  are built when it opens.

Everything from the data is text: the page builds its elements with ``textContent``, never from
markup; control characters are shown as escapes (:func:`~mas_eval.escaping.visible_texts`), and
every ``<`` in the embedded JSON is written ``\u003c`` so that no ``</script>`` in a transcript can
close the element holding it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mas_eval._version import __version__
from mas_eval.constraints import COLUMN_NAME, NONE, PATH, PATH_LIST, TEXT, Boolean, Predicate, validate_params
from mas_eval.errors import MasEvalError
from mas_eval.escaping import visible_texts
from mas_eval.metrics.family import compared_columns, get, headline_columns
from mas_eval.report.discordance import (
    COST_COLUMNS,
    DISCORDANCE,
    TOKEN_COLUMNS,
    cases,
    choose_metric,
    open_dataset,
    open_scores,
)
from mas_eval.report.outcomes import FAMILY as OUTCOMES
from mas_eval.report.tables import has_values
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import atomic_file, check_suffix

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["CHUNK_RUNS", "PER_RUN", "CaseViewer", "case_viewer", "check_viewer_path", "viewer_link", "write_cases"]

#: Runs per chunk of the page's run tables: a chunk is parsed when a case of its runs opens.
CHUNK_RUNS = 256
#: Score columns of a run shown beside its metric, at most.
MAX_RUN_SCORES = 24
#: The run columns of the Dataset a run's header shows, when they have values.
RUN_FACTS = ("target", "recommended", "correct", "confidence", "seconds", "metadata")
#: Columns that identify a run, dropped from its tables (the page shows them once).
_IDS = ("run_id", "system", "case_id", "task", "variant")


@dataclass(frozen=True)
class PerRun:
    """A table the page shows for each run: its key in the page, title, and where it comes from."""

    key: str
    title: str
    source: str  # "dataset" or "scores"
    table: str
    columns: tuple[str, ...] | None = None  # None: all but the run's identifying columns
    keys: tuple[str, ...] = ()  # a table with values in these columns only is left out


#: The run tables the page shows, in the order a run's panel lists them (those present).
PER_RUN: tuple[PerRun, ...] = (
    PerRun("messages", "Transcript", "dataset", "messages"),
    PerRun("tool_calls", "Tool calls", "dataset", "tool_calls"),
    PerRun("outcomes", "Scorer", "dataset", "outcomes"),
    PerRun("beliefs", "Beliefs of the agents", "dataset", "beliefs"),
    PerRun("agents", "Agents", "dataset", "agents"),
    PerRun("agent_scores", "Agents' scores", "scores", "agents", keys=("agent_id",)),
    PerRun("alternatives", "Alternatives' scores", "scores", "alternatives", keys=("alternative",)),
    PerRun("ddx", "Differential diagnoses by round", "dataset", "ddx"),
    PerRun("labels", "Diagnoses labelled against the ground truth", "scores", "labels", keys=("side", "diagnosis")),
    PerRun("rounds", "Rounds", "scores", "rounds", keys=("round",)),
    PerRun("consensus_ddx", "Consensus differential", "scores", "consensus_ddx", keys=("rank", "diagnosis")),
    PerRun("answers", "Answers", "dataset", "answers"),
    PerRun(
        "items",
        "Answer scores",
        "scores",
        "items",
        ("item_id", "clinical_accuracy", "reasoning_quality", "diagnostic_accuracy", "clinical_relevance"),
        ("item_id",),
    ),
    PerRun("usage", "Usage per agent and model", "dataset", "usage"),
    PerRun("annotations", "Failure-mode annotations", "dataset", "annotations"),
    PerRun("interventions", "Interventions", "dataset", "interventions"),
    PerRun("criteria", "Criteria", "dataset", "criteria"),
    PerRun("criteria_scores", "Criteria scores", "dataset", "scores"),
    PerRun("alt_scores", "Alternatives' scores as logged", "dataset", "alt_scores"),
)

_SCORES = Predicate(lambda value: isinstance(value, Scores | str | Path), "a Scores object or a Scores folder")
_DATASET = Predicate(lambda value: isinstance(value, Dataset | str | Path), "a Dataset or a Dataset folder")
_TEXT = Predicate(lambda value: isinstance(value, str), "a string")


def check_viewer_path(path: str | Path) -> str:
    """``.html``, or an error saying the case viewer is written as one HTML page.

    Examples
    --------
    >>> check_viewer_path("out/cases.html")
    '.html'
    """
    return check_suffix(path, (".html",), "the case viewer")


@validate_params({"viewer": [PATH], "page": [PATH]})
def viewer_link(viewer: str | Path, page: str | Path) -> str:
    """Return the relative link from the HTML page ``page`` to the viewer file ``viewer``, as an ``href``.

    Always starting with ``./`` or ``../`` and percent-encoded, so that no file name reads as a
    URL of its own (``javascript:x.html``).

    Examples
    --------
    >>> viewer_link("out/cases.html", "out/report.html"), viewer_link("a b/#1.html", "report.html")
    ('./cases.html', './a%20b/%231.html')
    """
    from urllib.parse import quote

    relative = Path(os.path.relpath(Path(viewer).absolute(), Path(page).absolute().parent)).as_posix()
    return quote(relative if relative.startswith("../") else f"./{relative}")


@dataclass
class CaseViewer:
    """What the case viewer page shows; :meth:`write` writes it (:func:`case_viewer` makes one).

    Attributes
    ----------
    frame
        The cases, as :func:`~mas_eval.report.cases` returns them (the page's rows, in its order).
    metric, chosen
        The metric compared, and why it was (``"chosen"`` when given).
    treatment, control, pair_on
        The two systems and the case column.
    comparison
        The sentence of the paired comparison (:func:`mas_eval.stats.compare`), or why there is none.
    title
        The page's title.

    Examples
    --------
    >>> import mas_eval
    >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
    >>> viewer = case_viewer(mas_eval.score(ds), ds)
    >>> viewer.described_counts()
    'mas passed, single failed: 9; single passed, mas failed: 4; both passed: 11; both failed: 6'
    >>> html = viewer.to_html()  # its meta, cases and runs, script, and one chunk of 60 runs' tables
    >>> html.count("<script"), html.count("</script>")
    (4, 4)
    """

    frame: pl.DataFrame
    metric: str
    chosen: str
    treatment: str
    control: str
    pair_on: str
    comparison: str
    title: str
    _meta: dict[str, Any] = field(repr=False)
    _cases: str = field(repr=False)
    _chunks: list[str] = field(repr=False)

    @property
    def counts(self) -> dict[str, int]:
        """The number of cases in each discordance class the page lists, in its order."""
        counted = self.frame.group_by("discordance").len()
        found = dict(zip(counted["discordance"].cast(pl.String).to_list(), counted["len"].to_list(), strict=True))
        return {name: found[name] for name in DISCORDANCE if name in found}

    def described_counts(self) -> str:
        """Return the counts of :attr:`counts` in one line, the classes named by the systems.

        Examples
        --------
        >>> import mas_eval
        >>> from mas_eval.report import case_viewer
        >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
        >>> viewer = case_viewer(mas_eval.score(ds), ds)
        >>> viewer.described_counts()
        'mas passed, single failed: 9; single passed, mas failed: 4; both passed: 11; both failed: 6'
        """
        names = {"treatment": self.treatment, "control": self.control}
        return "; ".join(
            f"{re.sub('treatment|control', lambda m: names[m.group()], name)}: {n:,}" for name, n in self.counts.items()
        )

    @property
    def metric_line(self) -> str:
        """The page's line saying which metric the cases are compared on, and why."""
        how = "as given" if self.chosen == "chosen" else f"by default: {self.chosen}"
        return (
            f"Cases compared on {self.metric} ({how}), {self.treatment} against {self.control}, "
            f"paired on {self.pair_on}."
        )

    def parts(self) -> Iterator[str]:
        """Render the page piece by piece (a large page is written without holding it twice).

        The pieces are the page up to its data, one ``<script>`` element per chunk of runs, and its end.

        Examples
        --------
        >>> import mas_eval
        >>> from mas_eval.report import case_viewer
        >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
        >>> viewer = case_viewer(mas_eval.score(ds), ds)
        >>> pieces = list(viewer.parts())
        >>> len(pieces), pieces[1][:52], pieces[-1].split()
        (3, '<script type="application/json" id="mas-viewer-chunk', ['</body>', '</html>'])
        """
        shell = _environment().get_template("cases.html.j2")
        head = shell.render(
            title=self.title,
            metric_line=self.metric_line,
            comparison=self.comparison,
            version=__version__,
            css=_asset("cases.css"),
            js=_asset("cases.js"),
            meta=_json_markup(self._meta),
            cases=_markup(self._cases),
        )
        yield head
        for index, chunk in enumerate(self._chunks):
            yield f'<script type="application/json" id="mas-viewer-chunk-{index}">{chunk}</script>\n'
        yield "</body>\n</html>\n"

    def to_html(self) -> str:
        """Render the page as one string: :meth:`parts` joined.

        Examples
        --------
        >>> import mas_eval
        >>> from mas_eval.report import case_viewer
        >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
        >>> viewer = case_viewer(mas_eval.score(ds), ds)
        >>> page = viewer.to_html()
        >>> page.startswith("<!DOCTYPE html>"), page == "".join(viewer.parts())
        (True, True)
        """
        return "".join(self.parts())

    @validate_params({"path": [PATH], "overwrite": [Boolean()], "inputs": [PATH_LIST]})
    def write(self, path: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> Path:
        """Write the page to ``path`` (``.html``) atomically; ``inputs`` are paths it must not replace.

        Examples
        --------
        >>> import mas_eval
        >>> from mas_eval.report import case_viewer
        >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
        >>> viewer = case_viewer(mas_eval.score(ds), ds)
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = viewer.write(Path(folder) / "cases.html")
        ...     same = path.read_text(encoding="utf-8") == viewer.to_html()
        >>> path.name, same
        ('cases.html', True)
        """
        check_viewer_path(path)
        with (
            atomic_file(path, overwrite=overwrite, inputs=inputs) as staging,
            staging.open("w", encoding="utf-8") as out,
        ):
            for part in self.parts():
                out.write(part)
        return Path(path)


@validate_params(
    {
        "treatment": [TEXT],
        "control": [TEXT],
        "scores": [_SCORES],
        "dataset": [_DATASET, NONE],
        "metric": [COLUMN_NAME, NONE],
        "pair_on": [COLUMN_NAME],
        "title": [_TEXT, NONE],
    }
)
def case_viewer(
    scores: Scores | str | Path,
    dataset: Dataset | str | Path | None = None,
    metric: str | None = None,
    treatment: str = "mas",
    control: str = "single",
    pair_on: str = "case_id",
    title: str | None = None,
) -> CaseViewer:
    """Gather the case viewer of ``scores``: the cases, the comparison, and every run's tables.

    Parameters are those of :func:`~mas_eval.report.cases`, and ``title`` (by default
    ``"Cases: <treatment> against <control>"``). Without ``dataset`` the page shows the scores only:
    the transcripts, tool calls and scorer results are the Dataset's.

    Examples
    --------
    >>> import mas_eval
    >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
    >>> viewer = case_viewer(mas_eval.score(ds), ds)
    >>> viewer.metric, viewer.counts["treatment passed, control failed"], viewer.counts["control passed, treatment failed"]
    ('match', 9, 4)
    >>> print(viewer.comparison)
    mas − single on match: +0.167 (95% CI -0.070 to +0.379), McNemar's exact test p = 0.267, on 30 paired cases.
    """  # noqa: E501
    scores = open_scores(scores, "case_viewer")
    ds = open_dataset(dataset, "case_viewer")
    frame = cases(scores, ds, metric, treatment, control, pair_on)
    name, chosen = choose_metric(scores, metric)
    title = title if title is not None else f"Cases: {treatment} against {control}"
    comparison = _comparison(scores.runs, name, treatment, control, pair_on)
    meta, case_json, chunks = _encode(scores, ds, frame, name, treatment, control, pair_on)
    meta.update(
        title=title,
        metric=name,
        chosen=chosen,
        treatment=treatment,
        control=control,
        pair_on=pair_on,
        comparison=comparison,
        version=__version__,
    )
    return CaseViewer(frame, name, chosen, treatment, control, pair_on, comparison, title, meta, case_json, chunks)


@validate_params(
    {
        "treatment": [TEXT],
        "control": [TEXT],
        "overwrite": [Boolean()],
        "scores": [_SCORES],
        "dataset": [_DATASET, NONE],
        "path": [Predicate(lambda value: isinstance(value, str | Path), "a path")],
        "metric": [COLUMN_NAME, NONE],
        "pair_on": [COLUMN_NAME],
        "title": [_TEXT, NONE],
    }
)
def write_cases(
    scores: Scores | str | Path,
    dataset: Dataset | str | Path | None,
    path: str | Path,
    *,
    metric: str | None = None,
    treatment: str = "mas",
    control: str = "single",
    pair_on: str = "case_id",
    title: str | None = None,
    overwrite: bool = False,
) -> CaseViewer:
    """Write the case viewer of ``scores`` to ``path``: one self-contained HTML page.

    A table of the cases with each system's score, tokens and cost, the discordant cases first
    (:func:`~mas_eval.report.cases`), filtered by class and searched by text; clicking a case opens
    each system's run side by side: the agents' messages with their roles, rounds and tokens, the
    tool calls with their arguments and errors, the scorer's answer and explanation, the target, and
    the tables of the run's family (beliefs and the recommendation, the rounds' diagnoses and their
    labels, answers and their scores); with several epochs, each epoch's run is selectable. CSS and
    JavaScript are inline; nothing is fetched.

    Parameters
    ----------
    scores, dataset, metric, treatment, control, pair_on
        As for :func:`~mas_eval.report.cases`; ``dataset`` (or ``None``) holds the transcripts.
    path
        The page, ``.html``; written atomically.
    title
        The page's title (default ``"Cases: <treatment> against <control>"``).
    overwrite
        Replace ``path`` if it exists.

    Returns
    -------
    CaseViewer
        What the page shows: its ``frame`` (the cases), ``metric``, ``comparison`` ...

    Examples
    --------
    >>> import tempfile, mas_eval
    >>> ds = mas_eval.simulate_outcomes(60, seed=1, epochs=1)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     viewer = write_cases(mas_eval.score(ds), ds, f"{folder}/cases.html")
    ...     page = open(f"{folder}/cases.html", encoding="utf-8").read()
    >>> viewer.frame.height, page.startswith("<!DOCTYPE html>"), "http" in page
    (30, True, False)
    """
    check_viewer_path(path)
    viewer = case_viewer(scores, dataset, metric, treatment, control, pair_on, title)
    inputs = [p for p in (scores, dataset) if isinstance(p, str | Path)]
    viewer.write(path, overwrite=overwrite, inputs=inputs)
    return viewer


# -- the comparison ---------------------------------------------------------------------------


def _comparison(runs: pl.DataFrame, metric: str, treatment: str, control: str, pair_on: str) -> str:
    """Say the paired comparison of ``metric`` in one sentence, or why there is none."""
    from mas_eval.formatting import format_p
    from mas_eval.stats import compare

    both = runs.filter(pl.col("system").is_in([treatment, control]))
    paired = both.group_by(pair_on).agg(pl.col("system").n_unique()).filter(pl.col("system") == 2).height
    try:
        row = compare(both, metric, treatment=treatment, control=control, pair_on=pair_on if paired >= 2 else None).row(
            0, named=True
        )
    except MasEvalError as exc:
        return f"No comparison of {metric}: {exc}."
    if row["difference"] is None:
        return f"No comparison of {metric}: {row['warning'] or 'no runs of both systems with a value'}."
    tests = {
        "mcnemar": "McNemar's exact test",
        "paired": "the paired t-test on case means",
        "welch": "Welch's t-test",
        "student": "Student's t-test",
    }
    test = tests.get(row["test"], f"the {row['test']} test")
    ci = "" if row["ci_low"] is None else f" (95% CI {row['ci_low']:+.3f} to {row['ci_high']:+.3f})"
    design = f"on {row['n_pairs']} paired cases" if row.get("n_pairs") else "unpaired"
    return (
        f"{treatment} − {control} on {metric}: {row['difference']:+.3f}{ci}, {test} {_p(format_p(row['p_value']))}, "
        f"{design}."
    )


# -- the data, encoded ------------------------------------------------------------------------


def _score_columns(scores: Scores, metric: str, tokens: str | None, cost: str | None) -> list[str]:
    """Return the run columns shown as a run's scores: its outcomes, the compared and headline columns, with values."""
    runs = scores.runs
    names = [
        *scores.named.get(OUTCOMES, []),
        *compared_columns(),
        *(name for family in ("answers", "diagnosis") for name in get(family).outputs().get("runs", [])),
        *headline_columns(),
    ]
    dropped = {metric, tokens, cost, *TOKEN_COLUMNS, *COST_COLUMNS}  # the run's tokens and cost are shown apart
    # How the agents worked (the process family's headline) is no score of the run: its transcript shows it.
    dropped |= set(get("process").outputs().get("runs", []))
    shown = [
        name
        for name in dict.fromkeys(names)
        if name not in dropped
        and has_values(runs, name)
        and (runs.schema[name].is_numeric() or runs.schema[name] == pl.Boolean)
    ]
    return shown[:MAX_RUN_SCORES]


def _run_frame(
    scores: Scores, ds: Dataset | None, frame: pl.DataFrame, metric: str, treatment: str, control: str, pair_on: str
) -> tuple[pl.DataFrame, list[str], list[str]]:
    """Return the runs of both systems in page order, numbered ``_run``, with the names of their columns.

    The order is by case in the frame's order, treatment first, by epoch; the result holds the shown columns,
    the score columns' names and the Dataset's facts' names.
    """
    runs = scores.runs
    tokens = next((n for n in TOKEN_COLUMNS if has_values(runs, n)), None)
    cost = next((n for n in COST_COLUMNS if has_values(runs, n)), None)
    score_names = _score_columns(scores, metric, tokens, cost)
    order = frame.select(pl.col(pair_on).alias("_case_key")).with_row_index("_case")
    epoch = pl.col("epoch") if "epoch" in runs.columns else pl.lit(None, pl.Int64)
    picked = (
        runs.filter(pl.col("system").is_in([treatment, control]) & pl.col(pair_on).is_not_null())
        .with_columns(pl.col(pair_on).cast(pl.String).alias("_case_key"))
        .join(order, on="_case_key", how="inner")
        .select(
            "run_id",
            "_case",
            (pl.col("system") == control).cast(pl.UInt8).alias("side"),
            epoch.alias("epoch"),
            pl.col(metric).cast(pl.Float64).fill_nan(None).alias("value"),
            (pl.col(tokens).cast(pl.Float64) if tokens else pl.lit(None, pl.Float64)).alias("tokens"),
            (pl.col(cost).cast(pl.Float64) if cost else pl.lit(None, pl.Float64)).alias("cost"),
            *(pl.col(name).cast(pl.Float64).alias(f"s{i}") for i, name in enumerate(score_names)),
        )
    )
    facts: list[str] = []
    if ds is not None:
        have = ds.scan("runs").collect_schema()
        wanted = [name for name in RUN_FACTS if name in have]
        present = ds.scan("runs").select("run_id", *wanted).collect()
        facts = [name for name in wanted if present[name].drop_nulls().len() > 0]
        picked = picked.join(present.select("run_id", *facts), on="run_id", how="left")
    picked = picked.sort("_case", "side", "epoch", "run_id", nulls_last=True).with_row_index("_run")
    return picked, score_names, facts


def _per_run_tables(scores: Scores, ds: Dataset | None, run_index: pl.DataFrame) -> list[tuple[PerRun, pl.DataFrame]]:
    """Return each table of :data:`PER_RUN` that has rows of the page's runs, with ``_run`` and its shown columns.

    The rows are sorted by run, then as stored.
    """
    out = []
    for spec in PER_RUN:
        if spec.source == "dataset":
            if ds is None or spec.table not in ds:
                continue
            with ds.reading():
                table = (
                    ds.scan(spec.table)
                    .with_row_index("_row")
                    .join(run_index.lazy(), on="run_id", how="inner")
                    .sort("_run", "_row")
                    .collect()
                )
        else:
            if spec.table not in scores:
                continue
            table = (
                scores[spec.table].with_row_index("_row").join(run_index, on="run_id", how="inner").sort("_run", "_row")
            )
        if table.height == 0:
            continue
        if spec.key == "tool_calls" or (spec.key == "messages" and _turns_number_the_run(table)):
            table = table.sort("_run", "turn", "_row")
        columns = spec.columns or tuple(c for c in table.columns if c not in (*_IDS, "_row", "_run"))
        columns = tuple(c for c in columns if c in table.columns and table[c].null_count() < table.height)
        if spec.key in ("messages", "tool_calls", "outcomes"):  # the page reads these by name: keep them all
            columns = tuple(c for c in table.columns if c not in (*_IDS, "_row", "_run"))
        elif set(columns) <= set(spec.keys):  # nothing but the rows' names (a family's table of no values)
            continue
        out.append((spec, table.select("_run", *columns)))
    return out


def _turns_number_the_run(messages: pl.DataFrame) -> bool:
    """Check whether every run numbers its messages' turns once each (1, 2, 3 ... over its rounds).

    inspect_ai's logs do: then the turns are the transcript's order, whatever order the rows are stored in.
    Turns numbered within each round are not; the stored order is kept for those.
    """
    per_run = messages.group_by("_run").agg(pl.col("turn").n_unique() == pl.len())
    return bool(per_run.get_column("turn").all())


def _plain(frame: pl.DataFrame) -> pl.DataFrame:
    """Turn lists into text joined by ``; ``, texts with their control characters as escapes, floats to 7 digits."""
    columns = []
    for name, dtype in frame.schema.items():
        if name.startswith("_"):
            columns.append(pl.col(name))
        elif isinstance(dtype, pl.List):
            columns.append(pl.col(name).list.eval(pl.element().cast(pl.String)).list.join("; ").alias(name))
        elif dtype.is_float():
            columns.append(pl.col(name).round_sig_figs(7).alias(name))
        elif dtype == pl.Boolean or dtype.is_numeric():
            columns.append(pl.col(name))
        else:
            columns.append(pl.col(name).cast(pl.String))
    plain = frame.select(columns)
    texts = [name for name, dtype in plain.schema.items() if dtype == pl.String and not name.startswith("_")]
    return plain.with_columns(visible_texts(plain[name], breaks=False) for name in texts)


def _kind(dtype: pl.DataType) -> str:
    if dtype == pl.Boolean:
        return "b"
    if dtype.is_numeric():
        return "n"
    return "s"


def _interned(frame: pl.DataFrame) -> list[str]:
    """Return the text columns worth interning: few distinct values for their rows (agents, roles, targets)."""
    texts = [name for name, dtype in frame.schema.items() if dtype == pl.String and not name.startswith("_")]
    if not texts or frame.height == 0:
        return []
    distinct = frame.select(pl.col(texts).n_unique()).row(0)
    return [name for name, n in zip(texts, distinct, strict=True) if n <= max(8, frame.height // 4)]


class _Pool:
    """The page's table of interned strings: every value of the interned columns, sorted, once."""

    def __init__(self, values: Iterable[pl.Series]) -> None:
        every = pl.concat([s.cast(pl.String).drop_nulls().unique() for s in values] or [pl.Series([], dtype=pl.String)])
        self.strings: list[str] = every.unique().sort().to_list()
        self.dtype = pl.Enum(self.strings)

    def codes(self, column: str) -> pl.Expr:
        return pl.col(column).cast(self.dtype).to_physical().alias(column)


def _escape_json(text: str) -> str:
    r"""Return JSON that no HTML parser ends early: every ``<`` (only ever inside a string) as ``\u003c``."""
    return text.replace("<", "\\u003c")


def _columnar(frame: pl.DataFrame) -> str:
    """``frame`` as one JSON object of column arrays."""
    if frame.height == 0:
        return json.dumps({name: [] for name in frame.columns})
    return frame.select(pl.all().implode()).write_ndjson().strip()


def _encode(
    scores: Scores, ds: Dataset | None, frame: pl.DataFrame, metric: str, treatment: str, control: str, pair_on: str
) -> tuple[dict[str, Any], str, list[str]]:
    """Gather the page's data: its meta object, the cases-and-runs JSON, and one JSON text per chunk of runs."""
    runs, score_names, facts = _run_frame(scores, ds, frame, metric, treatment, control, pair_on)
    spans = runs.group_by("_case", "side").agg(start=pl.col("_run").min(), count=pl.len())

    def span(side: int, tag: str) -> pl.DataFrame:
        return spans.filter(pl.col("side") == side).select(
            "_case", pl.col("start").alias(f"{tag}_start"), pl.col("count").alias(f"{tag}_count")
        )

    case_rows = frame.with_row_index("_case").with_columns(
        pl.col(pair_on).alias("case"), pl.col("discordance").to_physical().cast(pl.Int64).alias("discordance")
    )
    case_rows = case_rows.join(span(0, "t"), on="_case", how="left").join(span(1, "c"), on="_case", how="left")
    if ds is not None and "ground_truth" in ds and pair_on == "case_id":
        truth = (
            ds.collect("ground_truth").group_by("case_id").agg(pl.col("diagnosis").sort().str.join("; ").alias("truth"))
        )
        case_rows = case_rows.join(truth.rename({"case_id": "case"}), on="case", how="left")
    case_columns = [
        "case", "task", "discordance", "score_treatment", "score_control", "difference", "runs_treatment",
        "runs_control", "tokens_treatment", "tokens_control", "cost_treatment", "cost_control", "target", "truth",
        "t_start", "t_count", "c_start", "c_count",
    ]  # fmt: skip
    case_table = _plain(case_rows.sort("_case").select([c for c in case_columns if c in case_rows.columns]))
    run_table = _plain(
        runs.drop("_case_key", strict=False).select("run_id", "_case", pl.exclude("run_id", "_case", "_run"))
    )
    run_table = run_table.rename({"_case": "case"})

    per_run = [(spec, _plain(table)) for spec, table in _per_run_tables(scores, ds, runs.select("run_id", "_run"))]
    interned = {
        "cases": _interned(case_table),
        "runs": _interned(run_table),
        **{spec.key: _interned(table) for spec, table in per_run},
    }
    pool = _Pool(
        [case_table[c] for c in interned["cases"]]
        + [run_table[c] for c in interned["runs"]]
        + [table[c] for spec, table in per_run for c in interned[spec.key]]
    )

    def encoded(table: pl.DataFrame, key: str) -> tuple[pl.DataFrame, list[list[str]]]:
        names = [c for c in table.columns if not c.startswith("_")]
        spec = [[name, "i" if name in interned[key] else _kind(table.schema[name])] for name in names]
        return table.with_columns(pool.codes(c) for c in interned[key]), spec

    case_coded, case_spec = encoded(case_table, "cases")
    run_coded, run_spec = encoded(run_table, "runs")
    cases_json = f'{{"cases":{_columnar(case_coded)},"runs":{_columnar(run_coded)}}}'
    n_chunks = max(1, -(-runs.height // CHUNK_RUNS))
    pieces: list[list[str]] = [[] for _ in range(n_chunks)]
    tables_meta = []
    for spec, table in per_run:
        coded, columns = encoded(table, spec.key)
        names = [name for name, _ in columns]
        positional = coded.select(
            (pl.col("_run") // CHUNK_RUNS).alias("_chunk"),
            (pl.col("_run") % CHUNK_RUNS).alias("_r"),
            *(pl.col(name).alias(f"c{i}") for i, name in enumerate(names)),
        )
        lines = positional.group_by("_chunk", maintain_order=True).agg(pl.all()).write_ndjson().splitlines()
        chunk_ids = positional["_chunk"].unique(maintain_order=True).to_list()
        for chunk, line in zip(chunk_ids, lines, strict=True):
            pieces[chunk].append(f'"{spec.key}":{line}')
        tables_meta.append({"key": spec.key, "title": spec.title, "columns": columns, "rows": table.height})
    chunks = [_escape_json("{" + ",".join(parts) + "}") for parts in pieces]
    values = runs["value"].drop_nulls()
    meta = {
        "strings": pool.strings,
        "classes": list(DISCORDANCE),
        "case_columns": case_spec,
        "run_columns": run_spec,
        "score_names": score_names,
        "facts": facts,
        "tables": tables_meta,
        "chunk_runs": CHUNK_RUNS,
        "chunks": n_chunks,
        "cases": frame.height,
        "runs": runs.height,
        "epochs": bool(runs.height and runs.group_by("_case", "side").len()["len"].max() > 1),
        # A pass/fail metric: a run's value reads as passed or failed (a case's mean over epochs stays a number).
        "pass_fail": bool(values.len() and values.is_in([0.0, 1.0]).all()),
    }
    return meta, _escape_json(cases_json), chunks


# -- the page's shell -------------------------------------------------------------------------


@cache
def _environment() -> Any:
    from mas_eval.report.html import environment

    return environment()


@cache
def _asset(name: str) -> Any:
    """Read a file of the page (its CSS or JavaScript), inserted as it is: it holds no data."""
    from markupsafe import Markup

    return Markup(files("mas_eval.report").joinpath("templates", name).read_text(encoding="utf-8"))


def _markup(text: str) -> Any:
    from markupsafe import Markup

    return Markup(text)


def _json_markup(value: object) -> Any:
    return _markup(_escape_json(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)))


def _p(shown: str) -> str:
    """``p = 0.031``, or ``p < 1e-16`` for a p-value below what a float resolves."""
    return f"p < {shown[1:]}" if shown.startswith("<") else f"p = {shown}"
