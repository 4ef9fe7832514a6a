"""Manifests are checked, never trusted: a damaged ``_dataset.json`` or ``_scores.json`` is one line
naming the file in every command that reads it, claims that disagree with the folder are refused,
and stored codes are used only while they still describe the data (else the strings are scored,
with the same scores)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset, SchemaError
from mas_eval.storage import manifests
from mas_eval.storage import stored_codes as stored
from mas_eval.storage.manifests import Manifest, Obj, write_manifest
from tests.promises import assert_refused, assert_unchanged, run, tree

RUNS = 40
SHARDS = 3


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A Dataset flat and in shards, and their Scores folders, written once: each test damages a copy."""
    root = tmp_path_factory.mktemp("manifests")
    ds = mas_eval.simulate(RUNS, seed=1)
    folders = {
        "dataset": ds.write(root / "dataset"),
        "sharded_dataset": ds.write(root / "sharded_dataset", shards=SHARDS),
    }
    folders["scores"] = mas_eval.score(Dataset.open(folders["dataset"]), out=root / "scores").source
    folders["sharded_scores"] = mas_eval.score(
        Dataset.open(folders["sharded_dataset"]), out=root / "sharded_scores"
    ).source
    return folders


def copy(base: dict[str, Path], kind: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(base[kind], tmp_path / "in"))


def manifest_of(folder: Path) -> Path:
    return folder / ("_scores.json" if (folder / "_scores.json").exists() else "_dataset.json")


def edit(folder: Path, change: Callable[[dict], object]) -> None:
    """Change the manifest of ``folder`` in place with ``change`` (which edits the parsed JSON)."""
    path = manifest_of(folder)
    content = json.loads(path.read_text(encoding="utf-8"))
    change(content)
    path.write_text(json.dumps(content), encoding="utf-8")


def _wrong_type(content: dict) -> None:
    if "shards" in content and isinstance(content["shards"], dict):
        content["shards"]["count"] = str(content["shards"]["count"])  # a Dataset's
    elif "families" in content:
        content["families"]["ran"] = "decision"  # a Scores folder's
    else:
        content["tables"] = "runs"


#: Each kind of damage: what the file then holds (bytes, or an edit of the JSON) and what the error says.
DAMAGE: dict[str, tuple[bytes | Callable[[dict], object], str]] = {
    "not JSON": (b'{"tables": ["runs"', "not valid JSON"),
    "not UTF-8": (b'\xff\xfe{"tables": []}', "not UTF-8"),
    "empty": (b"", "empty"),
    "a list": (b"[]", "must hold an object, not a list"),
    "deeply nested": (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
    "a key missing": (b'{"mas_eval_version": "0.1"}', "has no '"),
    "a value of the wrong type": (_wrong_type, "must be"),
}

DATASET_COMMANDS = {
    "validate": lambda ds, out: ["validate", ds],
    "summary": lambda ds, out: ["summary", ds],
    "score": lambda ds, out: ["score", ds, "--out", out],
    "reshard": lambda ds, out: ["reshard", ds, "--shards", "2", "--out", out],
}
SCORES_COMMANDS = {
    "compare": lambda sc, out: ["compare", sc, "--out", out / "c.csv"],
    "report": lambda sc, out: ["report", sc, "--out", out / "r.md"],
}


def damage(folder: Path, kind: str) -> str:
    """Damage ``folder``'s manifest as :data:`DAMAGE` ``kind`` says; what the error must say."""
    content, says = DAMAGE[kind]
    if isinstance(content, bytes):
        manifest_of(folder).write_bytes(content)
    else:
        edit(folder, content)
    return says


def refused_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str | Path], says: list[str]
) -> str:
    """Run ``mas-eval ARGS``: refused in one line holding ``says``, nothing under ``tmp_path`` changed."""
    before = tree(tmp_path)
    line = assert_refused(run(capsys, *args), says=says)
    assert_unchanged(before, tmp_path)
    return line


# -- damaged manifests: one line naming the file, in every command that reads it -------------------


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("layout", ["dataset", "sharded_dataset"])
def test_a_damaged_dataset_manifest_is_one_line_naming_it(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str, kind: str
) -> None:
    folder = copy(base, layout, tmp_path)
    says = damage(folder, kind)
    for command, args in DATASET_COMMANDS.items():
        line = refused_untouched(capsys, tmp_path, args(folder, tmp_path / "out"), [says, "restore it from a copy"])
        assert line.startswith(f"error: {folder / '_dataset.json'}"), command


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("layout", ["scores", "sharded_scores"])
def test_a_damaged_scores_manifest_is_one_line_naming_it(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str, kind: str
) -> None:
    folder = copy(base, layout, tmp_path)
    says = damage(folder, kind)
    (tmp_path / "out").mkdir()
    for command, args in SCORES_COMMANDS.items():
        line = refused_untouched(capsys, tmp_path, args(folder, tmp_path / "out"), [says, "score the Dataset again"])
        assert line.startswith(f"error: {folder / '_scores.json'}"), command


