"""Read Local-DDx result files (``ddx_results_*.json``) into a Dataset.

Local-DDx (Baglecake/Local-DDx, MIT-licensed) writes one JSON file per diagnostic run: the
evaluator's counts and labels, Dr. Reed's credibility scores, the rounds' TempoScores, and the
full transcript of the seven rounds. :func:`ingest_lddx` makes each file one run of the
Dataset's tables, and keeps what the file itself computed in the ``reported`` table, so that a
reproduction of its numbers can be checked against them.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import validate_params
from mas_eval.data.schema import TABLES
from mas_eval.data.vocabulary import (
    CANT_MISS,
    DEBATE,
    FINAL_ROUND,
    INDEPENDENT,
    MAS,
    MASTER_LIST,
    ROUNDS,
    SYMPTOM_MANAGEMENT,
    TEAM,
    VOTING,
)
from mas_eval.ingest.logs import LogIngestResult
from mas_eval.ingest.recipe import (
    LOG_PARAMETERS,
    Ingest,
    InvalidInputError,
    LogFormat,
    Paths,
    ingest_logs,
    json_type,
    read_json,
)

__all__ = [
    "EVALUATION_FIELDS",
    "FORMAT",
    "PATTERN",
    "SYSTEM",
    "LddxIngestResult",
    "ingest_lddx",
]

#: The files a folder argument stands for.
PATTERN = "ddx_results_*.json"
#: ``runs.system`` of every Local-DDx run, unless another is named.
SYSTEM = MAS
#: Local-DDx's files, for the recipe of every log adapter.
FORMAT = LogFormat(
    name="Local-DDx",
    files=f"Local-DDx {PATTERN} files",
    prefix="ddx_results_",
    suffixes=(".json",),
    in_folder=f"no {PATTERN} files",
    record="Local-DDx result",
)
#: Rounds a file must have: without the independent differentials there is no diagnosis to score.
REQUIRED_ROUNDS = (INDEPENDENT,)

#: The evaluator's results a file is expected to hold (``reported``, source "evaluation"); a missing one: a warning.
EVALUATION_FIELDS = (
    "tp_count", "fp_count", "fn_count", "caa_count", "ae_count", "total_gt_diagnoses", "total_team_diagnoses",
    "tp_rate", "caa_weight_applied", "traditional_precision", "traditional_recall", "clinical_reasoning_quality",
    "diagnostic_safety",
)  # fmt: skip
#: ``reported`` label names, and the top-level lists that hold them.
LABELS = {"TP": "true_positives", "FP": "false_positives", "FN": "false_negatives"}
#: ``ddx.stance`` of a debate refinement by its recorded stance; NEUTRAL and DEFER take no side (null).
REFINEMENT_STANCES: dict[str, str | None] = {
    "SUPPORT": "proposed",
    "CHALLENGE": "excluded",
    "NEUTRAL": None,
    "DEFER": None,
}

#: Top-level fields mapped on their own; every other scalar there goes to ``reported`` as "evaluation".
_TOP_MAPPED = frozenset(
    {
        "case_id", "final_diagnoses", "ground_truth_diagnoses", "credibility_scores", "specialist_performance",
        "round_completion", "full_transcript", *LABELS.values(),
    }
)  # fmt: skip
#: Round metadata read by the round's own mapping (the rest is recorded generically); ``ranked_results``
#: and ``all_diagnoses`` are left out as copies (of ``borda_scores`` sorted; of the agents' lists joined).
_ROUND_LISTS = {
    INDEPENDENT: ("diagnoses_by_agent", "all_diagnoses"),
    MASTER_LIST: ("master_diagnoses",),
    DEBATE: ("all_refinements",),
    VOTING: ("all_rankings", "ranked_results"),
    CANT_MISS: ("critical_diagnoses",),
    SYMPTOM_MANAGEMENT: ("interventions",),
}
#: Round fields not recorded: read elsewhere, or copies (``round_type`` is the key, ``formatted_output``
#: the single response or empty).
_ROUND_SKIPPED = frozenset({"responses", "metadata", "round_type", "formatted_output"})
#: A refinement's fields that are mapped to ``ddx`` or are copies of a message (v6 ``content``).
_REFINEMENT_MAPPED = frozenset({"agent", "diagnosis", "reasoning", "recommendation", "content"})

#: A debate response of Local-DDx v8 is keyed ``<agent>_round<n>`` (its three sub-rounds).
_SUB_ROUND = re.compile(r"(?P<agent>.+)_round\d+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A list line's enumeration: "1.", "2)", "9-18.", "-", "*".
_ENUMERATION = re.compile(r"\s*(?:\d+(?:\s*-\s*\d+)?\s*[.)]|[-*•])\s*")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
#: Where a list line's diagnosis ends: a spaced dash or a colon ("AKI - 85% - ...", "AKI: because ...").
_HEAD_END = re.compile(r"\s+[-–—]\s+|:\s|:$")
#: Markup around a whole diagnosis that Local-DDx v8.6's list parser leaves: ``**AKI**``, ``[AKI]``.
_WRAPPED = re.compile(r"\*\*(?P<bold>[^*]+)\*\*|\[(?P<bracketed>[^\[\]]+)\]")

_KINDS: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,)}
_ARTICLE = {"object": "an object", "array": "an array", "string": "a string"}


# -- results ----------------------------------------------------------------------------------


#: What :func:`ingest_lddx` read and wrote (the result every log adapter returns).
LddxIngestResult = LogIngestResult


# -- JSON helpers -----------------------------------------------------------------------------


def _child(path: str, key: str | int) -> str:
    """Return the JSON path of ``path``'s member ``key``: ``$.a.b``, ``$.a["Dr. X"]``, ``$.a[0]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float)


