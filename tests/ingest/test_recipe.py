"""The recipe every log adapter follows (``mas_eval/ingest/recipe.py``), shown with a format that
exists only here: its reading code is all it writes, and the path list, the skip-invalid loop,
the errors, the systems named per path and Git LFS pointers work as for the real adapters."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.cli import main
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, InvalidParameterError, OutputError
from mas_eval.ingest import ingest_inspect, ingest_jsonl, ingest_lddx, ingest_lm_eval, ingest_otlp, ingest_table
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import Ingest, InvalidInputError, LogFormat, Paths, ingest_logs, lines, parse_paths
from tests.conftest import Logs

# -- a format of a few lines: "# system NAME", then "case,correct" a line ---------------------

TOY = LogFormat(
    name="toy",
    files="toy .runs files",
    suffixes=(".runs",),
    in_folder="no .runs files",
    record="toy run",
    skips="file(s) or line(s)",
    recursive=True,
)


class ToyReader:
    """All the toy format writes: how a file becomes rows, and the rows a table."""

    def __init__(self) -> None:
        self.rows: list[dict[str, str]] = []

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        named, rows = None, []
        for number, raw in lines(file):
            text = raw.decode("utf-8").strip()
            if text.startswith("# system "):
                named = text.removeprefix("# system ")
                continue
            with ingest.attempt(f"line {number}"):
                case, _, correct = text.partition(",")
                if correct not in ("0", "1"):
                    msg = f"correct is {correct!r}, not 0 or 1"
                    raise InvalidInputError(msg)
                rows.append({"case_id": case, "correct": correct})
        if (system or named) is None:
            msg = "names no system"
            raise InvalidInputError(msg, fix="add a line '# system NAME'")
        self.rows.extend({"run_id": f"{file.stem}/{row['case_id']}", "system": system or named, **row} for row in rows)

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        schema = {c: TABLES["runs"].polars_schema[c] for c in ("run_id", "system", "case_id", "correct")}
        return {"runs": conform(pl.DataFrame(self.rows, schema=schema), "runs")}


def ingest_toy(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    return ingest_logs(
        TOY, ToyReader(), paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )


def _write(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _systems(result: LogIngestResult) -> dict[str, str]:
    return dict(result.dataset.collect("runs").select("run_id", "system").iter_rows())


POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"  # noqa: E501


# -- the toy format through the recipe ----------------------------------------------------------


def test_a_folder_stands_for_its_files_under_it_sorted_and_a_file_given_twice_is_read_once(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    b = _write(folder / "b.runs", "# system mas", "c1,1", "c2,0")
    a = _write(folder / "sub" / "a.runs", "# system single", "c1,0")
    _write(folder / "notes.txt", "not a toy file")
    _write(folder / ".hidden.runs", "# system mas", "c9,1")
    result = ingest_toy([folder, b], tmp_path / "ds")
    assert result.files == (b, a)  # sorted by the parts of their paths: "b.runs" < "sub"
    assert result.runs == 3 and result.skipped == () and result.out == tmp_path / "ds"
    assert _systems(result) == {"b/c1": "mas", "b/c2": "mas", "a/c1": "single"}
    correct = Dataset.open(tmp_path / "ds").collect("runs").select("run_id", "correct")
    assert dict(correct.iter_rows()) == {"b/c1": "1", "b/c2": "0", "a/c1": "0"}


def test_a_bad_record_is_one_line_or_is_set_aside_with_its_reason(tmp_path: Path) -> None:
    bad = _write(tmp_path / "in" / "a.runs", "# system mas", "c1,1", "c2,maybe", "c3,0")
    with pytest.raises(IngestError) as raised:
        ingest_toy(bad, tmp_path / "ds")
    assert str(raised.value) == (
        f"{bad}: line 3: correct is 'maybe', not 0 or 1; fix the file, or pass skip_invalid=True to set it aside"
    )
    assert not (tmp_path / "ds").exists()
    result = ingest_toy(bad, skip_invalid=True)
    assert result.runs == 2 and result.skipped == ((bad, "line 3: correct is 'maybe', not 0 or 1"),)


def test_a_file_that_cannot_be_read_is_refused_or_skipped_whole_with_what_was_set_aside_in_it(tmp_path: Path) -> None:
    good = _write(tmp_path / "in" / "a.runs", "# system mas", "c1,1")
    nameless = _write(tmp_path / "in" / "b.runs", "c1,1", "c2,x")
    with pytest.raises(IngestError, match=r"b\.runs: line 2: correct is 'x', not 0 or 1; fix the file, or pass"):
        ingest_toy(tmp_path / "in")
    with pytest.raises(IngestError, match=r"c\.runs: names no system; add a line .# system NAME., or pass skip_inv"):
        ingest_toy([good, _write(tmp_path / "other" / "c.runs", "c1,1")])
    result = ingest_toy(tmp_path / "in", skip_invalid=True)
    # Its bad line was set aside before the file was: only the file is listed, and none of its runs kept.
    assert result.files == (good,) and result.skipped == ((nameless, "names no system"),)
    assert result.runs == 1


def test_nothing_ingested_says_why(tmp_path: Path) -> None:
    nameless = _write(tmp_path / "in" / "b.runs", "c1,1")
    with pytest.raises(IngestError) as raised:
        ingest_toy(nameless, skip_invalid=True)
    assert str(raised.value) == (
        f"no toy run could be ingested (1 file(s) or line(s) skipped: {nameless}: names no system); nothing was written"
    )


def test_missing_paths_empty_folders_and_no_input_are_named(tmp_path: Path) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(IngestError, match=r"empty: no \.runs files in this folder or under it; pass toy \.runs files"):
        ingest_toy(tmp_path / "empty")
    with pytest.raises(IngestError, match=r"missing\.runs: no such file or folder; pass toy \.runs files"):
        ingest_toy(tmp_path / "missing.runs")
    with pytest.raises(IngestError, match=r"^no input given; pass toy \.runs files, or folders holding them$"):
        ingest_toy([])
    fifo = tmp_path / "pipe.runs"
    os.mkfifo(fifo)
    with pytest.raises(IngestError, match=r"pipe\.runs is a FIFO \(named pipe\); pass toy \.runs files"):
        ingest_toy(fifo)


def test_a_symbolic_link_that_loops_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    _write(folder / "a.runs", "# system mas", "c1,1")
    (folder / "sub").mkdir()
    (folder / "sub" / "back").symlink_to(folder)
    with pytest.raises(IngestError) as raised:
        ingest_toy(folder)
    message = str(raised.value)
    assert message.startswith(f"{folder / 'sub' / 'back'}: a symbolic link to {folder}") and "\n" not in message
    # A link to a folder elsewhere is followed, as a folder would be.
    (folder / "sub" / "back").unlink()
    _write(tmp_path / "elsewhere" / "b.runs", "# system single", "c1,0")
    (folder / "sub" / "there").symlink_to(tmp_path / "elsewhere")
    assert ingest_toy(folder).runs == 2


def test_arguments_and_the_output_are_checked_before_anything_is_read(tmp_path: Path) -> None:
    file = _write(tmp_path / "in" / "a.runs", "# system mas", "c1,1")

    class Unread(ToyReader):
        def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
            msg = "read before the arguments were checked"
            raise AssertionError(msg)

    def run(**options: object) -> None:
        ingest_logs(TOY, Unread(), **{"paths": file, "out": None, "system": None, "overwrite": False,
                                       "skip_invalid": False, "shards": None, **options})  # fmt: skip

    with pytest.raises(OutputError, match="the output lies inside the input"):
        run(paths=tmp_path / "in", out=tmp_path / "in" / "ds")
    with pytest.raises(InvalidParameterError, match="shards"):
        run(shards=0)
    with pytest.raises(InvalidParameterError, match=r"system='' is not a name"):
        run(system="")
    with pytest.raises(InvalidParameterError, match=r"paths\[.*a\.runs'\]=' ' is not a name"):
        run(paths={file: " "})


# -- the system named for each path -------------------------------------------------------------


def test_each_path_names_its_runs_system_and_system_names_the_rest(tmp_path: Path) -> None:
    one = _write(tmp_path / "one.runs", "# system mas", "c1,1")
    two = _write(tmp_path / "two.runs", "# system mas", "c1,0")
    three = _write(tmp_path / "three.runs", "c1,0")
    result = ingest_toy({one: "debate", two: None, three: None}, system="solo")
    assert _systems(result) == {"one/c1": "debate", "two/c1": "solo", "three/c1": "solo"}
    assert _systems(ingest_toy({one: "debate", two: None})) == {"one/c1": "debate", "two/c1": "mas"}
    with pytest.raises(IngestError, match=r"one\.runs: given twice, with the systems 'debate' and 'other'"):
        ingest_toy({one: "debate", tmp_path: "other"})


def test_two_inspect_logs_of_one_model_solver_and_task_go_in_under_two_names(
    inspect_logs: Logs, tmp_path: Path
) -> None:
    source = sorted(inspect_logs.json_dir.glob("*.json"))[0]
    doc = json.loads(source.read_text(encoding="utf-8"))
    doc["eval"]["eval_id"] += "-again"  # the same evaluation run again: another log, the same system
    again = _write(tmp_path / "again.json", json.dumps(doc))
    with pytest.raises(IngestError, match="ran this sample and epoch of task"):
        ingest_inspect([source, again])
    result = ingest_inspect({source: "first", again: "second"}, tmp_path / "ds")
    runs = Dataset.open(tmp_path / "ds").collect("runs")
    assert runs.group_by("system").len().sort("system").rows() == [
        ("first", result.runs // 2),
        ("second", result.runs // 2),
    ]


def test_a_table_and_traces_take_the_system_named_for_their_file(tmp_path: Path) -> None:
    pl.DataFrame({"question": ["q1", "q2"], "score": [1, 0]}).write_csv(tmp_path / "mas.csv")
    pl.DataFrame({"question": ["q1", "q2"], "score": [0, 0]}).write_csv(tmp_path / "single.csv")
    result = ingest_table(
        {tmp_path / "mas.csv": "mas", tmp_path / "single.csv": "single"}, columns={"case_id": "question"}
    )
    assert result.dataset.collect("runs").select("system", "case_id").rows() == [
        ("mas", "q1"), ("mas", "q2"), ("single", "q1"), ("single", "q2")
    ]  # fmt: skip
    with pytest.raises(IngestError, match=r"no column gives runs\.system"):
        ingest_table(tmp_path / "mas.csv", columns={"case_id": "question"})


def test_the_command_line_reads_path_equals_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pl.DataFrame({"question": ["q1"], "score": [1]}).write_csv(tmp_path / "a.csv")
    odd = tmp_path / "x=y"
    odd.mkdir()
    pl.DataFrame({"question": ["q1"], "score": [0]}).write_csv(odd / "b.csv")
    with pytest.raises(SystemExit) as exited:
        main(["ingest", "--format", "table", f"{tmp_path / 'a.csv'}=debate (agents=3)", f"{odd}=solo",
              "--map", "case_id=question", "--out", str(tmp_path / "ds")])  # fmt: skip
    assert exited.value.code in (0, None), capsys.readouterr().err
    runs = Dataset.open(tmp_path / "ds").collect("runs")
    assert runs.select("system", "case_id").rows() == [("debate (agents=3)", "q1"), ("solo", "q1")]
    with pytest.raises(SystemExit) as exited:
        main(["ingest", f"{tmp_path / 'a.csv'}=mas", "--out", str(tmp_path / "ds2")])
    assert exited.value.code == 2 and "JSONL records name their own" in capsys.readouterr().err


def test_path_equals_system_is_read_one_way(tmp_path: Path) -> None:
    odd = tmp_path / "run=1.eval"
    odd.write_text("", encoding="utf-8")
    assert parse_paths([str(odd), str(tmp_path)]) == [odd, tmp_path]
    assert parse_paths([f"{odd}=a=b", str(tmp_path)]) == {odd: "a=b", tmp_path: None}
    with pytest.raises(IngestError, match=r"nor is any part of it before an '=' one"):
        parse_paths([f"{tmp_path / 'missing'}=mas"])
    with pytest.raises(InvalidParameterError, match="names no system after '='"):
        parse_paths([f"{odd}="])
    with pytest.raises(InvalidParameterError, match=r"named twice, 'a' and 'b'"):
        parse_paths([f"{odd}=a", f"{odd}=b"])


# -- Git LFS pointers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ingest"),
    [
        ("log.eval", ingest_inspect),
        ("log.json", ingest_inspect),
        ("results_2026-01-01T00-00-00.json", ingest_lm_eval),
        ("traces.json", ingest_otlp),
        ("runs.csv", lambda p, **o: ingest_table(p, columns={"system": "s", "case_id": "c"}, **o)),
        ("runs.parquet", lambda p, **o: ingest_table(p, columns={"system": "s", "case_id": "c"}, **o)),
        ("ddx_results_x.json", ingest_lddx),
        ("a.runs", ingest_toy),
    ],
)
def test_a_git_lfs_pointer_is_named_as_one_for_every_format(name: str, ingest: object, tmp_path: Path) -> None:
    pointer = _write(tmp_path / "in" / "pointer", POINTER.rstrip("\n")).rename(tmp_path / "in" / name)
    with pytest.raises(IngestError) as raised:
        ingest(pointer)  # type: ignore[operator]
    assert str(raised.value).startswith(
        f"{pointer}: is a Git LFS pointer, not the file; run `git lfs pull` in its repository to fetch the file, "
    )
    with pytest.raises(IngestError, match=r"\(1 .* skipped: .*is a Git LFS pointer, not the file\)"):
        ingest(pointer, skip_invalid=True)  # type: ignore[operator]


def test_a_git_lfs_pointer_given_as_jsonl_is_named_as_one(tmp_path: Path) -> None:
    pointer = _write(tmp_path / "runs.jsonl", POINTER.rstrip("\n"))
    with pytest.raises(IngestError, match=r"runs\.jsonl: is a Git LFS pointer, not the file; run `git lfs pull`"):
        ingest_jsonl([pointer], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_a_samples_file_that_is_a_git_lfs_pointer_is_named(tmp_path: Path) -> None:
    data = Path(__file__).parents[1] / "data" / "lm_eval"
    results = sorted(data.rglob("results_*.json"))[0]
    folder = tmp_path / "in"
    folder.mkdir()
    for file in results.parent.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    samples = sorted(folder.glob("samples_*.jsonl"))[0]
    samples.write_text(POINTER, encoding="utf-8")
    with pytest.raises(IngestError, match=rf"{samples.name}: is a Git LFS pointer, not the file"):
        ingest_lm_eval(folder)
