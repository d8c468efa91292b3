"""Published numbers the pipeline reproduces (facts from the papers, in percent).

SelfCheckGPT (Manakul et al., 2023), WikiBio GPT-3, 238 passages / 1908 sentences.
Metric order: NonFact, NonFact*, Factual AUC-PR; passage Pearson, Spearman.
"""

from __future__ import annotations

PAPER_METRICS = ("nonfact_aucpr", "nonfact_star_aucpr", "factual_aucpr", "passage_pearson", "passage_spearman")


def _rows(table: dict[str, tuple[float, ...]]) -> dict[str, dict[str, float]]:
    return {variant: dict(zip(PAPER_METRICS, values, strict=True)) for variant, values in table.items()}


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
