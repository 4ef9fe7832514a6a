"""The cases behind a comparison (``mas_eval.report.cases``) and the case viewer (``write_cases``, ``mas-eval view``).

The frame's classes are checked against the pass/fail pattern each test builds (its own oracle)
and against McNemar's test as ``compare`` runs it; the page is parsed back with ``html.parser``:
every data value must come back as text from the JSON it is embedded in, no markup of the data's
may reach the document, and nothing may be fetched.
"""

from __future__ import annotations

import json
import random
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.escaping import visible
from mas_eval.report import DISCORDANCE, case_viewer, cases, viewer_link, write_cases
from mas_eval.stats import compare, mcnemar_exact, paired_difference
from tests.promises import assert_refused, assert_unchanged, run, tree
from tests.viewer_cases import HOSTILE, HOSTILE_CASE, MARKDOWN, RTL, hostile_dataset, many_cases, paired_outcomes

B, C, BOTH, NEITHER = DISCORDANCE[0], DISCORDANCE[1], DISCORDANCE[4], DISCORDANCE[5]

#: 3 cases only the MAS passed, 2 only the single agent, 4 both, 1 neither, 1 the MAS alone ran.
PATTERN = [(True, False), (False, True), (True, True), (True, False), (False, False), (True, True),
           (False, True), (True, True), (True, False), (True, True), (True, None)]  # fmt: skip


class Page(HTMLParser):
    """What a page holds: its tags with their attributes, its text, and its scripts' text by id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: dict[str, str] = {}
        self._script: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs).get("id") or "app"
            self.scripts[self._script] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self.scripts[self._script] += data
        else:
            self.text.append(data)

    def data(self) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
        """The page's meta, its cases-and-runs object and its chunks, parsed."""
        meta = json.loads(self.scripts["mas-viewer-meta"])
        chunks = [json.loads(self.scripts[f"mas-viewer-chunk-{k}"]) for k in range(meta["chunks"])]
        return meta, json.loads(self.scripts["mas-viewer-cases"]), chunks


def _decoded(meta: dict[str, Any], raw: dict[str, Any], spec: list[list[str]], key: Any = None) -> pl.DataFrame:
    """A table of the page as a frame: interned strings looked up in the page's table of strings."""
    strings = meta["strings"]
    columns = {}
    for i, (name, kind) in enumerate(spec):
        values = raw[key(i) if key else name]
        columns[name] = [None if v is None else strings[v] for v in values] if kind == "i" else values
    return pl.DataFrame(columns, strict=False)


def _run_table(page: Page, key: str) -> pl.DataFrame:
    """Table ``key`` of every run on the page, with each row's run id: the chunks decoded and put together."""
    meta, blob, chunks = page.data()
    runs = _decoded(meta, blob["runs"], meta["run_columns"])
    (table,) = [t for t in meta["tables"] if t["key"] == key]
    parts = []
    for k, chunk in enumerate(chunks):
        if key not in chunk:
            continue
        frame = _decoded(meta, chunk[key], table["columns"], lambda i: f"c{i}")
        index = [k * meta["chunk_runs"] + r for r in chunk[key]["_r"]]
        parts.append(frame.with_columns(run_id=pl.Series([runs["run_id"][i] for i in index])))
    return pl.concat(parts)


def _page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


# -- the frame ------------------------------------------------------------------------------------


