"""How an output is committed: staging a later run recognises, renames that refuse to replace,
outputs of several parts put in place together, and a full disk named in one line by every command.

Before: staging folders left by a killed writer (``.S.tmp-*``) stayed forever; two ``score --out
S`` at once both succeeded, the second replacing the first; ``report --out X.md --overwrite``
where ``X.md`` was a folder deleted the user's ``X_figures/`` and then failed; a full disk ended
``score``, ``ingest`` and ``compare`` in a Polars traceback, others without the path, or with
"run validate()".
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl
import pytest

import mas_eval
from mas_eval import Dataset, OutputError, OutputExistsError
from mas_eval.report import BenchmarkReport
from mas_eval.report.parts import ReportFigure, Section
from mas_eval.report.writers import write
from mas_eval.storage.outputs import STAGING_PREFIX, atomic_directory, atomic_file, atomic_outputs, sweep_staging
from mas_eval.storage.provenance import provenance
from tests.conftest import LDDX, needs_lddx
from tests.promises import assert_refused, assert_unchanged, run, tree

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(params=["renameat2", "fallback"])
def renames(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test twice: with Linux's renameat2, and as where there is none (macOS, old kernels)."""
    if request.param == "fallback":
        monkeypatch.setattr("mas_eval.storage.outputs._renameat2", lambda: None)
    return str(request.param)


def staging_entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(STAGING_PREFIX))


# -- staging that a later run recognises -----------------------------------------------------------


def _dead_staging(folder: Path, hexdigits: str = "0" * 32) -> Path:
    """What a writer killed with SIGKILL leaves: a staging folder of ours that nobody holds the lock of."""
    staging = folder / f"{STAGING_PREFIX}{hexdigits}"
    (staging / "new" / "scores" / "runs").mkdir(parents=True)
    (staging / "new" / "scores" / "runs" / "part-0.parquet").write_bytes(b"x" * 1000)
    return staging


@contextlib.contextmanager
def _live_writer_elsewhere(folder: Path) -> Iterator[Path]:
    """A staging folder whose writer, another process, is alive (it holds the folder's lock)."""
    staging = _dead_staging(folder, "1" * 32)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(staging)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield staging
    finally:
        holder.communicate("")  # closing stdin ends it


HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.mark.subprocess
def test_a_dead_writers_staging_is_removed_by_the_next_write_and_nothing_else(tmp_path: Path) -> None:
    dead = _dead_staging(tmp_path)
    lookalikes = {
        ".S.tmp-1a2b3c4d": "folder",  # an older version's name: not unmistakably ours
        f"{STAGING_PREFIX}123": "folder",  # not 32 hex digits
        f"{STAGING_PREFIX}{'2' * 32}": "file",  # ours would be a folder
        f"{STAGING_PREFIX}{'3' * 32}": "link",  # a symbolic link is never followed nor removed
    }
    (tmp_path / "elsewhere").mkdir()
    for name, kind in lookalikes.items():
        if kind == "folder":
            (tmp_path / name).mkdir()
        elif kind == "file":
            (tmp_path / name).write_text("x", encoding="utf-8")
        else:
            (tmp_path / name).symlink_to(tmp_path / "elsewhere")
    with _live_writer_elsewhere(tmp_path) as live:
        before = tree(live)
        with atomic_directory(tmp_path / "out") as staging:
            # A writer in this process, in the same folder, is alive too: its staging stays.
            with atomic_file(tmp_path / "other.csv") as inner:
                inner.write_text("a\n", encoding="utf-8")
            assert staging.is_dir()
            (staging / "f").write_text("done", encoding="utf-8")
        assert not dead.exists()
        assert tree(live) == before
    assert (tmp_path / "out" / "f").read_text(encoding="utf-8") == "done"
    assert (tmp_path / "other.csv").read_text(encoding="utf-8") == "a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["elsewhere", "out", "other.csv", live.name, *lookalikes]
    )
    assert sweep_staging(tmp_path) == [live]  # its writer is gone now


