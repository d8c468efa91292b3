"""NumSemSets, EigValLaplacian, DegMat and Eccentricity (Lin, Trivedi and Sun, 2023, §3) equal
lm-polygraph 0.7.0's estimators of those names, at every similarity (NLI entailment, NLI
contradiction, Jaccard), two eigenvalue thresholds of Eccentricity and two values of N.

lm-polygraph's semantic matrices come from its own ``SemanticMatrixCalculator`` (which scores the
unique sample texts against each other, the diagonal included, and spreads them back over the
duplicates), run on an NLI stand-in: a tokenizer that passes the text pairs through and a model
whose float64 logits are a fixed function of the pair's words (no trained model: the comparison
is of what both sides compute from the same NLI outputs). hallulab's side sends the same
function through the ``nli_pair_matrix`` artifact's request (:func:`pair_matrices_of`) with the
same softmax, and runs each method's aggregate step on the records. Both sides then do the same
float64 arithmetic in the same order (the same scipy ``eigh`` on bit-identical Laplacians), so
the scores are compared for exact equality.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hallulab.artifacts.nli_pair_matrix import pair_matrices
from hallulab.artifacts.nli_pair_matrix.build import pair_matrices_of
from hallulab.core.config import compose
from hallulab.data.schema import Record
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method

pytestmark = pytest.mark.reference

#: planted meanings: the first two share one, a duplicate of the first, a contradicting one
EXTRA = Record(
    id="planted",
    prompt="Where was she born?",
    response="She was born in Warsaw.",
    sentences=("She was born in Warsaw.",),
    samples=(
        "She was born in Warsaw in 1867.",
        "Born in Warsaw in 1867, she was.",
        "She was born in Warsaw in 1867.",
        "He died in Paris, never in Warsaw.",
        "Vienna.",
    ),
)


def _words(text: str) -> set[str]:
    return set(text.lower().replace(",", " ").replace(".", " ").split())


def _logits(premise: str, hypothesis: str) -> list[float]:
    """Entailment grows with the share of the hypothesis's words the premise holds, contradiction
    with the words they do not share: asymmetric, and with both signs of E - C."""
    p, h = _words(premise), _words(hypothesis)
    covered = len(p & h) / max(len(h), 1)
    jaccard = len(p & h) / max(len(p | h), 1)
    return [6.0 * covered - 3.0, 0.3 * (len(premise) % 7) / 7, 4.0 * (1.0 - jaccard) - 2.0]


def _softmax(premises: list[str], hypotheses: list[str]) -> Any:
    import torch

    logits = torch.tensor([_logits(p, h) for p, h in zip(premises, hypotheses, strict=True)], dtype=torch.float64)
    return torch.nn.Softmax(dim=1)(logits)


def _stand_in_nli() -> Any:
    """The attributes lm-polygraph's ``SemanticMatrixCalculator`` reads of its DeBERTa wrapper."""

    class Encoded(dict):
        def to(self, device: str) -> Encoded:
            return self

    def tokenizer(batch: list[tuple[str, str]], **_: Any) -> Encoded:
        return Encoded(pairs=batch)

    def model(pairs: list[tuple[str, str]]) -> Any:
        import torch

        rows = [_logits(p, h) for p, h in pairs]
        return SimpleNamespace(logits=torch.tensor(rows, dtype=torch.float64))

    model.config = SimpleNamespace(label2id={"ENTAILMENT": 0, "NEUTRAL": 1, "CONTRADICTION": 2})  # type: ignore[attr-defined]
    return SimpleNamespace(deberta=model, deberta_tokenizer=tokenizer, device="cpu", batch_size=4)


def _passages(toy_passages: list[Record]) -> list[Record]:
    return [*toy_passages, EXTRA]


