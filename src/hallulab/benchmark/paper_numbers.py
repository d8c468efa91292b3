"""The papers' numbers beside the table's cells: only where a paper scored the same thing.

A published number sits beside a cell when the paper scored **the same data set** (the same
responses with the same labels), at **the same level**, with **the same positive class**, by
**the same metric**. Each such pairing is declared once (:data:`PAIRINGS`), with the paper's
model, and the number itself is read from the project's record of the papers' tables
(:data:`hallulab.evaluation.paper_tables.PAPER_REFERENCE`), never typed here.

**The metric.** SelfCheckGPT's WikiBio AUC-PR (Table 2) is the area under the precision-recall
curve by the trapezoid rule, ``auc(recall, precision)`` over scikit-learn's
``precision_recall_curve`` (its released evaluation, :mod:`hallulab.evaluation.protocol`), and
FactSelfCheck reports it by the same protocol (§4.4). The table's PR-AUC is average precision
(:mod:`hallulab.benchmark.statistics`): the same curve, summed in steps. The two differ, most
for a flat score (the trapezoid joins the curve's first point, precision 1 at recall 0, to the
last one, so a score that ties every unit gets (1 + p) / 2 for positive rate p, where average
precision gives p). So a paired cell is also scored by the paper's own metric
(:data:`PAPER_METRICS`), on its own units and with its interval from the same resamples of its
records (:func:`paper_entry`): that value, not the table's PR-AUC, is the one to set against the
paper's.

**The positive class.** SelfCheckGPT's NonFact task counts a sentence labelled minor or major
inaccurate as positive (§7.1), as the table does at the sentence level (label above the
protocol's ``nonfact_threshold``, :mod:`hallulab.benchmark.units`); the paper's Random row is
then the positive rate of the 1,908 WikiBio sentences (a test checks it against the table's
units).

**The records.** A cell that calls an LLM runs on a subset of its data set
(``conf/benchmark.yaml``): its number is on fewer units than the paper's, where the positive
rate (and so the random level of an AUC-PR) differs. The entry says how many units each side
scored (``same_units``), and the rendered tables mark it.

Every paper number of a table column that is not paired is declared with its reason
(:data:`NOT_PAIRED`), so that the page says which rows a paper can speak to and which not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hallulab.benchmark.statistics import Estimate, estimate
from hallulab.benchmark.units import CellUnits
from hallulab.evaluation import bootstrap
from hallulab.evaluation.paper_tables import PAPER_REFERENCE
from hallulab.evaluation.protocol import ProtocolKnobs


@dataclass(frozen=True)
class PaperMetric:
    """A published metric as a cell can be scored by it: its level and positive class, the
    table's metric it is set beside, and its weighted form (as :data:`hallulab.benchmark.statistics.METRICS`)."""

    name: str
    title: str
    level: str
    positive: str
    beside: str
    weighted: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


#: the papers' metrics a pairing may use, by their name in the paper tables
PAPER_METRICS: dict[str, PaperMetric] = {
    "nonfact_aucpr": PaperMetric(
        name="nonfact_aucpr",
        title="NonFact AUC-PR (trapezoid rule)",
        level="sentence",
        positive="a sentence labelled minor or major inaccurate",
        beside="pr_auc",
        weighted=bootstrap.aucpr_trapezoid,
    ),
}


@dataclass(frozen=True)
class Pairing:
    """One cell of the table and the published number that scores the same thing."""

    dataset: str
    method: str
    variant: str
    #: a key of :data:`~hallulab.evaluation.paper_tables.PAPER_REFERENCE`, its row and metric
    reference: str
    row: str
    metric: str
    #: the paper, where in it, and the model behind the number
    paper: str
    where: str
    model: str
    #: what the paper scored: its records and units at the metric's level
    records: int
    units: int

    @property
    def key(self) -> str:
        return f"{self.method}/{self.variant}"

    @property
    def value(self) -> float:
        """The published number, read from the paper tables."""
        return PAPER_REFERENCE[self.reference].rows[self.row][self.metric]


def _wikibio(method: str, variant: str, reference: str, row: str, paper: str, where: str, model: str) -> Pairing:
    """A pairing on WikiBio GPT-3 (SelfCheckGPT's set: 238 passages, 1,908 labelled sentences),
    by NonFact AUC-PR."""
    return Pairing("wikibio", method, variant, reference, row, "nonfact_aucpr", paper, where, model, 238, 1908)


