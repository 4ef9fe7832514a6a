"""The MAS-vs-baseline report: its sections, its four formats, escaping, and what the data could not show."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval.errors import InvalidParameterError, OutputError, SchemaError
from mas_eval.report import build, load_json
from mas_eval.report.latex import escape_latex
from mas_eval.stats import compare
from tests.conftest import run_cli_process
from tests.promises import run

SECTIONS = [
    "dataset", "headline", "comparison", "forest", "distributions", "paired", "calibration", "efficiency", "consensus",
    "cost", "provenance",
]  # fmt: skip
PAYLOAD = "<script>alert(1)</script>"
LATEX_NAME = "a\\b_c%d&e#f"


class _Page(HTMLParser):
    """What a browser would load or run: tags, sections, figures, and every URL the page names."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.sections: list[str] = []
        self.figures: list[str] = []
        self.urls: list[str] = []
        self.open_svg = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "section":
            self.sections.append(str(values["id"]))
        if tag == "figure":
            self.figures.append(str(values["data-figure"]))
        self.urls += [str(v) for k, v in attrs if k in ("src", "href", "xlink:href", "data", "action") and v]


def _page(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def scores() -> mas_eval.Scores:
    return mas_eval.score(mas_eval.simulate(400, seed=3))


def test_the_report_has_every_section_in_order(report: mas_eval.report.Report) -> None:
    assert [s.key for s in report.sections] == SECTIONS
    assert not [s.key for s in report.sections if s.omitted]
    assert report.section("comparison").tables[0].frame["correction"].unique().to_list() == ["holm"]


@pytest.mark.slow
def test_html_is_one_self_contained_page_holding_every_section(report: mas_eval.report.Report) -> None:
    text = report.to_html()
    page = _page(text)
    assert page.sections == SECTIONS
    figures = [f.name for s in report.sections for f in s.figures]
    assert page.figures == figures and len(figures) >= 6
    assert page.tags.count("svg") == len(figures), "every figure inline as SVG"
    # Nothing is fetched: no script, stylesheet link, image file or external URL of any kind.
    assert not {"script", "link", "img", "iframe", "object"} & set(page.tags)
    external = [u for u in page.urls if not u.startswith(("#", "data:image/png;base64,"))]  # in-page, or inline
    assert not external, external
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', ""
    )
    assert "url(http" not in text and "@import" not in text


@pytest.mark.slow
def test_names_are_escaped_in_html_and_latex(scores: mas_eval.Scores) -> None:
    runs = scores.runs.with_columns(
        system=pl.col("system").replace({"mas": PAYLOAD}),
        task=pl.col("task").replace({"task1": LATEX_NAME, "task2": PAYLOAD}),
    )
    named = mas_eval.Scores(tables={"runs": runs}, preset=scores.preset)
    comparison = compare(runs, ["dqs"], by="task", pair_on="case_id", treatment=PAYLOAD)
    report = build(named, comparison, title=f"Title {PAYLOAD}", treatment=PAYLOAD)
    html = report.to_html()
    assert PAYLOAD not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "script" not in _page(html).tags
    latex = report.to_latex()
    assert LATEX_NAME not in latex
    assert r"a\textbackslash{}b\_c\%d\&e\#f" in latex
    assert r"\textless{}script\textgreater{}" in latex


def test_the_forest_plots_name_the_systems_compared(scores: mas_eval.Scores) -> None:
    # Their axes said "mas − single" whatever --treatment and --control named.
    runs = scores.runs.with_columns(system=pl.col("system").replace({"mas": "debate", "single": "solo"}))
    named = mas_eval.Scores(tables={"runs": runs}, preset=scores.preset)
    report = build(named, treatment="debate", control="solo")
    labels = [figure.figure.axes[0].get_xlabel() for figure in report.section("forest").figures]
    assert labels and all("debate" in label and "solo" in label and "mas" not in label for label in labels), labels


def test_latex_escapes_every_special_character() -> None:
    # The ten characters LaTeX treats specially (The LaTeX Companion, 2nd ed., table 7.31).
    assert escape_latex("# $ % & ~ _ ^ \\ { }") == (
        r"\# \$ \% \& \textasciitilde{} \_ \textasciicircum{} \textbackslash{} \{ \}"
    )


def test_latex_holds_booktabs_tables_with_corrected_p_and_effects(report: mas_eval.report.Report) -> None:
    latex = report.to_latex()
    # headline, comparison, calibration and the cost-effectiveness
    assert latex.count(r"\begin{tabular}") == latex.count(r"\bottomrule") == 4
    assert r"\toprule" in latex and r"\midrule" in latex
    header = next(line for line in latex.splitlines() if line.startswith("task & metric"))
    assert r"p (Holm)" in header and " d & g & effect" in header
    rows = report.tables["comparison"].height
    comparison_block = latex.split(r"\label{tab:mas-eval-comparison}")[1].split(r"\bottomrule")[0]
    assert comparison_block.count(r" \\") == rows + 1  # header and one line per comparison


