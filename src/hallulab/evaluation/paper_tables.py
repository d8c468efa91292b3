"""Published numbers the pipeline reproduces (facts from the papers, in percent).

SelfCheckGPT (Manakul et al., 2023), WikiBio GPT-3, 238 passages / 1908 sentences.
Metric order: NonFact, NonFact*, Factual AUC-PR; passage Pearson, Spearman.

Every published number the docs set beside ours is here, keyed by the metric names of the
results files; a number in a setting unlike ours (another model or data set) says so in the
label of its :class:`PaperReference`, and no page types one in its prose.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER_METRICS = ("nonfact_aucpr", "nonfact_star_aucpr", "factual_aucpr", "passage_pearson", "passage_spearman")


def _rows(table: dict[str, tuple[float, ...]], metrics: tuple[str, ...] = PAPER_METRICS) -> dict[str, dict[str, float]]:
    """variant -> the paper's numbers in ``metrics`` order into variant -> metric -> number."""
    return {variant: dict(zip(metrics, values, strict=True)) for variant, values in table.items()}


#: Table 7 (Appendix D): SelfCheckGPT with n-gram, n = 1..5, Avg and Max of -log p.
SELFCHECK_TABLE7 = _rows(
    {
        "ngram_n1_avg": (81.52, 40.33, 41.76, 40.68, 39.22),
        "ngram_n2_avg": (82.94, 44.38, 52.81, 58.84, 58.11),
        "ngram_n3_avg": (83.56, 44.64, 53.99, 62.21, 63.00),
        "ngram_n4_avg": (83.80, 43.55, 54.25, 61.98, 63.64),
        "ngram_n5_avg": (83.45, 42.31, 53.98, 60.68, 62.96),
        "ngram_n1_max": (85.63, 41.04, 58.47, 64.71, 64.91),
        "ngram_n2_max": (85.26, 39.29, 58.29, 62.48, 66.04),
        "ngram_n3_max": (84.97, 37.10, 57.08, 57.34, 60.49),
        "ngram_n4_max": (84.49, 36.37, 55.96, 55.77, 57.25),
        "ngram_n5_max": (84.12, 36.19, 54.89, 54.84, 55.97),
    }
)

#: Table 2: the "w/ Unigram (max)" row (identical to Table 7's 1-gram Max row) and Random.
SELFCHECK_TABLE2_UNIGRAM_MAX = SELFCHECK_TABLE7["ngram_n1_max"]
SELFCHECK_TABLE2_RANDOM = {"nonfact_aucpr": 72.96, "nonfact_star_aucpr": 29.72, "factual_aucpr": 27.04}

#: Table 2: the sampling-based variants (paper models: roberta-large BERTScore, potsawee
#: T5 + Longformer MQAG with Bayes + alpha, DeBERTa-v3-large-MNLI NLI, GPT-3.5 Prompt).
SELFCHECK_TABLE2 = _rows(
    {
        "bertscore": (81.96, 45.96, 44.23, 58.18, 55.90),
        "mqag_bayes_with_alpha": (84.26, 40.06, 48.14, 61.07, 59.29),
        "ngram_n1_max": (85.63, 41.04, 58.47, 64.71, 64.91),
        "nli": (92.50, 45.17, 66.08, 74.14, 73.78),
        "prompt": (93.42, 53.19, 67.09, 78.32, 78.30),
    }
)

#: Table 5 (Appendix B): SelfCheckGPT-QA scoring variants.
SELFCHECK_TABLE5 = _rows(
    {
        "mqag_counting": (83.97, 40.07, 47.78, 57.39, 55.15),
        "mqag_bayes": (83.04, 38.58, 47.41, 56.43, 55.03),
        "mqag_bayes_with_alpha": (84.26, 40.06, 48.14, 61.07, 59.29),
    }
)

#: Table 2 / Table 8: proxy-LLM grey-box baselines (teacher-forced GPT-3 text), per proxy
#: model. OPT-125m is the published model closest in size to the embedded SmolLM2-135M.
SELFCHECK_TABLE8 = {
    "llama-30b": _rows(
        {
            "avg_neglogp": (75.43, 30.32, 41.29, 21.72, 20.20),
            "avg_entropy": (80.80, 39.01, 42.97, 33.80, 39.49),
            "max_neglogp": (74.01, 27.14, 31.08, -22.83, -22.71),
            "max_entropy": (80.92, 37.32, 37.90, 35.57, 38.94),
        }
    ),
    "llama-7b": _rows(
        {
            "avg_neglogp": (71.69, 27.87, 31.30, -2.71, -2.59),
            "avg_entropy": (78.67, 37.22, 33.81, 19.44, 21.79),
            "max_neglogp": (69.57, 25.91, 26.54, -42.57, -38.24),
            "max_entropy": (79.65, 35.57, 31.32, 22.10, 22.53),
        }
    ),
    "opt-125m": _rows(
        {
            "avg_neglogp": (66.63, 25.31, 23.07, -30.38, -37.54),
            "avg_entropy": (71.51, 30.88, 25.36, -14.16, -13.76),
            "max_neglogp": (69.23, 27.66, 24.14, -39.22, -37.18),
            "max_entropy": (71.32, 31.65, 25.36, -18.05, -17.37),
        }
    ),
}

