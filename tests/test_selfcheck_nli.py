"""SelfCheck-NLI scoring with a real (tiny, freshly trained) HF NLI model."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import transformers

from hallulab.core.call_cache import CallCache
from hallulab.core.config import ConfigError, typed
from hallulab.methods.sample_matrix import aggregate
from hallulab.methods.sample_scores import SampleMatrices
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.nli.inference import compiled_for_inference, inductor_cpp_compiler
from hallulab.nli.scorer import NLIKnobs, NLIScorer, label_indices, model_max_length
from hallulab.nli.train import NLITrainKnobs, train_cross_encoder
from tests.test_nli_train import PAIRS

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nli") / "model"
    train_cross_encoder(PAIRS, NLITrainKnobs(batch_size=8, num_threads=1, learning_rate=1e-4), out)
    return out


def test_label_order_is_read_from_the_config() -> None:
    assert label_indices(SimpleNamespace(label2id={"ENTAILMENT": 0, "NEUTRAL": 1, "CONTRADICTION": 2})) == (0, 2)
    assert label_indices(SimpleNamespace(label2id={}, id2label={0: "contradiction", 1: "entailment"})) == (1, 0)
    # generic names in label2id, the classes named in id2label: id2label is used
    generic = SimpleNamespace(
        label2id={"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2},
        id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
    )
    assert label_indices(generic) == (2, 0)
    with pytest.raises(ValueError, match=r"names no 'entailment' and 'contradiction'.*label_0"):
        label_indices(SimpleNamespace(label2id={"LABEL_0": 0, "LABEL_1": 1}, id2label={0: "LABEL_0", 1: "LABEL_1"}))


def test_inputs_are_truncated_at_the_models_own_limit() -> None:
    tokenizer = SimpleNamespace(model_max_length=128)
    model = SimpleNamespace(config=SimpleNamespace(max_position_embeddings=128, model_type="bert"))
    assert model_max_length(tokenizer, model, 512) == 128
    roberta = SimpleNamespace(config=SimpleNamespace(max_position_embeddings=514, model_type="roberta"))
    assert model_max_length(SimpleNamespace(model_max_length=int(1e30)), roberta, 1024) == 512
    assert model_max_length(tokenizer, model, 64) == 64


def test_probability_uses_only_entailment_and_contradiction_logits(model_dir: Path) -> None:
    premise, hypothesis = "A man is playing a guitar.", "A man is sleeping."
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    with torch.inference_mode():
        z = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0]
    e, c = label_indices(model.config)
    expected = float(torch.exp(z[c]) / (torch.exp(z[e]) + torch.exp(z[c])))
    got = NLIScorer(NLIKnobs(model=str(model_dir))).contradiction_probs([premise], [hypothesis])
    assert got[0] == pytest.approx(expected, abs=1e-6)


def test_batched_equals_one_pair_at_a_time_and_duplicates_are_scored_once(model_dir: Path, tmp_path: Path) -> None:
    premises = [p.premise for p in PAIRS[:6]] * 2
    hypotheses = [p.hypothesis for p in PAIRS[:6]] * 2
    batched = NLIScorer(NLIKnobs(model=str(model_dir), batch_size=8)).contradiction_probs(premises, hypotheses)
    single = NLIScorer(NLIKnobs(model=str(model_dir), batch_size=1)).contradiction_probs(premises, hypotheses)
    np.testing.assert_allclose(batched, single, atol=1e-5)
    with CallCache(tmp_path / "c.sqlite") as cache:
        scorer = NLIScorer(NLIKnobs(model=str(model_dir)), cache=cache)
        np.testing.assert_allclose(scorer.contradiction_probs(premises, hypotheses), batched, atol=1e-6)
        assert cache.stats.misses == 6  # 12 pairs, 6 distinct
        scorer.contradiction_probs(premises, hypotheses)
        assert cache.stats.hits == 6  # the same model again: all hits


def test_sentence_score_is_the_mean_over_the_first_n_samples(model_dir: Path) -> None:
    scorer = NLIScorer(NLIKnobs(model=str(model_dir)))
    sentences, samples = ["A man is sleeping.", "A man plays."], ["A man is playing a guitar.", "A dog.", "Rain."]
    flat = scorer.pair_probs([s for s in sentences for _ in samples], [x for _ in sentences for x in samples])
    matrix = flat.reshape(2, 3)
    assert np.all((matrix >= 0) & (matrix <= 1))
    stored = SampleMatrices("selfcheck_nli", "nli", {}, {"p": matrix})
    all_samples, _ = aggregate(stored, SampleKnobs())
    first, _ = aggregate(stored, SampleKnobs(used=1))
    rows = all_samples[all_samples["level"] == "sentence"]
    np.testing.assert_allclose(rows["score"], matrix.mean(axis=1))
    np.testing.assert_allclose(first[first["level"] == "sentence"]["score"], matrix[:, 0])


def test_a_long_pair_is_truncated_not_a_tensor_size_error(model_dir: Path) -> None:
    scorer = NLIScorer(NLIKnobs(model=str(model_dir), max_length=100_000))
    long_text = "The committee met again. " * 400  # far beyond the model's 512 positions
    value = scorer.contradiction_probs([long_text], ["The committee met."])
    assert 0.0 <= value[0] <= 1.0 and scorer.max_length <= 512


def test_pairs_cut_by_truncation_are_counted(model_dir: Path) -> None:
    scorer = NLIScorer(NLIKnobs(model=str(model_dir), max_length=32))
    claim = " ".join(["word"] * 300) + " Paris"  # the judged word lies past the model's reach
    texts, pairs = [claim, "A cat sat.", claim], ["The capital is Paris.", "A cat.", "The capital is Paris."]
    assert scorer.truncated_pairs(texts, pairs) == 1  # distinct pairs, as they are scored
    assert scorer.truncated_pairs(["A cat sat."], ["A cat."]) == 0


def test_bfloat16_pads_to_a_multiple_of_16_and_scores_as_float32_does(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lengths: list[int] = []
    real_forward = transformers.BertForSequenceClassification.forward

    def seen(self: torch.nn.Module, **encoded: torch.Tensor) -> object:
        lengths.append(int(encoded["input_ids"].shape[1]))
        return real_forward(self, **encoded)

    monkeypatch.setattr(transformers.BertForSequenceClassification, "forward", seen)
    premises = [p.premise for p in PAIRS[:12]]
    hypotheses = [p.hypothesis for p in PAIRS[:12]]
    full = NLIScorer(NLIKnobs(model=str(model_dir), batch_size=4))
    assert full.pad_to_multiple_of is None  # float32 keeps exact lengths (bit-identical to earlier runs)
    exact = full.contradiction_probs(premises, hypotheses)
    assert any(length % 16 for length in lengths)
    lengths.clear()
    half = NLIScorer(NLIKnobs(model=str(model_dir), batch_size=4, dtype="bfloat16"))
    assert half.pad_to_multiple_of == 16
    padded = half.contradiction_probs(premises, hypotheses)
    assert lengths and all(length % 16 == 0 for length in lengths)
    np.testing.assert_allclose(padded, exact, atol=0.03)  # bfloat16 rounding; the padding is masked
    odd = NLIScorer(NLIKnobs(model=str(model_dir), dtype="bfloat16", max_length=100))
    assert odd.pad_to_multiple_of is None  # rounding 100 up would pass the limit


def test_bfloat16_classes_near_a_tie_are_rescored_in_float32(model_dir: Path, tmp_path: Path) -> None:
    premises = [p.premise for p in PAIRS[:16]]
    hypotheses = [p.hypothesis for p in PAIRS[:16]]
    exact = NLIScorer(NLIKnobs(model=str(model_dir), batch_size=4)).class_probs(premises, hypotheses)
    plain = NLIScorer(NLIKnobs(model=str(model_dir), batch_size=4, dtype="bfloat16", recheck_margin=0.0))
    rounded = plain.class_probs(premises, hypotheses)
    assert plain.rechecked_pairs == 0 and np.abs(rounded - exact).max() > 1e-4  # bfloat16 rounds
    top_two = np.sort(rounded, axis=1)[:, -2:]
    gaps = top_two[:, 1] - top_two[:, 0]
    margin = float(np.median(gaps))  # about half the pairs count as near-ties
    near = gaps < margin
    assert 0 < near.sum() < len(gaps)
    with CallCache(tmp_path / "calls.sqlite") as cache:
        checked = NLIScorer(
            NLIKnobs(model=str(model_dir), batch_size=4, dtype="bfloat16", recheck_margin=margin), cache=cache
        )
        mixed = checked.class_probs(premises, hypotheses)
        pairs = list(zip(premises, hypotheses, strict=True))
        assert checked.rechecked_pairs == len({pair for pair, is_near in zip(pairs, near, strict=True) if is_near})
        np.testing.assert_allclose(mixed[near], exact[near], atol=1e-6)  # the near-ties: float32's
        np.testing.assert_array_equal(mixed[~near], rounded[~near])  # the rest: bfloat16's own
        # its cache entries are its own for classes, shared with bfloat16 for P(contradict)
        plain_cached = NLIScorer(
            NLIKnobs(model=str(model_dir), batch_size=4, dtype="bfloat16", recheck_margin=0.0), cache=cache
        )
        np.testing.assert_array_equal(plain_cached.class_probs(premises, hypotheses), rounded)
        checked.contradiction_probs(premises, hypotheses)
        plain_cached.contradiction_probs(premises, hypotheses)
        assert plain_cached.rechecked_pairs == 0
        assert len(cache) == 3 * len(set(pairs))
    with pytest.raises(ConfigError, match="recheck_margin"):
        typed(NLIKnobs, {"model": str(model_dir), "recheck_margin": 1.5}, "nli")
    # float32 never rechecks, so its cache keys stay those of a scorer without the knob
    assert not NLIScorer(NLIKnobs(model=str(model_dir), recheck_margin=0.5)).rechecks_classes


def test_compile_without_a_cpp_compiler_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler++")
    with pytest.raises(RuntimeError, match=r"nli.compile needs a C\+\+ compiler \(no-such-compiler\+\+, from"):
        compiled_for_inference(torch.nn.Linear(2, 2), "cpu")


@pytest.mark.skipif(shutil.which(inductor_cpp_compiler()) is None, reason="torch.compile needs a C++ compiler")
def test_compile_freezes_the_weights_process_wide() -> None:
    compiled = compiled_for_inference(torch.nn.Linear(2, 2), "cpu")
    assert compiled.get_compiler_config()["freezing"] is True
    # Dynamo reads freezing while it traces, outside the options of one torch.compile call,
    # so the setting is process-wide: a plain torch.compile sees it too
    assert torch.compile(torch.nn.Linear(2, 2)).get_compiler_config()["freezing"] is True


@pytest.fixture(scope="module")
def one_layer_model_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trained model cut to its first layer: cheap to compile, where the whole model is slow."""
    out = tmp_path_factory.mktemp("nli_one_layer") / "model"
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir)
    model.bert.encoder.layer = model.bert.encoder.layer[:1]
    model.config.num_hidden_layers = 1
    model.save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(model_dir).save_pretrained(out)
    return out


