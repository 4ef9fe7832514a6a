"""`mas-eval simulate --kind answers` and the lazy `mas_eval.simulate_answers`."""

from __future__ import annotations

from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset
from mas_eval.simulation.answers import TASKS, simulate_answers
from tests.conftest import run_python
from tests.promises import run


@pytest.mark.subprocess
def test_simulate_answers_is_exported_lazily() -> None:
    code = (
        "import sys, mas_eval; print('mas_eval.simulation.answers' in sys.modules, mas_eval.simulate_answers.__name__)"
    )
    done = run_python("-c", code)
    assert done.stdout.split() == ["False", "simulate_answers"], done.stderr
    assert mas_eval.simulate_answers is simulate_answers
    assert "simulate_answers" in mas_eval.__all__ and "simulate_answers" in dir(mas_eval)


def test_the_command_line_writes_what_the_function_returns(tmp_path: Path) -> None:
    from mas_eval.cli import main

    args = ["--runs", "12", "--seed", "4", "--effect", "0.2", "--mas-share", "0.5", "--items", "3,5"]
    args += ["--entities", "1,3", "--answer-chars", "120", "--task-names", "dx,comm"]
    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--kind", "answers", *args, "--out", str(tmp_path / "qa")])
    assert exited.value.code == 0
    written = Dataset.open(tmp_path / "qa").validate()
    assert written.table_names == ["runs", "answers"]
    expected = simulate_answers(
        12, seed=4, effect=0.2, mas_share=0.5, items=(3, 5), entities=(1, 3), answer_chars=120, tasks=("dx", "comm")
    )
    for name, frame in expected.frames().items():
        assert_frame_equal(written.collect(name), frame)


def test_defaults_and_the_number_of_tasks(tmp_path: Path) -> None:
    from mas_eval.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--kind", "answers", "--runs", "4", "--seed", "1", "--out", str(tmp_path / "a")])
    assert exited.value.code == 0
    expected = simulate_answers(4, seed=1)  # effect 0.1, items (20, 40), entities (2, 5), 300 characters
    for name, frame in expected.frames().items():
        assert_frame_equal(Dataset.open(tmp_path / "a").collect(name), frame)

    with pytest.raises(SystemExit) as exited:
        main(
            [
                "simulate",
                "--kind",
                "answers",
                "--runs",
                "40",
                "--tasks",
                "5",
                "--items",
                "1",
                "--out",
                str(tmp_path / "b"),
            ]
        )
    assert exited.value.code == 0
    tasks = set(Dataset.open(tmp_path / "b").collect("answers")["task"])
    assert tasks <= {*TASKS, "task4", "task5"} and len(tasks) > 3


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--kind", "answer"],
            "error: simulate: --kind='answer' is invalid; --kind must be one of "
            "'decision', 'diagnosis', 'answers', 'outcomes'",
        ),
        (
            ["--kind", "answers", "--runs", "1"],
            "error: simulate_answers: runs=1 is invalid; runs must be an integer in [2, 250000]",
        ),
        (
            ["--kind", "answers", "--effect", "2"],
            "error: simulate_answers: effect=2.0 is invalid; effect must be a number in [-1, 1]",
        ),
        (
            ["--kind", "answers", "--items", "a,b"],
            "error: simulate: --items 'a,b' is invalid; write MIN,MAX (two integers, e.g. 20,40) or one integer",
        ),
        (
            ["--kind", "answers", "--items", "1,2,3"],
            "error: simulate: --items '1,2,3' is invalid; write MIN,MAX (two integers, e.g. 20,40) or one integer",
        ),
        (
            ["--kind", "answers", "--items", "5,2"],
            "error: simulate_answers: items=(5, 2) is invalid; items must be a (min, max) pair of integers in "
            "[1, 1000000] with min <= max",
        ),
        (
            ["--kind", "answers", "--entities", "2,11"],
            "error: simulate_answers: entities=(2, 11) asks for up to 11 entities per reference answer, but it "
            "names at most 10; pass a maximum <= 10",
        ),
        (
            ["--kind", "answers", "--answer-chars", "0"],
            "error: simulate_answers: answer_chars=0 is invalid; answer_chars must be an integer in [1, 10000]",
        ),
        (
            ["--kind", "answers", "--tasks", "0"],
            "error: simulate: tasks=0 is invalid; tasks must be an integer in [1, 250000]",
        ),
        (
            ["--kind", "answers", "--tasks", "2", "--task-names", "a,b"],
            "error: simulate: --tasks and --task-names are both given; give one (--task-names names the tasks)",
        ),
        (
            ["--kind", "answers", "--task-names", "a,,b"],
            "error: simulate_answers: tasks=('a', '', 'b') is invalid; tasks must be a non-empty list of distinct, "
            "non-empty task names",
        ),
        (
            ["--kind", "diagnosis", "--items", "3", "--answer-chars", "9"],
            "error: simulate: --items, --answer-chars apply only to --kind answers (this is --kind diagnosis); "
            "leave them out",
        ),
    ],
)
def test_bad_values_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], line: str
) -> None:
    done = run(capsys, "simulate", "--out", str(tmp_path / "ds"), *args)
    assert (done.code, done.err.strip().splitlines()) == (2, [line])
    assert not (tmp_path / "ds").exists()