#: FactSelfCheck Table 6 (WikiBio, Llama-3.1-70B-Instruct): Hallucination (NonFact) and
#: Factuality AUC-PR of the sentence-level scores.
FACTSELFCHECK_TABLE6 = _rows(
    {
        "fsc_text_max": (92.45, 65.55),
        "fsc_kg_llm_max": (91.82, 64.64),
        "fsc_text_mean": (91.01, 63.77),
        "fsc_kg_llm_mean": (90.24, 62.95),
        "fsc_kg_freq_max": (88.48, 53.86),
        "fsc_kg_freq_mean": (88.25, 55.27),
        "fsc_random_fact_mean": (74.22, 29.74),
        "random_sentence": (72.96, 27.04),  # the RandomSentence row
    },
    ("nonfact_aucpr", "factual_aucpr"),
)


#: FactSelfCheck Table 5 (Appendix C): fact-level AUC-PR (a hallucinated fact positive) on the
#: 5,488 facts of WikiBio's response graphs, labelled by an LLM judge reading the Wikipedia
#: biography; Llama-3.1-70B extracting and judging, one fact one triple (no aggregation). Rows:
#: FactSelfCheck-Text, -KG (LLM-based), -KG (Freq.-based), RandomFact; in this project's metric
#: of a labelled fact, ``claim_pr_auc``.
FACTSELFCHECK_TABLE5 = _rows(
    {"fsc_text": (93.41,), "fsc_kg_llm": (92.25,), "fsc_kg_freq": (87.99,), "fsc_random_fact": (65.79,)},
    ("claim_pr_auc",),
)


def _percent(metrics: tuple[str, ...], table: dict[str, tuple[float, ...]]) -> dict[str, dict[str, float]]:
    """variant -> the paper's fractions in ``metrics`` order into variant -> metric -> percent."""
    return _rows(
        {variant: tuple(round(100.0 * value, 2) for value in values) for variant, values in table.items()}, metrics
    )


#: CCP (Fadeeva et al., 2024), claim level on Vicuna 13b's own English biographies with
#: FactScore labels: Table 1 (ROC-AUC) and Table 2 (PR-AUC, Not Supported positive), column
#: "Vicuna 13b", rows Maximum Prob., Perplexity, Token Entropy (the claim's maximum, §3),
#: P(True); Table 11 (Vicuna 13b) for CCP in each NLI context (its claim-prefix row is
#: Tables 1-2's "CCP (ours)").
CCP_VICUNA13B = _percent(
    ("claim_roc_auc", "claim_pr_auc"),
    {
        "maxprob": (0.60, 0.18),
        "perplexity": (0.58, 0.17),
        "max_entropy": (0.60, 0.18),
        "ptrue": (0.61, 0.21),
        "ccp_claimpref": (0.66, 0.24),
        "ccp_nocontext": (0.64, 0.24),
        "ccp_sentpref": (0.59, 0.18),
    },
)


#: HalluCheck (ConFactCheck) Tables 2-4, Mistral-7B-Inst checking its own answers to the data
#: set's validation questions, per data set. Keys name table and row: Table 2 (column pair
#: "Mistral-7B", AUC-ROC and AP) rows "HALLUCHECK (Fact alignment)" (alignment with greedy
#: decoding, no KS check), "SAC3" (SAC3-Q, Appendix A.2) and "SelfCheckGPT" (MQAG, Bayes with
#: alpha, Appendix A.1); Table 3 (AUC-ROC) rows "Mistral-7B Greedy" and "Beam" (the full
#: method); Table 4 (AUC-ROC) row "NER".
HALLUCHECK_MISTRAL7B: dict[str, dict[str, dict[str, float]]] = {
    "nq_open": {
        **_percent(
            ("response_roc_auc", "response_ap"),
            {
                "table2_fact_alignment": (0.67, 0.88),
                "table2_sac3_q": (0.54, 0.83),
                "table2_selfcheckgpt_mqag": (0.46, 0.79),
            },
        ),
        **_percent(("response_roc_auc",), {"table3_greedy": (0.64,), "table3_beam": (0.56,), "table4_ner": (0.67,)}),
    },
    "hotpotqa": {
        **_percent(
            ("response_roc_auc", "response_ap"),
            {
                "table2_fact_alignment": (0.56, 0.84),
                "table2_sac3_q": (0.53, 0.83),
                "table2_selfcheckgpt_mqag": (0.54, 0.83),
            },
        ),
        **_percent(("response_roc_auc",), {"table3_greedy": (0.53,), "table3_beam": (0.53,), "table4_ner": (0.56,)}),
    },
}


