"""Sample-BERTScore and Sample-SentenceScore (Self-Familiarity Appendix C.5-C.6, Eq. 16-21).

For T_s samples R_1..R_T of an instruction: s_ij = BERTScore F1(R_i, R_j) (or the cosine of
mean-pooled sentence embeddings), s_i = mean over j != i of s_ij, familiarity s = max_i s_i
(the most central sample's mean similarity). The paper's Eq. 18 averages over m responses
without saying whether R_i itself is among them; it is left out here (its similarity 1 is
the same for every sample). Every BERTScore pair is cached; embeddings are computed per run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import cast

import numpy as np

from hallulab.core.call_cache import cache_key
from hallulab.core.package_files import find_package_file
from hallulab.data.schema import Record
from hallulab.methods.bertscore import BERTScoreKnobs, BERTScoreSupport
from hallulab.methods.self_familiarity.knobs import SelfFamiliarityScoreKnobs
from hallulab.methods.self_familiarity.raw import SampleSimilarities
from hallulab.pipeline.context import BuildContext


def central_similarity(matrix: np.ndarray) -> float:
    """max_i mean_{j != i} s_ij of a symmetric T x T similarity matrix (T >= 2)."""
    size = matrix.shape[0]
    off_diagonal = matrix.sum(axis=1) - np.diag(matrix)
    return float((off_diagonal / (size - 1)).max())


def _bertscore_pairs(ctx: BuildContext, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
    config = ctx.params.typed(BERTScoreKnobs, "bertscore")
    support = BERTScoreSupport(config, ctx.resources.spacy, cache=ctx.resources.cache)

    def compute(batch: list[tuple[str, str]]) -> list[float]:
        f1 = support.scorer.score([a for a, _ in batch], [b for _, b in batch])[2]
        return [float(v) for v in f1.double().numpy()]

    unique = list(dict.fromkeys(pairs))
    keys = [cache_key("self_familiarity.bertscore", support.identity, a, b) for a, b in unique]
    values = ctx.resources.cache.map(keys, unique, compute, batch_size=512, progress="Sample-BERTScore pairs")
    return dict(zip(unique, values, strict=True))


def embed_texts(knobs: SelfFamiliarityScoreKnobs, texts: list[str]) -> np.ndarray:
    """Unit-length mean-pooled embeddings (Sentence-BERT pooling) of ``texts``, one row each."""
    if not texts:
        return np.zeros((0, 1))
    import torch
    import transformers

    path = (
        str(find_package_file(knobs.sentence_encoder_package, knobs.sentence_encoder))
        if knobs.sentence_encoder_package
        else knobs.sentence_encoder
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path).eval()
    out = []
    for start in range(0, len(texts), 64):
        batch = tokenizer(texts[start : start + 64], padding=True, truncation=True, return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
    return np.concatenate(out)


def embed_groups(knobs: SelfFamiliarityScoreKnobs, groups: Mapping[str, Sequence[str]]) -> dict[str, np.ndarray]:
    """:func:`embed_texts` of every group's texts in one batched pass; key -> one row a text."""
    vectors = embed_texts(knobs, [text for texts in groups.values() for text in texts])
    out, cursor = {}, 0
    for key, texts in groups.items():
        out[key] = vectors[cursor : cursor + len(texts)]
        cursor += len(texts)
    return out


def sample_similarities(
    ctx: BuildContext,
    records: Sequence[Record],
    knobs: SelfFamiliarityScoreKnobs,
    which: Sequence[str],
    counts: Counter[str],
) -> dict[str, SampleSimilarities]:
    """record id -> {"sample_bertscore": s, "sample_sentencescore": s} (None: < 2 samples)."""
    samples = {p.id: [s for s in p.samples[: knobs.baseline_samples] if s.strip()] for p in records}
    usable = {rid: texts for rid, texts in samples.items() if len(texts) >= 2}
    counts["sampling_baselines_records_under_2_samples"] = len(samples) - len(usable)
    out = {rid: cast(SampleSimilarities, {name: None for name in which}) for rid in samples}
    if "sample_bertscore" in which and usable:
        pairs = [(t[i], t[j]) for t in usable.values() for i, j in combinations(range(len(t)), 2)]
        f1 = _bertscore_pairs(ctx, pairs)
        for rid, texts in usable.items():
            matrix = np.eye(len(texts))
            for i, j in combinations(range(len(texts)), 2):
                matrix[i, j] = matrix[j, i] = f1[(texts[i], texts[j])]
            out[rid]["sample_bertscore"] = central_similarity(matrix)
    if "sample_sentencescore" in which and usable:
        for rid, block in embed_groups(knobs, usable).items():
            out[rid]["sample_sentencescore"] = central_similarity(block @ block.T)
    return out
