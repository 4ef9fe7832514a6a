"""The vocabulary the diagnosis simulator writes with: diagnoses, roles, findings and the fragments of its messages.

:func:`~mas_eval.simulation.diagnosis.simulate_diagnosis` draws every name, sentence and
intervention of its Datasets from these lists; each list's comment says what it must not hold
(tests/simulation/test_diagnostic_simulation.py checks it), so that a label comes only from what was planted.
"""

from __future__ import annotations

from mas_eval.data.vocabulary import (
    CANT_MISS,
    DEBATE,
    INDEPENDENT,
    MASTER_LIST,
    SPECIALIZED_RANKING,
    SYMPTOM_MANAGEMENT,
    VOTING,
)

__all__ = [
    "AGENT_NAMES",
    "DIAGNOSES",
    "EXCLUSIONS",
    "FINDINGS",
    "LINE_FINDINGS",
    "MARKERS",
    "OPENERS",
    "OTHER_ACTIONS",
    "PERCENTS",
    "PLAIN",
    "REASONING",
    "ROLES",
    "SINGLE_ROLE",
    "SPECIALTIES",
    "SYMPTOMS",
    "TREAT_ENDINGS",
    "TREAT_VERBS",
]

#: Canonical diagnoses by specialty: a case's ground truth comes from one specialty. No two of
#: them are clinically equivalent under any tier of ``match_pairs`` (nor are their synonyms), and
#: none is a substring of another, so a diagnosis is found only where it was planted.
DIAGNOSES: dict[str, tuple[str, ...]] = {
    "Cardiology": (
        "Myocardial infarction", "Pulmonary embolism", "Atrial fibrillation", "Aortic dissection", "Pericarditis",
        "Cardiac tamponade", "Heart failure", "Infective endocarditis",
    ),
    "Nephrology": (
        "Acute kidney injury", "Chronic kidney disease", "Nephrolithiasis", "Pyelonephritis", "Hyperkalemia",
        "Hyponatremia", "Rhabdomyolysis", "Nephrotic syndrome",
    ),
    "Gastroenterology": (
        "Gastrointestinal bleeding", "Acute pancreatitis", "Appendicitis", "Small bowel obstruction",
        "Cholelithiasis", "Celiac disease", "Clostridioides difficile infection", "Dehydration",
    ),
    "Endocrinology": (
        "Diabetic ketoacidosis", "Hyperosmolar hyperglycemic state", "Hypoglycemia", "Thyroid storm",
        "Adrenal insufficiency", "Hypothyroidism", "Hypercalcemia", "Pheochromocytoma",
    ),
    "Infectious Disease": (
        "Sepsis", "Community acquired pneumonia", "Urinary tract infection", "Bacterial meningitis", "Cellulitis",
        "Infectious mononucleosis", "Tuberculosis", "Influenza",
    ),
    "Neurology": (
        "Ischemic stroke", "Subarachnoid hemorrhage", "Guillain-Barre syndrome", "Myasthenia gravis",
        "Status epilepticus", "Multiple sclerosis", "Migraine", "Transient ischemic attack",
    ),
    "Pulmonology": (
        "Chronic obstructive pulmonary disease", "Asthma", "Pneumothorax", "Acute respiratory distress syndrome",
        "Pulmonary edema", "Interstitial lung disease", "Pleural effusion", "Obstructive sleep apnea",
    ),
    "Pediatrics": (
        "Hirschsprung disease", "Meconium ileus", "Intestinal atresia", "Necrotizing enterocolitis",
        "Hypertrophic pyloric stenosis", "Intussusception", "Kawasaki disease", "Croup",
    ),
    "Toxicology": (
        "Opioid overdose", "Acetaminophen overdose", "Carbon monoxide poisoning", "Anaphylaxis",
        "Serotonin syndrome", "Neuroleptic malignant syndrome", "Alcohol withdrawal", "Heat stroke",
    ),
}  # fmt: skip
SPECIALTIES = tuple(DIAGNOSES)
#: Roles of MAS agents: the case's specialty first, then the others in turn.
ROLES = (*SPECIALTIES, "Emergency Medicine", "Internal Medicine", "General Medicine")
SINGLE_ROLE = "Internal Medicine"
AGENT_NAMES = (
    "Dr. Sarah Chen", "Dr. David Kim", "Dr. Amelia Chandra", "Dr. Michael Green", "Dr. Emily Lee",
    "Dr. Alex Rodriguez", "Dr. Grace Okafor", "Dr. Isaac Brown", "Dr. Olivia Novak", "Dr. Elijah Park",
    "Dr. Hannah Weiss", "Dr. Samuel Osei",
)  # fmt: skip

#: Findings: the evidence items of ``ddx.evidence``.
FINDINGS = (
    "fever", "tachycardia", "hypotension", "elevated troponin", "leukocytosis", "raised lactate", "flank pain",
    "crackles on auscultation", "bilious vomiting", "abdominal distension", "confusion", "neck stiffness",
    "wheeze", "low oxygen saturation", "rash", "jaundice", "oliguria", "polyuria", "weight loss", "headache",
    "chest pain", "syncope", "palpitations", "dyspnea", "diarrhea", "abdominal pain", "muscle weakness",
    "raised creatinine", "abnormal chest film", "family history",
)  # fmt: skip

# -- transcript vocabularies ---------------------------------------------------------------------------
# Every message is: an opener line, up to three lines of the speaker's differential, in debate and
# voting rounds sometimes an exclusion sentence, then filler sentences until the wanted length. No
# fragment but the exclusion sentences holds an exclusion phrase (exclude, unlikely, rule out, less
# likely, tier 4), and no fragment names a diagnosis of DIAGNOSES: labels come only from what was planted.

