"""Bounded inputs and parameters: what a hostile or careless value costs is refused in one line, never
paid in memory or a traceback.

JSONL ingest reads a file in bounded memory whatever its lines (a line over ``max_line_bytes`` is a
malformed line, never held whole; blank and tiny lines fill a chunk by their count too); the
simulators refuse sizes that would not fit in memory; every parameter of the statistics is checked
before use; and the command line's options take a wrong type or an absurd value as one line.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import mas_eval
from mas_eval import compare
from mas_eval.constraints import Interval
from mas_eval.errors import IngestError, InvalidParameterError, MasEvalError
from mas_eval.ingest import ingest_jsonl, ingest_lddx, jsonl
from mas_eval.stats import adjust_pvalues, calibration, power
from mas_eval.storage.dataset import Dataset
from tests.conftest import FIXTURES, LDDX, needs_lddx
from tests.promises import assert_refused, assert_unchanged, run, tree


def _record(run_id: str, **fields: object) -> str:
    system = "mas" if run_id[-1] in "13579" else "single"
    return json.dumps({"run_id": run_id, "system": system, "case_id": "c1"} | fields, ensure_ascii=False)


def _write(path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    data = "\n".join(lines) + ("\n" if newline_at_end else "")
    path.write_bytes(gzip.compress(data.encode()) if path.suffix == ".gz" else data.encode())
    return path


# -- JSONL ingest: a line longer than the limit ---------------------------------------------------


@pytest.mark.parametrize("name", ["runs.jsonl", "runs.jsonl.gz"])
def test_a_file_without_newlines_longer_than_the_limit_is_one_malformed_line(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name, [_record("r1", note="x" * 50_000)], newline_at_end=False)
    size = len(_record("r1", note="x" * 50_000))
    with pytest.raises(IngestError) as raised:
        ingest_jsonl([path], tmp_path / "ds", max_line_bytes=1_000)
    assert str(raised.value) == (
        f"{path}:1: line too long: {size:,} bytes, over the limit of 1,000; if the line is one run record, raise "
        f"the limit (max_line_bytes={size}), else fix the file, or pass skip_invalid=True to set malformed lines "
        "aside in a rejects file"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_line_over_the_limit_is_never_held_whole(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"run_id": "' + b"r" * 20_000_000)  # 20 MB, no newline
    tracemalloc.start()
    try:
        chunks = list(jsonl.lines.chunks(path, jsonl.CHUNK_BYTES, 1_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(c.first, c.long, c.position) for c in chunks] == [(1, {1: 20_000_012}, 20_000_012)]
    assert chunks[0].lines == [b'{"run_id": "' + b"r" * 988]  # its first 1,000 bytes
    assert peak < 4 * jsonl.lines._READ_BYTES  # a few reads, not the line


@pytest.mark.parametrize("read_bytes", [1, 7, 100, 2**20])
def test_lines_over_the_limit_are_found_whatever_the_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_bytes: int
) -> None:
    monkeypatch.setattr(jsonl.lines, "_READ_BYTES", read_bytes)  # a line spans many reads, or a read many lines
    long = _record("r2", note="é" * 600)  # over the limit, and cut inside no character
    size = len(long.encode())
    lines = [_record("r1"), long, "", _record("r3"), long.replace("r2", "r4"), _record("r5")]
    path = _write(tmp_path / "runs.jsonl", lines, newline_at_end=False)
    result = ingest_jsonl([path], tmp_path / "ds", skip_invalid=True, max_line_bytes=1_200, chunk_bytes=300)
    assert (result.runs, result.rejected) == (3, 2)
    assert Dataset.open(result.out).collect("runs")["run_id"].to_list() == ["r1", "r3", "r5"]
    rejects = [json.loads(line) for line in result.rejects.read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], r["error"]) for r in rejects] == [
        (2, f"line too long: {size:,} bytes, over the limit of 1,200"),
        (5, f"line too long: {size:,} bytes, over the limit of 1,200"),
    ]
    # The rejects file keeps the start of the line, cut to at most 1,000 bytes between two characters:
    # 63 bytes before the first "é", so 1,000 would cut one in two.
    for reject in rejects:
        assert lines[reject["line"] - 1].startswith(reject["text"])
        assert len(reject["text"].encode()) == 999


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    line = _record("r1", note="x" * 100)
    path = _write(tmp_path / "runs.jsonl", [line, _record("r2")])
    assert ingest_jsonl([path], tmp_path / "ds", max_line_bytes=len(line)).runs == 2
    with pytest.raises(IngestError, match=r"runs\.jsonl:1: line too long"):
        ingest_jsonl([path], tmp_path / "ds2", max_line_bytes=len(line) - 1)


# -- JSONL ingest: blank and tiny lines fill a chunk by their count -------------------------------


@pytest.mark.parametrize("name", ["runs.jsonl", "runs.jsonl.gz"])
def test_blank_lines_count_in_the_chunk(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name, [""] * 1_000 + [_record("r1")])
    per_chunk = 10
    chunk_bytes = per_chunk * (1 + jsonl.LINE_OVERHEAD) - 1  # ten blank lines take a chunk past it
    chunks = list(jsonl.lines.chunks(path, chunk_bytes, jsonl.MAX_LINE_BYTES))
    counts = [len(c.lines) for c in chunks if c.lines]
    assert sum(counts) == 1_001
    assert counts[:-1] == [per_chunk] * 100 and counts[-1] == 1
    assert [c.first for c in chunks if c.lines] == list(range(1, 1_002, per_chunk))
    assert ingest_jsonl([path], tmp_path / "ds", chunk_bytes=chunk_bytes).runs == 1


# -- JSONL ingest on the command line --------------------------------------------------------------


def test_cli_refuses_a_line_over_max_line_mb(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl", [_record("r1", note="x" * 2**20)], newline_at_end=False)
    before = tree(tmp_path)
    done = run(capsys, "ingest", path, "--out", tmp_path / "ds", "--max-line-mb", "0.5")
    assert_refused(done, says=[f"{path}:1: line too long", "raise the limit (--max-line-mb 2)", "--skip-invalid"])
    assert_unchanged(before, tmp_path)


def test_cli_sets_a_line_over_max_line_mb_aside(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl", [_record("r1"), _record("r2", note="x" * 2**20), _record("r3")])
    before = tree(tmp_path)
    done = run(capsys, "ingest", path, "--out", tmp_path / "ds", "--max-line-mb", "0.5", "--skip-invalid")
    assert done.code == 0, done.err
    assert "skipped 1 malformed line(s)" in done.out
    assert_unchanged(before, tmp_path, except_for=["ds", "ds.rejects.jsonl"])
    (reject,) = [json.loads(line) for line in (tmp_path / "ds.rejects.jsonl").read_text().splitlines()]
    assert reject["line"] == 2 and reject["error"].startswith("line too long: 1,048,")
    assert len(reject["text"]) == 1_000


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--max-line-mb", "0", "--max-line-mb=0.0 is invalid; --max-line-mb must be a number in (0, 1024]"),
        ("--max-line-mb", "1e308", "--max-line-mb=1e+308 is invalid"),
        ("--max-line-mb", "inf", "--max-line-mb=inf is invalid"),
        ("--chunk-mb", "1e308", "--chunk-mb=1e+308 is invalid; --chunk-mb must be a number in (0, 1024]"),
        ("--chunk-mb", "nan", "--chunk-mb=nan is invalid"),
        ("--max-line-mb", "big", "Invalid value for '--max-line-mb'"),
    ],
)
def test_cli_refuses_absurd_sizes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str, value: str, says: str
) -> None:
    path = _write(tmp_path / "runs.jsonl", [_record("r1")])
    before = tree(tmp_path)
    assert_refused(run(capsys, "ingest", path, "--out", tmp_path / "ds", option, value), says=says)
    assert_unchanged(before, tmp_path)


def test_cli_max_line_mb_is_for_the_formats_read_by_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    done = run(capsys, "ingest", tmp_path, "--out", tmp_path / "ds", "--format", "lddx", "--max-line-mb", "1")
    assert_refused(done, says="--max-line-mb applies to --format jsonl or lm-eval or table or otlp only")


# -- the declared checks themselves ----------------------------------------------------------------


def test_an_integer_too_large_for_a_float_is_out_of_range_not_an_overflow() -> None:
    with pytest.raises(InvalidParameterError, match=r"^compare: alpha=1000000000000000000000\d+\.\.\. is invalid"):
        compare(pl.DataFrame(), "dqs", alpha=10**400)


def test_integer_bounds_are_shown_in_full() -> None:
    assert str(Interval(int, 2, 2_000_000)) == "an integer in [2, 2000000]"
    assert str(Interval(float, 0, 1024, closed="right")) == "a number in (0, 1024]"
    assert str(Interval(float, 1e-6)) == "a number >= 1e-06"


# -- simulate: a size ceiling, declared --------------------------------------------------------------


SIMULATORS = {
    "decision": mas_eval.simulate,
    "diagnosis": mas_eval.simulate_diagnosis,
    "answers": mas_eval.simulate_answers,
}


@pytest.mark.parametrize(("kind", "ceiling"), [("decision", 4_400_000), ("diagnosis", 330_000), ("answers", 250_000)])
def test_each_simulator_declares_its_runs_ceiling(kind: str, ceiling: int) -> None:
    function = SIMULATORS[kind]
    (runs,) = function.__parameter_constraints__["runs"]
    assert (runs.low, runs.high) == (2, ceiling)
    with pytest.raises(InvalidParameterError) as raised:
        function(ceiling + 1, seed=0)
    assert str(raised.value) == (
        f"{function.__name__}: runs={ceiling + 1} is invalid; runs must be an integer in [2, {ceiling}]; more would "
        "take over 8 GB of memory; simulate several Datasets with other seeds (each within the ceiling) instead"
    )
    with pytest.raises(InvalidParameterError, match=r"runs=1180591620717411303424 is invalid"):
        function(2**70, seed=0)


@pytest.mark.parametrize(
    ("kind", "runs", "options", "says"),
    [
        ("decision", 4_000_000, {"agents": [10, 20]}, "4,000,000 runs with agents=(10, 20) would take about 12 GB"),
        ("decision", 3_000_000, {"alternatives": (6, 12), "criteria": (5, 10)}, "at most 1,578,260 runs"),
        ("diagnosis", 300_000, {"responses": 60}, "pass at most 183,333 runs of this size"),
        (
            "diagnosis",
            20,
            {"agents": (1_000, 1_000), "responses": 100_000, "response_chars": 20_000},
            "20 runs with agents=(1000, 1000) and responses=100000 and response_chars=20000 would take about 17 GB",
        ),
        ("answers", 100_000, {"items": (40, 80), "answer_chars": 600}, "items=(40, 80) and answer_chars=600"),
        ("answers", 200, {"items": (1_000_000, 1_000_000)}, "each run 33,333.3 times the default size"),
    ],
)
def test_larger_runs_lower_the_ceiling(kind: str, runs: int, options: dict[str, object], says: str) -> None:
    with pytest.raises(InvalidParameterError, match=r"over the ceiling of 8 GB") as raised:
        SIMULATORS[kind](runs, seed=0, **options)
    assert says in str(raised.value)
    assert "simulate several Datasets with other seeds" in str(raised.value)


@pytest.mark.parametrize(
    ("kind", "option", "value", "says"),
    [
        ("decision", "agents", (3, 10**6), "agents must be a (min, max) pair of integers in [2, 1000] with min <= max"),
        ("decision", "tasks", 10**9, "tasks must be an integer in [1, 4400000]"),
        ("decision", "variants", 10**9, "variants must be an integer in [1, 4400000]"),
        ("diagnosis", "responses", 10**9, "responses must be an integer in [1, 100000]"),
        ("diagnosis", "agents", (2, 5_000), "agents must be a (min, max) pair of integers in [2, 1000]"),
        ("answers", "items", (1, 10**7), "items must be a (min, max) pair of integers in [1, 1000000]"),
    ],
)
def test_each_size_option_has_a_ceiling(kind: str, option: str, value: object, says: str) -> None:
    with pytest.raises(InvalidParameterError, match=r"is invalid") as raised:
        SIMULATORS[kind](100, seed=0, **{option: value})
    assert says in str(raised.value)


@pytest.mark.slow
def test_runs_within_the_ceiling_are_simulated_at_its_edge() -> None:
    # Larger runs, but few: within the ceiling, so simulated (a million answers).
    ds = mas_eval.simulate_answers(1_000, seed=0, items=(1_000, 1_000), answer_chars=1)
    assert ds.scan("answers").select(pl.len()).collect().item() == 1_000_000


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--runs", "5000000"],
            "simulate_decision: runs=5000000 is invalid; runs must be an integer in [2, 4400000]; more",
        ),
        (["--runs", "1" + "0" * 30], "runs=1000000000000000000000000000000 is invalid"),
        (["--kind", "diagnosis", "--runs", "400000"], "simulate_diagnosis: runs=400000 is invalid"),
        (
            ["--kind", "answers", "--runs", "100000", "--items", "40,80", "--answer-chars", "600"],
            "100,000 runs with --items 40,80 and --answer-chars 600 would take about 12 GB of memory",
        ),
        (["--kind", "answers", "--tasks", "1000000000"], "tasks=1000000000 is invalid; tasks must be an integer in"),
        (["--tasks", "1000000000"], "simulate_decision: tasks=1000000000 is invalid"),
        (["--variants", "1000000000"], "simulate_decision: variants=1000000000 is invalid"),
        (["--kind", "answers", "--items", "1,99999999999"], "items must be a (min, max) pair of integers in"),
    ],
)
def test_cli_simulate_refuses_what_would_not_fit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], says: str
) -> None:
    before = tree(tmp_path)
    assert_refused(run(capsys, "simulate", "--out", tmp_path / "sim", *args), says=says)
    assert_unchanged(before, tmp_path)


def test_cli_simulate_help_states_the_ceilings(capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "simulate", "--help")
    text = " ".join(done.out.replace("│", " ").split())
    assert "decision 4,400,000, diagnosis 330,000, answers 250,000, outcomes 5,300,000, fewer of larger runs" in text


# -- the statistics: every parameter through the declared checks ------------------------------------


RUNS = pl.DataFrame(
    {
        "system": ["mas", "single"] * 4,
        "case_id": ["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c4"],
        "dqs": [0.8, 0.6, 0.7, 0.65, 0.9, 0.5, 0.85, 0.7],
    }
)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (
            {"seed": "abc"},
            "compare: seed='abc' is invalid; seed must be an integer >= 0 or a numpy SeedSequence or None",
        ),
        ({"seed": "abc", "n_boot": 10}, "compare: seed='abc' is invalid"),
        ({"seed": -1, "n_boot": 10}, "compare: seed=-1 is invalid"),
        (
            {"n_boot": 10**12},
            "compare: n_boot=1000000000000 is invalid; n_boot must be an integer in [0, 1000000]; more resamples "
            "would only cost memory and time; 10,000 give a stable interval",
        ),
        ({"metrics": 5}, "compare: metrics=5 is invalid; metrics must be a column name, names separated by commas"),
        ({"by": 5}, "compare: by=5 is invalid"),
        ({"treatment": 5}, "compare: treatment=5 is invalid; treatment must be a system name (string)"),
        ({"control": None}, "compare: control=None is invalid"),
    ],
)
def test_compare_checks_every_parameter_before_use(options: dict[str, object], says: str) -> None:
    with pytest.raises(InvalidParameterError) as raised:
        compare(RUNS, **({"metrics": "dqs"} | options))
    assert str(raised.value).startswith(says)


def test_compare_takes_a_seed_sequence_and_numpy_integers() -> None:
    by_int = compare(RUNS, "dqs", pair_on="case_id", n_boot=200, seed=np.int64(3))
    by_sequence = compare(RUNS, "dqs", pair_on="case_id", n_boot=200, seed=np.random.SeedSequence(3))
    assert by_int["ci_low"].to_list() == by_sequence["ci_low"].to_list()


def test_power_stays_within_what_its_columns_hold() -> None:
    with pytest.raises(MasEvalError, match=r"no solution for n .*: n would be 1\.57e\+17, beyond any experiment"):
        power(effect_size=1e-8, power=0.8)
    with pytest.raises(InvalidParameterError, match=r"ratio=1e\+300 is invalid; ratio must be a number in \(0, 1000\]"):
        power(effect_size=0.5, power=0.8, ratio=1e300)
    # A ratio far from 1 made statsmodels' solver return an array, and power() a TypeError traceback.
    row = power(effect_size=0.5, power=0.8, ratio=0.001).row(0, named=True)
    assert (row["n_required"], row["n_control_required"]) == (31429, 32)


def test_calibration_bins_have_a_ceiling() -> None:
    runs = RUNS.with_columns(confidence=pl.Series([0.9, 0.2, 0.7, 0.6, 0.95, 0.1, 0.8, 0.5]), hit=pl.col("dqs") > 0.6)
    with pytest.raises(
        InvalidParameterError, match=r"bins=1000000000000 is invalid; bins must be an integer in \[1, 1000\]"
    ):
        calibration(runs, "confidence", "hit", bins=10**12)  # a list of 10**12 edges before
    assert calibration(runs, "confidence", "hit", bins=1_000).height == 2


@pytest.mark.parametrize("p_values", [[0.5, 1.5], [-0.1], "abc", [[0.1]], [10**400]])
def test_adjust_pvalues_takes_p_values_only(p_values: object) -> None:
    with pytest.raises(InvalidParameterError, match=r"^adjust_pvalues: p_values=.* numbers in \[0, 1\]"):
        adjust_pvalues(p_values)  # type: ignore[arg-type]


def test_score_names_what_it_takes() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"^score: ds='sim' is invalid; ds must be a Dataset \(Dataset\.open"
    ):
        mas_eval.score("sim")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=r"^score: progress=5 is invalid"):
        mas_eval.score(mas_eval.simulate(20, seed=0), progress=5)  # type: ignore[arg-type]


# -- the command line: a wrong type or an absurd value is one line ------------------------------------


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scored")
    mas_eval.score(mas_eval.simulate(200, seed=1), out=folder / "scores")
    return folder


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--n-boot", "10000000"], "compare: n_boot=10000000 is invalid; n_boot must be an integer in [0, 1000000]"),
        (["--n-boot", "100", "--seed", "-5"], "compare: seed=-5 is invalid"),
        (["--seed", "abc"], "Invalid value for '--seed'"),
        (["--alpha", "1e999"], "compare: alpha=inf is invalid"),
    ],
)
def test_cli_compare_refuses_absurd_options(
    capsys: pytest.CaptureFixture[str], scored: Path, args: list[str], says: str
) -> None:
    before = tree(scored)
    assert_refused(run(capsys, "compare", scored / "scores", *args), says=says)
    assert_unchanged(before, scored)


def test_cli_combined_score_refuses_weights_whose_sum_overflows(capsys: pytest.CaptureFixture[str]) -> None:
    report = FIXTURES / "medaisure" / "b95deaa7.json"
    if not report.is_file():
        pytest.skip(f"{report} is not beside this clone")
    done = run(capsys, "combined-score", report, "--weights", "diagnostics=1e308,safety=1e308")
    assert_refused(done, says="sum beyond the largest number; scale them down (only ratios count)")


@needs_lddx
def test_cli_reproduce_shows_every_disagreement_for_a_huge_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dataset = tmp_path / "lddx"
    ingest_lddx([LDDX], dataset)
    done = run(capsys, "reproduce", dataset, "--show", "99999999999999999999999")
    assert done.code == 0, done.err  # an OverflowError traceback before