def _theirs(records: list[Record], n: int, estimator: Any) -> np.ndarray:
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    stats: dict[str, Any] = {"sample_texts": [list(p.samples[:n]) for p in records]}
    stats |= SemanticMatrixCalculator(_stand_in_nli())(stats, texts=[], model=None)
    return np.asarray(estimator(stats), dtype=np.float64)


def _ours(records: list[Record], name: str, variant: str, n: int, overrides: list[str]) -> np.ndarray:
    artifact = {
        "records": {
            rid: m.to_dict() for rid, m in pair_matrices_of(records, lambda p, h: _softmax(p, h).numpy()).items()
        }
    }
    spec = method(name)
    params = compose([*overrides, f"samples.used={n}"])
    view = ParamsView(params, spec.aggregate.param_keys(), f"aggregate_{name}")
    ctx: AggregateContext[None] = AggregateContext("t", records, {"nli_pair_matrix": artifact}, None, view)
    frame = importlib.import_module(f"hallulab.methods.{name}.aggregate").aggregate(ctx).scores
    frame = frame[frame["variant"] == variant].set_index("record_id")
    return frame.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)


def _estimator(name: str, similarity: str, threshold: float) -> Any:
    from lm_polygraph.estimators import DegMat, Eccentricity, EigValLaplacian, NumSemSets

    if name == "num_sem_sets":
        return NumSemSets()
    kind = "Jaccard_score" if similarity == "jaccard" else "NLI_score"
    affinity = "contra" if similarity == "contra" else "entail"
    if name == "eccentricity":
        return Eccentricity(similarity_score=kind, affinity=affinity, thres=threshold)
    return {"eig_val_laplacian": EigValLaplacian, "deg_mat": DegMat}[name](similarity_score=kind, affinity=affinity)


CASES = [
    ("num_sem_sets", "num_sem_sets", "", 0.9),
    *[("eig_val_laplacian", f"eigv_{s}", s, 0.9) for s in ("entail", "contra", "jaccard")],
    *[("deg_mat", f"degmat_{s}", s, 0.9) for s in ("entail", "contra", "jaccard")],
    *[("eccentricity", f"ecc_{s}", s, t) for s in ("entail", "contra", "jaccard") for t in (0.9, 0.5)],
]


@pytest.mark.parametrize(("name", "variant", "similarity", "threshold"), CASES)
def test_graph_estimators_equal_lm_polygraphs(
    toy_passages: list[Record], name: str, variant: str, similarity: str, threshold: float
) -> None:
    records = _passages(toy_passages)
    overrides = [] if name == "num_sem_sets" else [f"{name}.similarities=[{similarity}]"]
    if name == "eccentricity":
        overrides.append(f"eccentricity.threshold={threshold}")
    for n in (3, 5):
        theirs = _theirs(records, n, _estimator(name, similarity, threshold))
        ours = _ours(records, name, variant, n, overrides)
        np.testing.assert_array_equal(ours, theirs)
    # the records separate what they must: the scores differ between records and between N
    assert len(set(ours.tolist())) > 1
    assert not np.array_equal(_ours(records, name, variant, 3, overrides), ours)


def test_the_pair_matrix_holds_every_ordered_pair_and_the_diagonal() -> None:
    seen: list[tuple[str, str]] = []

    def record(premises: list[str], hypotheses: list[str]) -> np.ndarray:
        seen.extend(zip(premises, hypotheses, strict=True))
        return _softmax(premises, hypotheses).numpy()

    matrices = pair_matrices_of([EXTRA], record)
    samples = EXTRA.samples
    assert seen == [(a, b) for a in samples for b in samples]
    stored = pair_matrices({"records": {k: v.to_dict() for k, v in matrices.items()}})["planted"]
    expected = _softmax([samples[0]], [samples[3]]).numpy()[0]
    assert stored.entail[0, 3] == expected[0] and stored.contra[0, 3] == expected[2]
    np.testing.assert_allclose(stored.entail + stored.neutral + stored.contra, np.ones((5, 5)), rtol=0, atol=1e-15)