PAIRINGS: tuple[Pairing, ...] = (
    _wikibio(
        "selfcheck_ngram",
        "ngram_n1_max",
        "table2",
        "ngram_n1_max",
        "SelfCheckGPT",
        "Table 2, w/ Unigram (max)",
        "no model: a unigram model fit on the data's GPT-3 samples",
    ),
    _wikibio(
        "greybox",
        "max_neglogp",
        "table8-llama-30b",
        "max_neglogp",
        "SelfCheckGPT",
        "Table 2, proxy LLM, Max(-log p)",
        "LLaMA-30B as the proxy",
    ),
    _wikibio(
        "greybox",
        "max_entropy",
        "table8-llama-30b",
        "max_entropy",
        "SelfCheckGPT",
        "Table 2, proxy LLM, Max(H)",
        "LLaMA-30B as the proxy",
    ),
    _wikibio(
        "selfcheck_nli",
        "nli",
        "table2-nli",
        "nli",
        "SelfCheckGPT",
        "Table 2, w/ NLI",
        "DeBERTa-v3-large fine-tuned on MNLI",
    ),
    _wikibio(
        "selfcheck_bertscore",
        "bertscore",
        "table2-bertscore",
        "bertscore",
        "SelfCheckGPT",
        "Table 2, w/ BERTScore",
        "RoBERTa-large",
    ),
    _wikibio(
        "selfcheck_prompt",
        "prompt",
        "table2-prompt",
        "prompt",
        "SelfCheckGPT",
        "Table 2, w/ Prompt",
        "gpt-3.5-turbo as the evaluator",
    ),
    _wikibio(
        "selfcheck_mqag",
        "mqag_bayes_with_alpha",
        "table2",
        "mqag_bayes_with_alpha",
        "SelfCheckGPT",
        "Table 2, w/ QA",
        "MQAG: T5 question generation, Longformer answering",
    ),
    _wikibio(
        "factselfcheck",
        "fsc_kg_freq_max",
        "fsc-table1",
        "fsc_kg_freq_max",
        "FactSelfCheck",
        "Table 6, FSC-KG (frequency), max",
        "Llama-3.1-70B-Instruct extracting the knowledge graphs",
    ),
    _wikibio(
        "factselfcheck",
        "fsc_kg_llm_max",
        "fsc-table1",
        "fsc_kg_llm_max",
        "FactSelfCheck",
        "Table 6, FSC-KG (LLM), max",
        "Llama-3.1-70B-Instruct extracting and scoring the facts",
    ),
)


@dataclass(frozen=True)
class NotPaired:
    """Published numbers the table does not set beside a cell, and why."""

    paper: str
    #: the keys of :data:`~hallulab.evaluation.paper_tables.PAPER_REFERENCE` it covers (none for
    #: a paper whose numbers the project does not record)
    references: tuple[str, ...]
    #: the table's columns it could seem to speak to
    datasets: tuple[str, ...]
    reason: str


NOT_PAIRED: tuple[NotPaired, ...] = (
    NotPaired(
        "HalluCheck",
        ("hallucheck-nq_open", "hallucheck-hotpotqa"),
        ("nq_open", "hotpotqa"),
        "its Tables 2-4 (HalluCheck, and its SAC3-Q and SelfCheckGPT baselines) score Mistral-7B-Instruct's own"
        " answers to the data sets' validation questions, labelled against the gold answers; these columns hold"
        " SAC3's 250 gpt-3.5 answers per set with SAC3's labels: other responses, other labels",
    ),
    NotPaired(
        "SAC3",
        (),
        ("nq_open", "hotpotqa"),
        "SAC3's paper reports AUROC on the SAC3 sets these columns hold, but the project records none of its"
        " numbers among the papers' tables (hallulab.evaluation.paper_tables), so none is shown",
    ),
    NotPaired(
        "CCP",
        ("ccp-vicuna13b",),
        ("factualbio", "wikibio"),
        "its Tables 1, 2 and 11 score claims of Vicuna 13b's own biographies with FactScore labels, a data set the"
        " table does not hold",
    ),
    NotPaired(
        "Self-Familiarity",
        ("sf-table2",),
        ("concept7",),
        "its labels say whether a paper model (Vicuna-13B for this column) knows each concept, and its AUC scores"
        " that model's own familiarity; the table's cell scores the familiarity of the model that fills its roles"
        " (SmolLM2-135M by default) against Vicuna-13B's labels, on a subset of the instructions: not the same task",
    ),
    NotPaired(
        "FactSelfCheck",
        ("fsc-table5", "fsc-table3"),
        ("wikibio",),
        "Table 5 scores WikiBio's knowledge-graph facts, labelled by an LLM judge (the table has no fact labels"
        " on WikiBio), and Table 3 judges corrections, not detection",
    ),
    NotPaired(
        "SelfCheckGPT",
        ("table7", "table5", "table8-opt-125m"),
        ("wikibio",),
        "Tables 7, 5 and 8 hold the readings the table has no row for (other n-gram orders and aggregations, the"
        " other QA scorings, proxies other than Table 2's LLaMA-30B): they are on SelfCheckGPT's page",
    ),
)


def pairing_for(dataset: str, key: str) -> Pairing | None:
    """The pairing of the cell ``key`` (``method/variant``) in the column ``dataset``, if any."""
    return next((p for p in PAIRINGS if p.dataset == dataset and p.key == key), None)


def paper_entry(
    pairing: Pairing, units: CellUnits, cfg: ProtocolKnobs, models: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``paper`` field of a paired cell's entry in the table file: the published number and
    where it comes from, and the cell scored by the paper's metric (``cell``: point, low, high)
    on its own units; ``same_units`` says whether the cell scored the units the paper scored;
    ``models``: role -> the model behind it in the cell's run."""
    metric = PAPER_METRICS[pairing.metric]
    if units.level != metric.level:
        raise ValueError(
            f"{pairing.dataset}/{pairing.key}: its units are at the {units.level} level, the paper's"
            f" {metric.title} at the {metric.level} level"
        )
    found: Estimate = estimate(units, metric.weighted, cfg)
    records = len(set(units.records))
    return {
        "paper": pairing.paper,
        "where": pairing.where,
        "model": pairing.model,
        "metric": metric.name,
        "metric_title": metric.title,
        "beside": metric.beside,
        "value": pairing.value,
        "cell": found.to_list(),
        "paper_records": pairing.records,
        "paper_units": pairing.units,
        "same_units": records == pairing.records and len(units.scores) == pairing.units,
        "cell_models": dict(models or {}),
    }
