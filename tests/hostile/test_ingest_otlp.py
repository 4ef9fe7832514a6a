"""``mas-eval ingest --format otlp`` given traces that no run can come from, or values no run can have.

A value that cannot be read (a time beyond OTLP's ``fixed64``, a resource that is a number, an
integer of 5,000 digits, a lone surrogate, token counts whose sum no column holds, a line of
1 GiB) is refused: one line naming the file, the line or trace, the span and the true cause; exit
2; nothing written; the input unchanged. A value that is readable but cannot be true for its run
(an infinite score, a negative count or duration) is set aside for that run and reported, and the
rest is ingested. A time of 2**64 - 1 nanoseconds is OTLP's own largest and is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mas_eval import Dataset
from mas_eval.ingest.otlp import ingest_otlp
from tests.conftest import run_python
from tests.promises import assert_refused, assert_unchanged, run, tree

TRACE = "5b8efff798038103d269b633813fc60c"
ROOT = "a" * 16
SECOND = 10**9
START = 1_700_000_000 * SECOND


def attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def span(span_id: str = ROOT, parent: str | None = None, start: int = START, end: int = START + SECOND, **attrs: Any):
    """A span of the trace; ``__`` in an attribute's name is a dot."""
    found: dict[str, Any] = {
        "traceId": TRACE,
        "spanId": span_id,
        "name": "invoke_agent solo" if parent is None else "chat",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [attribute(k.replace("__", "."), v) for k, v in attrs.items()],
    }
    if parent is not None:
        found["parentSpanId"] = parent
    return found


def agent(**more: Any) -> dict[str, Any]:
    return span(**{"gen_ai__operation__name": "invoke_agent", "gen_ai__agent__name": "solo", **more})


def chat(number: int, **attrs: Any) -> dict[str, Any]:
    return span(format(number, "016x"), ROOT, gen_ai__operation__name="chat", gen_ai__request__model="m", **attrs)