def test_discordant_cases_come_first_and_count_mcnemars_b_and_c() -> None:
    ds = paired_outcomes(PATTERN)
    scores = mas_eval.score(ds)
    frame = cases(scores, ds)
    assert frame.columns == [
        "metric", "case_id", "task", "discordance", "score_treatment", "score_control", "difference", "runs_treatment",
        "runs_control", "tokens_treatment", "tokens_control", "cost_treatment", "cost_control", "target",
    ]  # fmt: skip
    assert frame["metric"].unique().to_list() == ["match"]
    # The pattern's own classes, in DISCORDANCE's order, then by case within a class.
    expected_class = {(True, False): B, (False, True): C, (True, True): BOTH, (False, False): NEITHER}
    expected = sorted(
        ((f"c{i:03d}", expected_class.get(pair, "treatment only")) for i, pair in enumerate(PATTERN)),
        key=lambda row: (DISCORDANCE.index(row[1]), row[0]),
    )
    assert frame.select("case_id", pl.col("discordance").cast(pl.String)).rows() == expected
    b, c = (frame.filter(pl.col("discordance") == name).height for name in (B, C))
    a, d = (frame.filter(pl.col("discordance") == name).height for name in (BOTH, NEITHER))
    assert (b, c, a, d) == (3, 2, 4, 1)
    # compare() runs McNemar's exact test on the same b and c, and Newcombe's difference on the table.
    row = compare(scores, "match", pair_on="case_id").row(0, named=True)
    assert row["test"] == "mcnemar"
    assert row["p_value"] == pytest.approx(mcnemar_exact(b, c)["p_value"].item(), rel=1e-12)
    table = paired_difference(a, b, c, d).row(0, named=True)
    assert row["difference"] == pytest.approx(table["difference"], rel=1e-12)
    assert row["ci_low"] == pytest.approx(table["ci_low"], rel=1e-12)
    # Tokens and cost come from the runs: mean per run of each system on the case.
    assert frame["tokens_treatment"].unique().to_list() == [400.0]
    assert frame.filter(pl.col("discordance") == "treatment only")["tokens_control"].to_list() == [None]
    assert frame["target"].unique().to_list() == ["yes"]


@settings(max_examples=25, deadline=None)  # each example scores a Dataset: a few dozen suffice
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=30), st.randoms(use_true_random=False))
def test_b_and_c_are_the_patterns_in_any_run_order(pattern: list[tuple[bool, bool]], shuffle: random.Random) -> None:
    ds = paired_outcomes(pattern, messages=1)
    frames = {name: ds.collect(name) for name in ds.table_names}
    order = list(range(frames["runs"].height))
    shuffle.shuffle(order)
    frames["runs"] = frames["runs"][order]  # the frame does not depend on the order of the runs
    shuffled = mas_eval.Dataset.from_frames(**frames)
    frame = cases(mas_eval.score(shuffled), shuffled)
    assert frame.equals(cases(mas_eval.score(ds), ds))
    counts = frame["discordance"].cast(pl.String).value_counts()
    found = dict(zip(counts["discordance"], counts["count"], strict=True))
    assert found.get(B, 0) == sum(t and not c for t, c in pattern)
    assert found.get(C, 0) == sum(c and not t for t, c in pattern)
    assert found.get(BOTH, 0) + found.get(NEITHER, 0) == sum(t == c for t, c in pattern)


def test_with_epochs_a_case_is_its_mean_and_the_largest_difference_comes_first() -> None:
    ds = mas_eval.simulate_outcomes(240, seed=4, epochs=4, tasks=1)
    scores = mas_eval.score(ds)
    frame = cases(scores, ds)
    # The oracle: each system's mean of match over its epochs of the case, in plain Python.
    sums: dict[tuple[str, str], list[float]] = {}
    for row in scores.runs.select("case_id", "system", "match").iter_rows():
        sums.setdefault((row[0], row[1]), []).append(float(row[2]))
    for row in frame.iter_rows(named=True):
        t, c = sums[(row["case_id"], "mas")], sums[(row["case_id"], "single")]
        assert row["score_treatment"] == pytest.approx(sum(t) / len(t))
        assert row["score_control"] == pytest.approx(sum(c) / len(c))
        assert row["runs_treatment"] == len(t) == 4
        sign = (row["difference"] > 0) - (row["difference"] < 0)
        assert str(row["discordance"]) == {1: "treatment higher", -1: "control higher", 0: "tied"}[sign]
    # Epochs: no McNemar classes; within a class the largest |difference| first.
    assert not set(frame["discordance"].cast(pl.String)) & {B, C, BOTH, NEITHER}
    ranks = frame.select(pl.col("discordance").to_physical(), -pl.col("difference").abs()).rows()
    assert ranks == sorted(ranks)


def test_the_metric_defaults_to_each_familys_own_and_says_why() -> None:
    expected = {
        "simulate": ("dqs", "compare by default"),
        "simulate_diagnosis": ("traditional_recall", "compare by default"),
        "simulate_answers": ("clinical_accuracy", "answers family"),
        "simulate_outcomes": ("match", "first pass/fail score"),
    }
    for name, (metric, why) in expected.items():
        ds = getattr(mas_eval, name)(40, seed=2)
        viewer = case_viewer(mas_eval.score(ds), ds)
        assert viewer.metric == metric and why in viewer.chosen, name
        assert viewer.frame["metric"].unique().to_list() == [metric]
        assert f"compared on {metric} (by default: {viewer.chosen})" in viewer.metric_line


