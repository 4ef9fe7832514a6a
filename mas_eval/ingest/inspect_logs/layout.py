"""What an inspect_ai log holds, across the layouts inspect_ai has written, as inspect_ai 0.3.285 reads them.

inspect_ai's reader (``inspect_ai.log.read_eval_log``) validates a log into its pydantic models,
and on the way migrates the older layouts. This module does the same migrations on the decoded
JSON, so that every log inspect_ai reads is read here too:

- **a missing eval id** (logs before inspect_ai 0.3.43 or so, and those R's vitals writes, have
  none, or null): ``EvalSpec.model_post_init`` derives it, stable across reads, as
  ``base57_id_hash(run_id + task_id + created)``, with ``created`` first normalised to UTC by its
  ``UtcDatetimeStr`` validator (``inspect_ai._util.dateutil``). :func:`derived_eval_id` does it, so
  that run ids are the ones inspect_ai shows;
- **a single scorer's results** (``results.scorer`` and ``results.metrics``, the first layout):
  ``EvalResults.convert_scorer_to_scorers`` makes it ``results.scores = [scorer]``;
- **a sample's single ``score``**: ``EvalSample.migrate_deprecated`` makes it ``scores`` under a
  placeholder that ``EvalLog.populate_scorer_name_for_samples`` renames to the first score's name;
  a ``transcript`` field becomes ``events`` and ``attachments``;
- **format version 3** (inspect_ai 0.3.135 to 0.3.140 or so: a sample's ``message_pool`` and model
  events whose ``input`` is given by ``input_refs``): its ``.eval`` reader does not check the
  version, and nothing mapped here lives in a model event's input, so it reads as version 2;
- a missing ``version`` is 2, a missing ``status`` ``"started"`` (the models' defaults).

The JSON is decoded by :func:`decode`, which says what is wrong with bytes that are not a log's
JSON in one sentence (an integer of more than 4,300 digits, which Python refuses to convert, is
named as such).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mas_eval.ingest.recipe import InvalidInputError, json_type
from mas_eval.ingest.values import identifier, text

__all__ = [
    "FORMAT_VERSION",
    "Header",
    "Result",
    "decode",
    "derived_eval_id",
    "header_of",
    "migrate_sample",
    "system_of",
]

#: The newest log format version read. inspect_ai 0.3.285 writes version 2 and reads version 3,
#: the layout of 0.3.135 (a sample's ``message_pool``; model events' ``input_refs``); a newer one
#: may lay its samples out otherwise, so it is refused rather than misread.
FORMAT_VERSION = 3
#: The score name inspect_ai's reader gives a sample's single ``score`` when the log names no
#: score in its results (it keeps its placeholder ``88F74D2C`` there; a name is more use).
SCORE_NAME = "score"
#: The characters of a base-57 id (inspect_ai's ``ALPHABET57``, the shortuuid alphabet).
_BASE57 = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
#: The length of a derived eval id, as of a shortuuid.
_ID_LENGTH = 22
#: The fix for a log that is not as inspect_ai writes it.
_FIX = "pass a complete .eval or .json log written by inspect_ai"


def _fast_decoder() -> Any:
    """pydantic_core's ``from_json`` (jiter, in Rust), installed with inspect_ai, or None.

    It decodes a log's JSON to the same Python values as :func:`json.loads`, faster
    (docs/performance.md); what it refuses (a lone surrogate, an integer of thousands of digits) is
    decoded again by :func:`json.loads`, whose refusal :func:`decode` words, so the two differ only in speed.
    """
    try:
        from pydantic_core import from_json
    except ImportError:
        return None
    return from_json


_FAST = _fast_decoder()


def decode(data: bytes | str, what: str) -> Any:
    """Decode the JSON value of ``data``, or raise an :class:`InvalidInputError` saying why it cannot be.

    ``what`` names it in the message: ``"member samples/1_epoch_1.json"``.

    Examples
    --------
    >>> decode(b'{"a": 1}', "header.json")
    {'a': 1}
    >>> decode(b'{"tokens": ' + b"9" * 5000 + b"}", "member 1.json")
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: member 1.json holds a JSON integer of more than 4,300 digits, which Python does not convert and no count can be
    """  # noqa: E501
    if _FAST is not None:
        try:
            return _FAST(data, cache_strings="keys")
        except Exception:  # json.loads below says why, in its words
            pass
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        if exc.msg.startswith("Unterminated string") or exc.pos >= len(data.rstrip()):
            msg = f"{what} is truncated (not valid JSON: {where})"
            raise InvalidInputError(msg, fix=_FIX) from None
        msg = f"{what} is not valid JSON ({where})"
        raise InvalidInputError(msg, fix=_FIX) from None
    except UnicodeDecodeError as exc:
        msg = f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise InvalidInputError(msg, fix=_FIX) from None
    except RecursionError:
        msg = f"{what} is nested too deeply to decode"
        raise InvalidInputError(msg, fix=_FIX) from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            problem = f"{what} holds a JSON integer of more than 4,300 digits, which Python does not convert"
            problem += " and no count can be"
            raise InvalidInputError(problem, fix=_FIX) from None
        msg = f"{what} cannot be decoded ({exc})"
        raise InvalidInputError(msg, fix=_FIX) from None


def derived_eval_id(run_id: str, task_id: str, created: str) -> str:
    """Return the eval id inspect_ai's reader gives a log without one: a hash of its run id, task id and creation time.

    ``created`` is normalised as inspect_ai's ``UtcDatetimeStr`` does (a trailing ``Z`` read as
    ``+00:00``, a time without a zone taken as UTC, then written in UTC), the three joined and
    hashed with BLAKE2s (128 bits), written in base 57 and cut or padded to 22 characters
    (``inspect_ai._util.hash.base57_id_hash``).

    Examples
    --------
    >>> derived_eval_id("SwlKLUUEdLieexomb92Q9Q", "463b78ed2b6daad40dd402", "2025-04-10T21:00:06+00:00")
    'mZTKpPnKEPLV5XiPsvVBnj'
    >>> derived_eval_id("", "", "2024-10-15T12:53:13-04:00") == derived_eval_id("", "", "2024-10-15T16:53:13Z")
    True
    """
    stamp = created[:-1] + "+00:00" if created.endswith(("Z", "z")) else created
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    normal = moment.astimezone(UTC).isoformat()
    number = int.from_bytes(hashlib.blake2s((run_id + task_id + normal).encode(), digest_size=16).digest(), "big")
    digits = []
    while number:
        number, rest = divmod(number, 57)
        digits.append(_BASE57[rest])
    written = "".join(reversed(digits)) or _BASE57[0]
    return written[-_ID_LENGTH:] if len(written) > _ID_LENGTH else written.rjust(_ID_LENGTH, _BASE57[0])


@dataclass(frozen=True)
class Result:
    """One recorded aggregate of the log: a ``reported`` row without its run (``value`` or ``text``)."""

    name: str
    value: float | None = None
    text: str | None = None


@dataclass
class Header:
    """What the ingest reads from a log's header, checked and migrated.

    Attributes
    ----------
    version, status
        The log format version and the evaluation's status.
    eval_id, task, model
        The evaluation's id (derived if the log has none), task and model.
    system
        ``runs.system`` the log names (:func:`system_of`).
    roles
        Each model role's model, where the header binds it to one.
    first_score
        The name of the first score of the results (a sample's single ``score`` takes it).
    results
        The log's aggregate results, each a ``reported`` row of every run of the log.
    warnings
        What the header held that is left out, said once per log.
    error
        The first line of the evaluation's error, when it ended with one.
    """

    version: int
    status: str
    eval_id: str
    task: str
    model: str
    system: str
    roles: dict[str, str] = field(default_factory=dict)
    first_score: str | None = None
    results: list[Result] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def _field(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict):
        msg = f"field {where!r} is {json_type(mapping)}, not an object"
        raise InvalidInputError(msg, fix=_FIX)
    return mapping.get(key)


def header_of(doc: Any) -> Header:
    """Return the checked header of a log (``doc``: ``header.json``, the start record, or a ``.json`` log).

    Raises :class:`InvalidInputError` for a header inspect_ai cannot read (no ``eval``, a task,
    model or creation time that is not text, a version newer than :data:`FORMAT_VERSION`).
    """
    if not isinstance(doc, dict):
        msg = f"the log is {json_type(doc)}, not a JSON object"
        raise InvalidInputError(msg, fix=_FIX)
    version = doc.get("version", 2)
    if not isinstance(version, int) or isinstance(version, bool):
        msg = f"its log format version is {version!r}, not a number"
        raise InvalidInputError(msg, fix=_FIX)
    if version > FORMAT_VERSION:
        problem = (
            f"its log format version is {version}, newer than the {FORMAT_VERSION} this reader knows "
            "(inspect_ai 0.3.285 writes 2 and reads 3)"
        )
        raise InvalidInputError(problem, fix="upgrade mas_eval to read it")
    spec = doc.get("eval")
    if not isinstance(spec, dict):
        msg = f"it has no 'eval' object (it is {json_type(spec)}): not an inspect_ai log"
        raise InvalidInputError(msg, fix=_FIX)
    status = doc.get("status", "started")
    if not isinstance(status, str):
        msg = f"field 'status' is {json_type(status)}, not text"
        raise InvalidInputError(msg, fix=_FIX)
    task = _required_text(spec, "task")
    model = _required_text(spec, "model")
    given = spec.get("eval_id")
    eval_id = _derived(spec) if given is None or given == "" else identifier(given, "eval.eval_id")
    error = doc.get("error")
    said = None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        lines = error["message"].strip().splitlines()
        said = text(lines[0][:200], "error.message") if lines else None
    header = Header(version, status, eval_id, task, model, system_of(doc), roles=_roles(spec), error=said)
    _results(doc.get("results"), header)
    return header


def _required_text(spec: dict[str, Any], key: str) -> str:
    value = spec.get(key)
    if value is None:
        msg = f"field 'eval.{key}' is missing: not an inspect_ai log"
        raise InvalidInputError(msg, fix=_FIX)
    return text(value, f"eval.{key}") or ""


def _derived(spec: dict[str, Any]) -> str:
    """Return the eval id inspect_ai derives; its creation time must be an ISO 8601 time, as its reader requires."""
    created = spec.get("created")
    run_id, task_id = spec.get("run_id") or "", spec.get("task_id") or ""
    for key, value in (("created", created), ("run_id", run_id), ("task_id", task_id)):
        text(value, f"eval.{key}")
    if not isinstance(created, str):
        problem = "it has no eval id and no 'eval.created' time to derive one from (inspect_ai's reader requires it)"
        raise InvalidInputError(problem, fix=_FIX)
    try:
        return derived_eval_id(run_id, task_id, created)
    except ValueError:
        problem = f"field 'eval.created' is {created[:40]!r}, not an ISO 8601 time (inspect_ai's reader requires one)"
        raise InvalidInputError(problem, fix=_FIX) from None


def _roles(spec: dict[str, Any]) -> dict[str, str]:
    """Bind each model role to one model: its model's name (a role bound to a list of fallbacks names none)."""
    bound = spec.get("model_roles")
    if not isinstance(bound, dict):
        return {}
    roles = {}
    for role, config in bound.items():
        model = config.get("model") if isinstance(config, dict) else None
        if isinstance(model, str):
            roles[role] = model
    return roles


def system_of(header: dict[str, Any]) -> str:
    """Return ``runs.system`` of a log's samples: its model, solver (and the solver's arguments) and task arguments.

    Examples
    --------
    >>> system_of({"eval": {"model": "openai/gpt-4o", "solver": None, "task_args": {"agents": 3}},
    ...            "plan": {"steps": [{"solver": "debate"}]}})
    'openai/gpt-4o debate (agents=3)'
    """
    spec = header["eval"]
    solver = spec.get("solver")
    if not isinstance(solver, str) or not solver:
        plan = header.get("plan")
        steps = plan.get("steps") if isinstance(plan, dict) else None
        names = [step.get("solver") for step in steps or [] if isinstance(step, dict)]
        solver = "+".join(name for name in names if isinstance(name, str))
    solver_args = spec.get("solver_args")
    if solver_args and isinstance(solver_args, dict):
        solver += "(" + ", ".join(f"{k}={_shown(v)}" for k, v in sorted(solver_args.items())) + ")"
    words = [str(spec["model"]), solver] if solver else [str(spec["model"])]
    task_args = spec.get("task_args")
    if task_args and isinstance(task_args, dict):
        words.append("(" + ", ".join(f"{k}={_shown(v)}" for k, v in sorted(task_args.items())) + ")")
    return text(" ".join(words), "system") or ""


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, default=str, allow_nan=False)
    except ValueError:
        return str(value)


