"""inspect_ai logs written by inspect_ai itself, offline, with its mock model: for the tests and the demo.

Two tasks on the same yes/no questions: ``single`` (one model answers once) and ``debate`` (a
multi-agent system: the roles "proposer" and "critic" answer in turn, two rounds, the critic's
last answer being the system's). Each mock output carries its token usage (without it inspect_ai
counts tokens with an encoding it downloads) and the debate's a cost. Three scorers: ``match``
(pass/fail, "C" or "I"), ``graded`` ("C", "P" or "I": not pass/fail) and ``shape`` (a dict of a
number and a boolean). Which answers are right is a fixed function of the question and how often
it was asked, so the logs' numbers are the same from one run to the next.

``python -m tests.inspect_logs data/inspect`` writes the bundled sample (``make inspect-sample``).
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ROLES", "mock_answers", "write_failing_log", "write_logs", "yes_no_tasks"]

#: The debate's agents, in the order they answer.
ROLES = ("proposer", "critic")


def mock_answers(name: str, right: float) -> Callable[..., Any]:
    """A mock model's outputs: "yes" (right) with probability ``right``, by a hash of the question and its count."""
    from inspect_ai.model import ModelOutput, ModelUsage

    asked: Counter[str] = Counter()

    def generate(messages: list[Any], *_: Any) -> Any:
        question = messages[0].text
        asked[question] += 1
        digest = hashlib.sha256(f"{name}|{question}|{asked[question]}|{len(messages)}".encode()).digest()
        text = "yes" if digest[0] / 256 < right else "no"
        prompt = 5 * len(messages) + digest[1] % 7
        output = ModelOutput.from_content(f"mockllm/{name}", text)
        cost = None if name == "single" else round((prompt + 1) * 1e-6, 9)
        output.usage = ModelUsage(input_tokens=prompt, output_tokens=1, total_tokens=prompt + 1, total_cost=cost)
        return output

    return generate


def yes_no_tasks(samples: int, model: Any, epochs: tuple[int, int]) -> tuple[Any, Any]:
    """The single agent's task and the debate's, on the same ``samples`` questions, with ``epochs`` each."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser, get_model
    from inspect_ai.scorer import CORRECT, INCORRECT, PARTIAL, Score, Target, accuracy, match, mean, scorer, stderr
    from inspect_ai.solver import Generate, TaskState, generate, solver

    @solver
    def debate(rounds: int = 2) -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            for round_ in range(1, rounds + 1):
                for role in ROLES:
                    output = await get_model(role=role).generate(state.messages)
                    state.messages.append(output.message)
                    state.messages.append(
                        ChatMessageUser(content=f"Round {round_}: the {role} says {output.completion}.")
                    )
            state.output = output
            return state

        return solve

    @scorer(metrics=[accuracy(), stderr()])
    def graded() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            turns = sum(m.role == "assistant" for m in state.messages)
            right = state.output.completion == target.text
            return Score(value=CORRECT if right and turns < 4 else PARTIAL if right else INCORRECT)

        return score

    @scorer(metrics={"*": [mean()]})
    def shape() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value={"messages": len(state.messages), "short": len(state.messages) < 4})

        return score

    questions = [Sample(id=f"q{i:02d}", input=f"Is {i} + {i} = {2 * i}?", target="yes") for i in range(1, samples + 1)]
    scorers = [match(), graded(), shape()]
    return (
        Task(name="yes_no", dataset=questions, solver=generate(), scorer=scorers, model=model, epochs=epochs[0]),
        Task(name="yes_no", dataset=questions, solver=debate(), scorer=scorers, epochs=epochs[1]),
    )


def write_logs(
    log_dir: Path, *, samples: int = 4, epochs: int = 3, single_epochs: int | None = None, log_format: str = "eval"
) -> list[Path]:
    """Run the single agent and the debate on ``samples`` questions, ``epochs`` times each; their two log files.

    ``single_epochs`` runs the single agent that many times instead, e.g. enough to match the debate's tokens.
    """
    from inspect_ai import eval as run_eval
    from inspect_ai.model import get_model

    roles = {
        role: get_model(f"mockllm/{role}", custom_outputs=mock_answers(role, right), memoize=False)
        for role, right in zip(ROLES, (0.6, 0.8), strict=True)
    }
    single_model = get_model("mockllm/single", custom_outputs=mock_answers("single", 0.6))
    single, debate = yes_no_tasks(samples, single_model, (single_epochs or epochs, epochs))
    # One eval of both tasks (the single agent's model is its task's own): they run side by side.
    logs = run_eval(
        [single, debate],
        model=get_model("mockllm/model"),
        model_roles=roles,
        log_dir=str(log_dir),
        log_format=log_format,
        display="none",
    )
    return sorted(Path(log.location) for log in logs)


def write_failing_log(log_dir: Path) -> Path:
    """A log whose evaluation ended with an error: its solver raises on the first sample."""
    from inspect_ai import Task
    from inspect_ai import eval as run_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, solver

    @solver
    def broken() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            msg = "the tool server went away"
            raise RuntimeError(msg)

        return solve

    task = Task(name="broken", dataset=[Sample(id="b1", input="Hello?", target="yes")], solver=broken(), scorer=match())
    (log,) = run_eval(task, model="mockllm/model", log_dir=str(log_dir), log_format="eval", display="none")
    return Path(log.location)


if __name__ == "__main__":  # pragma: no cover - `make inspect-sample`
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "data/inspect")
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.eval"):
        old.unlink()
    # The single agent runs 12 times, a little over the debate's tokens on a question: enough to match its compute.
    for path in write_logs(folder, samples=10, epochs=1, single_epochs=12):
        print(f"{path} ({path.stat().st_size:,} bytes)")