@pytest.mark.skipif(shutil.which(inductor_cpp_compiler()) is None, reason="torch.compile needs a C++ compiler")
def test_compiled_model_scores_as_the_eager_one_under_its_own_cache_key(one_layer_model_dir: Path) -> None:
    torch.compiler.reset()
    # Dynamo's count of the graphs it built has no public accessor (torch.compiler exposes none);
    # the test reads it to prove that one graph serves every batch shape
    torch._dynamo.utils.counters.clear()
    premises = [p.premise for p in PAIRS[:10]]
    hypotheses = [p.hypothesis for p in PAIRS[:10]]
    eager = NLIScorer(NLIKnobs(model=str(one_layer_model_dir), batch_size=4))
    compiled = NLIScorer(NLIKnobs(model=str(one_layer_model_dir), batch_size=4, compile=True))
    # batches of 4 with different lengths, then a batch of 2: one dynamic graph serves them all
    np.testing.assert_allclose(
        compiled.contradiction_probs(premises, hypotheses), eager.contradiction_probs(premises, hypotheses), atol=1e-5
    )
    # torch.compile's module, compiled with the weights folded in, as the benchmark ran it
    assert compiled._loaded[1].get_compiler_config()["freezing"] is True
    # a one-pair request too (torch.compile would specialise a batch of 1 into a second graph)
    one = (["A dog runs in the park."], ["An animal moves."])
    np.testing.assert_allclose(compiled.contradiction_probs(*one), eager.contradiction_probs(*one), atol=1e-5)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1  # one graph for every batch shape
    assert compiled.identity["compiled"] is True and "compiled" not in eager.identity
    assert {k: v for k, v in compiled.identity.items() if k != "compiled"} == eager.identity


