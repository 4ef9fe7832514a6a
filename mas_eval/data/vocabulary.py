"""Domain vocabulary the tables' values use, written once: Local-DDx's rounds and team, the two systems.

Local-DDx runs seven rounds in a fixed order; :mod:`mas_eval.ingest.lddx` writes each as the
``round`` of ``ddx`` and ``messages`` rows, the diagnosis metrics read them, and the diagnosis
simulator writes them. Values of a single column that a schema check enforces (``ddx.stance``,
``criteria.kind``) live with their column in :mod:`mas_eval.data.schema`.

>>> ROUNDS.index(DEBATE) < ROUNDS.index(VOTING) < ROUNDS.index(CANT_MISS)
True
"""

from __future__ import annotations

__all__ = [
    "CANT_MISS",
    "DEBATE",
    "FINAL_ROUND",
    "INDEPENDENT",
    "INPUT_SOURCE",
    "MAS",
    "MASTER_LIST",
    "NOT_AGENT_ROLES",
    "ROUNDS",
    "SINGLE",
    "SPECIALIZED_RANKING",
    "SYMPTOM_MANAGEMENT",
    "SYSTEMS",
    "TEAM",
    "VOTING",
]

#: ``runs.system`` of the multi-agent system and of the single-agent baseline: the two systems the
#: simulators write, and the treatment and control a comparison defaults to.
MAS, SINGLE = "mas", "single"
SYSTEMS = (MAS, SINGLE)

#: ``agent_id`` of the lists the team made together: the master list, the consolidated can't-miss list, the final list.
TEAM = "team"
#: ``round`` of the final diagnosis list (Local-DDx's ``$.final_diagnoses``), the synthesis after the seven rounds.
FINAL_ROUND = "final"

SPECIALIZED_RANKING = "specialized_ranking"
SYMPTOM_MANAGEMENT = "symptom_management"
INDEPENDENT = "team_independent_differentials"
MASTER_LIST = "master_list_generation"
#: The debate round, whose messages say which diagnoses were ruled out.
DEBATE = "refinement_and_justification"
#: The round whose rankings the credibility-weighted vote counts.
VOTING = "post_debate_voting"
#: The can't-miss round: diagnoses too dangerous to overlook, with mention counts.
CANT_MISS = "cant_miss"
#: The seven rounds of Local-DDx, in the order it runs them (the keys of ``$.full_transcript.rounds``).
ROUNDS = (SPECIALIZED_RANKING, SYMPTOM_MANAGEMENT, INDEPENDENT, MASTER_LIST, DEBATE, VOTING, CANT_MISS)

#: ``messages.role`` of a message no agent of the system generated: the system prompt, a user's
#: prompt, a tool's result (the chat roles of inspect_ai and the OpenAI API).
NOT_AGENT_ROLES = ("system", "user", "tool")
#: ``messages.source`` of a message that was the sample's input (inspect_ai), not generated in the run.
INPUT_SOURCE = "input"
