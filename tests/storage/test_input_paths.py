"""What is read is what the user named: paths, table folders and shards, refused in one line when wrong.

Each cause below once gave a silently wrong result or a traceback:

* a path read as a glob pattern (``grp?`` scored together with its neighbour ``grp1``; ``exp[1]``
  called an unreadable file);
* a FIFO, a socket or a device called "a folder", or opened (a FIFO blocks the command forever);
* a hive folder's value relabelling the file's own column (``runs/system=single/`` holding ``mas`` runs);
* a table present both as ``runs.parquet`` and as ``runs/`` (the folder silently ignored);
* a table's files whose schemas differ (a Polars traceback);
* a run id in two shards, scored twice without validation;
* a NaN criterion weight moving the DQS silently, an infinite one blamed on ``scores.score``.

Every command-line case asserts the promises of :mod:`tests.promises`: exit code 2 and one line,
nothing new beside the output, the inputs byte for byte as they were.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval import DataError, Dataset, Scores
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.stats.comparison_table import read_comparisons
from mas_eval.storage.sharding import PART, SHARD_COLUMN, shard_of
from tests.conftest import tiny_frames
from tests.promises import assert_refused, assert_unchanged, run, tree

RUN_IDS = ["r1", "r2", "r3"]


def write_tiny(folder: Path, *, prefix: str = "", shards: int | None = None) -> Path:
    """The tiny decision Dataset of the fixtures (runs r1, r2, r3; ids prefixed by ``prefix``) at ``folder``."""
    frames = tiny_frames()
    if prefix:
        frames = {
            name: frame.with_columns(pl.lit(prefix) + pl.col("run_id")) if "run_id" in frame.columns else frame
            for name, frame in frames.items()
        }
    return Dataset.from_frames(**frames).write(folder, shards=shards)


# -- a path is that path, never a pattern -------------------------------------------------------

#: A name with glob characters, and a neighbour that the name matches as a pattern.
PATTERNS = {
    "?": ("grp?", "grp1"),
    "*": ("grp*", "grp-other"),
    "[1]": ("exp[1]", "exp1"),
    "[!a]": ("exp[!a]", "expb"),
    "**": ("a**b", "axyb"),
    "{a,b}": ("x{a,b}", "xa"),
}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_dataset_and_scores_folder_are_read_as_named(pattern: str, tmp_path: Path, capsys) -> None:
    name, neighbour = PATTERNS[pattern]
    inputs = tmp_path / "in"
    own = write_tiny(inputs / name)
    write_tiny(inputs / neighbour, prefix="other-")
    before = tree(inputs)

    assert run(capsys, "validate", own).code == 0
    assert Dataset.open(own).summary().row(0, named=True)["runs"] == 3  # its own runs, not 6
    scores = tmp_path / "out" / name
    done = run(capsys, "score", own, "--out", scores)
    assert done.code == 0, done.err
    assert Scores.open(scores).runs["run_id"].to_list() == RUN_IDS
    done = run(capsys, "compare", scores, "-m", "dqs", "--out", tmp_path / "out" / f"{name}.csv")
    assert done.code == 0, done.err
    table = read_comparisons(tmp_path / "out" / f"{name}.csv")
    assert table["n_treatment"].sum() + table["n_control"].sum() == 2  # r1 and r2 have a DQS; r3 has no scores
    assert_unchanged(before, inputs)


def test_a_sharded_dataset_is_written_and_scored_as_named(tmp_path: Path, capsys) -> None:
    # The sharded writer stages its rows in folders beside the output; the shard scorer reads
    # one file per shard: none of them may read the name as a pattern.
    inputs = tmp_path / "in"
    write_tiny(inputs / "sh1", prefix="other-", shards=2)
    done = run(capsys, "simulate", "--out", inputs / "sh[1]?", "-n", "20", "--shards", "2")
    assert done.code == 0, done.err
    before = tree(inputs)
    out = tmp_path / "out" / "S[1]?"
    done = run(capsys, "score", inputs / "sh[1]?", "--out", out, "--skip-validation")
    assert done.code == 0, done.err
    assert Scores.open(out).runs.height == 20
    assert_unchanged(before, inputs)


def test_option_files_and_the_judge_cache_are_read_as_named(tmp_path: Path) -> None:
    from mas_eval.metrics.diagnosis.equivalence import match_pairs

    # Each beside a file its name matches as a pattern, which a pattern read would take instead.
    (tmp_path / "syn1.csv").write_text("not,synonyms\n1,2\n", encoding="utf-8")
    synonyms = tmp_path / "syn[1].csv"
    synonyms.write_text("term,canonical\nheart attack,myocardial infarction\n", encoding="utf-8")
    ds = mas_eval.simulate_diagnosis(8, seed=1)
    assert "diagnosis" in mas_eval.score(ds, synonyms_file=str(synonyms)).ran

    pl.DataFrame({"not": ["a cache"]}).write_parquet(tmp_path / "judge1.parquet")
    cache = tmp_path / "judge[1].parquet"
    left, right = pl.DataFrame({"a": ["gout"]}), pl.DataFrame({"b": ["pseudogout"]})
    first = match_pairs(left, right, left_on="a", right_on="b", judge=lambda a, b: True, cache_path=cache)
    again = match_pairs(left, right, left_on="a", right_on="b", cache_path=cache)  # no judge: the cache answers
    assert again.equals(first) and again["tier"].to_list() == ["judge"]


#: Polars' readers that take a path, and read one with glob characters as a pattern (or may).
POLARS_READERS = {
    "scan_parquet", "read_parquet", "read_parquet_schema", "scan_csv", "read_csv", "read_csv_batched",
    "scan_ndjson", "read_ndjson", "scan_ipc", "read_ipc", "read_ipc_schema", "read_ipc_stream",
}  # fmt: skip


@pytest.mark.slow
def test_polars_reads_paths_only_through_storage_inputs() -> None:
    # Its readers pass glob=False and exactly the files listed; one call elsewhere would bring the
    # pattern back.
    import ast

    package = Path(mas_eval.__file__).parent
    found = []
    for module in sorted(package.rglob("*.py")):
        if module == package / "storage" / "inputs.py":
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in POLARS_READERS:
                found.append(f"{module.relative_to(package)}:{node.lineno} {node.attr}")
    assert found == [], "use mas_eval.storage.inputs' readers: " + ", ".join(found)


# -- kinds of path: named as what they are, never opened ---------------------------------------


@contextlib.contextmanager
def never_opened(fifo: Path) -> Iterator[None]:
    """Fail if anything inside the block opens ``fifo`` (and unblock it if so, so the test ends).

    A writer's non-blocking open of a FIFO succeeds only while a reader has it open, or waits
    in ``open``: a watching thread tries it until the block ends.
    """
    opened, done = threading.Event(), threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                handle = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                done.wait(0.005)
                continue
            opened.set()
            os.close(handle)  # the reader gets end-of-file and goes on

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
    assert not opened.is_set(), f"{fifo} was opened"


def test_a_fifo_given_as_an_input_is_named_and_never_opened(tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    fifo = inputs / "pipe.csv"  # a suffix that the comparisons file may have
    os.mkfifo(fifo)
    scores = mas_eval.score(Dataset.open(write_tiny(inputs / "ds"))).write(inputs / "scores")
    before = tree(inputs)
    out = tmp_path / "out"
    commands = {
        "a Dataset folder": ["validate", fifo],
        "a Scores folder": ["compare", fifo, "-m", "dqs"],
        "a JSONL file": ["ingest", fifo, "--out", out / "ds"],
        "a comparisons file": ["report", scores, "--out", out / "r.md", "--comparisons", fifo],
        "a MedAISure report JSON file": ["benchmark-report", fifo, "--out", out / "b.json"],
    }
    for expected, args in commands.items():
        with never_opened(fifo):
            done = run(capsys, *args)
        assert_refused(done, says=[f"{fifo} is a FIFO (named pipe), not {expected}"])
    assert not out.exists()
    assert_unchanged(before, inputs)


def test_option_files_and_the_judge_cache_that_are_fifos_are_not_opened(tmp_path: Path) -> None:
    from mas_eval.metrics.diagnosis.equivalence import match_pairs

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    ds = mas_eval.simulate_diagnosis(8, seed=1)
    left, right = pl.DataFrame({"a": ["gout"]}), pl.DataFrame({"b": ["pseudogout"]})
    with never_opened(fifo):
        with pytest.raises(InvalidParameterError, match=r"synonyms_file=.*is a FIFO \(named pipe\), not a CSV file"):
            mas_eval.score(ds, synonyms_file=str(fifo))
        with pytest.raises(DataError, match=r"judge cache: .*pipe is a FIFO \(named pipe\), not a Parquet file"):
            match_pairs(left, right, left_on="a", right_on="b", judge=lambda a, b: True, cache_path=fifo)
        with pytest.raises(SchemaError, match=r"pipe is a FIFO \(named pipe\), not a report's JSON file"):
            mas_eval.report.load_json(fifo)


@pytest.mark.parametrize("where", ["runs.parquet", "agents/part-1.parquet"])
def test_a_fifo_in_place_of_a_table_file_is_named(where: str, tmp_path: Path, capsys) -> None:
    ds = write_tiny(tmp_path / "ds")
    if where.startswith("agents/"):
        (ds / "agents").mkdir()
        (ds / "agents.parquet").rename(ds / "agents" / "part-0.parquet")
    (ds / where).unlink(missing_ok=True)
    os.mkfifo(ds / where)
    before = tree(tmp_path)
    for command in ("validate", "summary"):
        with never_opened(ds / where):
            done = run(capsys, command, ds)
        assert_refused(done, says=[f"{ds / where} is a FIFO (named pipe), not a Parquet file"])
    assert_unchanged(before, tmp_path)


def test_a_fifo_in_place_of_a_scores_shard_is_named(tmp_path: Path, capsys) -> None:
    scores = mas_eval.score(Dataset.open(write_tiny(tmp_path / "ds", shards=2)), out=tmp_path / "scores").source
    file = scores / "runs" / f"{SHARD_COLUMN}=1" / PART
    file.unlink()
    os.mkfifo(file)
    with never_opened(file):
        done = run(capsys, "compare", scores, "-m", "dqs")
    assert_refused(done, says=f"{file} is a FIFO (named pipe), not a Parquet file")


def test_sockets_and_devices_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)  # a socket's path is short (108 bytes), whatever the temporary folder's
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind("sock")
        assert_refused(run(capsys, "summary", "sock"), says="sock is a socket, not a Dataset folder")
    if Path("/dev/null").exists():
        assert_refused(run(capsys, "compare", "/dev/null"), says="/dev/null is a character device, not a Scores")


# -- a hive folder's value never overrides the file's column -----------------------------------


def _partitioned(ds: Path, folder_of: dict[str, str]) -> None:
    """Move the runs table into ``runs/system=<folder>/`` folders, each file keeping its column."""
    runs = pl.read_parquet(ds / "runs.parquet")
    (ds / "runs.parquet").unlink()
    for system, folder in folder_of.items():
        target = ds / "runs" / f"system={folder}"
        target.mkdir(parents=True, exist_ok=True)
        runs.filter(pl.col("system") == system).write_parquet(target / f"{system}.parquet")


def test_a_value_that_disagrees_with_its_partition_folder_is_refused(tmp_path: Path, capsys) -> None:
    ds = write_tiny(tmp_path / "in" / "ds")
    _partitioned(ds, {"mas": "single", "single": "single"})  # mas runs in the single folder
    before = tree(tmp_path / "in")
    file = ds / "runs" / "system=single" / "mas.parquet"
    says = ["table 'runs', column 'system'", f"{file} holds 'mas'", "system=single", "which says 'single'", "move"]
    for args in (["validate"], ["summary"], ["score", "--out", tmp_path / "S"], ["score", "--skip-validation"]):
        extra = ["--out", tmp_path / "S"] if args == ["score", "--skip-validation"] else []
        assert_refused(run(capsys, args[0], ds, *args[1:], *extra), says=says)
    with pytest.raises(SchemaError, match="holds 'mas', but it lies in the partition folder system=single"):
        mas_eval.score(Dataset.open(ds))
    assert not (tmp_path / "S").exists()
    assert_unchanged(before, tmp_path / "in")


def test_partition_folders_that_agree_or_fill_in_are_read(tmp_path: Path) -> None:
    ds = write_tiny(tmp_path / "ds")
    expected = Dataset.open(ds).collect("runs")
    _partitioned(ds, {"mas": "mas", "single": "single"})
    assert Dataset.open(ds).validate().collect("runs").equals(expected)
    # A null in the file is the folder's value; a file without the column takes it from the folder.
    file = ds / "runs" / "system=single" / "single.parquet"
    pl.read_parquet(file).with_columns(system=pl.lit(None, dtype=pl.String)).write_parquet(file)
    file = ds / "runs" / "system=mas" / "mas.parquet"
    pl.read_parquet(file).drop("system").write_parquet(file)
    other = ds / "runs" / "system=single" / "single.parquet"
    pl.read_parquet(other).drop("system").write_parquet(other)
    assert Dataset.open(ds).validate().collect("runs").equals(expected)


def test_a_partition_folder_above_the_dataset_is_not_a_column(tmp_path: Path) -> None:
    ds = write_tiny(tmp_path / "year=2024" / "ds")
    (ds / "agents").mkdir()
    (ds / "agents.parquet").rename(ds / "agents" / "part-0.parquet")
    assert "year" not in Dataset.open(ds).collect("agents").columns


# -- a table in two forms ----------------------------------------------------------------------


def test_a_table_both_as_a_file_and_a_folder_is_refused(tmp_path: Path, capsys) -> None:
    ds = write_tiny(tmp_path / "in" / "ds")
    scores = mas_eval.score(Dataset.open(ds)).write(tmp_path / "in" / "scores")
    for folder in (ds, scores):
        (folder / "runs").mkdir()
        shutil.copy(folder / "runs.parquet", folder / "runs" / "part-0.parquet")
    before = tree(tmp_path / "in")
    commands = [
        (ds, ["validate", ds]),
        (ds, ["summary", ds]),
        (ds, ["score", ds, "--out", tmp_path / "S", "--skip-validation"]),
        (scores, ["compare", scores, "-m", "dqs"]),
        (scores, ["report", scores, "--out", tmp_path / "r.md"]),
    ]
    for folder, args in commands:
        says = [
            f"table 'runs' is there twice, as the file {folder / 'runs.parquet'} and as the folder {folder / 'runs'}"
        ]
        assert_refused(run(capsys, *args), says=says)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
    assert_unchanged(before, tmp_path / "in")


# -- a table's files must share one schema -----------------------------------------------------


@pytest.mark.parametrize("change", ["type", "missing column"])
def test_table_files_that_disagree_in_schema_are_named(change: str, tmp_path: Path, capsys) -> None:
    ds = write_tiny(tmp_path / "in" / "ds")
    agents = pl.read_parquet(ds / "agents.parquet")
    (ds / "agents.parquet").unlink()
    (ds / "agents").mkdir()
    first, second = ds / "agents" / "part-0.parquet", ds / "agents" / "part-1.parquet"
    agents.head(2).write_parquet(first)
    rest = agents.slice(2)
    rest = rest.with_columns(pl.col("confidence").cast(pl.String)) if change == "type" else rest.drop("weight")
    rest.write_parquet(second)
    if change == "type":
        says = ["table 'agents'", f"column 'confidence' is String in {second} but Float64 in {first}"]
    else:
        says = ["table 'agents'", f"{second} lacks column(s) 'weight' that {first} has"]
    before = tree(tmp_path / "in")
    for args in (["validate"], ["summary"], ["score", "--out", tmp_path / "S", "--skip-validation"]):
        assert_refused(run(capsys, args[0], ds, *args[1:]), says=[*says, "write the table's files again"])
    assert not (tmp_path / "S").exists()
    assert_unchanged(before, tmp_path / "in")


def test_scores_shards_that_disagree_in_schema_are_named(tmp_path: Path, capsys) -> None:
    ds = write_tiny(tmp_path / "ds", shards=2)
    scores = mas_eval.score(Dataset.open(ds), out=tmp_path / "in" / "scores").source
    file = scores / "runs" / f"{SHARD_COLUMN}=1" / PART
    pl.read_parquet(file).with_columns(pl.col("dqs").cast(pl.String)).write_parquet(file)
    before = tree(tmp_path / "in")
    says = ["table 'runs'", f"column 'dqs' is String in {file} but Float64 in"]
    assert_refused(run(capsys, "compare", scores, "-m", "dqs"), says=says)
    with pytest.raises(SchemaError, match="column 'dqs' is String"):
        Scores.open(scores)
    assert_unchanged(before, tmp_path / "in")


# -- a run id in two shards ---------------------------------------------------------------------


def _copy_a_run_into_the_other_shard(ds: Path) -> str:
    """Add a run of shard 0 (its runs row) to shard 1's runs file, kept sorted; return its id."""
    home = ds / "runs" / f"{SHARD_COLUMN}=0" / PART
    other = ds / "runs" / f"{SHARD_COLUMN}=1" / PART
    moved = pl.read_parquet(home).head(1)
    assert shard_of(moved["run_id"], 2).to_list() == [0]
    pl.concat([pl.read_parquet(other), moved]).sort("run_id").write_parquet(other)
    return moved["run_id"][0]


