"""Health vocabulary: conditions and diagnoses, and the phrases that introduce a medical
record or health-plan identifier. Compiled once at import."""

from __future__ import annotations

import re

from gateway.classify.detectors.word_trie import trie_pattern

CONDITIONS = (
    "diabetes", "type 1 diabetes", "type 2 diabetes", "prediabetes", "hypertension",
    "hypotension", "cancer", "carcinoma", "melanoma", "lymphoma", "leukemia", "leukaemia",
    "sarcoma", "tumor", "tumour", "metastatic", "hiv", "aids", "hepatitis", "hepatitis b",
    "hepatitis c", "cirrhosis", "tuberculosis", "pneumonia", "covid-19", "covid", "influenza",
    "asthma", "copd", "emphysema", "bronchitis", "cystic fibrosis", "epilepsy", "seizures",
    "migraine", "multiple sclerosis", "parkinson's", "parkinson's disease", "alzheimer's",
    "alzheimer's disease", "dementia", "stroke", "aneurysm", "heart failure", "heart attack",
    "myocardial infarction", "arrhythmia", "atrial fibrillation", "angina",
    "coronary artery disease",
    "kidney disease", "renal failure", "chronic kidney disease", "dialysis", "lupus",
    "rheumatoid arthritis", "arthritis", "osteoporosis", "fibromyalgia", "crohn's disease",
    "crohn's", "ulcerative colitis", "celiac disease", "irritable bowel syndrome", "ibs",
    "depression", "major depressive disorder", "anxiety", "anxiety disorder", "panic disorder",
    "bipolar disorder", "bipolar", "schizophrenia", "ptsd", "ocd", "adhd", "autism",
    "anorexia", "bulimia", "eating disorder", "substance use disorder", "alcoholism",
    "addiction", "opioid use disorder", "psychosis", "borderline personality disorder",
    "insomnia", "sleep apnea", "obesity", "hypothyroidism", "hyperthyroidism", "thyroid cancer",
    "breast cancer", "prostate cancer", "lung cancer", "colon cancer", "pancreatic cancer",
    "ovarian cancer", "cervical cancer", "skin cancer", "brain tumor", "glaucoma", "cataracts",
    "macular degeneration", "hearing loss", "chlamydia", "gonorrhea", "syphilis", "herpes",
    "hpv", "std", "sti", "pregnant", "pregnancy", "miscarriage", "infertility", "endometriosis",
    "pcos", "sickle cell", "hemophilia", "anemia", "anaemia", "thalassemia", "down syndrome",
    "cerebral palsy", "muscular dystrophy", "als", "huntington's disease", "scoliosis",
    "chemotherapy", "radiotherapy", "insulin", "antidepressants", "antiretroviral",
)
# Searched in the lower-case byte view: no IGNORECASE, one byte per character.
DIAGNOSIS = re.compile((r"\b(?:" + trie_pattern(CONDITIONS) + r")\b").encode())
# Every word of every condition's name: a window holding none of them holds no condition.
CONDITION_WORDS = frozenset(w.encode() for c in CONDITIONS for w in re.findall(r"[a-z']+", c))
# Phrases that introduce an identifier in a health record or insurance context.
RECORD_NUMBER = re.compile(
    rb"\b(?:mrn|medical record(?: number| no\.?| #| id)?|patient (?:id|number|no\.?|#))\b"
    rb"[\s:#.-]{0,6}"
)
PLAN_NUMBER = re.compile(
    rb"\b(?:health ?plan (?:id|number|no\.?)|member (?:id|number|no\.?|#)|insurance (?:id|number"
    rb"|no\.?|policy(?: number| no\.?)?)|policy (?:number|no\.?|#)"
    rb"|medicare (?:number|id|no\.?|card number)|medicaid (?:number|id|no\.?)"
    rb"|nhs (?:number|no\.?))\b[\s:#.-]{0,6}"
)
# Letters then digits ("XJH123456789", "A1234567"), digit groups ("943 476 5919", "123-45-678").
IDENTIFIER = re.compile(r"[A-Z]{0,4}-?\d(?:[\d-]|(?<=\d) (?=\d)){3,18}[A-Z0-9]?\b", re.IGNORECASE)
