"""What each data set kind provides (its spec's provision, hallulab.data.sets), held against the
records the loader reads from the real data sets and against the provision hallulab benchmark
reads off a file's records (hallulab.column.provision)."""

from __future__ import annotations

import pytest

from hallulab.column.provision import records_provision
from hallulab.core.config import CONF_DIR, dataset_config
from hallulab.core.needs import PROMPTS, SAC3_OUTPUTS, SAMPLES, TEXT_LOGPROBS
from hallulab.data.loaders import load_dataset
from hallulab.data.provision import LABEL_LEVELS, Provision
from hallulab.data.schema import Record
from hallulab.data.sets import dataset_spec, dataset_specs
from tests.conftest import requires_data_root

PROVISIONS = {loader: spec.provision for loader, spec in dataset_specs().items() if spec.provision is not None}


def test_the_registry_holds_every_loader_and_only_a_file_loader_declares_no_provision() -> None:
    assert set(dataset_specs()) == {"concept7", "factualbio", "jsonl", "sac3", "wikibio"}
    assert [loader for loader, spec in dataset_specs().items() if spec.provision is None] == ["jsonl"]
    assert all(spec.files is not None for spec in dataset_specs().values() if spec.source is None)


def test_the_needs_follow_from_the_data() -> None:
    assert PROVISIONS["wikibio"].needs == (SAMPLES, TEXT_LOGPROBS)  # samples in the data, no prompts
    assert PROVISIONS["factualbio"].needs == (PROMPTS, SAMPLES, TEXT_LOGPROBS)  # samples drawn from prompts
    assert PROVISIONS["sac3"].needs == (PROMPTS, SAMPLES, TEXT_LOGPROBS, SAC3_OUTPUTS)
    bare = Provision(prompts=False, samples_in_data=False, sac3_outputs=False, labels=("response",))
    assert bare.needs == (TEXT_LOGPROBS,)  # nothing to sample from: only a model's log-probabilities


def test_a_provision_names_known_levels_in_order_and_passages_with_sentences() -> None:
    with pytest.raises(ValueError, match="not among"):
        Provision(False, False, False, labels=("token",))
    with pytest.raises(ValueError, match="order"):
        Provision(False, False, False, labels=("response", "claim"))
    with pytest.raises(ValueError, match="label both or neither"):
        Provision(False, False, False, labels=("sentence",))
    assert LABEL_LEVELS == ("claim", "sentence", "passage", "response", "prompt")


def test_every_data_set_that_carries_responses_names_who_wrote_them() -> None:
    """A benchmark row's label says whose answers a method checks (hallulab.pipeline.row_labels)."""
    for loader, declared in PROVISIONS.items():
        assert bool(declared.responses_by) == declared.responses_in_data, loader
    with pytest.raises(ValueError, match="carries none"):
        Provision(True, False, False, labels=("prompt",), responses_in_data=False, responses_by="GPT-4")


def _labelled(records: list[Record]) -> tuple[str, ...]:
    """The levels at which some record carries a label, in LABEL_LEVELS order."""
    found = {
        "claim": any(c.label is not None for p in records for c in p.claims),
        "sentence": any(p.labels is not None for p in records),
        "passage": any(p.passage_label is not None for p in records),
        "response": any(p.response_label is not None for p in records),
        "prompt": any(p.prompt_label is not None for p in records),
    }
    return tuple(level for level in LABEL_LEVELS if found[level])


BENCHMARK_CONFIGS = sorted(
    path.stem for path in (CONF_DIR / "dataset").glob("*.yaml") if dataset_config(path.stem)["loader"] in PROVISIONS
)


@requires_data_root
@pytest.mark.parametrize("name", BENCHMARK_CONFIGS)
def test_a_declaration_is_what_the_loader_reads(name: str) -> None:
    cfg = dataset_config(name)
    records, _ = load_dataset(cfg)
    declared = PROVISIONS[cfg["loader"]]
    facts = {
        "prompts": [bool(p.prompt) for p in records],
        "samples_in_data": [bool(p.samples) for p in records],
        "sac3_outputs": [bool(p.meta.get("perb_sc")) and bool(p.meta.get("self_sc")) for p in records],
        "responses_in_data": [bool(p.response) for p in records],
    }
    for fact, per_record in facts.items():
        expected = getattr(declared, fact)
        assert all(per_record) if expected else not any(per_record), f"{name}: {fact} is declared {expected}"
    assert _labelled(records) == declared.labels
    if declared.responses_in_data:  # the same rule, read off the records, gives the declaration
        read = records_provision(records, name)
        assert Provision(**{**read.__dict__, "responses_by": declared.responses_by}) == declared


def test_the_benchmark_configs_are_the_five_real_data_sets() -> None:
    """toy and jsonl read a JSONL file, whose records hold what they hold: no declaration."""
    assert BENCHMARK_CONFIGS == ["concept7", "factualbio", "hotpotqa", "nq_open", "wikibio"]
    assert all(dataset_spec(dataset_config(name)["loader"]).provision is None for name in ("toy", "jsonl"))