def test_the_openvino_int8_runtime_scores_near_float32_torch_under_keys_of_its_own(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nli.runtime=openvino_int8: the model converted to OpenVINO and quantised by NNCF on the
    open calibration pairs, saved once and loaded after; its P(contradict) stays near float32
    torch's (int8 rounding), and its replies are cached apart from torch's."""
    monkeypatch.setenv("HALLULAB_MODEL_DIR", str(tmp_path / "models"))
    premises = [p.premise for p in PAIRS[:8]]
    hypotheses = [p.hypothesis for p in PAIRS[:8]]
    with CallCache(tmp_path / "c.sqlite") as cache:
        torch_scorer = NLIScorer(NLIKnobs(model=str(model_dir)), cache=cache)
        int8 = NLIScorer(NLIKnobs(model=str(model_dir), runtime="openvino_int8"), cache=cache)
        exact = torch_scorer.contradiction_probs(premises, hypotheses)
        quantised = int8.contradiction_probs(premises, hypotheses)
        distinct = len(set(zip(premises, hypotheses, strict=True)))
        assert cache.stats.misses == 2 * distinct and cache.stats.hits == 0  # none of torch's replies served
    assert np.abs(quantised - exact).max() < 0.1 and not np.array_equal(quantised, exact)
    with CallCache(tmp_path / "classes.sqlite") as cache:  # class decisions stay float32 torch's
        torch_classes = NLIScorer(NLIKnobs(model=str(model_dir)), cache=cache).class_probs(premises, hypotheses)
        int8_classes = NLIScorer(NLIKnobs(model=str(model_dir), runtime="openvino_int8"), cache=cache)
        np.testing.assert_array_equal(int8_classes.class_probs(premises, hypotheses), torch_classes)
        assert cache.stats.hits == len(set(zip(premises, hypotheses, strict=True)))  # under torch's keys
    with CallCache(tmp_path / "fresh.sqlite") as cache:
        fresh = NLIScorer(NLIKnobs(model=str(model_dir), runtime="openvino_int8"), cache=cache)
        np.testing.assert_array_equal(fresh.class_probs(premises, hypotheses), torch_classes)
    assert int8.identity["runtime"]["name"] == "openvino_int8" and "runtime" not in torch_scorer.identity
    (saved,) = (tmp_path / "models").glob("nli-openvino-int8-*/model.xml")
    again = NLIScorer(NLIKnobs(model=str(model_dir), runtime="openvino_int8"))  # loads the saved graph
    np.testing.assert_array_equal(again.contradiction_probs(premises, hypotheses), quantised)
    assert saved.is_file()


def test_the_int8_runtime_refuses_a_reduced_dtype_or_compile() -> None:
    with pytest.raises(ValueError, match="float32"):
        NLIKnobs(model="m", runtime="openvino_int8", dtype="bfloat16")
    with pytest.raises(ValueError, match="compile"):
        NLIKnobs(model="m", runtime="openvino_int8", compile=True)