def test_bad_parameters_are_one_clear_error() -> None:
    ds = paired_outcomes(PATTERN)
    scores = mas_eval.score(ds)
    with pytest.raises(SchemaError, match="no column 'matc' \\(did you mean 'match'\\?\\)"):
        cases(scores, ds, metric="matc")
    with pytest.raises(SchemaError, match="'task' has type String; it must be numeric or boolean"):
        cases(scores, ds, metric="task")
    with pytest.raises(InvalidParameterError, match=r"no run of system 'debate'.*they have 'mas', 'single'"):
        cases(scores, ds, treatment="debate")
    with pytest.raises(InvalidParameterError, match="both 'mas'"):
        cases(scores, ds, treatment="mas", control="mas")
    with pytest.raises(InvalidParameterError, match="pair_on"):
        cases(scores, ds, pair_on=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=r"written as \.html"):
        write_cases(scores, ds, "cases.htm")


# -- the page -------------------------------------------------------------------------------------


def test_the_page_holds_every_runs_transcript_tool_calls_and_scorer_as_given(tmp_path: Path) -> None:
    # 600 cases: 1,200 runs in 5 chunks, so that runs of later chunks are read back too.
    ds = many_cases(600, 6, seed=1)
    scores = mas_eval.score(ds)
    viewer = write_cases(scores, ds, tmp_path / "cases.html")
    page = _page(tmp_path / "cases.html")
    meta, blob, _ = page.data()
    assert meta["chunks"] == 5 and meta["runs"] == 1200 and meta["cases"] == 600
    # The cases in the frame's order, with their classes as codes of DISCORDANCE.
    shown = _decoded(meta, blob["cases"], meta["case_columns"])
    assert shown["case"].to_list() == viewer.frame["case_id"].to_list()
    assert [DISCORDANCE[code] for code in shown["discordance"]] == viewer.frame["discordance"].cast(str).to_list()
    # Every message of every run, in its order, with its agent, round, turn, role and tokens.
    messages = _run_table(page, "messages")
    given_messages = ds.collect("messages").sort("run_id", "turn")
    columns = ["run_id", "round", "agent_id", "turn", "text", "role", "source", "input_tokens", "output_tokens"]
    assert messages.select(columns).sort("run_id", "turn").equals(given_messages.select(columns), null_equal=True)
    # The runs of a case are where the case says: its treatment's first, then its control's.
    runs = _decoded(meta, blob["runs"], meta["run_columns"])
    for i in (0, 299, 599):
        start, count = shown["t_start"][i], shown["t_count"][i]
        assert runs["run_id"][start : start + count].to_list() == [f"mas-{shown['case'][i][4:]}"]
        assert runs["run_id"][shown["c_start"][i]] == f"single-{shown['case'][i][4:]}"


def test_hostile_text_is_data_in_json_never_markup(tmp_path: Path) -> None:
    ds = hostile_dataset()
    write_cases(mas_eval.score(ds), ds, tmp_path / "cases.html")
    html = (tmp_path / "cases.html").read_text(encoding="utf-8")
    page = Page(html)
    meta, blob, chunks = page.data()
    # The page's own elements only: no image, svg or bold of the data's; the scripts are the page's.
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"img", "svg", "b", "i", "iframe", "object"}
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    assert [s.get("id") for s in scripts] == ["mas-viewer-meta", "mas-viewer-cases", None, "mas-viewer-chunk-0"]
    # No "<" in the embedded JSON: "</script>" and "<!--" in a transcript cannot end the element.
    for name, text in page.scripts.items():
        if name != "app":
            assert "<" not in text, name
    # ... and the data come back exactly as given, in the order of their turns.
    messages = _run_table(page, "messages")
    texts = messages.filter(pl.col("run_id") == "mas-000")["text"].to_list()
    assert texts == [RTL + " \\u202eevil\\u202c", HOSTILE, MARKDOWN]  # a bidirectional override as its escape
    tools = _run_table(page, "tool_calls").filter(pl.col("run_id") == "mas-000").row(0, named=True)
    assert (tools["tool"], tools["arguments"], tools["error"]) == ("<svg onload=x>", HOSTILE, HOSTILE)
    cases_shown = _decoded(meta, blob["cases"], meta["case_columns"])
    assert HOSTILE_CASE in cases_shown["case"].to_list()
    outcomes = _run_table(page, "outcomes").filter(pl.col("run_id") == "mas-000").sort("name").rows(named=True)
    assert [row["name"] for row in outcomes] == [HOSTILE, "match"]
    assert outcomes[1]["explanation"] == MARKDOWN + "\n" + RTL
    assert meta["score_names"] == [HOSTILE]  # the hostile score's run column, named in the page's meta only
    assert len(chunks) == 1
    # The page's visible text holds none of it: the data are drawn by the script, as text.
    assert not any("pwned" in piece for piece in page.text)