#: Self-Familiarity (Luo et al., 2023) Table 2 (Concept-7 instructions, GPT-4 labels): AUC,
#: ACC, F1, PEA per model and method (percent). Column order of the paper.
SF_TABLE2_METHODS = (
    "greedy_perplexity",
    "greedy_avglogp",
    "greedy_minlogp",
    "sample_bertscore",
    "sample_sentencescore",
    "self_detection",
    "forward_inference",
    "forward_self",
    "selffam",
)
SF_METRICS = ("prompt_auc", "prompt_acc", "prompt_f1", "prompt_pearson")


def _sf_rows(values: dict[str, tuple[float, ...]]) -> dict[str, dict[str, float]]:
    """metric -> 9 values (paper columns) into variant -> metric -> percent."""
    return {
        method: {metric: round(100.0 * values[metric][i], 2) for metric in SF_METRICS}
        for i, method in enumerate(SF_TABLE2_METHODS)
    }


SF_TABLE2: dict[str, dict[str, dict[str, float]]] = {
    "vicuna-13b-v1.3": _sf_rows(
        {
            "prompt_auc": (0.867, 0.806, 0.760, 0.872, 0.831, 0.765, 0.809, 0.611, 0.927),
            "prompt_acc": (0.497, 0.676, 0.604, 0.779, 0.718, 0.524, 0.720, 0.538, 0.868),
            "prompt_f1": (0.651, 0.728, 0.693, 0.807, 0.757, 0.000, 0.744, 0.653, 0.854),
            "prompt_pearson": (0.266, 0.393, 0.398, 0.640, 0.628, 0.541, 0.402, 0.313, 0.693),
        }
    ),
    "falcon-7b-instruct": _sf_rows(
        {
            "prompt_auc": (0.697, 0.621, 0.631, 0.666, 0.656, 0.532, 0.511, 0.516, 0.926),
            "prompt_acc": (0.487, 0.381, 0.670, 0.416, 0.421, 0.470, 0.330, 0.377, 0.882),
            "prompt_f1": (0.553, 0.504, 0.000, 0.526, 0.527, 0.464, 0.495, 0.462, 0.822),
            "prompt_pearson": (0.299, 0.180, 0.227, 0.180, 0.270, 0.003, 0.099, -0.009, 0.687),
        }
    ),
    "mpt-7b-instruct": _sf_rows(
        {
            "prompt_auc": (0.639, 0.558, 0.621, 0.724, 0.736, 0.530, 0.638, 0.500, 0.921),
            "prompt_acc": (0.616, 0.384, 0.616, 0.497, 0.480, 0.416, 0.470, 0.410, 0.850),
            "prompt_f1": (0.000, 0.555, 0.000, 0.602, 0.590, 0.542, 0.563, 0.539, 0.817),
            "prompt_pearson": (0.182, 0.034, 0.170, 0.299, 0.326, 0.083, -0.081, -0.039, 0.661),
        }
    ),
    "alpaca-native": _sf_rows(
        {
            "prompt_auc": (0.701, 0.641, 0.591, 0.650, 0.653, 0.523, 0.520, 0.546, 0.918),
            "prompt_acc": (0.470, 0.454, 0.460, 0.517, 0.497, 0.503, 0.515, 0.452, 0.866),
            "prompt_f1": (0.614, 0.590, 0.596, 0.634, 0.621, 0.526, 0.432, 0.599, 0.848),
            "prompt_pearson": (0.314, 0.204, 0.121, 0.196, 0.265, 0.130, 0.070, 0.123, 0.685),
        }
    ),
}

#: Table 4 (Vicuna-13B): entity-processing and aggregation ablations (AUC, ACC, F1).
SF_TABLE4 = {
    variant: dict(zip(SF_METRICS[:3], (round(100.0 * a, 2), round(100.0 * b, 2), round(100.0 * c, 2)), strict=True))
    for variant, (a, b, c) in {
        "selffam": (0.927, 0.868, 0.854),
        "selffam_nogrouping": (0.918, 0.856, 0.841),
        "selffam_nofiltering": (0.923, 0.856, 0.841),
        "selffam_noranking": (0.926, 0.86, 0.845),
        "selffam_min": (0.902, 0.808, 0.767),
        "selffam_first": (0.921, 0.866, 0.858),
    }.items()
}