def _diagnosis_of_line(line: str) -> str:
    """Return the diagnosis a list line starts with: ``"2. **AKI: [15%]** - because"`` gives ``"AKI"``.

    Notes
    -----
    Local-DDx v6 records debate refinements and master-list items as whole lines. Its own
    parser takes the text before the first `` - `` after the enumeration; a colon ends the
    diagnosis too here, and a leading bold span is taken as the diagnosis.

    >>> _diagnosis_of_line("1. Acute Kidney Injury (AKI) - 85% - decreased urinary output")
    'Acute Kidney Injury (AKI)'
    >>> _diagnosis_of_line("2. Meconium ileus: Although less likely, ...")
    'Meconium ileus'
    >>> _diagnosis_of_line("3. **Diabetic peripheral neuropathy: [15%]** - long-standing diabetes")
    'Diabetic peripheral neuropathy'
    >>> _diagnosis_of_line("6. Drug-induced vasculitis")
    'Drug-induced vasculitis'
    """
    text = _ENUMERATION.sub("", line, count=1).strip()
    bold = _BOLD.match(text)
    if bold:
        text = bold.group(1)
    return _HEAD_END.split(text, maxsplit=1)[0].strip(" *[]:\t")


def _unwrapped(diagnosis: str) -> str:
    """Strip the list markup around the whole of a diagnosis: ``**AKI**`` and ``[AKI]`` give ``AKI``.

    >>> _unwrapped("**Acute Myocardial Infarction (AMI)**"), _unwrapped("[Neonatal Sepsis]"), _unwrapped("Gout")
    ('Acute Myocardial Infarction (AMI)', 'Neonatal Sepsis', 'Gout')
    """
    text = diagnosis.strip()
    wrapped = _WRAPPED.fullmatch(text)
    return (wrapped["bold"] or wrapped["bracketed"]).strip() if wrapped else text


def _named_items(recorded: list[Any]) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Return the items of a round's ``all_diagnoses`` that name their ``agent`` (v8.6), by agent, with positions."""
    named: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, item in enumerate(recorded):
        if isinstance(item, dict) and isinstance(item.get("agent"), str):
            named.setdefault(item["agent"], []).append((i, item))
    return named


def _evidence(value: Any) -> list[str]:
    """Evidence items: a list's strings, or a lone string as one item."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


# -- one file ---------------------------------------------------------------------------------


@dataclass
class _Ddx:
    """One ``ddx`` row being built: repeats of a diagnosis in one agent's list of a round are merged."""

    stance: str | None
    rank: int
    mentions: int | None
    evidence: list[str] | None


#: The tables a Local-DDx file gives rows to, in the schema's order.
_TABLES = tuple(
    t for t in TABLES if t in {"runs", "agents", "ddx", "ground_truth", "messages", "interventions", "reported"}
)