def test_control_characters_are_shown_as_escapes(tmp_path: Path) -> None:
    ds = hostile_dataset()
    frames = {name: ds.collect(name) for name in ds.table_names}
    frames["messages"] = frames["messages"].with_columns(
        pl.when(pl.col("turn") == 1).then(pl.lit(RTL + " \u202eevil\x1b[31m")).otherwise(pl.col("text")).alias("text")
    )
    ds = mas_eval.Dataset.from_frames(**frames)
    write_cases(mas_eval.score(ds), ds, tmp_path / "cases.html")
    texts = _run_table(_page(tmp_path / "cases.html"), "messages").filter(pl.col("turn") == 1)["text"].unique()
    assert texts.to_list() == [visible(RTL + " \u202eevil\x1b[31m")] == [RTL + " \\u202eevil\\x1b[31m"]


def test_hostile_system_names_and_title_are_escaped(tmp_path: Path) -> None:
    evil = '<img src=x onerror="window.__pwned=1">'
    ds = paired_outcomes(PATTERN)
    frames = {name: ds.collect(name) for name in ds.table_names}
    frames["runs"] = frames["runs"].with_columns(pl.col("system").replace("mas", evil))
    ds = mas_eval.Dataset.from_frames(**frames)
    viewer = write_cases(mas_eval.score(ds), ds, tmp_path / "cases.html", treatment=evil, title=f"Title {evil}")
    page = _page(tmp_path / "cases.html")
    assert "img" not in {tag for tag, _ in page.tags}
    assert f"Title {evil}" in page.text  # the <title> and <h1>, as text
    assert page.data()[0]["treatment"] == evil
    assert viewer.counts[B] == 3


def test_the_page_fetches_nothing(tmp_path: Path) -> None:
    ds = paired_outcomes(PATTERN)
    write_cases(mas_eval.score(ds), ds, tmp_path / "cases.html")
    html = (tmp_path / "cases.html").read_text(encoding="utf-8")
    page = Page(html)
    for tag, attrs in page.tags:
        assert "src" not in attrs and "href" not in attrs, (tag, attrs)
        assert tag not in ("link", "iframe", "img", "object", "embed", "base"), tag
    # No URL anywhere: no http(s), no protocol-relative //host, no CSS import, no script loading another.
    assert "http" not in html and "@import" not in html and "url(" not in html
    code = "\n".join(line for line in page.scripts["app"].splitlines() if not line.lstrip().startswith("//"))
    code = code.split("/*", 1)[0] + code.split("*/", 1)[1]  # its header comment
    assert "//" not in code.replace("// ", "")
    for call in ("fetch(", "XMLHttpRequest", "import(", "importScripts", "src =", ".src=", "innerHTML", "outerHTML"):
        assert call not in code, call


@pytest.mark.parametrize("simulator", ["simulate", "simulate_diagnosis", "simulate_answers", "simulate_outcomes"])
def test_every_familys_dataset_renders_with_its_own_tables(simulator: str, tmp_path: Path) -> None:
    own = {
        "simulate": {"beliefs", "agents", "alternatives", "criteria"},
        "simulate_diagnosis": {"messages", "ddx", "labels", "rounds", "consensus_ddx"},
        "simulate_answers": {"answers", "items"},
        "simulate_outcomes": {"outcomes", "usage"},
    }[simulator]
    ds = getattr(mas_eval, simulator)(40, seed=3)
    scores = mas_eval.score(ds)
    viewer = write_cases(scores, ds, tmp_path / "cases.html")
    meta, _, _ = _page(tmp_path / "cases.html").data()
    assert own <= {t["key"] for t in meta["tables"]}
    assert meta["cases"] == viewer.frame.height > 0
    # Without the Dataset: the scores alone, no transcripts, and no error.
    bare = write_cases(scores, None, tmp_path / "bare.html")
    meta, _, _ = _page(tmp_path / "bare.html").data()
    assert bare.frame.height == viewer.frame.height
    assert not {t["key"] for t in meta["tables"]} & {"messages", "outcomes", "beliefs", "answers", "ddx"}