def test_json_round_trips_every_table(report: mas_eval.report.Report, tmp_path: Path) -> None:
    path = report.write(tmp_path / "r.json")
    loaded = load_json(path)
    assert [s["key"] for s in loaded["sections"]] == SECTIONS
    assert loaded["tables"].keys() == report.tables.keys()
    for name, frame in report.tables.items():
        assert_frame_equal(loaded["tables"][name], frame, check_exact=True)
    assert loaded["provenance"]["mas_eval_version"] == mas_eval.__version__


@pytest.mark.slow
def test_markdown_links_figures_written_beside_it(report: mas_eval.report.Report, tmp_path: Path) -> None:
    path = report.write(tmp_path / "out" / "r.md")
    text = path.read_text(encoding="utf-8")
    links = re.findall(r"\]\((r_figures/[^)]+)\)", text)
    assert links and all((path.parent / link).is_file() for link in links)
    assert {Path(link).suffix for link in links} == {".png", ".svg"}
    assert "## Calibration" in text and "| metric |" in text


@pytest.mark.slow
def test_a_report_without_ground_truth_lists_calibration_as_not_in_the_data(scores: mas_eval.Scores) -> None:
    runs = scores.runs.with_columns(gt_match=pl.lit(None, dtype=scores.runs["gt_match"].dtype))
    report = build(mas_eval.Scores(tables={"runs": runs}), title="No ground truth")
    calibration = report.section("calibration")
    assert calibration.omitted == "no ground truth: gt_match is null in every run, so calibration is undefined"
    assert not calibration.figures and not calibration.tables
    # Not a heading over nothing: one line of the closing list, before the provenance.
    keys = [s.key for s in report.sections]
    assert "calibration" not in keys and keys[-2:] == ["not_in_data", "provenance"]
    assert report.not_in_data == [
        "Calibration: no ground truth: gt_match is null in every run, so calibration is undefined."
    ]
    html = report.to_html()
    assert "Omitted" not in html and 'id="calibration"' not in html
    assert "<li>Calibration: no ground truth" in html
    assert 'data-figure="reliability"' not in html
    assert report.section("comparison").omitted is None


def test_one_system_omits_the_comparison_and_paired_sections(scores: mas_eval.Scores) -> None:
    runs = scores.runs.filter(pl.col("system") == "mas")
    report = build(mas_eval.Scores(tables={"runs": runs}))
    for key in ("comparison", "forest", "paired"):
        assert report.section(key).omitted, key
        assert not report.section(key).figures
    assert "no run of system single" in str(report.section("comparison").omitted)
    assert report.section("distributions").figures


def test_provenance_hashes_the_scores_files_and_records_the_call(scores: mas_eval.Scores, tmp_path: Path) -> None:
    folder = scores.write(tmp_path / "scores")
    report = build(folder)
    digests = report.provenance["inputs"]["scores"]["sha256"]
    assert set(digests) >= {"runs.parquet", "agents.parquet"}
    assert all(re.fullmatch(r"[0-9a-f]{64}", d) for d in digests.values())
    assert report.provenance["call"].startswith("mas_eval.report.build(")
    assert report.provenance["parameters"]["preset"] == "spec"