class _Run:
    """The rows of one file, and its warnings."""

    def __init__(self, file: Path, system: str) -> None:
        self.file, self.system = file, system
        self.run_id = file.name.removesuffix(".json")
        self.warnings: list[str] = []
        self.columns: dict[str, dict[str, list[Any]]] = {t: {c: [] for c in TABLES[t].names} for t in _TABLES}
        self.truth: frozenset[str] = frozenset()
        self.case_id = ""
        self._agents: dict[str, str | None] = {}
        self._agent_counts: Counter[str] = Counter()
        self._ddx: dict[tuple[str, str, str], _Ddx] = {}
        self._repeats: Counter[str] = Counter()
        self._reported: set[tuple[str, str, int]] = set()

    # -- checks and records --

    def warn(self, where: str, problem: str) -> None:
        self.warnings.append(f"{self.file}: {where}: {problem}")

    def need(self, obj: dict[str, Any], key: str, path: str, kind: str) -> Any:
        """Return ``obj[key]``, which must be there and of ``kind``: else the file is invalid."""
        where = _child(path, key)
        if obj.get(key) is None:
            others = [k for k in obj if k != key]
            hint = difflib.get_close_matches(key, others, n=1, cutoff=0.75)
            found = f"null, expected {_ARTICLE[kind]}" if key in obj else "missing"
            raise InvalidInputError(
                where=where, problem=found + (f" (the file has {hint[0]!r}: misspelt?)" if hint else "")
            )
        value = obj[key]
        if not isinstance(value, _KINDS[kind]):
            raise InvalidInputError(where=where, problem=f"expected {_ARTICLE[kind]}, got {json_type(value)}")
        return value

    def want(self, obj: dict[str, Any], key: str, path: str, kind: str, skipped: str) -> Any:
        """Return ``obj[key]`` if it is there and of ``kind``; else None, with a warning saying what is ``skipped``."""
        where = _child(path, key)
        if key not in obj:
            self.warn(where, f"missing; {skipped}")
            return None
        value = obj[key]
        if not isinstance(value, _KINDS[kind]):
            self.warn(where, f"expected {_ARTICLE[kind]}, got {json_type(value)}; {skipped}")
            return None
        return value

    def row(self, table: str, **values: Any) -> None:
        columns = self.columns[table]
        for name, column in columns.items():
            column.append(values.get(name))

    def agent(self, name: str, where: str) -> str:
        """Return ``name`` as an agent of the run: one the transcript does not list is added, with a warning."""
        if name not in self._agents:
            self._agents[name] = None
            self.warn(where, f"{name!r} is not in $.full_transcript.agents; added as an agent without a role")
        return name

    def speaker(self, key: str, where: str) -> str:
        """Return the agent a response key names: the key, or ``<agent>`` of a v8 debate key ``<agent>_round<n>``."""
        if key not in self._agents:
            sub_round = _SUB_ROUND.fullmatch(key)
            if sub_round and sub_round["agent"] in self._agents:
                return sub_round["agent"]
        return self.agent(key, where)

    def report(self, source: str, name: str, item: int, value: Any, where: str) -> None:
        """Add one ``reported`` row: a number in ``value`` (a boolean as 1.0 / 0.0), a string in ``text``."""
        number: float | None = None
        text: str | None = None
        if isinstance(value, bool):
            number, text = float(value), json.dumps(value)
        elif isinstance(value, int | float):
            try:
                number = float(value)
            except OverflowError:  # an integer beyond the range of a float
                number = math.inf
            if not math.isfinite(number):
                number, text = None, str(value)
                self.warn(where, f"{text} is not a finite number; recorded as text")
        elif isinstance(value, str):
            text = value
        key = (source, name, item)
        if key in self._reported:
            self.warn(where, f"recorded twice as (source={source!r}, name={name!r}, item={item}); the first is kept")
            return
        self._reported.add(key)
        self.row("reported", run_id=self.run_id, source=source, name=name, item=item, value=number, text=text)

    def record(self, source: str, obj: dict[str, Any], path: str, skip: Collection[str] = ()) -> None:
        """Record every scalar of ``obj`` in ``reported``, generically.

        A scalar is ``(source, key, 0)``; an array of scalars gives ``(source, key, i)`` for its
        items (1-based); an object is recorded the same way as source ``source.key``; an array
        of objects gives ``(source.key, field, i)`` for each scalar field of item ``i``.
        Anything else (an array of arrays) is not mapped, with a warning.
        """
        for key, value in obj.items():
            if key in skip:
                continue
            where = _child(path, key)
            if _is_scalar(value):
                self.report(source, key, 0, value, where)
            elif isinstance(value, list) and all(_is_scalar(v) for v in value):
                for i, item in enumerate(value, start=1):
                    self.report(source, key, i, item, _child(where, i - 1))
            elif isinstance(value, dict):
                self.record(f"{source}.{key}", value, where)
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                self.record_items(f"{source}.{key}", value, where)
            else:
                self.warn(where, f"{json_type(value)} of a shape this adapter does not read; not mapped")

    def record_items(self, source: str, items: list[Any], path: str, skip: Collection[str] = ()) -> None:
        """Report ``(source, field, i)`` for each scalar field of each object item ``i`` (1-based) of ``items``."""
        for i, item in enumerate(items, start=1):
            if isinstance(item, dict):
                for field, value in item.items():
                    if field not in skip and _is_scalar(value):
                        self.report(source, field, i, value, _child(_child(path, i - 1), field))

    def ddx(
        self,
        round_: str,
        agent: str,
        diagnosis: Any,
        where: str,
        *,
        stance: str | None,
        rank: int,
        evidence: list[str] | None = None,
        mentions: int | None = 1,
    ) -> None:
        """Add one diagnosis of ``agent``'s list in ``round_``; a repeat adds its mentions and evidence to the first."""
        if not isinstance(diagnosis, str) or not diagnosis.strip():
            self.warn(where, f"no diagnosis ({json_type(diagnosis)} {diagnosis!r}); skipped")
            return
        key = (round_, agent, diagnosis)
        known = self._ddx.get(key)
        if known is None:
            self._ddx[key] = _Ddx(stance, rank, mentions, None if evidence is None else list(evidence))
            return
        self._repeats[round_] += 1
        known.mentions = None if known.mentions is None or mentions is None else known.mentions + mentions
        if evidence:
            known.evidence = [*(known.evidence or []), *evidence]

    # -- the file --

    def read(self) -> _Run:
        doc = read_json(self.file, what="a Local-DDx result")
        if not isinstance(doc, dict):
            raise InvalidInputError(where="$", problem=f"expected an object (a Local-DDx result), got {json_type(doc)}")
        if "case_id" not in doc and "error" in doc:
            raise InvalidInputError(where="$", problem=f"holds no results: Local-DDx wrote {doc['error']!r} instead")
        self.case_id = self.need(doc, "case_id", "$", "string")
        transcript = self.need(doc, "full_transcript", "$", "object")
        if "rounds" not in transcript and ("note" in transcript or "error" in transcript):
            said = transcript.get("note", transcript.get("error"))
            raise InvalidInputError(
                where="$.full_transcript", problem=f"holds no transcript: Local-DDx wrote {said!r} instead"
            )
        self._read_agents(self.need(transcript, "agents", "$.full_transcript", "array"))
        rounds = self.need(transcript, "rounds", "$.full_transcript", "object")
        for name in REQUIRED_ROUNDS:
            self.need(rounds, name, "$.full_transcript.rounds", "object")
        final = self.need(doc, "final_diagnoses", "$", "array")
        truth = self.need(doc, "ground_truth_diagnoses", "$", "array")

        seconds = None
        sequence = self.want(transcript, "sequence_metadata", "$.full_transcript", "object", "runs.seconds is null")
        if sequence is not None:
            seconds = sequence.get("total_execution_time")
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < math.inf:
                where = "$.full_transcript.sequence_metadata.total_execution_time"
                self.warn(where, f"{seconds!r} is not a number of seconds; runs.seconds is null")
                seconds = None
            self.record("sequence_metadata", sequence, "$.full_transcript.sequence_metadata")
        self.row("runs", run_id=self.run_id, system=self.system, case_id=self.case_id, seconds=seconds)
        self.record("transcript", transcript, "$.full_transcript", skip=("agents", "rounds", "sequence_metadata"))

        for name, rnd in rounds.items():
            self._read_round(name, rnd, _child("$.full_transcript.rounds", name))
        for name in ROUNDS:
            if name not in rounds:
                self.warn(_child("$.full_transcript.rounds", name), "missing; the round's rows are skipped")

        for rank, diagnosis in enumerate(final, start=1):
            self.ddx(FINAL_ROUND, TEAM, diagnosis, f"$.final_diagnoses[{rank - 1}]", stance="final", rank=rank)
        self._read_truth(truth)
        self._read_evaluation(doc)
        self._finish()
        return self

    def _read_agents(self, agents: list[Any]) -> None:
        path = "$.full_transcript.agents"
        roles: dict[str, list[str | None]] = {}
        for i, agent in enumerate(agents):
            where = _child(path, i)
            if not isinstance(agent, dict):
                raise InvalidInputError(where=where, problem=f"expected an object (an agent), got {json_type(agent)}")
            name = self.need(agent, "name", where, "string")
            role = agent.get("specialty")
            if not isinstance(role, str):
                self.warn(_child(where, "specialty"), f"expected a string, got {json_type(role)}; the role is null")
                role = None
            roles.setdefault(name, []).append(role)
            self._agent_counts[name] += 1
            # The file keys responses and scores by name, so of agents sharing a name the last one's survive.
            self._agents[name] = role
        for name, given in roles.items():
            if len(given) > 1:
                self.warn(
                    path,
                    f"{len(given)} agents are named {name!r} ({', '.join(map(str, given))}); the file keys responses "
                    f"by name, so they are one agent here, with the last one's role",
                )
        self.record_items("agents", agents, path)

    def _read_round(self, name: str, rnd: Any, path: str) -> None:
        if not isinstance(rnd, dict):
            raise InvalidInputError(where=path, problem=f"expected an object (a round), got {json_type(rnd)}")
        if name not in ROUNDS:
            self.warn(path, "not a Local-DDx round this adapter knows; only its responses and scalars are read")
        responses = self.need(rnd, "responses", path, "object")
        where = _child(path, "responses")
        if not responses:
            raise InvalidInputError(where=where, problem="the round has no responses")
        if rnd.get("success") is False:
            self.warn(path, f"the round failed (success: false, error: {rnd.get('error')!r}); its rows may be partial")
        speakers = self._read_responses(name, responses, where)
        self.record(name, rnd, path, skip=_ROUND_SKIPPED)
        self._read_metadata(name, rnd, path, responses, speakers)

    def _read_responses(self, name: str, responses: dict[str, Any], where: str) -> dict[str, str]:
        """Add a message per response of round ``name`` and report its scalars; return each key's speaker."""
        speakers = {}
        for turn, (key, response) in enumerate(responses.items(), start=1):
            at = _child(where, key)
            if not isinstance(response, dict):
                raise InvalidInputError(where=at, problem=f"expected an object (a response), got {json_type(response)}")
            text = self.need(response, "content", at, "string")
            speakers[key] = self.speaker(key, at)
            self.row("messages", run_id=self.run_id, round=name, agent_id=speakers[key], turn=turn, text=text)
            for field, value in response.items():
                if field in ("content", "structured_data"):
                    continue
                if _is_scalar(value):
                    self.report(f"{name}.responses", field, turn, value, _child(at, field))
                else:
                    self.warn(
                        _child(at, field), f"{json_type(value)} of a shape this adapter does not read; not mapped"
                    )
        return speakers

    def _read_metadata(
        self, name: str, rnd: dict[str, Any], path: str, responses: dict[str, Any], speakers: dict[str, str]
    ) -> None:
        """Read round ``name``'s metadata: its scalars, then the lists of its own kind of round."""
        lists = _ROUND_LISTS.get(name, ())
        meta = _child(path, "metadata")
        metadata = rnd.get("metadata")
        if not isinstance(metadata, dict):
            found = "missing" if "metadata" not in rnd else f"expected an object, got {json_type(metadata)}"
            self.warn(meta, f"{found}; the round's metadata is not mapped")
            metadata = {}
        self.record(name, metadata, meta, skip=lists)
        if name == INDEPENDENT:
            self._read_independent(responses, speakers, metadata, meta)
        elif name == MASTER_LIST:
            self._read_master_list(metadata, meta)
        elif name == DEBATE:
            self._read_debate(responses, speakers, metadata, meta)
        elif name == VOTING:
            self._read_votes(metadata, meta)
        elif name == CANT_MISS:
            self._read_cant_miss(responses, speakers, metadata, meta)
        elif name == SYMPTOM_MANAGEMENT:
            self._read_interventions(metadata, meta)

    def _read_independent(
        self, responses: dict[str, Any], speakers: dict[str, str], metadata: dict[str, Any], meta: str
    ) -> None:
        """Read each agent's differential, from the first source that has it.

        The sources, in order: its response's ``structured_data`` (v8.5), its
        ``metadata.diagnoses_by_agent`` entry (v6), the ``metadata.all_diagnoses`` items naming it (v8.6).

        That is the order in which Local-DDx itself fills ``metadata.all_diagnoses`` (the list its
        later rounds and its TempoScore read): the structured data, else the diagnoses parsed from
        the text. v8.6 files keep the parsed ones only there, each item naming its ``agent``.
        """
        by_agent = metadata.get("diagnoses_by_agent")
        if not isinstance(by_agent, dict):
            by_agent = {}
        recorded = metadata.get("all_diagnoses")
        named = _named_items(recorded) if isinstance(recorded, list) else {}
        responses_at = meta.removesuffix(".metadata") + ".responses"
        taken = 0
        silent: list[str] = []
        for key, response in responses.items():
            agent = speakers[key]
            structured = response.get("structured_data")
            if isinstance(structured, dict) and structured:
                at = _child(_child(responses_at, key), "structured_data")
                for rank, (diagnosis, evidence) in enumerate(structured.items(), start=1):
                    self.ddx(
                        INDEPENDENT,
                        agent,
                        diagnosis,
                        _child(at, diagnosis),
                        stance="proposed",
                        rank=rank,
                        evidence=_evidence(evidence),
                    )
                taken += len(structured)
                continue
            items = by_agent.get(key)
            at = _child(_child(meta, "diagnoses_by_agent"), key)
            if not isinstance(items, list):
                if key in named:
                    taken += self._read_parsed(agent, named.pop(key), _child(meta, "all_diagnoses"))
                else:
                    silent.append(key)
                continue
            for rank, item in enumerate(items, start=1):
                item_at = _child(at, rank - 1)
                if not isinstance(item, dict):
                    self.warn(item_at, f"expected an object, got {json_type(item)}; skipped")
                    continue
                # No evidence list: the item's free-text reasoning is in the agent's message. A null
                # `evidence` says the agent gave no structured differential, which is what decides
                # how its credibility is scored (the LDDx v6 metrics guide, "Dr. Reed's Assessment").
                self.ddx(
                    INDEPENDENT,
                    agent,
                    item.get("diagnosis"),
                    _child(item_at, "diagnosis"),
                    stance="proposed",
                    rank=rank,
                    evidence=None,
                )
            taken += len(items)
        if silent:
            self.warn(
                meta,
                f"{len(silent)} agent(s) give no differential the file records (no structured_data, no "
                f"diagnoses_by_agent entry, no all_diagnoses item naming them): {', '.join(map(repr, silent))}; "
                "they have no rows in this round",
            )
        if isinstance(recorded, list) and len(recorded) != taken:
            self._attribute_unheard(recorded, meta, taken)

    def _read_parsed(self, agent: str, items: list[tuple[int, dict[str, Any]]], at: str) -> int:
        """Read one agent's ``all_diagnoses`` items (v8.6: what Local-DDx parsed from the response's text).

        ``rank`` is the item's place among the agent's; the diagnosis is unwrapped from the list
        markup Local-DDx's parser left around it (``**Pneumothorax**``, ``[Endometriosis]``);
        ``evidence`` is null, as for ``diagnoses_by_agent``: the reasoning is free text, in the message.
        """
        for rank, (i, item) in enumerate(items, start=1):
            diagnosis = item.get("diagnosis")
            if isinstance(diagnosis, str):
                diagnosis = _unwrapped(diagnosis)
            self.ddx(
                INDEPENDENT,
                agent,
                diagnosis,
                _child(_child(at, i), "diagnosis"),
                stance="proposed",
                rank=rank,
                evidence=None,
            )
        return len(items)

    def _attribute_unheard(self, recorded: list[Any], meta: str, taken: int) -> None:
        """Map the diagnoses the round's ``all_diagnoses`` lists but no response gives.

        They are those of an agent whose name another agent shares (the file keys responses by name, so
        one of them has no response).

        With exactly one shared name, the leftover items (the recorded list less the responses'
        diagnoses, as multisets) are that name's; otherwise they cannot be attributed and are
        not mapped. Either way a warning says so. Their ``evidence`` is null: no response of the
        agent survives in the file to carry it, and Local-DDx scores the name's credibility from
        the response it kept alone.
        """
        at = _child(meta, "all_diagnoses")
        shared = [name for name, count in self._agent_counts.items() if count > 1]
        heard = Counter(diagnosis for (round_, _, diagnosis), row in self._ddx.items() if round_ == INDEPENDENT
                        for _ in range(row.mentions or 1))  # fmt: skip
        listed = [item.get("diagnosis") for item in recorded if isinstance(item, dict)]
        leftover = list((Counter(d for d in listed if isinstance(d, str)) - heard).elements())
        if len(shared) != 1 or not leftover or len(leftover) != len(recorded) - taken:
            self.warn(
                at,
                f"lists {len(recorded)} diagnoses, the agents' responses give {taken} (agents sharing a name?); "
                "the difference is not mapped",
            )
            return
        (name,) = shared
        start = 1 + sum(1 for (round_, agent, _) in self._ddx if round_ == INDEPENDENT and agent == name)
        for rank, diagnosis in enumerate(leftover, start=start):
            self.ddx(INDEPENDENT, name, diagnosis, at, stance="proposed", rank=rank, evidence=None)
        self.warn(
            at,
            f"lists {len(leftover)} diagnoses no response gives; two agents are named {name!r}, so they are "
            f"taken as the other {name}'s and added to that name's differential",
        )

    def _read_master_list(self, metadata: dict[str, Any], meta: str) -> None:
        lines = self.want(metadata, "master_diagnoses", meta, "array", "no master-list rows")
        for rank, line in enumerate(lines or [], start=1):
            at = _child(_child(meta, "master_diagnoses"), rank - 1)
            if not isinstance(line, str):
                self.warn(at, f"expected a string, got {json_type(line)}; skipped")
                continue
            self.ddx(MASTER_LIST, TEAM, _diagnosis_of_line(line), at, stance="proposed", rank=rank, evidence=[line])

    def _read_debate(
        self, responses: dict[str, Any], speakers: dict[str, str], metadata: dict[str, Any], meta: str
    ) -> None:
        """Read the refinements: v8 names each one's agent and diagnosis; v6 gives the whole response and a line."""
        refinements = self.want(metadata, "all_refinements", meta, "array", "no debate rows")
        if refinements is None:
            return
        at = _child(meta, "all_refinements")
        by_content = {r.get("content"): speakers[k] for k, r in responses.items()}
        ranks: Counter[str] = Counter()
        for i, refinement in enumerate(refinements):
            item_at = _child(at, i)
            if not isinstance(refinement, dict):
                self.warn(item_at, f"expected an object, got {json_type(refinement)}; skipped")
                continue
            if isinstance(refinement.get("agent"), str):
                agent = self.speaker(refinement["agent"], _child(item_at, "agent"))
            elif refinement.get("content") in by_content:
                agent = by_content[refinement["content"]]
            else:
                self.warn(item_at, "names no agent, and its content is no agent's response; skipped")
                continue
            recommendation = refinement.get("recommendation")
            diagnosis = refinement.get("diagnosis")
            if diagnosis is None and isinstance(recommendation, str):
                diagnosis = _diagnosis_of_line(recommendation)
            reasoning = refinement.get("reasoning")
            evidence = _evidence(reasoning if isinstance(reasoning, str) else recommendation)
            stance: str | None = "proposed"
            recorded = refinement.get("stance")
            if isinstance(recorded, str):
                if recorded.upper() not in REFINEMENT_STANCES:
                    self.warn(_child(item_at, "stance"), f"{recorded!r} is not a stance this adapter knows; null")
                stance = REFINEMENT_STANCES.get(recorded.upper())
            ranks[agent] += 1
            self.ddx(DEBATE, agent, diagnosis, item_at, stance=stance, rank=ranks[agent], evidence=evidence)
        self.record_items(f"{DEBATE}.all_refinements", refinements, at, skip=_REFINEMENT_MAPPED)

    def _read_votes(self, metadata: dict[str, Any], meta: str) -> None:
        rankings = self.want(metadata, "all_rankings", meta, "object", "no vote rows")
        for voter, ranking in (rankings or {}).items():
            at = _child(_child(meta, "all_rankings"), voter)
            if not isinstance(ranking, list):
                self.warn(at, f"expected an array, got {json_type(ranking)}; skipped")
                continue
            agent = self.speaker(voter, at)
            for rank, diagnosis in enumerate(ranking, start=1):
                self.ddx(VOTING, agent, diagnosis, _child(at, rank - 1), stance="proposed", rank=rank)

    def _read_cant_miss(
        self, responses: dict[str, Any], speakers: dict[str, str], metadata: dict[str, Any], meta: str
    ) -> None:
        """Read the team's consolidated list (what the evaluator reads), and each agent's own where recorded (v8)."""
        critical = self.want(metadata, "critical_diagnoses", meta, "array", "no team can't-miss rows")
        at = _child(meta, "critical_diagnoses")
        for rank, item in enumerate(critical or [], start=1):
            item_at = _child(at, rank - 1)
            if not isinstance(item, dict):
                self.warn(item_at, f"expected an object, got {json_type(item)}; skipped")
                continue
            mentions = item.get("mention_count")
            if not isinstance(mentions, int) or isinstance(mentions, bool) or mentions < 0:
                self.warn(_child(item_at, "mention_count"), "not a count; mentions is null")
                mentions = None
            self.ddx(
                CANT_MISS,
                TEAM,
                item.get("diagnosis"),
                _child(item_at, "diagnosis"),
                stance="critical",
                rank=rank,
                evidence=_evidence(item.get("all_reasons")),
                mentions=mentions,
            )
        self.record_items(f"{CANT_MISS}.critical_diagnoses", critical or [], at)
        responses_at = meta.removesuffix(".metadata") + ".responses"
        for key, response in responses.items():
            structured = response.get("structured_data")
            if isinstance(structured, dict):
                structured_at = _child(_child(responses_at, key), "structured_data")
                for rank, (diagnosis, evidence) in enumerate(structured.items(), start=1):
                    self.ddx(
                        CANT_MISS,
                        speakers[key],
                        diagnosis,
                        _child(structured_at, diagnosis),
                        stance="critical",
                        rank=rank,
                        evidence=_evidence(evidence),
                    )

    def _read_interventions(self, metadata: dict[str, Any], meta: str) -> None:
        interventions = self.want(metadata, "interventions", meta, "array", "no interventions")
        seen: set[str] = set()
        for i, text in enumerate(interventions or []):
            if not isinstance(text, str):
                self.warn(
                    _child(_child(meta, "interventions"), i), f"expected a string, got {json_type(text)}; skipped"
                )
            elif text not in seen:
                seen.add(text)
                self.row("interventions", run_id=self.run_id, text=text)

    def _read_truth(self, truth: list[Any]) -> None:
        for i, diagnosis in enumerate(truth):
            if not isinstance(diagnosis, str):
                raise InvalidInputError(
                    where=f"$.ground_truth_diagnoses[{i}]", problem=f"expected a string, got {json_type(diagnosis)}"
                )
        self.truth = frozenset(truth)
        for diagnosis in dict.fromkeys(truth):
            self.row("ground_truth", case_id=self.case_id, diagnosis=diagnosis)

    def _read_evaluation(self, doc: dict[str, Any]) -> None:
        """Read the evaluator's numbers and labels, Dr. Reed's scores and the TempoScores into ``reported``."""
        for field in EVALUATION_FIELDS:
            if field not in doc:
                self.warn(_child("$", field), "missing; not recorded")
        self.record("evaluation", doc, "$", skip=_TOP_MAPPED)
        for label, field in LABELS.items():
            items = self.want(doc, field, "$", "array", f"no {label} labels recorded")
            for i, item in enumerate(items or [], start=1):
                at = _child(_child("$", field), i - 1)
                if label == "TP":
                    if not (
                        isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("ground_truth", "system"))
                    ):
                        self.warn(
                            at, f"expected a pair {{ground_truth, system}} of strings, got {json_type(item)}; skipped"
                        )
                        continue
                    text = json.dumps(
                        {"ground_truth": item["ground_truth"], "system": item["system"]}, ensure_ascii=False
                    )
                    self.report("label", label, i, text, at)
                elif isinstance(item, str):
                    self.report("label", label, i, item, at)
                else:
                    self.warn(at, f"expected a string, got {json_type(item)}; skipped")
        scores = self.want(doc, "credibility_scores", "$", "object", "no credibility scores recorded")
        for agent, score in (scores or {}).items():
            self.report("credibility", agent, 0, score, _child("$.credibility_scores", agent))
        completion = self.want(doc, "round_completion", "$", "object", "no TempoScores recorded")
        if completion is not None:
            tempo = self.want(completion, "tempo_scores", "$.round_completion", "object", "no TempoScores recorded")
            for name, score in (tempo or {}).items():
                self.report("tempo", name, 0, score, _child("$.round_completion.tempo_scores", name))
            self.record("round_completion", completion, "$.round_completion", skip=("tempo_scores",))
        performance = self.want(doc, "specialist_performance", "$", "object", "no specialist rankings recorded")
        if performance is not None:
            self.record("specialist_performance", performance, "$.specialist_performance")

    def _finish(self) -> None:
        for round_, count in self._repeats.items():
            self.warn(
                _child("$.full_transcript.rounds", round_) if round_ != FINAL_ROUND else "$.final_diagnoses",
                f"{count} diagnosis(es) repeated in the same agent's list; merged (mentions counts the repeats)",
            )
        for name, role in self._agents.items():
            self.row("agents", run_id=self.run_id, agent_id=name, role=role)
        for (round_, agent, diagnosis), row in self._ddx.items():
            self.row(
                "ddx", run_id=self.run_id, round=round_, agent_id=agent, diagnosis=diagnosis, **dataclasses.asdict(row)
            )


