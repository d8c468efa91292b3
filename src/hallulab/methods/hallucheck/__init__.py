"""HalluCheck (the HalluCheck paper, §3, Algorithm 1, Tables 2-4; released as ConFactCheck).

Atomic facts of a response (the shared ``atomic_facts`` artifact: NER, POS or random spans)
each get a question with their sentence as context (the ``question_generator`` LLM role, or
the paper's T5 question generator by hub id); the LLM answers the question again (the
``generator`` role: greedy, 5 beams as the released call, or 5 beams sampling as the released
call does for a model whose own settings sample; the ``verifier`` role for the
cross-evaluation); the answer span to the question is read out of the original response and
out of the regenerated answer (the ``qa`` role copies it offline, or an extractive QA model by
hub id, as released: :mod:`hallulab.methods.hallucheck.spans`); the two spans must agree (fact
alignment), and for an aligned fact the top-5 token probabilities of the regenerated span's
steps among the first 50 must not look uniform (a KS test)
(:mod:`hallulab.methods.hallucheck.checks`). Response score = share of hallucinated facts.

Like the released code, alignment compares the two spans by whitespace tokens as they are, and
the KS test reads the span's steps and the step before, against scipy's U[min, min + max], the
reference the released ``args=(min, max)`` gives; the test against U[min, max], SQuAD-normalised
F1 and this project's earlier fact-window reading (the fact against the reply's best-matching
window) are labelled variants. Deliberate differences from the released code (ConFactCheck):
every fact is checked on its own (the released code ``break``s out of its loop over facts when a
span's tokens are not found among the generated tokens, and every later fact stays flagged
without a test), and with beam search it reads ``scores[i][j]`` as if the beam index j were the
question index; here the beam's per-step distribution is the one of the beam the answer came
from (``beam_indices``); errors are counted, never swallowed by bare ``except``.
"""

from hallulab.methods.hallucheck.raw import HalluCheckScores
from hallulab.methods.hallucheck.unit_texts import UNIT_TEXTS
from hallulab.pipeline.spec import (
    TEXT_LOGPROBS,
    AnswerSpread,
    KnobSection,
    MethodSpec,
    RoleCheck,
    StepInputs,
    unplanned,
)

#: the decision paths of NER facts regenerated greedily by the generator (the table's variant)
_PATHS = "decision_paths.ner/generator/greedy"

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
        llm_roles=("question_generator", "generator", "verifier", "qa", "judge"),
        prompts=(
            "hallucheck.question_prompt",
            "hallucheck.answer_prompt",
            "hallucheck.span_prompt",
            "hallucheck.judge_prompt",
        ),
    ),
    aggregate=StepInputs(params=("hallucheck.aggregate",)),
    order=70,
    benchmark_variants=("hallucheck_ner_greedy",),  # Algorithm 1 on NER facts with greedy regeneration
    needs=(TEXT_LOGPROBS,),
    other_levels=("fact", "sentence"),
    calls=unplanned("its questions come from extracted facts and its re-answers from the questions"),
    shards=True,
    units=UNIT_TEXTS,  # its checked facts, one set per tagging
    knobs=(
        KnobSection("hallucheck.score", "score:HalluCheckScoreKnobs"),
        KnobSection("hallucheck.aggregate", "aggregate:HalluCheckKnobs"),
    ),
    role_checks=(
        RoleCheck(
            role="question_generator",
            label="questions formed",
            succeeded="questions_asked - questions_not_formed",
            of="questions_asked",
            failed="facts got no question",
        ),
        # a fact whose regenerated answer disagrees is flagged: when nearly every fact's does,
        # the regeneration, not the response, decides the score
        AnswerSpread(
            role="generator",
            answers=(
                ("agreed", f"{_PATHS}.passed + {_PATHS}.ks_uniform"),
                ("disagreed", f"{_PATHS}.misaligned"),
            ),
            of=f"{_PATHS}.passed + {_PATHS}.ks_uniform + {_PATHS}.misaligned",
            noun="facts",
            said="the {role}'s regenerated answer {answer} with the response for {count} of {of} {noun}",
            variants=("hallucheck_ner_greedy",),
        ),
    ),
)