def _results(results: Any, header: Header) -> None:
    """Read the log's aggregate results into ``header.results``: each score's metrics, reducer and counts, the totals.

    A dict-valued scorer's results are named by key (``<scorer>/<key>/<metric>``), as its
    outcomes are named ``<scorer>/<key>``; a score reduced several ways (``Epochs(5, ["mean",
    "pass_at_2"])``) is one entry per reducer, named ``<score> [<reducer>]`` but for the first.
    """
    if results is None:
        return
    if not isinstance(results, dict):
        msg = f"field 'results' is {json_type(results)}, not an object"
        raise InvalidInputError(msg, fix=_FIX)
    scores = results.get("scores")
    if "scorer" in results and not scores:
        # The first layout: one scorer, its metrics beside it (EvalResults.convert_scorer_to_scorers).
        scorer = results.get("scorer")
        scores = [{**scorer, "scorer": scorer.get("name"), "metrics": results.get("metrics")}] if scorer else []
    rows = header.results
    for name in ("total_samples", "completed_samples"):
        if name in results:
            rows.append(Result(name, _count(results[name], f"results.{name}")))
    seen: dict[str, int] = {}
    for entry in scores or []:
        if not isinstance(entry, dict):
            msg = f"an entry of 'results.scores' is {json_type(entry)}, not an object"
            raise InvalidInputError(msg, fix=_FIX)
        name = text(entry.get("name"), "results.scores[].name") or ""
        scorer = text(entry.get("scorer"), "results.scores[].scorer") or name
        if header.first_score is None:
            header.first_score = name
        outcome = name if name == scorer or not scorer else f"{scorer}/{name}"
        reducer = entry.get("reducer")
        seen[outcome] = seen.get(outcome, 0) + 1
        label = outcome if seen[outcome] == 1 else f"{outcome} [{reducer}]"
        _score_results(entry, label, header)