# -- the ingest -------------------------------------------------------------------------------


def _check_across(run: _Run, truths: dict[str, tuple[frozenset[str], Path]], runs: dict[str, Path]) -> None:
    """Check the rules that span files: a run_id (file name) once, one ground truth per case."""
    if run.run_id in runs:
        msg = f"its run_id {run.run_id!r} (the file name) is also that of {runs[run.run_id]}"
        raise InvalidInputError(msg, fix="rename one of them, or pass only one")
    if run.case_id in truths:
        truth, other = truths[run.case_id]
        if truth != run.truth:
            only_here, only_there = sorted(run.truth - truth), sorted(truth - run.truth)
            msg = (
                f"case {run.case_id!r} has a different ground truth in {other} "
                f"(only here: {only_here}; only there: {only_there})"
            )
            fix = "make the two files' ground truth agree"
            raise InvalidInputError(msg, where="$.ground_truth_diagnoses", fix=fix, skip="skip this file")


def _frames(runs: list[_Run]) -> dict[str, pl.DataFrame]:
    """Return one DataFrame per table from the runs' column lists; tables without rows are left out (runs never is)."""
    frames = {}
    for name in _TABLES:
        spec = TABLES[name]
        columns = {c: [v for run in runs for v in run.columns[name][c]] for c in spec.names}
        if name == "ground_truth":
            frame = pl.DataFrame(columns, schema=spec.polars_schema).unique(maintain_order=True)
        else:
            frame = pl.DataFrame(columns, schema=spec.polars_schema)
        if frame.height or name == "runs":
            frames[name] = frame
    return frames