@pytest.mark.slow
def test_a_run_in_two_shards_is_refused_by_every_way_of_scoring(tmp_path: Path, capsys) -> None:
    ds = mas_eval.simulate(40, seed=3).write(tmp_path / "in" / "ds", shards=2)
    run_id = _copy_a_run_into_the_other_shard(ds)
    before = tree(tmp_path / "in")
    says = ["table 'runs'", f"run {run_id!r} in shard 1, not 0", "reshard"]
    for extra in (["--skip-validation"], ["--skip-validation", "--workers", "2"]):
        assert_refused(run(capsys, "score", ds, "--out", tmp_path / "S", *extra), says=says)
    # Validation reads the whole runs table, and finds the id twice.
    says = ["table 'runs', column 'run_id': 1 key(s) occur more than once", repr(run_id)]
    assert_refused(run(capsys, "score", ds, "--out", tmp_path / "S"), says=says)
    with pytest.raises(DataError, match=f"run {run_id!r} in shard 1, not 0"):
        mas_eval.score(Dataset.open(ds))
    assert not (tmp_path / "S").exists()
    assert_unchanged(before, tmp_path / "in")


def test_a_run_in_two_shards_is_refused_when_scored_from_stored_codes(tmp_path: Path) -> None:
    import json

    from mas_eval.storage.stored_codes import write_codes

    ds = mas_eval.simulate(40, seed=3).write(tmp_path / "ds", shards=2)
    run_id = _copy_a_run_into_the_other_shard(ds)
    manifest = json.loads((ds / "_dataset.json").read_text())
    shutil.rmtree(ds / "_codes")
    manifest["codes"] = write_codes(ds, manifest["tables"], 2)  # codes that describe the files as they are
    (ds / "_dataset.json").write_text(json.dumps(manifest))
    shard = Dataset.open(ds).shard(1)
    assert shard.stored_codes is not None and shard.stored_codes.read(["runs"]) is not None
    with pytest.raises(DataError, match=f"run {run_id!r} in shard 1, not 0"):
        mas_eval.score(Dataset.open(ds))


# -- criterion weights ------------------------------------------------------------------------


@pytest.mark.parametrize("weight", [float("nan"), float("inf")])
def test_a_nan_or_infinite_criterion_weight_is_refused_as_such(weight: float, tmp_path: Path, capsys) -> None:
    frames = tiny_frames()
    frames["criteria"] = frames["criteria"].with_columns(weight=pl.Series([weight, 0.4, 1.0]))
    says = ["table 'criteria', column 'weight'", "NaN or infinite", "(run_id='r1', criterion='safety')"]
    with pytest.raises(DataError) as info:
        mas_eval.score(Dataset.from_frames(**frames))
    assert all(text in str(info.value) for text in says), info.value
    folder = tmp_path / "in"
    folder.mkdir()
    for name, frame in frames.items():
        frame.write_parquet(folder / f"{name}.parquet")
    before = tree(folder)
    assert_refused(run(capsys, "score", folder, "--out", tmp_path / "S", "--skip-validation"), says=says)
    assert not (tmp_path / "S").exists()
    assert_unchanged(before, folder)