def _score_results(entry: dict[str, Any], label: str, header: Header) -> None:
    """Add one score's results to ``header.results`` under ``label``: its metrics, counts and reducer."""
    rows = header.results
    metrics = entry.get("metrics") or {}
    if isinstance(metrics, list):  # an early layout: a list of named metrics
        metrics = {m.get("name"): m for m in metrics if isinstance(m, dict)}
    for key, metric in metrics.items():
        value = metric.get("value") if isinstance(metric, dict) else None
        number = _metric_value(value)
        if number is None:
            header.warnings.append(f"results: {label}/{key} is {value!r}, not a finite number; not kept")
            continue
        rows.append(Result(f"{label}/{key}", number))
    for count in ("scored_samples", "unscored_samples"):
        if entry.get(count) is not None:
            rows.append(Result(f"{label}/{count}", _count(entry[count], f"results.scores[].{count}")))
    reducer = entry.get("reducer")
    if isinstance(reducer, str):
        rows.append(Result(f"{label}/reducer", text=text(reducer, "results.scores[].reducer")))


def _metric_value(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _count(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"field {where!r} is {str(value)[:40]}, not a count"
        raise InvalidInputError(msg, fix=_FIX)
    return float(value)


def migrate_sample(sample: dict[str, Any], first_score: str | None) -> None:
    """Migrate a sample of an older layout, in place, as inspect_ai's reader does.

    A single ``score`` becomes ``scores`` under the log's first score name, a ``transcript`` becomes
    ``events`` and ``attachments``.
    """
    if "score" in sample:
        if "scores" in sample:
            problem = "has both 'score' and 'scores' (inspect_ai's reader refuses such a sample)"
            raise InvalidInputError(problem, fix=_FIX, skip="skip such samples")
        sample["scores"] = {first_score or SCORE_NAME: sample.pop("score")}
    transcript = sample.pop("transcript", None)
    if isinstance(transcript, dict):
        sample.setdefault("events", transcript.get("events") or [])
        sample.setdefault("attachments", transcript.get("content") or {})