def test_writing_is_reproducible_and_atomic(tmp_path: Path) -> None:
    ds = paired_outcomes(PATTERN)
    scores = mas_eval.score(ds)
    first, second = tmp_path / "a.html", tmp_path / "b.html"
    write_cases(scores, ds, first)
    write_cases(scores, ds, second)
    assert first.read_bytes() == second.read_bytes()
    with pytest.raises(mas_eval.OutputExistsError):
        write_cases(scores, ds, first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html"]


def test_viewer_links_are_relative_and_never_a_scheme() -> None:
    assert viewer_link("out/cases.html", "out/report.html") == "./cases.html"
    assert viewer_link("javascript:alert(1).html", "report.html") == "./javascript%3Aalert%281%29.html"
    assert viewer_link("cases.html", "sub/report.html") == "../cases.html"


# -- the command line -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("view")
    ds = paired_outcomes(PATTERN)
    ds.write(root / "ds")
    mas_eval.score(ds).write(root / "scores")
    return root / "scores", root / "ds"


def test_view_writes_the_page_and_says_which_metric(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores, ds = folders
    done = run(capsys, "view", scores, "--dataset", ds, "--out", tmp_path / "cases.html")
    assert done.code == 0, done.err
    said = " ".join(done.out.split())
    assert "Cases compared on match (by default: the outcomes family's first pass/fail score)" in said
    assert "McNemar's exact test" in said and "mas passed, single failed: 3; single passed, mas failed: 2" in said
    assert _page(tmp_path / "cases.html").data()[0]["metric"] == "match"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"--dataset": "missing"}, "no such Dataset folder"),
        ({"--metric": "matc"}, "no column 'matc' (did you mean 'match'?)"),
        ({"--treatment": "debate"}, "no run of system 'debate'"),
        ({"--out": "cases.pdf"}, "written as .html"),
    ],
)
def test_view_refuses_bad_input_in_one_line_writing_nothing(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, str], says: str
) -> None:
    scores, ds = folders
    options = {"--dataset": str(ds), "--out": str(tmp_path / "cases.html")}
    options.update({flag: str(tmp_path / value) if flag in options else value for flag, value in change.items()})
    before, inputs = tree(tmp_path), tree(scores.parent)
    assert_refused(run(capsys, "view", scores, *[part for pair in options.items() for part in pair]), says=says)
    assert_unchanged(before, tmp_path)
    assert_unchanged(inputs, scores.parent)


def test_view_keeps_an_existing_page_without_overwrite(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores, ds = folders
    (tmp_path / "cases.html").write_text("mine")
    assert_refused(run(capsys, "view", scores, "--dataset", ds, "--out", tmp_path / "cases.html"), says="exists")
    assert (tmp_path / "cases.html").read_text() == "mine"


@pytest.mark.slow
def test_report_with_cases_writes_both_and_links_the_viewer(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores, ds = folders
    out = tmp_path / "report.html"
    done = run(capsys, "report", scores, "--dataset", ds, "--out", out, "--cases", tmp_path / "cases.html")
    assert done.code == 0, done.err
    links = [attrs for tag, attrs in _page(out).tags if tag == "a" and attrs.get("data-link") == "cases"]
    assert [link["href"] for link in links] == ["./cases.html"]
    assert _page(tmp_path / "cases.html").data()[0]["cases"] == len(PATTERN)
    # Without --cases the report has no such link; --cases naming the report itself is refused.
    assert run(capsys, "report", scores, "--out", tmp_path / "plain.html").code == 0
    assert "data-link" not in (tmp_path / "plain.html").read_text(encoding="utf-8")
    before = tree(tmp_path)
    assert_refused(run(capsys, "report", scores, "--out", tmp_path / "r.html", "--cases", tmp_path / "r.html"))
    assert_unchanged(before, tmp_path)