def test_a_cli_write_removes_a_dead_writers_staging_beside_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = _dead_staging(tmp_path)
    assert run(capsys, "simulate", "--runs", "20", "--out", tmp_path / "ds").code == 0
    assert not dead.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_staging_names_fit_whatever_the_output_is_called(tmp_path: Path) -> None:
    name = "n" * 250 + ".csv"  # 254 bytes: the longest a name can be, with room for no suffix
    with atomic_file(tmp_path / name) as staging:
        staging.write_text("a\n", encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == [name]


# -- the final rename refuses to replace what appeared meanwhile -----------------------------------


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_an_output_that_appeared_meanwhile_is_not_replaced(tmp_path: Path, renames: str, kind: str) -> None:
    target = tmp_path / ("out" if kind == "folder" else "out.csv")
    refused = pytest.raises(OutputExistsError, match=r"out(\.csv)? already exists \(it appeared while the output was")
    with refused, atomic_outputs((target, kind)) as (staging,):  # type: ignore[arg-type]
        if kind == "folder":
            (staging / "mine").write_text("loser", encoding="utf-8")
            target.mkdir()  # the other writer wins the race
            (target / "theirs").write_text("winner", encoding="utf-8")
        else:
            staging.write_text("loser", encoding="utf-8")
            target.write_text("winner", encoding="utf-8")
    winner = (target / "theirs") if kind == "folder" else target
    assert winner.read_text(encoding="utf-8") == "winner"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_overwrite_replaces_what_is_there(tmp_path: Path, renames: str, kind: str) -> None:
    target = tmp_path / "out"
    if kind == "folder":
        target.mkdir()
        (target / "old").write_text("old", encoding="utf-8")
    else:
        target.write_text("old", encoding="utf-8")
    with atomic_outputs((target, kind), overwrite=True) as (staging,):  # type: ignore[arg-type]
        (staging / "new" if kind == "folder" else staging).write_text("new", encoding="utf-8")
    assert (target / "new" if kind == "folder" else target).read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.rglob("*")) == (["new", "out"] if kind == "folder" else ["out"])


def test_two_scores_into_one_place_the_second_is_refused_and_the_first_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sharded = mas_eval.simulate(40, seed=5).write(tmp_path / "ds", shards=2)
    out = tmp_path / "S"
    import mas_eval.scoring.shards as shards

    real = shards.write_manifest
    won: dict[str, dict[str, str]] = {}

    def the_other_score_finishes_first(folder: Path, name: str, content: dict) -> None:
        if not won:  # the other score, started at the same time, commits while this one still writes
            won["tree"] = {}
            monkeypatch.setattr(shards, "write_manifest", real)
            mas_eval.score(Dataset.open(sharded), out=out)
            won["tree"] = tree(out)
        real(folder, name, content)

    monkeypatch.setattr(shards, "write_manifest", the_other_score_finishes_first)
    before = tree(sharded)
    done = run(capsys, "score", sharded, "--out", out)
    assert_refused(done, says=[f"{out} already exists (it appeared while the output was written)", "--overwrite"])
    assert tree(out) == won["tree"]
    assert tree(sharded) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S", "ds"]


# -- an output of several parts is committed as one -----------------------------------------------


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mas_eval.score(mas_eval.simulate(40, seed=2)).write(tmp_path_factory.mktemp("scores") / "scores")


def test_a_markdown_report_onto_a_folder_leaves_the_figures_folder_alone(
    scores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "X.md").mkdir()
    (tmp_path / "X.md" / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "X_figures").mkdir()
    (tmp_path / "X_figures" / "plot.png").write_bytes(b"my figure")
    before = tree(tmp_path)
    done = run(capsys, "report", scores, "--out", tmp_path / "X.md", "--overwrite")
    assert_refused(done, says=[f"{tmp_path / 'X.md'} is a folder; the output is a file"])
    assert_unchanged(before, tmp_path)


