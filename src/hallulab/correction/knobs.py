"""The correction stage's knob class (params ``correction``) and the choices it names, kept
apart from the stage's code so that declaring it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

#: how the dev reading's fact threshold is chosen: by fact-level F1 on judge-labelled development
#: facts (the fact-level evaluation of the paper's Appendix C), or by Table 3's sentence-level rule
FACT_THRESHOLD_LABELS = ("judge", "sentence")


@dataclass(frozen=True)
class CorrectionKnobs:
    """params ``correction`` (without the prompts, which are files)."""

    fact_method: str = "factselfcheck"
    fact_variant: str = setting("fsc_kg_freq", doc="the FactSelfCheck variant whose fact scores flag facts")
    sentence_method: str = "selfcheck_prompt"
    sentence_variant: str = setting("prompt", doc="the sentence-level detector (the paper: SelfCheckGPT-Prompt)")
    dev_fraction: float = setting(0.5, above=0.0, maximum=0.95)
    fact_threshold_labels: str = setting(
        "judge",
        choices=FACT_THRESHOLD_LABELS,
        doc="the dev reading's fact threshold. judge: fact-level F1 on the judge's labels of the dev facts; "
        "sentence: Table 3's rule (sentence-level F1 of the facts' mean) on the dev labels",
    )
    seed: int = 0
    max_records: int | None = setting(None, minimum=1, doc="test passages corrected (null: all)")
    temperature: float = setting(0.5, minimum=0.0, doc="the paper: 0.5")
    max_new_tokens: int = setting(384, minimum=16)
    judge_top_k: int = setting(
        20, minimum=0, doc="top-K log-probabilities of the judge's first reply token for the P(No) reading; 0: off"
    )