def request(*spans: dict[str, Any]) -> dict[str, Any]:
    resource = {"attributes": [attribute("service.name", "mas"), attribute("mas_eval.case_id", "q1")]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": list(spans)}]}]}


def line(*spans: dict[str, Any]) -> str:
    return json.dumps(request(*spans))


def _resource_five() -> str:
    found = request(agent())
    found["resourceSpans"][0]["resource"] = 5
    return json.dumps(found)


REFUSED = {
    "four calls of 2**62 tokens": (
        line(agent(), *[chat(k, gen_ai__usage__input_tokens=2**62) for k in range(1, 5)]),
        [f"trace {TRACE} (first span at line 1)", "its 4 model call(s)", "'input_tokens' sums to 18446744073709551616"],
    ),
    "a time past fixed64": (
        line(span(start=2**64, end=2**64 + 1)),
        ["line 1: resourceSpans[0].scopeSpans[0].spans[0]", "'startTimeUnixNano' is '18446744073709551616'", "time"],
    ),
    "a resource that is a number": (
        _resource_five(),
        ["line 1: resourceSpans[0].resource: expected an object, got a number"],
    ),
    "an integer of 5,000 digits": (
        line(agent()).replace(f'"{START}"', "7" * 5000, 1),
        ["line 1: not JSON that can be read: an integer of 5,000 digits"],
    ),
    "a time beyond 1e308": (
        line(agent()).replace(f'"{START}"', "1e400", 1),
        ["line 1:", "'startTimeUnixNano' is a number beyond a float's range"],
    ),
    "a lone surrogate in an agent's name": (
        line(agent(gen_ai__agent__name="solo\ud800")),
        ["line 1:", "('invoke_agent solo')", "'gen_ai.agent.name' is 'solo\\ud800', not valid Unicode text"],
    ),
    "a lone surrogate in a message": (
        line(agent(), chat(1, gen_ai__output__messages=json.dumps([{"role": "assistant", "content": "ok \ud800"}]))),
        ["line 1:", "spans[1] ('chat')", "'gen_ai.output.messages'", "lone surrogate"],
    ),
    "half a token": (
        line(agent(), chat(1, gen_ai__usage__output_tokens=2.5)),
        ["line 1:", "spans[1] ('chat')", "'gen_ai.usage.output_tokens' is 2.5, not a whole number", "count of tokens"],
    ),
    "a span id of the wrong length": (
        line(span("abc")),
        ["line 1:", "spanId 'abc' is not an id: 16 hex digits, or 8 bytes in base64"],
    ),
    "parents that loop": (
        line(span("1" * 16, "2" * 16, mas_eval__case_id="q1"), span("2" * 16, "1" * 16)),
        [f"trace {TRACE} (first span at line 1)", "its spans' parents form a loop"],
    ),
    "a Jaeger span that starts before 1970": (
        json.dumps({"data": [{"traceID": TRACE, "spans": [{"traceID": TRACE, "spanID": ROOT, "startTime": -5}]}]}),
        ["data[0].spans[0]", "'startTime' is -5, negative", "cannot be a time"],
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_trace_that_cannot_be_read_is_one_line_and_nothing_is_written(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, says = REFUSED[case]
    file = tmp_path / "traces.json"
    file.write_text(text + "\n", encoding="utf-8", errors="surrogatepass")
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "otlp", file, "--out", tmp_path / "out")
    refused = assert_refused(done, says=[str(file), *says])
    assert "--skip-invalid" in refused
    assert_unchanged(before, tmp_path)


def test_a_document_over_the_limit_says_how_to_read_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "trace.json"
    file.write_text(json.dumps(request(agent(), *[chat(k) for k in range(1, 40)]), indent=2), encoding="utf-8")
    before = tree(tmp_path)
    done = run(capsys, "ingest", "--format", "otlp", file, "--out", tmp_path / "out", "--max-line-mb", "0.01")
    assert_refused(
        done,
        says=[
            str(file),
            "one JSON document (its first line is not JSON on its own) of",
            "raise the limit (--max-line-mb 1)",
        ],
    )
    assert_unchanged(before, tmp_path)


@pytest.mark.subprocess
def test_a_line_of_a_gibibyte_is_refused_without_being_held(tmp_path: Path) -> None:
    # A sparse file: one line of 1 GiB (a request that never ends), then a good request.
    (tmp_path / "big").mkdir()
    file = tmp_path / "big" / "huge.json"
    with file.open("wb") as out:
        out.write(b'{"resourceSpans": [')
        out.truncate(2**30)
        out.seek(2**30)
        out.write(b"]}\n" + line(agent()).encode() + b"\n")
    # The input is compared by its size and time, not hashed (hashing 1 GiB twice would be the test's
    # cost); the folder written into is snapshot whole.
    stat = file.stat()
    work = tmp_path / "work"
    work.mkdir()
    before = tree(work)
    peak = tmp_path / "peak.txt"
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))\n"
        "from mas_eval.cli import main\n"
        "try:\n"
        f"    main(['ingest', '--format', 'otlp', {str(file)!r}, '--out', {str(work / 'out')!r}])\n"
        "finally:\n"
        "    status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        f"    open({str(peak)!r}, 'w').write(status)\n"
    )
    done = run_python("-c", code, env={"PYTHONUTF8": "1", "COLUMNS": "300"})
    assert_refused(
        done,
        says=[
            str(file),
            "line 1: a line of 1,073,741,826 bytes",
            "more than the limit (16,777,216 bytes: max_line_bytes)",
        ],
    )
    assert int(peak.read_text()) * 1024 < 400 * 2**20  # VmHWM is in KiB
    assert_unchanged(before, work)
    assert (file.stat().st_size, file.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    # Set aside, the line leaves the rest of the file to be read.
    result = ingest_otlp(file, skip_invalid=True)
    assert (result.runs, [reason.split(":")[0] for _, reason in result.skipped]) == (1, ["line 1"])


def _ingested(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Dataset, str, Path]:
    file = tmp_path / "traces.json"
    file.write_text(text + "\n", encoding="utf-8")
    done = run(capsys, "ingest", "--format", "otlp", file, "--out", tmp_path / "out")
    assert done.code == 0, done.err
    return Dataset.open(tmp_path / "out"), done.out, file


def test_an_infinite_score_is_set_aside_for_its_run_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = agent()
    root["events"] = [
        {
            "name": "gen_ai.evaluation.result",
            "timeUnixNano": str(START + SECOND),
            "attributes": [
                attribute("gen_ai.evaluation.name", "accuracy"),
                {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": "Infinity"}},
            ],
        }
    ]
    ds, printed, file = _ingested(line(root), tmp_path, capsys)
    assert "outcomes" not in ds.table_names
    assert (
        f"warning: {file}: 1 value(s) set aside, which no run can have (line 1: resourceSpans[0].scopeSpans[0]."
        "spans[0] ('invoke_agent solo').events[0]: field 'gen_ai.evaluation.score.value' is inf, not a finite number)"
    ) in printed.replace("\n", "")


def test_the_largest_time_otlp_holds_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = 2**64 - 1
    ds, _, _ = _ingested(line(agent(start=last - 5 * SECOND, end=last)), tmp_path, capsys)
    assert ds.collect("runs")["seconds"].to_list() == [5.0]


def test_negative_counts_and_durations_are_set_to_null_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [chat(1, gen_ai__usage__input_tokens=-3, gen_ai__usage__output_tokens=4), chat(2, end=START - SECOND)]
    ds, printed, file = _ingested(line(agent(), *calls), tmp_path, capsys)
    usage = ds.collect("usage").select("calls", "input_tokens", "output_tokens", "seconds").rows()
    assert usage == [(2, None, 4, 1.0)]
    said = printed.replace("\n", "")
    assert f"warning: {file}: field 'gen_ai.usage.input_tokens' was negative in 1 record(s) (line 1:" in said
    assert f"warning: {file}: field 'seconds' was negative in 1 record(s) (line 1:" in said


def test_odd_values_where_nothing_is_read_from_them_are_passed_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An event named by an object (no event the conventions name), a message whose parts are a number
    # and whose tool calls are text: read as what they are, never a traceback.
    root = agent()
    root["events"] = [{"name": {"not": "a name"}, "attributes": []}]
    odd = json.dumps([{"role": "assistant", "parts": 5, "tool_calls": "call_1", "content": "ok"}])
    ds, _, _ = _ingested(line(root, chat(1, gen_ai__output__messages=odd)), tmp_path, capsys)
    assert ds.collect("messages").select("role", "text").rows() == [("assistant", "ok")]