@pytest.mark.parametrize("where", ["report", "folder"])
def test_a_name_longer_than_the_file_system_allows_is_one_line_before_any_work(
    scores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    # A 248-byte report name fits, but its figures' folder (stem + "_figures") does not; a
    # 256-byte folder on the way to the output does not either. The system's own answer,
    # "File name too long", would name neither the name nor the fix.
    out = tmp_path / ("r" * 248 + ".md" if where == "report" else "d" * 256 + "/report.md")
    before = tree(tmp_path)
    done = run(capsys, "report", scores, "--out", out)
    assert_refused(done, says=["is 256 bytes, longer than the 255 bytes a name may have", "choose a shorter"])
    assert_unchanged(before, tmp_path)


def _two_parts(tmp_path: Path) -> tuple[Path, Path]:
    text, folder = tmp_path / "r.md", tmp_path / "r_figures"
    text.write_text("old report", encoding="utf-8")
    folder.mkdir()
    (folder / "a.png").write_bytes(b"old figure")
    return text, folder


def test_when_the_second_part_cannot_be_committed_the_first_is_put_back(tmp_path: Path, renames: str) -> None:
    text, folder = _two_parts(tmp_path)
    before = tree(tmp_path)
    refused = pytest.raises(OutputError, match="is a folder")
    with refused, atomic_outputs((folder, "folder"), (text, "file"), overwrite=True) as (figures, report):
        (figures / "b.png").write_bytes(b"new figure")
        report.write_text("new report", encoding="utf-8")
        text.unlink()
        text.mkdir()  # something made a folder where the report goes, after the checks
    text.rmdir()
    text.write_text("old report", encoding="utf-8")
    assert_unchanged(before, tmp_path)


def test_without_overwrite_a_part_that_appeared_meanwhile_undoes_the_others(tmp_path: Path, renames: str) -> None:
    text, folder = tmp_path / "r.md", tmp_path / "r_figures"
    refused = pytest.raises(OutputExistsError, match="appeared while")
    with refused, atomic_outputs((folder, "folder"), (text, "file")) as (figures, report):
        (figures / "b.png").write_bytes(b"new figure")
        report.write_text("new report", encoding="utf-8")
        text.write_text("theirs", encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md"]
    assert text.read_text(encoding="utf-8") == "theirs"


def test_parts_are_checked_apart_from_each_other(tmp_path: Path) -> None:
    refused = pytest.raises(OutputError, match="this output lies inside the other output")
    with refused, atomic_outputs((tmp_path / "ds", "folder"), (tmp_path / "ds" / "rejects.jsonl", "file")):
        pass
    assert list(tmp_path.iterdir()) == []


def test_ingest_writes_the_dataset_and_its_rejects_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text((DATA / "sample.jsonl").read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    import mas_eval.ingest.jsonl.ingest as jsonl

    real = jsonl.write_manifest

    def someone_writes_the_rejects_path(folder: Path, name: str, content: dict) -> None:
        rejects.write_text("theirs", encoding="utf-8")
        real(folder, name, content)

    monkeypatch.setattr(jsonl, "write_manifest", someone_writes_the_rejects_path)
    done = run(capsys, "ingest", source, "--out", tmp_path / "ds", "--skip-invalid", "--rejects", rejects)
    assert_refused(done, says=f"{rejects} already exists (it appeared while the output was written)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "rejects.jsonl"]  # no Dataset without it
    assert rejects.read_text(encoding="utf-8") == "theirs"


# -- disk full, file too large: one line naming the output and the fix -----------------------------


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Every write past ``limit`` bytes of a file fails with EFBIG (Rust's too), in this process and
    the workers it starts, until the block ends: a full disk without root."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # Python ignores it already; to be sure
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every kind of input a writing command reads, in one folder."""
    folder = tmp_path_factory.mktemp("inputs")
    found = {
        "small": mas_eval.simulate(40, seed=1).write(folder / "small"),
        "sharded": mas_eval.simulate(40, seed=1).write(folder / "sharded", shards=2),
        "jsonl": DATA / "sample.jsonl",
        "bench": _benchmark_report().write(folder / "bench.json"),
    }
    found["scores"] = mas_eval.score(Dataset.open(found["small"])).write(folder / "scores")
    if LDDX.is_dir():
        from mas_eval.ingest import ingest_lddx

        ingest_lddx(sorted(LDDX.glob("*.json"))[:1], folder / "lddx")
        found["lddx"] = folder / "lddx"
    return found


def _benchmark_report() -> BenchmarkReport:
    items = pl.DataFrame(
        {
            "run_id": ["r1"] * 3,
            "item_id": ["q1", "q2", "s1"],
            "task": ["qa", "qa", "summary"],
            "prediction": ["pneumonia", "flu", "short note"],
            "reference": ["pneumonia", "covid", "long note"],
            "clinical_accuracy": [1.0, 0.0, 0.9],
            "reasoning_quality": [0.6, 0.2, None],
        }
    )
    return BenchmarkReport.from_items(items, model_id="m")


#: Each writing command, by the output it writes (``OUT`` stands for it) and its inputs.
WRITERS: dict[str, list[str]] = {
    "simulate": ["simulate", "--runs", "40", "--out", "OUT"],
    "simulate sharded": ["simulate", "--runs", "40", "--shards", "2", "--out", "OUT"],
    "ingest": ["ingest", "{jsonl}", "--out", "OUT"],
    "ingest sharded": ["ingest", "{jsonl}", "--shards", "2", "--out", "OUT"],
    "score": ["score", "{small}", "--out", "OUT"],
    "score sharded": ["score", "{sharded}", "--out", "OUT"],
    "score workers": ["score", "{sharded}", "--workers", "2", "--out", "OUT"],
    "compare .parquet": ["compare", "{scores}", "--out", "OUT.parquet"],
    "compare .csv": ["compare", "{scores}", "--out", "OUT.csv"],
    "compare .json": ["compare", "{scores}", "--out", "OUT.json"],
    "cost-effectiveness": [
        "cost-effectiveness",
        "{scores}",
        "-m",
        "gt_match",
        "--cost",
        "cost_usd",
        "--out",
        "OUT.json",
    ],
    "report .json": ["report", "{scores}", "--out", "OUT.json"],
    "report .tex": ["report", "{scores}", "--out", "OUT.tex"],
    "reshard": ["reshard", "{sharded}", "--shards", "3", "--out", "OUT"],
    "combine": ["combine", "{small}", "{lddx}", "--out", "OUT"],
    "reproduce": ["reproduce", "{lddx}", "--preset", "lddx-v6", "--out", "OUT"],
    "benchmark-report .json": ["benchmark-report", "{bench}", "--out", "OUT.json"],
    "benchmark-report .md": ["benchmark-report", "{bench}", "--out", "OUT.md"],
    "benchmark-report .html": ["benchmark-report", "{bench}", "--out", "OUT.html"],
    "combined-score": ["combined-score", "{bench}", "--weights", "clinical_accuracy=1", "--out", "OUT.json"],
    "demo": ["demo", "--data", str(DATA), "--out", "OUT"],
}


def _args(command: str, inputs: dict[str, Path], out: Path) -> tuple[list[str], Path]:
    if "{lddx}" in WRITERS[command] and "lddx" not in inputs:
        pytest.skip(needs_lddx.kwargs["reason"])
    args = [a.replace("OUT", str(out)).format(**inputs) for a in WRITERS[command]]
    target = next(Path(a) for a in args if a.startswith(str(out)))
    return args, target


@pytest.mark.parametrize("command", list(WRITERS))
@pytest.mark.slow
def test_every_command_names_a_write_past_the_file_size_limit_in_one_line(
    command: str, inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, target = _args(command, inputs, tmp_path / "x")
    read = tree(inputs["small"].parent)
    with file_size_limit(1024):
        done = run(capsys, *args)
    assert_refused(done, says=[f"{target}: cannot be written (file too large)", "ulimit -f"])
    assert list(tmp_path.iterdir()) == []
    assert_unchanged(read, inputs["small"].parent)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a file system with no space left (root only: a small tmpfs, filled up)."""
    folder = tmp_path / "full"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a full file system needs root (the file size limit case covers the others)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True, check=False
    )
    if mounted.returncode != 0:  # pragma: no cover - root without mount (a container without the capability)
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        with contextlib.suppress(OSError), (folder / "filler").open("wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize(
    "command", ["simulate sharded", "ingest", "score", "compare .csv", "report .json", "benchmark-report .md"]
)
@pytest.mark.slow
def test_a_full_disk_is_one_line_naming_the_output(
    command: str, inputs: dict[str, Path], full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, target = _args(command, inputs, full_disk / "x")
    done = run(capsys, *args)
    assert_refused(done, says=[f"{target}: cannot be written (no space left on device)", "free some space"])
    assert [p.name for p in full_disk.iterdir()] == ["filler"]


@pytest.mark.parametrize("command", [c for c in WRITERS if c != "score workers"])
def test_every_command_names_a_location_it_cannot_write_in_one_line(
    command: str, inputs: dict[str, Path], read_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, target = _args(command, inputs, read_only / "x")
    done = run(capsys, *args)
    assert_refused(done, says=[f"{target}: cannot write in {read_only}", "choose an output path you can write to"])
    assert list(read_only.iterdir()) == []


@pytest.mark.parametrize("suffix", [".html", ".md"])
def test_a_report_with_figures_past_the_file_size_limit_is_named(tmp_path: Path, suffix: str) -> None:
    figure, axes = plt.subplots()
    axes.plot([0, 1], [1, 0])
    section = Section("s", "Section", text=["text"], figures=[ReportFigure("line", "A line", figure)])
    document = type("Doc", (), {"title": "t", "sections": [section], "provenance": provenance(inputs={})})()
    with file_size_limit(1024), pytest.raises(OutputError, match=r"cannot be written \(file too large\)"):
        write(document, tmp_path / f"r{suffix}", suffix, overwrite=False, inputs=[])
    plt.close(figure)
    assert list(tmp_path.iterdir()) == []


# -- a Dask scheduler that is not there ------------------------------------------------------------


@pytest.mark.parametrize("address", ["garbage", "tcp://127.0.0.1:1"])
def test_a_dask_scheduler_that_does_not_answer_is_one_line_and_nothing_written(
    address: str,
    inputs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("dask.distributed", reason="make test installs mas_eval[distributed]")
    import mas_eval.scoring.shards as shards

    monkeypatch.setattr(shards, "DASK_CONNECT_TIMEOUT", 1)  # 5 s in use: the test needs no more than 1
    args = ["score", inputs["sharded"], "--out", tmp_path / "S", "--engine", "dask", "--scheduler", address]
    done = run(capsys, *args)
    assert_refused(done, says=[f"no Dask scheduler answers at {address!r}", "--scheduler tcp://HOST:PORT"])
    assert list(tmp_path.iterdir()) == []
