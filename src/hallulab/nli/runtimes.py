"""The runtime an NLI model's P(contradict) runs on (``nli.runtime``), one object chosen once.

A runtime says three things a scorer needs, and nothing else differs between runtimes:

* :meth:`NLIRuntime.prepare`: the model the scorer calls, made from the loaded float32 torch
  model (torch: the model itself; ``openvino_int8``: the OpenVINO graph statically quantised by
  NNCF, :func:`hallulab.nli.openvino_runtime.int8_classifier`);
* :meth:`NLIRuntime.key_part`: what it adds to the call cache's model identity (torch: nothing,
  so torch keys stay as they were before the setting existed);
* :attr:`NLIRuntime.exact_classes`: whether class decisions (CCP's argmax class) come from the
  float32 torch copy under torch's keys rather than from the runtime. Int8 flipped enough of
  CCP's argmax classes on FactualBio to move claim ROC-AUC past half a point
  (``perf/check_nli_runtime.py``), so the int8 runtime scores P(contradict) only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NLIRuntime:
    """Plain torch: the loaded model as it is."""

    name: str = "torch"
    #: class decisions come from the float32 torch copy (the runtime scores P(contradict) only)
    exact_classes: bool = False
    #: the runtime converts the float32 model itself (nli.dtype and nli.compile must stay off)
    converts_float32: bool = False

    def prepare(self, model: Any, tokenizer: Any, weights_key: Callable[[], str], max_length: int, device: str) -> Any:
        """The model the scorer calls for P(contradict) (``weights_key``: names the weights, asked
        only by a runtime that saves a converted graph)."""
        return model

    def key_part(self) -> dict[str, Any] | None:
        """What the runtime adds to the cache key's model identity (None: nothing)."""
        return None


@dataclass(frozen=True)
class OpenVINOInt8Runtime(NLIRuntime):
    """OpenVINO with NNCF static int8 on the CPU (:mod:`hallulab.nli.openvino_runtime`)."""

    name: str = "openvino_int8"
    exact_classes: bool = True
    converts_float32: bool = True

    def prepare(self, model: Any, tokenizer: Any, weights_key: Callable[[], str], max_length: int, device: str) -> Any:
        import torch

        from hallulab.nli.openvino_runtime import int8_classifier

        if device != "cpu":
            raise ValueError(f"nli.runtime={self.name} runs on the CPU, not on {device} (set nli.device=cpu)")
        return int8_classifier(model, tokenizer, weights_key(), max_length, torch.get_num_threads())

    def key_part(self) -> dict[str, Any] | None:
        from hallulab.nli.openvino_runtime import calibration_tag

        return {"name": self.name, "calibration": calibration_tag()}


#: every runtime by its ``nli.runtime`` name
RUNTIMES: dict[str, NLIRuntime] = {runtime.name: runtime for runtime in (NLIRuntime(), OpenVINOInt8Runtime())}


def runtime_named(name: str) -> NLIRuntime:
    """The runtime ``nli.runtime`` names (the setting's choices are :data:`RUNTIMES`' keys)."""
    try:
        return RUNTIMES[name]
    except KeyError:
        raise ValueError(f"nli.runtime: {name!r} is not one of {sorted(RUNTIMES)}") from None
