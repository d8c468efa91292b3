"""Every registered method and artifact declares what it reads, and what it declares exists."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from typing import Any

import pytest

from hallulab.core.config import compose
from hallulab.core.errors import StaleScoresError
from hallulab.core.units import LEVELS
from hallulab.llm.prompts import prompt_path
from hallulab.methods.raw_scores import RawScores
from hallulab.pipeline import registry
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.spec import NO_MODEL_CALLS, ArtifactSpec, CallCount, MethodSpec, StepInputs, unplanned
from hallulab.pipeline.unit_texts import UnitTexts

METHODS = list(registry.methods().values())
ARTIFACTS = list(registry.artifacts().values())
CONFIG = compose()


def _inputs(spec: MethodSpec | ArtifactSpec) -> list[StepInputs]:
    if isinstance(spec, ArtifactSpec):
        return [spec.inputs]
    return [s for s in (spec.score, spec.aggregate) if s is not None]


@pytest.mark.parametrize("spec", METHODS + ARTIFACTS, ids=lambda s: s.name)
def test_declared_params_prompts_and_roles_exist_in_the_composed_config(spec: MethodSpec | ArtifactSpec) -> None:
    for inputs in _inputs(spec):
        view = ParamsView(CONFIG, inputs.param_keys(), spec.name)  # resolves llm_catalogue.${llms.<role>}
        for key in view.declared:
            assert view.has(key), f"{spec.name} declares {key!r}, absent from conf/"
        for key in inputs.prompts:
            assert prompt_path(str(view.get(key))).is_file(), f"{spec.name}: prompt {key} has no file"


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: s.name)
def test_methods_name_their_paper_level_and_required_artifacts(spec: MethodSpec) -> None:
    assert spec.level in LEVELS and spec.paper and spec.section
    for name in spec.requires:
        assert name in registry.artifacts(), f"{spec.name} requires unknown artifact {name}"
    assert registry.step_function("method", spec.name, "aggregate")
    if spec.score is not None:
        assert registry.step_function("method", spec.name, "score")


def test_an_unknown_method_is_named_with_the_registered_ones() -> None:
    with pytest.raises(KeyError, match=r"registered: .*selfcheck_ngram"):
        registry.method("no_such_method")


def test_a_score_step_and_its_raw_class_are_declared_together() -> None:
    for method in registry.methods().values():
        assert (method.score is None) == (method.raw is None), method.name
        if method.raw is not None:
            assert callable(getattr(method.raw, "from_dict", None)) and callable(getattr(method.raw, "to_dict", None))
    with pytest.raises(ValueError, match="a score step and a raw class"):
        MethodSpec(name="m", title="M", paper="p", section="s", level="sentence", score=StepInputs())


def test_a_score_step_says_how_its_calls_are_counted_and_only_a_score_step_shards() -> None:
    """The per-method facts the plan, the sharded DAG and the report read are declared on the
    method, so a new method cannot leave them out without an error."""
    for method in registry.methods().values():
        assert (method.score is None) == (method.calls is None), method.name
    for artifact in registry.artifacts().values():
        assert not artifact.inputs.llm_roles or artifact.calls.kind != "none", artifact.name
    fields = {"name": "m", "title": "M", "paper": "p", "section": "s", "level": "sentence"}
    with pytest.raises(ValueError, match="how its model calls are counted"):
        MethodSpec(**fields, score=StepInputs(), raw=dict)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only a score step's model work shards"):
        MethodSpec(**fields, shards=True)
    with pytest.raises(ValueError, match=r"calls .* declare how they are counted"):
        ArtifactSpec("a", "an artifact", StepInputs(llm_roles=("extractor",)))
    with pytest.raises(ValueError, match="says why"):
        CallCount("unplanned")
    with pytest.raises(ValueError, match="not one of"):
        CallCount("guessed")
    assert unplanned("its calls follow its replies").reason == "its calls follow its replies"


def test_the_levels_a_method_scores_are_known_and_distinct() -> None:
    """``other_levels`` (what the benchmark's applicability rule reads beside ``level``): each a
    unit level, none repeated, ``scored_levels`` the declared level first."""
    for method in registry.methods().values():
        assert method.scored_levels[0] == method.level and set(method.scored_levels) <= set(LEVELS), method.name
    fields = {"name": "m", "title": "M", "paper": "p", "section": "s", "level": "sentence"}
    with pytest.raises(ValueError, match=r"other_levels \['token'\] are not among"):
        MethodSpec(**fields, other_levels=("token",))
    with pytest.raises(ValueError, match="repeat a level"):
        MethodSpec(**fields, other_levels=("response", "sentence"))
    assert MethodSpec(**fields, other_levels=("response",)).scored_levels == ("sentence", "response")


def test_a_units_declaration_is_read_from_a_file_the_spec_writes_at_a_level_it_scores() -> None:
    """``units`` (what the report page shows of the units a package defines): a method's at a
    level it scores, read from its raw scores (so with a score step) and the artifacts it
    requires; an artifact's from its JSON file."""
    texts = UnitTexts("fact", read=lambda files: ())
    fields = {"name": "m", "title": "M", "paper": "p", "section": "s", "level": "sentence"}
    scored = {**fields, "score": StepInputs(), "raw": RawScores, "calls": NO_MODEL_CALLS}
    with pytest.raises(ValueError, match="describe a score step's output"):
        MethodSpec(**fields, other_levels=("fact",), units=texts)
    with pytest.raises(ValueError, match="a level it does not score"):
        MethodSpec(**scored, units=texts)
    with pytest.raises(ValueError, match="not all among requires"):
        MethodSpec(**scored, other_levels=("fact",), units=UnitTexts("fact", read=texts.read, reads=("claims",)))
    assert MethodSpec(**scored, other_levels=("fact",), units=texts).units == texts
    with pytest.raises(ValueError, match="from a JSON artifact"):
        ArtifactSpec("a", "an artifact", suffix="parquet", units=texts)
    with pytest.raises(ValueError, match="not one of"):
        UnitTexts("token", read=texts.read)
    for spec in [*registry.methods().values(), *registry.artifacts().values()]:
        assert spec.units is None or callable(spec.units.read), spec.name


@pytest.mark.parametrize("spec", [m for m in registry.methods().values() if m.score is not None], ids=lambda s: s.name)
def test_a_score_step_is_annotated_to_return_its_raw_class(spec: MethodSpec) -> None:
    """Checked on the annotation, before any model runs (the stage checks the value after)."""
    score = registry.step_function("method", spec.name, "score")
    assert typing.get_type_hints(score)["return"] is spec.raw


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: s.name)
def test_an_aggregate_step_is_annotated_with_its_raw_class(spec: MethodSpec) -> None:
    """``ctx: AggregateContext[<spec.raw>]``, ``AggregateContext[None]`` without a score step: the
    step reads ``ctx.raw`` as that class unchecked, because ``MethodSpec.read_raw`` checks the
    stored scores against ``spec.raw`` once (a step without stored scores may leave it bare)."""
    aggregate = registry.step_function("method", spec.name, "aggregate")
    first = next(iter(inspect.signature(aggregate).parameters))
    hint = typing.get_type_hints(aggregate)[first]
    if spec.raw is None and hint is AggregateContext:
        return
    assert typing.get_origin(hint) is AggregateContext
    assert typing.get_args(hint) == (type(None) if spec.raw is None else spec.raw,)