def test_a_manifest_that_is_a_folder_or_a_fifo_is_named_not_read(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy(base, "sharded_dataset", tmp_path)
    manifest = folder / "_dataset.json"
    manifest.unlink()
    manifest.mkdir()
    refused_untouched(capsys, tmp_path, ["validate", folder], [f"{manifest} is a folder"])
    if hasattr(os, "mkfifo"):  # reading a FIFO would wait for a writer forever
        manifest.rmdir()
        os.mkfifo(manifest)
        args = ["score", folder, "--out", tmp_path / "out"]
        refused_untouched(capsys, tmp_path, args, [f"{manifest} is not a regular"])


def test_a_manifest_larger_than_any_written_is_refused_unread(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy(base, "scores", tmp_path)
    size = (folder / "_scores.json").stat().st_size
    monkeypatch.setattr(manifests, "MAX_MANIFEST_BYTES", size - 1)
    refused_untouched(capsys, tmp_path, ["compare", folder], [f"{folder / '_scores.json'}: {size:,} bytes, more than"])


def test_the_writer_refuses_a_manifest_its_reader_would_refuse(tmp_path: Path) -> None:
    declared = Manifest("_x.json", Obj({"tables": manifests.ListOf(str)}, required=("tables",)), fix="")
    with pytest.raises(RuntimeError, match="'tables' must be a list of strings, not the string 'runs'"):
        write_manifest(tmp_path, declared, {"tables": "runs"})
    assert not (tmp_path / "_x.json").exists()
    write_manifest(tmp_path, declared, {"tables": ["runs"]})
    assert manifests.read_manifest(tmp_path, declared)["tables"] == ["runs"]


# -- claims the manifests make, checked against the folder -----------------------------------------


@pytest.mark.parametrize("layout", ["dataset", "sharded_dataset"])
def test_a_dataset_manifest_listing_a_table_the_folder_lacks_is_refused(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    """Without the check, the belief metrics came out null for every run, without a word."""
    folder = copy(base, layout, tmp_path)
    beliefs = folder / ("beliefs" if layout == "sharded_dataset" else "beliefs.parquet")
    shutil.rmtree(beliefs) if beliefs.is_dir() else beliefs.unlink()
    (folder / "_codes" / "beliefs").exists() and shutil.rmtree(folder / "_codes" / "beliefs")
    for command in ("validate", "score"):
        args = DATASET_COMMANDS[command](folder, tmp_path / "out")
        refused_untouched(capsys, tmp_path, args, [f"{folder / '_dataset.json'}: lists table 'beliefs'"])


@pytest.mark.parametrize(("count", "says"), [(4, "shard=3: missing"), (2, "'shard=2' is not one of the 2 shards")])
def test_a_dataset_shard_count_disagreeing_with_the_folders_is_refused(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int, says: str
) -> None:
    folder = copy(base, "sharded_dataset", tmp_path)
    edit(folder, lambda m: m["shards"].update(count=count))
    for command in DATASET_COMMANDS:
        refused_untouched(capsys, tmp_path, DATASET_COMMANDS[command](folder, tmp_path / "out"), [says])


def _drop_table(folder: Path) -> None:
    entry = folder / "alternatives"
    shutil.rmtree(entry) if entry.is_dir() else (folder / "alternatives.parquet").unlink()


def _stray_table(folder: Path) -> None:
    entry = folder / "agents"
    if entry.is_dir():
        shutil.copytree(entry, folder / "extra")
    else:
        shutil.copy(folder / "agents.parquet", folder / "extra.parquet")


def _stray_shard(folder: Path) -> None:
    shutil.copytree(folder / "runs" / "shard=0", folder / "runs" / "shard=3")


def _missing_shard(folder: Path) -> None:
    shutil.rmtree(folder / "runs" / "shard=2")


def _no_shards_recorded(folder: Path) -> None:
    edit(folder, lambda m: m.pop("shards"))


#: Damage to a Scores folder that its manifest then disagrees with, and what the error says.
SCORES_CLAIMS = {
    "a listed table missing": (_drop_table, ["scores", "sharded_scores"], "lists table 'alternatives', which"),
    "a table not listed": (_stray_table, ["scores", "sharded_scores"], "does not list the folder's table 'extra'"),
    "a shard not recorded": (_stray_shard, ["sharded_scores"], "'shard=3' is not one of the 3 shards"),
    "a recorded shard missing": (_missing_shard, ["sharded_scores"], "'shard=2' is missing from the 3 shards"),
    "shards not recorded": (_no_shards_recorded, ["sharded_scores"], "not a file, but"),
}


@pytest.mark.parametrize("claim", list(SCORES_CLAIMS))
@pytest.mark.parametrize("command", list(SCORES_COMMANDS))
def test_a_scores_manifest_disagreeing_with_the_folder_is_refused(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, claim: str
) -> None:
    """A shard the manifest did not record was left out of every comparison without a word."""
    change, layouts, says = SCORES_CLAIMS[claim]
    for layout in layouts:
        shutil.rmtree(tmp_path, ignore_errors=True)
        tmp_path.mkdir()
        folder = copy(base, layout, tmp_path)
        change(folder)
        (tmp_path / "out").mkdir()
        refused_untouched(capsys, tmp_path, SCORES_COMMANDS[command](folder, tmp_path / "out"), [says, "score the"])


def test_a_sharded_scores_table_with_other_rows_than_recorded_is_refused_by_open(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy(base, "sharded_scores", tmp_path)
    part = folder / "agents" / "shard=1" / "part-0.parquet"
    pl.read_parquet(part).slice(1).write_parquet(part)
    with pytest.raises(SchemaError, match=r"agents: \d+ rows, where .*_scores.json records \d+"):
        mas_eval.Scores.open(folder)
    (tmp_path / "out").mkdir()
    refused_untouched(capsys, tmp_path, SCORES_COMMANDS["report"](folder, tmp_path / "out"), ["rows, where"])


# -- the other JSON files read back: a report's, a comparisons table's ------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
        (b"[1, 2]", "'[0]' must be an object, not 1"),
        (b'{"metric": "dqs"}', "must hold a list of objects, not an object"),
        (b'[{"metric": "dqs"}, {"metric": [1]}]', "not a comparison table"),
        (b"\xff", "not UTF-8"),
    ],
)
def test_a_damaged_comparisons_json_is_one_line(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    folder = copy(base, "scores", tmp_path)
    (tmp_path / "c.json").write_bytes(content)
    args = ["report", folder, "--comparisons", tmp_path / "c.json", "--out", tmp_path / "r.md"]
    refused_untouched(capsys, tmp_path, args, [f"{tmp_path / 'c.json'}", says])


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than"),
        ('{"schema_version": 1, "tables": []}', "'tables' must be an object of objects, not a list"),
        ('{"schema_version": 1, "tables": {"t": {"schema": {"a": "Int64"}, "rows": [[1, 2]]}}}', "table 't' does not"),
    ],
)
def test_a_damaged_report_json_is_one_schema_error(tmp_path: Path, content: str, says: str) -> None:
    from mas_eval.report import load_json

    (tmp_path / "r.json").write_text(content, encoding="utf-8")
    with pytest.raises(SchemaError, match=f"r.json: .*{says}") as raised:
        load_json(tmp_path / "r.json")
    assert "\n" not in str(raised.value)


# -- stored codes: used only while they describe the data ------------------------------------------


@pytest.fixture(scope="module")
def coded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A sharded Dataset with stored codes, another whose alternatives are named otherwise, and the
    first written flat (no codes: what scoring from the strings gives)."""
    root = tmp_path_factory.mktemp("coded")
    ds = mas_eval.simulate(RUNS, seed=2)
    renamed = {}
    for name in ds.table_names:
        frame = ds.collect(name)
        columns = [c for c in ("alternative", "recommended", "correct") if c in frame.columns]
        renamed[name] = frame.with_columns((pl.lit("elsewhere-") + pl.col(c)).alias(c) for c in columns)
    return {
        "ours": ds.write(root / "ours", shards=SHARDS),
        "foreign": Dataset.from_frames(**renamed).write(root / "foreign", shards=SHARDS),
        "flat": ds.write(root / "flat"),
    }


def assert_scored_from_strings(folder: Path, flat: Path, shards: list[int] | None = None) -> mas_eval.Scores:
    """No shard of ``folder`` (of ``shards``, by default all) reads its stored codes, and its scores are
    those of the strings, bit for bit."""
    opened = Dataset.open(folder)
    for index in range(opened.shards) if shards is None else shards:
        codes = opened.shard(index).stored_codes
        assert codes is None or codes.read(opened.table_names) is None
    got, expected = mas_eval.score(opened), mas_eval.score(Dataset.open(flat))
    assert got.names == expected.names
    for name, frame in expected.items():
        assert_frame_equal(got[name], frame, check_exact=True)
    return got


@pytest.mark.slow
def test_another_datasets_manifest_copied_in_does_not_rename_the_alternatives(
    coded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = Path(shutil.copytree(coded["ours"], tmp_path / "in"))
    shutil.copy(coded["foreign"] / "_dataset.json", folder / "_dataset.json")
    got = assert_scored_from_strings(folder, coded["flat"])
    in_data = set(Dataset.open(coded["flat"]).collect("beliefs")["alternative"])
    assert set(got.alternatives["alternative"]) <= in_data
    assert not any(a.startswith("elsewhere-") for a in got.alternatives["alternative"])
    # validate passes (the data are valid; the codes are derived) and says why the codes go unused.
    before = tree(tmp_path)
    done = run(capsys, "validate", folder)
    assert done.code == 0, done.err
    assert "note: the stored codes of 3 of 3 shards are not used" in done.out
    assert "other label lists than those _dataset.json records" in done.out
    assert "`mas-eval reshard` writes fresh codes" in done.out
    assert_unchanged(before, tmp_path)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda labels: labels[:-1], "labels, not"),
        (lambda labels: labels[::-1], "other ones or in another order"),
        (lambda labels: [*labels, "zz-not-in-the-data"], "labels, not"),
    ],
    ids=["shortened", "reordered", "extended"],
)
@pytest.mark.slow
def test_a_label_list_changed_by_hand_is_not_believed(
    coded: dict[str, Path], tmp_path: Path, change: Callable[[list[str]], list[str]], says: str
) -> None:
    """A shortened list crashed scoring with a Polars traceback; a reordered one renamed alternatives."""
    folder = Path(shutil.copytree(coded["ours"], tmp_path / "in"))
    edit(folder, lambda m: m["codes"]["labels"].update(alternative=change(m["codes"]["labels"]["alternative"])))
    assert_scored_from_strings(folder, coded["flat"])
    note = Dataset.open(folder).validate().check_stored_codes()
    assert note is not None and says in note


def test_intact_codes_are_used_and_validate_says_nothing(coded: dict[str, Path]) -> None:
    opened = Dataset.open(coded["ours"])
    assert opened.check_stored_codes() is None
    assert all(opened.shard(k).stored_codes.read(opened.table_names) is not None for k in range(SHARDS))


def _rewrite_code_file(path: Path, change: Callable[[pl.DataFrame], pl.DataFrame], metadata: dict[str, str]) -> None:
    change(pl.read_parquet(path)).write_parquet(path, metadata=metadata)


@pytest.mark.slow
def test_a_code_outside_its_list_is_not_used_though_the_hashes_match(coded: dict[str, Path], tmp_path: Path) -> None:
    folder = Path(shutil.copytree(coded["ours"], tmp_path / "in"))
    path = stored.code_file(folder, "beliefs", 1)
    recorded = pl.read_parquet_metadata(path)
    _rewrite_code_file(path, lambda f: f.with_columns(pl.col("alternative") + 1000), recorded)
    assert Dataset.open(folder).shard(1).stored_codes.current("beliefs")  # the hashes still match
    assert_scored_from_strings(folder, coded["flat"], shards=[1])


@pytest.mark.slow
def test_code_files_without_the_lists_hash_are_not_used(coded: dict[str, Path], tmp_path: Path) -> None:
    """Code files written before they recorded their lists: their lists cannot be checked, so not trusted."""
    folder = Path(shutil.copytree(coded["ours"], tmp_path / "in"))
    for path in folder.glob("_codes/*/*.parquet"):
        recorded = pl.read_parquet_metadata(path)
        _rewrite_code_file(path, lambda f: f, {stored.SOURCE_HASH: recorded[stored.SOURCE_HASH]})
    assert_scored_from_strings(folder, coded["flat"])
    assert "written by an earlier version" in Dataset.open(folder).check_stored_codes()


@pytest.mark.slow
def test_a_codes_entry_of_the_wrong_shape_is_read_as_none(coded: dict[str, Path], tmp_path: Path) -> None:
    """Codes are derived data: a damaged entry costs speed, not the Dataset."""
    folder = Path(shutil.copytree(coded["ours"], tmp_path / "in"))
    edit(folder, lambda m: m["codes"].update(labels=["not", "an", "object"]))
    assert_scored_from_strings(folder, coded["flat"])
    assert "its 'codes' entry is not one this version reads" in Dataset.open(folder).check_stored_codes()


@pytest.mark.parametrize("layout", ["scores", "sharded_scores"])
def test_the_users_own_files_beside_the_tables_are_not_tables_the_manifest_forgot(
    base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    folder = copy(base, layout, tmp_path)
    (folder / "notes").mkdir()
    (folder / "notes" / "todo.txt").write_text("look at task 3", encoding="utf-8")
    done = run(capsys, "compare", folder)
    assert done.code == 0, done.err
    assert mas_eval.Scores.open(folder).names == mas_eval.Scores.open(base[layout]).names