#: Openers by round; the debate's structured markers are drawn separately (``_P_MARKER``).
OPENERS: dict[str, tuple[str, ...]] = {
    SPECIALIZED_RANKING: ("Specialist ranking for this case:", "Ranking of the specialists by relevance:"),
    SYMPTOM_MANAGEMENT: ("Symptom management plan:", "Immediate interventions:"),
    INDEPENDENT: ("Differential diagnosis:", "<DIFFERENTIAL>", "My independent assessment:"),
    MASTER_LIST: ("Consolidated master list:", "Master list of the team:"),
    DEBATE: ("<DIAGNOSTIC_REFINEMENT>", "Refinement of the list:"),
    VOTING: ("<PREFERENTIAL_VOTE>", "My ranked vote:"),
    CANT_MISS: ("Can't-miss diagnoses:", "Critical diagnoses not to miss:"),
}
MARKERS = (
    "**Your Position**", "**Clinical Evidence**", "**Reasoning**", "**Alternative Considerations**",
    "**Final Recommendations**",
)  # fmt: skip
#: Sentences with one reasoning keyword each (the LDDx v6 guide's high-value keywords), and credibility keywords.
REASONING = (
    "\nThe evidence from the first workup points in one direction.",
    "\nThe timeline of events would support an acute process.",
    "\nI would challenge the assumption that the first result was accurate.",
    "\nI disagree with placing the chronic causes at the top.",
    "\nAn alternative explanation has to stay on the list for now.",
    "\nCareful clinical reasoning means weighing the pretest probability.",
    "\nSmoking is a relevant risk factor in this patient.",
    "\nThe normal lactate would contradict a purely infectious cause.",
    "\nMy position has not changed after the new results.",
    "\nMy recommendations are to repeat the labs in six hours and review.",
    "\nThe differential should stay broad until the scan is back.",
)
#: Sentences without reasoning keywords (some with credibility keywords).
PLAIN = (
    "\nThe patient is a 54-year-old who came in with three days of worsening symptoms.",
    "\nVital signs were repeated after the first litre of crystalloid.",
    "\nSeveral laboratory panels are still pending at the time of this note.",
    "\nThe history was taken from the patient and a family member at the bedside.",
    "\nImaging was reviewed with the radiology team earlier this morning.",
    "\nMedication reconciliation was completed with the pharmacist on the ward.",
    "\nThe examination findings are documented in the admission note.",
    "\nSerial examinations over the next hours will show the trajectory.",
    "\nNursing staff report that oral intake has been poor since yesterday.",
    "\nThe family would like to be updated after each review.",
    "\nAllergies were confirmed as none known.",
    "\nThe presentation is typical for this age group.",
    "\nA repeat set of bloods has been sent to the laboratory.",
    "\nUrine output is being charted every hour.",
    "\nThe electrocardiogram was compared with a tracing from last year.",
    "\nWe should keep the patient nil by mouth for now.",
    "\nI have discussed the plan with the nurse in charge.",
    "\nPain is controlled with simple analgesia at present.",
    "\nOur team will regroup once the results are back.",
    "\nCombined with the examination, the bedside ultrasound is informative.",
    "\nTaken together, the picture is still evolving over the day.",
    "\nThe pathophysiology here is most consistent with an acute process.",
    "\nSocial history: lives alone and is independent with daily activities.",
    "\nCurrent guidelines and recent studies favour early imaging in this setting.",
    "\nOne open question is whether the symptoms began before the fall.",
    "\nMore research on this presentation in older adults would help.",
)
#: Exclusion sentences around a diagnosis: they match the seed's exclusion patterns (AE).
EXCLUSIONS = (
    ("\nWe should rule out ", " before going further."),
    ("\n", " is unlikely given the course so far."),
    ("\nI would exclude ", " on the basis of the imaging."),
    ("\n", " is less likely than the leading diagnosis."),
)
#: A differential line is ``"<n>. <diagnosis> - <pct> - <finding phrase>"``.
PERCENTS = ("5%", "10%", "15%", "20%", "30%", "40%", "50%", "60%", "70%", "85%")
LINE_FINDINGS = (
    "fever and tachycardia on arrival", "raised inflammatory markers", "focal tenderness on examination",
    "abnormal imaging", "electrolyte derangement", "the time course of the illness", "the vital signs",
    "the pattern of pain", "the laboratory trend", "the age of the patient",
)  # fmt: skip
#: Symptom-management interventions: ``"[<symptom>]: <action>"``.
SYMPTOMS = (
    "Thirst", "Pain", "Fever", "Nausea", "Dyspnea", "Low blood pressure", "Chest pain", "Agitation",
    "Seizure activity", "Wheezing", "Palpitations", "Vomiting",
)  # fmt: skip
#: Verbs and endings around an intervention keyword that treats a ground-truth diagnosis (TM-SM).
TREAT_VERBS = ("Give ", "Start ", "Consider ", "Administer ")
TREAT_ENDINGS = ("", " per protocol", " and reassess in one hour", " now")
#: Interventions that treat none of DIAGNOSES.
OTHER_ACTIONS = (
    "supplemental oxygen to keep saturation above 92%", "acetaminophen 1 g every six hours as needed",
    "ondansetron 4 mg for nausea", "keep nil by mouth and reassess", "elevate the head of the bed",
    "cardiac monitoring overnight", "warm blankets and reassurance", "antiemetic as needed",
)  # fmt: skip