def test_stored_scores_read_back_as_another_class_are_refused() -> None:
    class Elsewhere:
        def to_dict(self) -> dict[str, Any]:
            return {}

        @classmethod
        def from_dict(cls, raw: Mapping[str, Any], where: str = "") -> Any:
            return {"not": "an instance"}

    spec = MethodSpec("odd", "Odd", "-", "-", "response", score=StepInputs(), raw=Elsewhere, calls=NO_MODEL_CALLS)
    with pytest.raises(TypeError, match=r"^x.json: .*Elsewhere.from_dict returned dict, not the raw class of odd$"):
        spec.read_raw({}, "x.json")


def test_a_wrong_return_or_an_unreadable_stored_file_is_named() -> None:
    spec = registry.method("selfcheck_nli")
    with pytest.raises(
        TypeError, match="selfcheck_nli's score step returned dict, not its raw class SampleMatrixScores"
    ):
        spec.checked_raw({"variants": []})
    broken = {"variants": [{"method": "selfcheck_nli", "variant": "nli"}]}  # a variant without its matrices
    with pytest.raises(
        StaleScoresError, match=r"^scores.json: not the stored scores of SampleMatrixScores \(KeyError 'matrices'"
    ):
        spec.read_raw(broken, "scores.json")
    mqag = registry.method("selfcheck_mqag")
    no_fields = {"method": "selfcheck_mqag", "identity": {}, "questions": {"p": [[{"question": "Q?"}]]}}
    with pytest.raises(StaleScoresError, match=r"^mqag.json: not the stored scores of StoredMQAG \(KeyError"):
        mqag.read_raw(no_fields, "mqag.json")
    with pytest.raises(StaleScoresError, match=r"^x.json: not the stored scores of NgramScores"):
        registry.method("selfcheck_ngram").read_raw({"passages": 3}, "x.json")
