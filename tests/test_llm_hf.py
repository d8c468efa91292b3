"""The hf backend on the real packaged SmolLM2-135M-Instruct (short generations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose
from hallulab.llm import build_llm
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.hf import HFLLM, prefix_batches

pytestmark = pytest.mark.model
PROMPTS = ["Name a colour.", "What is the capital of France?", "Write one word about the sea."]


@pytest.fixture(scope="module")
def smollm() -> HFLLM:
    cfg = compose()["llm_catalogue"]["smollm2"]
    llm = build_llm({**cfg, "num_threads": 1})
    assert isinstance(llm, HFLLM)
    return llm


def test_default_llm_is_the_packaged_gguf(smollm: HFLLM) -> None:
    identity = smollm.identity()
    assert identity.backend == "hf" and identity.model.endswith(".gguf")
    assert len(identity.revision) == 64  # sha256 of the weights file


def test_roles_filled_by_one_model_share_its_load(smollm: HFLLM) -> None:
    """A second role on the same weights, dtype and device reads the model the first loaded (a
    stage with a generator, a QA role and a judge loads SmolLM2 once); another dtype loads anew."""
    cfg = compose()["llm_catalogue"]["smollm2"]
    judge = build_llm({**cfg, "num_threads": 1})
    assert isinstance(judge, HFLLM) and judge is not smollm
    assert judge.model is smollm.model and judge.tokenizer is smollm.tokenizer
    other = build_llm({**cfg, "num_threads": 1, "dtype": "bfloat16"})
    assert isinstance(other, HFLLM)
    assert other.dtype != smollm.dtype and other.model is not smollm.model


def test_greedy_generation_returns_white_box_stats(smollm: HFLLM) -> None:
    params = DecodingParams(max_new_tokens=8, top_k_alternatives=3)
    (output,) = smollm.generate(PROMPTS[:1], params, [None])
    assert output.text and 1 <= len(output.tokens) <= 8
    for token in output.tokens:
        assert token.logprob <= 0 and token.entropy is not None and token.entropy >= 0
        assert len(token.top) == 3 and token.top[0][1] >= token.top[1][1] >= token.top[2][1]
        assert token.logprob == pytest.approx(token.top[0][1], abs=1e-5)  # greedy picks the argmax
    assert "".join(t.token for t in output.tokens).startswith(output.text[:5])


def test_batched_generation_equals_one_at_a_time(smollm: HFLLM) -> None:
    params = DecodingParams(max_new_tokens=6)
    batched = smollm.generate(PROMPTS, params, [None] * 3)
    single = [smollm.generate([p], params, [None])[0] for p in PROMPTS]
    assert [g.text for g in batched] == [g.text for g in single]


@pytest.mark.parametrize(("rows", "keys"), [(1, 40), (4, 400)])
def test_the_decoding_attention_has_the_same_bits_on_one_and_two_threads(rows: int, keys: int) -> None:
    """A decoding step's attention (one query per head over a cache of ``keys`` positions,
    SmolLM2's 9 heads of 64) sums alike on 1 and on 2 torch threads under
    thread_invariant_attention. torch's fused CPU kernel splits these two shapes over the
    threads, and its results differ in the last bits between the two counts."""
    import torch
    import torch.nn.functional as F

    from hallulab.llm.hf import thread_invariant_attention

    generator = torch.Generator().manual_seed(0)
    query, key, value = (torch.randn(rows, 9, n, 64, generator=generator) for n in (1, keys, keys))
    outputs = []
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            with thread_invariant_attention("cpu"):
                outputs.append(F.scaled_dot_product_attention(query, key, value))
    finally:
        torch.set_num_threads(before)
    assert torch.equal(outputs[0], outputs[1])


def test_prompts_sharing_a_context_are_batched_together_and_share_their_opening() -> None:
    """prefix_batches: prompts over one context group together whatever their order; the
    opening stops short of each member's last token; unrelated prompts stay groups of one;
    no batch holds more prompts than the batch size."""
    context = list(range(100, 140))
    rows = [
        [1, 2, 3, 4, 5, 6, 7, 8],  # unrelated
        [*context, 7, 8],
        [9, 9, 9],  # unrelated
        [*context, 5],
        [*context, 7, 6, 2],
    ]
    batches = prefix_batches(rows, batch_size=4)
    groups = [group for batch in batches for group in batch]
    assert sorted(i for group in groups for i in group.members) == [0, 1, 2, 3, 4]
    assert all(sum(len(group.members) for group in batch) <= 4 for batch in batches)
    (shared,) = [group for group in groups if len(group.members) > 1]
    assert sorted(shared.members) == [1, 3, 4] and shared.shared == len(context)
    alone = {group.members[0]: group.shared for group in groups if len(group.members) == 1}
    assert alone == {0: 7, 2: 2}
    small = prefix_batches(rows, batch_size=2)
    assert all(sum(len(group.members) for group in batch) <= 2 for batch in small)
    assert sorted(i for batch in small for group in batch for i in group.members) == [0, 1, 2, 3, 4]


def test_a_shared_opening_gives_the_replies_of_one_prompt_at_a_time(smollm: HFLLM) -> None:
    """Prompts over one context (encoded once and copied to each row) decode as they do alone,
    greedy and sampled, in a batch that also holds an unrelated prompt."""
    context = "Context: " + "Anna Berg is a Swedish chemist who studied catalysis in Uppsala. " * 3
    prompts = [f"{context}\nQuestion: {q}" for q in ("Where did she study?", "What is her field?")] + PROMPTS[:1]
    for params, seeds in (
        (DecodingParams(max_new_tokens=5, top_k_alternatives=2), [None, None, None]),
        (DecodingParams(max_new_tokens=5, temperature=1.0), [3, 4, 5]),
    ):
        together = smollm.generate(prompts, params, seeds)
        alone = [smollm.generate([p], params, [s])[0] for p, s in zip(prompts, seeds, strict=True)]
        assert [g.text for g in together] == [g.text for g in alone]
        for a, b in zip(together, alone, strict=True):
            assert [t.logprob for t in a.tokens] == pytest.approx([t.logprob for t in b.tokens], abs=1e-4)


def test_per_request_seed_does_not_depend_on_the_batch(smollm: HFLLM) -> None:
    params = DecodingParams(max_new_tokens=6, temperature=1.0)
    together = smollm.generate([PROMPTS[0], PROMPTS[0]], params, [11, 12])
    alone = smollm.generate([PROMPTS[0]], params, [12])
    assert together[1].text == alone[0].text
    again = smollm.generate([PROMPTS[0]], params, [11])
    assert again[0].text == together[0].text


def test_beam_search_samples_under_its_seed_and_reports_the_sampled_distribution(smollm: HFLLM) -> None:
    """HalluCheck's sampled decoding (the released 5-beam call under sampling settings): the same
    seed gives the same reply whatever else is asked; the top-k are those of the distribution
    drawn from (temperature and top-p applied), so a truncated tail is -inf."""
    params = DecodingParams(max_new_tokens=6, temperature=0.7, top_p=0.8, num_beams=3, top_k_alternatives=5)
    first = smollm.generate(PROMPTS[:2], params, [11, 12])
    again = smollm.generate(PROMPTS[1:2], params, [12])
    assert first[1].text == again[0].text and first[0].tokens
    beam = DecodingParams(max_new_tokens=6, num_beams=3, top_k_alternatives=5, early_stopping=True)
    assert smollm.generate(PROMPTS[:1], beam, [None])[0].tokens
    assert "early_stopping" in beam.as_key() and "early_stopping" not in DecodingParams().as_key()
    for token in first[0].tokens:
        assert token.top[0][1] <= 0 and token.top[0][1] >= token.top[-1][1]


def test_teacher_forcing_reproduces_generation_logprobs(smollm: HFLLM) -> None:
    (output,) = smollm.generate(PROMPTS[1:2], DecodingParams(max_new_tokens=6), [None])
    (scored,) = smollm.score(PROMPTS[1:2], [output.text])
    generated = [t.logprob for t in output.tokens]
    assert [t.token for t in scored] == [t.token for t in output.tokens]
    assert [t.logprob for t in scored] == pytest.approx(generated, abs=1e-3)


def test_score_with_empty_prefix_gives_offsets_into_the_text(smollm: HFLLM) -> None:
    text = "Marie Curie was a physicist."
    (scored,) = smollm.score([""], [text], top_k=2)
    assert scored[0].offset == 0
    assert all(text[t.offset :].startswith(t.token) for t in scored)  # offsets include a leading space
    assert all(len(t.top) == 2 for t in scored)


def test_cached_llm_hits_and_misses(smollm: HFLLM, tmp_path: Path) -> None:
    with CallCache(tmp_path / "c.sqlite") as cache:
        cached = CachedLLM(smollm, cache)
        params = DecodingParams(max_new_tokens=4, temperature=1.0)
        first = cached.generate(PROMPTS[:2], params, [1, 2])
        second = cached.generate(PROMPTS[:2], params, [1, 2])
        assert [g.to_dict() for g in first] == [g.to_dict() for g in second]
        assert cache.stats.hits == 2 and cache.stats.misses == 2
        cached.generate(PROMPTS[:1], params, [3])  # another seed: a miss
        cached.generate(PROMPTS[:1], DecodingParams(max_new_tokens=4, temperature=0.7), [1])  # another temperature
        assert cache.stats.misses == 4


def test_teacher_forcing_past_the_context_is_refused_naming_the_record(smollm: HFLLM, tmp_path: Path) -> None:
    from hallulab.artifacts.response_tokens import SPEC
    from hallulab.artifacts.response_tokens.build import build
    from hallulab.core.errors import RecordError
    from hallulab.data.schema import Record
    from hallulab.llm.base import ContextLengthError
    from hallulab.pipeline.context import BuildContext
    from hallulab.pipeline.params import ParamsView
    from hallulab.pipeline.resources import Resources

    limit = smollm.model.config.max_position_embeddings
    long_text = "The river rose again. " * (limit // 4)  # about 5 tokens a sentence: past the limit
    with pytest.raises(ContextLengthError) as raised:
        smollm.score([""], [long_text])
    assert raised.value.continuations == (long_text,) and raised.value.lengths[0] > limit
    short = Record(id="short", response="The river rose.", sentences=["The river rose."], samples=[])
    long = Record(id="long", response=long_text, sentences=[long_text], samples=[])
    view = ParamsView(compose(), SPEC.inputs.param_keys(), "response_tokens")
    expected = rf"record 'long', field 'response': .*context of {limit} positions"
    with CallCache(tmp_path / "c.sqlite") as cache, pytest.raises(RecordError, match=expected):
        build(BuildContext("t", [short, long], {}, view, Resources(view, cache)))


def test_a_gguf_file_is_parsed_once_while_converting(smollm: HFLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers reads the GGUF once per part it converts; inside ``gguf_parsed_once`` its
    own reading function parses the file once however often it is called (it would not if
    transformers bound the reader class at import), and the real class is back afterwards."""
    import gguf
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    from hallulab.llm.hf import gguf_parsed_once

    assert smollm.gguf_path is not None
    original = gguf.GGUFReader
    parsed: list[str] = []

    class CountingReader(original):  # type: ignore[misc, valid-type]
        def __init__(self, path: Any, mode: str = "r") -> None:
            parsed.append(str(path))
            super().__init__(path, mode)

    monkeypatch.setattr(gguf, "GGUFReader", CountingReader)
    with gguf_parsed_once():
        first = load_gguf_checkpoint(smollm.gguf_path, return_tensors=False)
        second = load_gguf_checkpoint(smollm.gguf_path, return_tensors=False)
    assert parsed == [str(smollm.gguf_path)] and first["config"] == second["config"]
    assert gguf.GGUFReader is CountingReader
