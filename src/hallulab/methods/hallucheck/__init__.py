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

Like the released code, the ``judge`` role decides whether the two spans agree, every fact of a
response in one prompt with the released wording and examples
(:mod:`hallulab.methods.hallucheck.judge`), and the KS test reads the span's steps and the step
before, against scipy's U[min, min + max], the reference the released ``args=(min, max)`` gives.
Alignment by whitespace-token F1 >= 0.6 (the released ``calculate_f1_score``, left commented
out there; ``_f1``, the reading that needs no reply format), the test against U[min, max],
SQuAD-normalised F1 and this project's earlier fact-window reading (the fact against the
reply's best-matching window) are labelled variants. Deliberate differences from the released code (ConFactCheck):
every fact is checked on its own (the released code ``break``s out of its loop over facts when a
span's tokens are not found among the generated tokens, and every later fact stays flagged
without a test), and with beam search it reads ``scores[i][j]`` as if the beam index j were the
question index; here the beam's per-step distribution is the one of the beam the answer came
from (``beam_indices``); errors are counted, never swallowed by bare ``except``.
"""

from hallulab.methods.hallucheck.raw import HalluCheckScores
from hallulab.methods.hallucheck.row_label import row_label
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

#: the table's rows: Algorithm 1 on NER facts with greedy regeneration, aligned by the judge as
#: released, and by token F1 (the reading that needs no reply format)
_HEADLINE, _F1 = "hallucheck_ner_greedy", "hallucheck_ner_greedy_f1"


def _agreement(paths: str, variant: str) -> AnswerSpread:
    """A fact whose regenerated answer disagrees is flagged: when nearly every fact's does, the
    regeneration, not the response, decides the score (``paths``: the decision paths of NER
    facts regenerated greedily by the generator, under the variant's alignment)."""
    return AnswerSpread(
        role="generator",
        answers=(("agreed", f"{paths}.passed + {paths}.ks_uniform"), ("disagreed", f"{paths}.misaligned")),
        of=f"{paths}.passed + {paths}.ks_uniform + {paths}.misaligned",
        noun="facts",
        said="the {role}'s regenerated answer {answer} with the response for {count} of {of} {noun}",
        variants=(variant,),
    )


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
    benchmark_variants=(_HEADLINE, _F1),
    needs=(TEXT_LOGPROBS,),
    other_levels=("fact", "sentence"),
    calls=unplanned("its questions come from extracted facts and its re-answers from the questions"),
    shards=True,
    units=UNIT_TEXTS,  # its checked facts, one set per tagging
    knobs=(
        KnobSection("hallucheck.score", "knobs:HalluCheckScoreKnobs"),
        KnobSection("hallucheck.aggregate", "knobs:HalluCheckKnobs"),
    ),
    role_checks=(
        RoleCheck(
            role="question_generator",
            label="questions formed",
            succeeded="questions_asked - questions_not_formed",
            of="questions_asked",
            failed="facts got no question",
        ),
        # the judge's replies: the released reading takes a Python-style list of one 0 or 1 per
        # fact; a reply it cannot read leaves its response's facts unchecked
        RoleCheck(
            role="judge",
            label="replies read as a list of one 0 or 1 per fact",
            succeeded="judge_replies_parsed + judge_replies_too_long",
            of="judge_prompts",
            failed="replies were not a list of one 0 or 1 per fact",
            variants=(_HEADLINE,),
        ),
        AnswerSpread(
            role="judge",
            answers=(("the same thing", "judge_same"), ("not the same thing", "judge_different")),
            of="judge_same + judge_different",
            noun="pairs of answer spans",
            said="the {role} judged {count} of {of} {noun} {answer}",
            variants=(_HEADLINE,),
        ),
        _agreement("decision_paths.ner/generator/greedy", _HEADLINE),
        _agreement("decision_paths_f1.ner/generator/greedy", _F1),
    ),
    row_label=row_label,
)
