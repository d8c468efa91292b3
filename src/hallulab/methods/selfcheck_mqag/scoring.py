"""SelfCheckGPT with question answering, MQAG (Manakul et al., 2023, §5.2 and Appendix B).

For every sentence r_i of the response R, multiple-choice questions are generated (G1:
question + answer from the sentence alone, sampled; G2: three distractors given the whole
passage), then answered (A: a distribution over the 4 options) and judged answerable (U:
P(answerable)) with R as context and with every sample S_n as context. Per question, with
a_R = argmax P_A(o | q, R), a_n = argmax P_A(o | q, S_n), u_n = P_U(answerable | q, S_n):

  counting:          if u_R < AT: 0.5; over samples with u_n >= AT ("good"):
                     (good - match) / good, 0.5 if no sample is good
  bayes:             if u_R < AT: 0.5; hard counts N_m = #match, N_n = #mismatch over good
                     samples; S = gamma2^N_n / (gamma1^N_m + gamma2^N_n)
  bayes_with_alpha:  soft counts N'_m = sum_n u_n [a_n = a_R], N'_n = sum_n u_n [a_n != a_R];
                     S = gamma2^N'_n / (gamma1^N'_m + gamma2^N'_n)

with gamma1 = beta2 / (1 - beta1), gamma2 = beta1 / (1 - beta2), beta1 = beta2 = 0.8 (the
paper's default), and the sentence score the mean over its questions. These are the
released code's rules (selfcheckgpt 0.1.7, tested equal). A sentence whose questions all
failed to generate scores 0.5 and is counted (the reference would return NaN).

The expensive stage stores, per question, P_A and u for R and every stored sample; the
aggregate stage applies N, the scoring rule, beta1/beta2 and AT (cheap sweeps).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from hallulab.core.units import ScoreTable
from hallulab.methods.selfcheck_mqag.knobs import MQAGScoringKnobs
from hallulab.methods.selfcheck_mqag.raw import MQAGQuestion, StoredMQAG


def _gammas(beta1: float, beta2: float) -> tuple[float, float]:
    return beta2 / (1.0 - beta1), beta1 / (1.0 - beta2)


def _bayes(match: float, mismatch: float, beta1: float, beta2: float) -> float:
    gamma1, gamma2 = _gammas(beta1, beta2)
    return float(gamma2**mismatch / (gamma1**match + gamma2**mismatch))


def question_score(question: MQAGQuestion, method: str, scoring: MQAGScoringKnobs) -> float:
    """One question's inconsistency score (higher = the samples disagree with R)."""
    threshold = scoring.answerability_threshold
    a_response = int(np.argmax(question.p_response))
    matches = np.argmax(question.p_samples, axis=1) == a_response if len(question.u_samples) else np.zeros(0, bool)
    if method == "bayes_with_alpha":
        u = question.u_samples
        return _bayes(float(u[matches].sum()), float(u[~matches].sum()), scoring.beta1, scoring.beta2)
    if question.u_response < threshold:
        return 0.5
    good = question.u_samples >= threshold
    match, mismatch = int((good & matches).sum()), int((good & ~matches).sum())
    if method == "counting":
        return 0.5 if match + mismatch == 0 else mismatch / (match + mismatch)
    return _bayes(match, mismatch, scoring.beta1, scoring.beta2)


def aggregate(
    stored: StoredMQAG, scoring: MQAGScoringKnobs, column_picker: Callable[[str, int], np.ndarray]
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Sentence = mean over its questions; passage = mean over sentences. ``column_picker``
    (passage id, N_max) -> sample indices applies the N / selection knobs."""
    sentence_scores: dict[str, dict[str, list[float]]] = {m: {} for m in scoring.methods}
    no_question = 0
    for pid, sentences in stored.questions.items():
        for method in scoring.methods:
            sentence_scores[method][pid] = []
        for questions in sentences:
            if not questions:
                no_question += 1
                for method in scoring.methods:
                    sentence_scores[method][pid].append(0.5)
                continue
            columns = column_picker(pid, questions[0].u_samples.shape[0])
            seen = [q.restricted(columns) for q in questions]
            for method in scoring.methods:
                values = [question_score(q, method, scoring) for q in seen]
                sentence_scores[method][pid].append(float(np.mean(values)))
    table = ScoreTable()
    for method in scoring.methods:
        name = f"mqag_{method}"
        for pid, values in sentence_scores[method].items():
            if not values:
                continue
            table.add_sentences(name, pid, values)
            table.add_response(name, pid, float(np.mean(values)))
    diagnostics = {
        **stored.diagnostics,
        "identity": dict(stored.identity),
        "sentences_without_questions": no_question,
        "scoring": {
            "methods": list(scoring.methods),
            "beta1": scoring.beta1,
            "beta2": scoring.beta2,
            "answerability_threshold": scoring.answerability_threshold,
        },
    }
    return table.frame(), diagnostics