class _Reader:
    """Local-DDx files read one run each, with the rules that span files."""

    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self.truths: dict[str, tuple[frozenset[str], Path]] = {}
        self.run_files: dict[str, Path] = {}

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        run = _Run(file, system or SYSTEM).read()
        _check_across(run, self.truths, self.run_files)
        self.truths.setdefault(run.case_id, (run.truth, file))
        self.run_files[run.run_id] = file
        self.runs.append(run)
        ingest.warnings.extend(run.warnings)

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:  # noqa: ARG002 -- recipe.Reader's signature
        return _frames(self.runs)


@validate_params(LOG_PARAMETERS)
def ingest_lddx(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LddxIngestResult:
    """Read Local-DDx result files into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        ``ddx_results_*.json`` files written by Local-DDx, or folders: a folder stands for
        every ``ddx_results_*.json`` file in it (not in its sub-folders), sorted by name. A
        single path is accepted too, and ``{path: system}`` names the system of each path's runs
        (None: ``system``). The files are only read.
    out
        The Dataset folder to write (``<out>/<table>.parquet``), atomically; it may not be,
        hold or lie inside one of ``paths``. None: nothing is written, the Dataset is returned
        in memory.
    system
        ``runs.system`` of the runs of a path not named in ``paths``; None: ``"mas"``.
    overwrite
        Replace an existing ``out``.
    skip_invalid
        Set aside the files that cannot be ingested (listed with their reasons in
        ``skipped``) and ingest the others, instead of failing at the first.
    shards
        ``None`` or 1: one file per table. ``N`` (2 to 10,000): the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.

    Returns
    -------
    LddxIngestResult
        The Dataset (and its folder), the runs and files read, the files skipped, the warnings.

    Raises
    ------
    IngestError
        A path does not exist or a folder holds no result file; or (without ``skip_invalid``)
        a file cannot be ingested: not JSON or truncated, no transcript, a required field
        missing or of the wrong kind, a round without responses, a file name (run_id) given
        twice, or a case whose ground truth differs from that of an earlier file. The message
        names the file, the JSON path and the fix. Also when no file at all can be ingested.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read. Nothing is written.

    Notes
    -----
    One file is one run: ``run_id`` is the file name without ``.json``, ``system`` is
    ``"mas"``, ``case_id`` is ``$.case_id``, ``seconds`` is
    ``$.full_transcript.sequence_metadata.total_execution_time`` (the seven rounds, without
    the synthesis and evaluation that follow). ``agent_id`` is an agent's name as written; a
    v8 debate response keyed ``<name>_round<n>`` is the agent ``<name>``'s.

    * ``agents``: ``$.full_transcript.agents[]``, ``role`` = ``specialty``. Agents sharing a
      name are one agent (the file keys responses and scores by name), with the last one's role.
    * ``messages``: every response of every round, ``round`` = the round's key in
      ``$.full_transcript.rounds``, ``turn`` = its position in the round's responses (1 = first),
      ``text`` = its ``content``.
    * ``ddx`` (``rank`` = position in the list, 1 = first; ``mentions`` = times the list names
      the diagnosis, repeats being merged into one row):
      the independent differentials (stance "proposed"; an agent's response's
      ``structured_data``, whose values are the evidence, else
      ``metadata.diagnoses_by_agent`` with a null ``evidence``, its free-text ``reasoning``
      being in the message: Local-DDx's own rule); the master list (agent ``"team"``,
      "proposed"); the debate's refinements (v8:
      ``agent``, ``diagnosis``, ``reasoning`` as evidence, stance SUPPORT → "proposed",
      CHALLENGE → "excluded", NEUTRAL or DEFER → null; v6: the agent whose response is the
      refinement's ``content``, "proposed", the line as evidence); the votes
      (``post_debate_voting.metadata.all_rankings``, "proposed"); the can't-miss diagnoses
      (stance "critical": the team's ``critical_diagnoses`` with ``mention_count`` and
      ``all_reasons`` as evidence, and each agent's ``structured_data`` where recorded); the
      final list ``$.final_diagnoses`` (round ``"final"``, agent ``"team"``, stance "final").
      Where the file gives a list line rather than a diagnosis (v6 refinements, master list),
      the diagnosis is the line's head: after the enumeration, before the first spaced dash
      or colon, or a leading bold span.
    * ``ground_truth``: ``$.ground_truth_diagnoses`` by ``case_id``; files of the same case
      must agree on it (as a set).
    * ``interventions``: the symptom-management round's ``metadata.interventions``.
    * ``reported``: what the file computed, for reproductions to be checked against.
      ``(source, name, item)``: "evaluation" (each top-level scalar: the label counts,
      ``tp_rate``, ``caa_weight_applied``, precision, recall, CRQ, diagnostic safety,
      ``evaluation_method``, ``weighting_tier`` ...); "label" with "TP" / "FP" / "FN" and
      ``item`` = position in ``true_positives`` / ``false_positives`` / ``false_negatives``
      (``text``: a TP's pair as JSON ``{"ground_truth", "system"}``, else the diagnosis);
      "credibility" by agent; "tempo" by round; "round_completion";
      "specialist_performance" and "specialist_performance.specialist_rankings" (by field,
      ``item`` = rank); "agents" (each agent's fields by position); "sequence_metadata";
      "transcript" (``case_description``); per round, ``<round>`` (its scalars and lists of
      scalars, e.g. ``success``, ``execution_time``, ``participants``, ``winner``),
      ``<round>.<field>`` (its objects of scalars, e.g. ``agent_contributions``,
      ``borda_scores``; its lists of objects by field and position, e.g.
      ``cant_miss.critical_diagnoses``) and ``<round>.responses`` (each response's
      ``confidence_score``, ``response_time``, ``reasoning_quality``, ``timestamp``, with
      ``item`` = the message's turn). ``value`` holds numbers, ``text`` strings.

    Both generations of the published files are read: v6 (July 9, 2025, ``archive``) and v8.5
    (July 18), which adds structured data, three debate sub-rounds and structured
    refinements. What cannot be mapped (an optional field missing or of another kind, a list
    item without a diagnosis) is skipped with a warning naming the file and JSON path.

    Examples
    --------
    A result file of one case, one agent and one round (a real one holds seven rounds):

    >>> import tempfile
    >>> result_file = {
    ...     "case_id": "Case X", "final_diagnoses": ["flu"], "ground_truth_diagnoses": ["flu"],
    ...     "full_transcript": {
    ...         "agents": [{"name": "Dr. A", "specialty": "Internal Medicine"}],
    ...         "rounds": {"team_independent_differentials": {"responses": {
    ...             "Dr. A": {"content": "1. flu", "structured_data": {"flu": ["fever"]}}}}},
    ...     },
    ... }
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "ddx_results_x.json"
    ...     _ = path.write_text(json.dumps(result_file))
    ...     result = ingest_lddx(path)
    >>> result.dataset.collect("runs").select("run_id", "system", "case_id").rows()
    [('ddx_results_x', 'mas', 'Case X')]
    >>> result.dataset.collect("ddx").select("round", "agent_id", "diagnosis", "stance").rows()
    [('final', 'team', 'flu', 'final'), ('team_independent_differentials', 'Dr. A', 'flu', 'proposed')]
    """
    return ingest_logs(
        FORMAT, _Reader(), paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )
