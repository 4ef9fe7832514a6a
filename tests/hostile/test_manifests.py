"""Numbers no manifest holds: a JSON integer of thousands of digits, or a number beyond the largest float.

Python refuses to convert an integer of more than 4,300 digits (a ``ValueError`` traceback
before), and reads ``1e400`` as infinity. Every manifest and JSON file the package reads back goes
through :func:`mas_eval.storage.manifests.read_json`: such a number is one line naming the file,
the line and the number, and the command exits 2 with nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval.errors import SchemaError
from mas_eval.storage.manifests import read_json
from tests.promises import assert_refused, assert_unchanged, run, tree


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("manifests") / "ds"
    mas_eval.simulate(40, seed=3).write(folder, shards=2, validate=False)
    return folder


def _with_count(source: Path, target: Path, number: str) -> Path:
    """A copy of the sharded Dataset ``source`` whose manifest records ``number`` shards."""
    import shutil

    shutil.copytree(source, target)
    manifest = target / "_dataset.json"
    text = manifest.read_text()
    assert '"count": 2' in text
    manifest.write_text(text.replace('"count": 2', f'"count": {number}'))
    return target


@pytest.mark.parametrize(
    ("number", "says"),
    [
        ("1" + "0" * 5000, "an integer of 5,001 digits, beyond the largest float"),
        ("-" + "9" * 4301, "an integer of 4,301 digits"),
        ("1" + "0" * 400, "an integer of 401 digits"),
        ("1e400", "the number 1e400, beyond the largest float (about 1.8e308)"),
        ("-1.5e309", "the number -1.5e309"),
    ],
)
def test_a_number_beyond_any_float_in_a_manifest_is_one_line(
    sharded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], number: str, says: str
) -> None:
    folder = _with_count(sharded, tmp_path / "ds", number)
    before = tree(tmp_path)
    line = assert_refused(run(capsys, "validate", folder), says=[f"{folder / '_dataset.json'}:", says])
    assert len(line) < 400  # the number is named, not printed whole
    assert_refused(run(capsys, "score", folder, "--out", tmp_path / "scores"), says=says)
    assert_unchanged(before, tmp_path)


def test_the_largest_integers_a_float_holds_are_read(tmp_path: Path) -> None:
    path = tmp_path / "n.json"
    big = int(1.7e308)
    path.write_text(json.dumps({"a": big, "b": -big, "c": 1.7e308}))
    assert read_json(path, fix="") == {"a": big, "b": -big, "c": 1.7e308}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(digits=st.integers(1, 6000), negative=st.booleans(), depth=st.integers(0, 40))
def test_any_integer_at_any_depth_is_read_or_refused_in_one_line(
    tmp_path: Path, digits: int, negative: bool, depth: int
) -> None:
    # 30: each draw parses one small file. Up to 40 deep: the reader's own bound is 32.
    number = ("-" if negative else "") + "7" * digits
    path = tmp_path / "n.json"
    path.write_text("[" * depth + number + "]" * depth)
    try:
        value = read_json(path, fix="restore it")
    except SchemaError as refused:
        message = str(refused)
        assert "\n" not in message and message.endswith("; restore it") and len(message) < 300
        assert digits > 308 or depth > 32
    else:
        assert digits <= 308 and depth <= 32
        for _ in range(depth):
            value = value[0]
        assert value == int(number)
