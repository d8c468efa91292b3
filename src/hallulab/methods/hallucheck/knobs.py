"""HalluCheck's knob classes and the choices they name, kept apart from the method's code so
that declaring them imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.artifacts.atomic_facts import TAGGINGS
from hallulab.core.config import setting

#: how a regeneration decodes (Table 3; :mod:`hallulab.methods.hallucheck.score`): greedy, the
#: released 5-beam call, or that call sampling; the second part of a ``role/decoding`` key
DECODINGS = ("greedy", "beam", "sampled")
QUESTION_SOURCES = ("llm", "hub")
SPAN_READERS = ("llm", "hub")
ALIGNMENTS = ("f1", "containment", "judge")


@dataclass(frozen=True)
class HalluCheckScoreKnobs:
    """params ``hallucheck.score``."""

    taggings: tuple[str, ...] = setting(
        ("ner", "pos", "random"), choices=TAGGINGS, scalar_ok=True, doc="the atomic facts' taggings (Table 4)"
    )
    decodings: tuple[str, ...] = setting(
        ("greedy", "beam", "sampled"),
        choices=DECODINGS,
        scalar_ok=True,
        doc="the regenerations' decodings (Table 3: greedy, beam; the released call samples)",
    )
    num_beams: int = setting(5, minimum=2, doc="beam size of the beam and sampled decodings (Table 3, released: 5)")
    sampling_temperature: float = setting(
        0.7,
        above=0.0,
        doc="temperature of the sampled decoding (Qwen2.5-7B-Instruct's own generation settings, "
        "the model the released prompt is written for)",
    )
    sampling_top_p: float = setting(0.8, above=0.0, maximum=1.0, doc="nucleus of the sampled decoding")
    seed: int = setting(0, doc="seeds each question's sampled decoding")
    cross_eval: bool = setting(True, doc="also regenerate with the verifier role (Table 2, Cross Eval)")
    judge: bool = setting(
        True, doc="ask the judge role whether each pair of answer spans agrees (the released alignment)"
    )
    judge_max_new_tokens: int = setting(100, minimum=1, doc="the judge's reply length (released: 100)")
    max_new_tokens: int = setting(
        100, minimum=1, doc="steps regenerated (released: 100; the KS test reads the first 50)"
    )
    top_k: int = setting(5, minimum=2, doc="probabilities per step for the KS test (the paper: top-5)")
    question_source: str = setting(
        "llm", choices=QUESTION_SOURCES, doc="llm: llms.question_generator (offline substitute); hub: the paper's T5"
    )
    hub_question_model: str = "mrm8488/t5-base-finetuned-question-generation-ap"
    span_reader: str = setting("llm", choices=SPAN_READERS, doc="who reads the answer spans: llms.qa or a hub QA model")
    hub_span_model: str = setting(
        "distilbert/distilbert-base-cased-distilled-squad", doc="the released pipeline's default extractive QA model"
    )
    span_max_new_tokens: int = setting(32, minimum=1, doc="the llm span reader's reply length")
    fact_probability: bool = setting(
        True, doc="also teacher-force the fact as the generator's answer (the _factnll reading; white-box only)"
    )


@dataclass(frozen=True)
class HalluCheckKnobs:
    """params ``hallucheck.aggregate``."""

    alignment: str = setting(
        "judge",
        choices=ALIGNMENTS,
        doc="the headline's: judge (the released: llms.judge on the two spans) | f1 (>= f1_threshold) | containment",
    )
    f1_threshold: float = setting(0.6, minimum=0.0, maximum=1.0, doc="aligned when token F1 >= this")
    ks_alpha: float = setting(0.05, above=0.0, maximum=1.0, doc="a step is uniform when the KS p-value exceeds this")
    ks_steps: int = setting(50, minimum=1, doc="generated steps tested")
    no_fact_score: float = setting(1.0, minimum=0.0, maximum=1.0, doc="response score when no fact could be checked")