def test_bad_requests_are_one_clear_error(report: mas_eval.report.Report, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"r\.pdf: a report is written as \.html, \.md, \.json, \.tex"):
        report.write(tmp_path / "r.pdf")
    (tmp_path / "r.html").write_text("old", encoding="utf-8")
    with pytest.raises(Exception, match="exists"):
        report.write(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == "old"
    with pytest.raises(SchemaError, match="not a Scores folder"):
        build(tmp_path)
    with pytest.raises(SchemaError, match="'runs' table is empty"):
        build(mas_eval.Scores(tables={"runs": report.tables["runs_per_group"].clear()}))
    with pytest.raises(SchemaError, match="not valid JSON"):
        (tmp_path / "bad.json").write_text("{", encoding="utf-8")
        load_json(tmp_path / "bad.json")


@pytest.mark.subprocess
def test_report_cli_writes_each_format(
    capsys: pytest.CaptureFixture[str], scores: mas_eval.Scores, tmp_path: Path
) -> None:
    folder = scores.write(tmp_path / "scores")
    done = run_cli_process("compare", folder, "--by", "task", "--pair-on", "case_id", "--out", tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    # One format from a user's shell (a fresh process), the others through the same command in this
    # process: a fresh process costs seconds of imports, and the command is the same code.
    out = tmp_path / "report.json"
    done = run_cli_process("report", folder, "--comparisons", tmp_path / "c.json", "--out", out)
    assert done.returncode == 0, done.stderr
    assert out.is_file() and f"wrote the report to {out}" in done.stdout
    for suffix in (".html", ".md", ".tex"):
        out = tmp_path / f"report{suffix}"
        ran = run(capsys, "report", folder, "--comparisons", tmp_path / "c.json", "--out", out)
        assert ran.code == 0, ran.err
        assert out.is_file() and f"wrote the report to {out}" in ran.out
    recorded = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["provenance"]
    assert recorded["call"].startswith("mas-eval report ") and "--comparisons" in recorded["call"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{tmp}/r.pdf"], "a report is written as .html, .md, .json, .tex"),
        (["--out", "{scores}/r.html"], "lies inside the input"),
        (["--out", "{tmp}/r.html", "--comparisons", "{tmp}/missing.csv"], "no such comparisons file"),
        (["--out", "{tmp}/r.html", "--comparisons", "{scores}/runs.parquet"], "not a comparison table"),
        (["--out", "{tmp}/r.html", "--comparisons", "{scores}/manifest.json.txt"], "comparisons are written as"),
    ],
)
def test_report_cli_refuses_bad_input_in_one_line(
    capsys: pytest.CaptureFixture[str], scores: mas_eval.Scores, tmp_path: Path, args: list[str], message: str
) -> None:
    folder = scores.write(tmp_path / "scores")
    argv = [a.format(tmp=tmp_path, scores=folder) for a in args]
    done = run(capsys, "report", folder, *argv)
    assert done.code == 2
    assert message in done.err and "Traceback" not in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


def test_a_comparisons_file_without_comparison_columns_is_named(
    capsys: pytest.CaptureFixture[str], scores: mas_eval.Scores, tmp_path: Path
) -> None:
    folder = scores.write(tmp_path / "scores")
    (tmp_path / "c.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    named = r"c\.csv: not a comparison table: no column 'metric', 'test', .*; the columns are: a, b; pass a file"
    with pytest.raises(SchemaError, match=named):
        from mas_eval.stats.comparison_table import read_comparisons

        read_comparisons(tmp_path / "c.csv")
    done = run(capsys, "report", folder, "--comparisons", tmp_path / "c.csv", "--out", tmp_path / "r.md")
    assert done.code == 2 and "not a comparison table" in done.err
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "r_figures").exists()


def test_unwritable_output_leaves_nothing(report: mas_eval.report.Report, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(OutputError):
        report.write(tmp_path / "file" / "r.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.slow
def test_the_consensus_table_counts_the_decision_runs_and_their_conflicts() -> None:
    # Runs of another family (here the sample's diagnosis and answer runs) have no conflict count
    # and are not the decision family's runs: the table's runs column had counted them.
    sample = mas_eval.score(mas_eval.Dataset.open(Path(__file__).resolve().parents[2] / "data" / "sample"))
    table = build(sample).section("consensus").tables[0].frame.sort("system")
    runs = sample.runs.filter(pl.col("num_conflicts").is_not_null())
    expected = (
        runs.group_by("system")
        .agg(
            pl.len().alias("runs"),
            pl.col("consensus_reached").cast(pl.Float64).mean(),
            pl.col("num_conflicts").cast(pl.Float64).mean().alias("conflicts_per_run"),
        )
        .sort("system")
    )
    assert (
        table["runs"].to_list()
        == expected["runs"].to_list()
        < sample.runs["system"].value_counts().sort("system")["count"].to_list()
    )
    assert table["consensus_reached"].to_list() == pytest.approx(expected["consensus_reached"].to_list(), nan_ok=True)
    assert table["conflicts_per_run"].to_list() == pytest.approx(expected["conflicts_per_run"].to_list())
    levels = sample["conflicts"].group_by("system", "severity_level").len()
    for level in ("low", "moderate", "high"):
        counted = dict(levels.filter(pl.col("severity_level") == level).select("system", "len").iter_rows())
        assert table[f"{level}_conflicts"].to_list() == [counted.get(system, 0) for system in table["system"]]


def test_the_consensus_table_gives_the_sweep_s_winner_changes_when_scored() -> None:
    from tests.decision_helpers import one_run

    # One run swept over 11 weights (test_decision_consensus: winners B, B, A, ..., A, B, B change twice).
    scores = {"A": {"x": 0.6, "y": 0.0}, "B": {"x": 0.65, "y": 0.05, "z": 0.05}}
    criteria = {c: {"weight": 1.0, "kind": "benefit", "scale": "satisfaction"} for c in ("x", "y", "z")}
    beliefs = {"g": {"A": 0.6, "B": 0.4}, "h": {"A": 0.3, "B": 0.7}}
    swept = one_run(scores=scores, criteria=criteria, beliefs=beliefs, preset="crisis-mas-poc",
                    stability_draws=11, stability_criterion="x")  # fmt: skip
    section = build(swept).section("consensus")
    assert section.tables[0].frame["winner_changes_per_run"].to_list() == [2.0]
    assert any(line.startswith("winner_changes_per_run:") for line in section.text)
    unswept = build(one_run(scores=scores, criteria=criteria, beliefs=beliefs)).section("consensus")
    assert "winner_changes_per_run" not in unswept.tables[0].frame.columns
