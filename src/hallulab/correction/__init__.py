"""Hallucination correction and its LLM-as-judge evaluation (FactSelfCheck §4.5, Table 3).

Three inputs for the ``corrector`` LLM role, each asking for the response's sentences back,
corrected or unchanged, one numbered line each: **baseline** (the prompt and the response),
**sentence** (plus the sentences a sentence-level detector flags) and **fact** (plus the
triples FactSelfCheck flags). The ``judge`` role then labels every corrected sentence
factual / non-factual / refused against the reference text (WikiBio's real Wikipedia
passage); Table 3 is the share of each label and its relative change to the baseline.

The flags follow two threshold readings (:mod:`.thresholds`), each a row of Table 3 beside
the one baseline:

* ``*_released``, Table 3's rule as FactSelfCheck's released ``scripts/correction/correct.py``
  computes it: each threshold is the one of highest sentence-level F1 on the evaluated
  passages' own labels (the paper: 0.3 for FactSelfCheck-Text, 0.75 for SelfCheckGPT-Prompt);
  the fact threshold over each sentence's mean fact score, then applied to single facts.
  These rows stand beside the paper's numbers; their thresholds are chosen on the labels of
  the passages they are evaluated on, as the released code's are.
* ``*_dev``, this project's reading: both thresholds chosen on a development split of the
  passages (seeded, by record id) that the corrected passages are not in; the fact threshold
  by fact-level F1 over development facts the ``judge`` role labels against the reference
  (:mod:`.fact_labels`, the fact-level evaluation of the paper's Appendix C, whose 0.4 is the
  threshold of Table 10 and Figure 6), or, with ``correction.fact_threshold_labels=sentence``,
  by Table 3's sentence-level rule on the development labels.
"""
