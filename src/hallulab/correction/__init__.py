"""Hallucination correction and its LLM-as-judge evaluation (FactSelfCheck §4.5, Table 3).

Three inputs for the ``corrector`` LLM role, each asking for the response's sentences back,
corrected or unchanged, one numbered line each: **baseline** (the prompt and the response),
**sentence** (plus the sentences a sentence-level detector flags) and **fact** (plus the
triples FactSelfCheck flags). The ``judge`` role then labels every corrected sentence
factual / non-factual / refused against the reference text (WikiBio's real Wikipedia
passage); Table 3 is the share of each label and its relative change to the baseline.

The flagging thresholds are chosen on a development split of the passages (seeded, by
record id) as the point of highest F1 against the sentence labels, and the correction runs
on the other passages only. The released code picks its thresholds (0.3, 0.75) on the test
labels themselves; hallulab never does. The fact threshold is chosen by fact-level F1, as
the paper's Appendix C chooses it: the ``judge`` role labels each distinct fact of the
development passages' knowledge graphs against the reference (:mod:`.fact_labels`). Setting
``correction.fact_threshold_labels=sentence`` chooses it through the sentence labels instead
(a sentence counts as flagged when one of its facts reaches the threshold).
"""