@dataclass(frozen=True)
class PaperReference:
    """Published numbers of one method: the data set they are on, where they come from, and
    variant -> metric -> value (percent)."""

    dataset: str
    label: str
    rows: dict[str, dict[str, float]]


#: FactSelfCheck Table 3 (§4.5, §5.2): WikiBio, GPT-4o correcting and judging, the share of
#: judged sentences per verdict (percent) and its relative change to the baseline as published
#: (the change column is the paper's, computed before its shares were rounded).
FACTSELFCHECK_TABLE3: dict[str, dict[str, float]] = {
    "baseline": {"factual": 23.0, "non-factual": 74.0, "refused": 4.0},
    "sentence": {
        "factual": 25.0,
        "non-factual": 70.0,
        "refused": 5.0,
        "factual_change_percent": 10.6,
        "non-factual_change_percent": -4.8,
        "refused_change_percent": 30.0,
    },
    "fact": {
        "factual": 31.0,
        "non-factual": 64.0,
        "refused": 5.0,
        "factual_change_percent": 35.5,
        "non-factual_change_percent": -12.5,
        "refused_change_percent": 30.0,
    },
}


#: A method spec's ``paper_table`` key -> its published numbers. The summary shows them beside
#: the pipeline's numbers on the same data set only.
PAPER_REFERENCE: dict[str, PaperReference] = {
    "table7": PaperReference("wikibio", "SelfCheckGPT Table 7", SELFCHECK_TABLE7),
    "table5": PaperReference("wikibio", "SelfCheckGPT Table 5 (T5 + Longformer)", SELFCHECK_TABLE5),
    "table2-nli": PaperReference(
        "wikibio", "SelfCheckGPT Table 2 (DeBERTa-v3-large)", {"nli": SELFCHECK_TABLE2["nli"]}
    ),
    "table2-bertscore": PaperReference(
        "wikibio", "SelfCheckGPT Table 2 (RoBERTa-large)", {"bertscore": SELFCHECK_TABLE2["bertscore"]}
    ),
    "table2-prompt": PaperReference(
        "wikibio", "SelfCheckGPT Table 2 (GPT-3.5)", {"prompt": SELFCHECK_TABLE2["prompt"]}
    ),
    "table8-opt-125m": PaperReference("wikibio", "SelfCheckGPT Table 8 (OPT-125m proxy)", SELFCHECK_TABLE8["opt-125m"]),
    "table8-llama-30b": PaperReference(
        "wikibio", "SelfCheckGPT Table 8 (LLaMA-30B proxy)", SELFCHECK_TABLE8["llama-30b"]
    ),
    "table2": PaperReference(
        "wikibio", "SelfCheckGPT Table 2", {**SELFCHECK_TABLE2, "random": SELFCHECK_TABLE2_RANDOM}
    ),
    "fsc-table1": PaperReference("wikibio", "FactSelfCheck Table 6 (Llama-3.1-70B)", FACTSELFCHECK_TABLE6),
    "fsc-table3": PaperReference(
        "wikibio", "FactSelfCheck Table 3 (GPT-4o correcting and judging)", FACTSELFCHECK_TABLE3
    ),
    "fsc-table5": PaperReference(
        "wikibio",
        "FactSelfCheck Table 5 (Llama-3.1-70B; WikiBio's triples labelled by an LLM judge, not FactualBio)",
        FACTSELFCHECK_TABLE5,
    ),
    "ccp-vicuna13b": PaperReference(
        "ccp_biographies",  # the paper's own biographies: no data set of this project
        "CCP Tables 1, 2 and 11 (Vicuna 13b's own biographies, FactScore labels)",
        CCP_VICUNA13B,
    ),
    "hallucheck-nq_open": PaperReference(
        "nq_open",
        "HalluCheck Tables 2-4 (Mistral-7B-Inst's own answers to NQ Open's validation questions)",
        HALLUCHECK_MISTRAL7B["nq_open"],
    ),
    "hallucheck-hotpotqa": PaperReference(
        "hotpotqa",
        "HalluCheck Tables 2-4 (Mistral-7B-Inst's own answers to HotpotQA's validation questions)",
        HALLUCHECK_MISTRAL7B["hotpotqa"],
    ),
    "sf-table2": PaperReference(
        "concept7",
        "Self-Familiarity Tables 2 and 4 (Vicuna-13B-v1.3 answering, its GPT-4 labels)",
        {**SF_TABLE2["vicuna-13b-v1.3"], **{k: v for k, v in SF_TABLE4.items() if k != "selffam"}},
    ),
}
