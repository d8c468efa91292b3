"""NLI inference through OpenVINO, statically quantised to int8 (``nli.runtime=openvino_int8``).

The torch cross-encoder is converted to OpenVINO's graph (``openvino.convert_model``) and
quantised post-training by NNCF (``nncf.quantize``, transformer preset): int8 weights and
int8 activations, whose ranges are calibrated on :data:`CALIBRATION`, openly licensed NLI
pairs committed with the project (data/nli_open: FEVER claims against their evidence and SNLI
dev pairs; never a pair of an evaluation set). The quantised graph is saved under the
converted-model folder (``$HALLULAB_MODEL_DIR``, else ``~/.cache/hallulab/models``), keyed by
the weights and the calibration, so only the first run converts it.

:class:`OpenVINOClassifier` is called as a transformers sequence classifier is
(``model(**encoded).logits``), so :func:`hallulab.nli.inference.pair_logits` batches, pads and
orders pairs exactly as for torch. Int8 moves single probabilities, so a scorer keys its
P(contradict) by the runtime. It scores P(contradict) only (SelfCheck-NLI): int8 flipped
enough of CCP's argmax classes on FactualBio to move claim ROC-AUC past half a point, so
class decisions stay float32 torch's, under torch's keys. ``perf/check_nli_runtime.py``
pairs the published results with and without the runtime.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.call_cache import model_dir

#: the calibration pairs: (open training source, how many of its first pairs)
CALIBRATION: tuple[tuple[str, int], ...] = (("open_fever", 180), ("open_snli_dev", 180))
CALIBRATION_BATCH = 8


def calibration_tag() -> str:
    """A short name of :data:`CALIBRATION`, part of the cache keys and of the saved graph's folder."""
    return "+".join(f"{name}:{count}" for name, count in CALIBRATION)


@dataclass(frozen=True)
class _Output:
    logits: Any


class OpenVINOClassifier:
    """A compiled OpenVINO model behind the call signature of a transformers classifier."""

    def __init__(self, compiled: Any, config: Any) -> None:
        self.config = config
        self._request = compiled.create_infer_request()
        self._inputs = [port.get_any_name() for port in compiled.inputs]

    def __call__(self, **encoded: Any) -> _Output:
        import numpy as np
        import torch

        feed = {name: encoded[name].cpu().numpy().astype(np.int64) for name in self._inputs}
        result = self._request.infer(feed)
        return _Output(torch.from_numpy(np.array(result[0], dtype=np.float32)))


def _saved_graph_dir(weights_key: str) -> Path:
    base = model_dir()
    digest = hashlib.sha256(json.dumps([weights_key, calibration_tag()]).encode()).hexdigest()[:24]
    return base / f"nli-openvino-int8-{digest}"


def _calibration_batches(tokenizer: Any, max_length: int) -> list[dict[str, Any]]:
    import numpy as np

    from hallulab.nli.data import training_sources

    sources = training_sources(None)
    pairs = [
        (pair.premise, pair.hypothesis)
        for name, count in CALIBRATION
        for pair in itertools.islice(sources[name](), count)
    ]
    pairs.sort(key=lambda pair: len(pair[0]) + len(pair[1]))
    batches = []
    for start in range(0, len(pairs), CALIBRATION_BATCH):
        chunk = pairs[start : start + CALIBRATION_BATCH]
        encoded = tokenizer(
            [p for p, _ in chunk], [h for _, h in chunk], truncation=True, max_length=max_length, padding=True
        )
        batches.append({name: np.asarray(values, dtype=np.int64) for name, values in encoded.items()})
    return batches


def int8_classifier(model: Any, tokenizer: Any, weights_key: str, max_length: int, threads: int) -> OpenVINOClassifier:
    """``model`` (a float32 torch sequence classifier) as OpenVINO static int8, converted and
    calibrated on the first call for these weights, loaded from disk afterwards."""
    import openvino

    folder = _saved_graph_dir(weights_key)
    graph_file = folder / "model.xml"
    core = openvino.Core()
    if not graph_file.is_file():
        import nncf
        import torch

        batches = _calibration_batches(tokenizer, max_length)
        example = {name: torch.from_numpy(value[:1]) for name, value in batches[0].items()}
        graph = openvino.convert_model(model, example_input=example)
        quantised = nncf.quantize(
            graph, nncf.Dataset(batches), model_type=nncf.ModelType.TRANSFORMER, subset_size=len(batches)
        )
        partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
        openvino.save_model(quantised, partial / "model.xml")
        try:
            partial.rename(folder)  # atomic: a concurrent run that got there first keeps its copy
        except OSError:
            shutil.rmtree(partial, ignore_errors=True)
    compiled = core.compile_model(
        core.read_model(graph_file), "CPU", {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads}
    )
    return OpenVINOClassifier(compiled, model.config)
