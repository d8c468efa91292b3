"""HalluCheck (the HalluCheck paper, §3, Algorithm 1, Tables 2-4; released as ConFactCheck).

Atomic facts of a response (the shared ``atomic_facts`` artifact: NER, POS or random spans)
each get a question with their sentence as context (the ``question_generator`` LLM role, or
the paper's T5 question generator by hub id); the LLM answers the question again (the
``generator`` role, greedy or beam-5; the ``verifier`` role for the cross-evaluation); the
regenerated answer must agree with the fact (fact alignment), and for an aligned fact the
top-5 token probabilities of every generated step must not look uniform (a KS test)
(:mod:`hallulab.methods.hallucheck.checks`). Response score = share of hallucinated facts.

Like the released code, alignment compares the fact with the reply's answer span (whitespace
tokens as they are) and the KS test reads the span's steps and the step before, against scipy's
U[min, min + max], the reference the released ``args=(min, max)`` gives
(:mod:`hallulab.methods.hallucheck.checks`; offline, the span is the reply's best-matching
word window, a stated substitute for its extractive QA model); the test against U[min, max]
and SQuAD-normalised F1 are labelled variants. Deliberate differences from the released code
(ConFactCheck): every fact is checked on its own (the released code ``break``s out of its loop
over facts when a span's tokens are not found among the generated tokens, and every later fact
stays flagged without a test), and with beam search it reads ``scores[i][j]`` as if the beam
index j were the question index; here the beam's per-step distribution is the one of the beam
the answer came from (``beam_indices``); errors are counted, never swallowed by bare
``except``.
"""

from hallulab.methods.hallucheck.raw import HalluCheckScores
from hallulab.pipeline.spec import TEXT_LOGPROBS, MethodSpec, StepInputs, unplanned

SPEC = MethodSpec(
    raw=HalluCheckScores,
    name="hallucheck",
    title="HalluCheck (facts -> questions -> regenerated answers)",
    paper="HalluCheck / ConFactCheck (EMNLP submission)",
    section="§3, Algorithm 1; Tables 2-4",
    level="response",
    requires=("atomic_facts",),
    score=StepInputs(
        params=("hallucheck.score",),
        llm_roles=("question_generator", "generator", "verifier", "judge"),
        prompts=("hallucheck.question_prompt", "hallucheck.answer_prompt", "hallucheck.judge_prompt"),
    ),
    aggregate=StepInputs(params=("hallucheck.aggregate",)),
    order=70,
    needs=(TEXT_LOGPROBS,),
    calls=unplanned("its questions come from extracted facts and its re-answers from the questions"),
    shards=True,
    raw_unit_texts=True,
)
