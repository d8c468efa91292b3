"""Score records with any registered method in-process, without DVC: the stages' own steps.

    from hallulab.api import Detector
    scores = Detector("selfcheck_ngram").score("my_records.jsonl")      # a unit-score DataFrame
    scores = Detector("ccp", settings={"ccp.aggregate.k": [5]}).score(records)

Records are the canonical schema's (a JSONL file, mappings or ``Record`` objects). A
record with a ``response`` and no ``sentences`` is split into sentences by the configured
spaCy model (``spacy.model``), as the ``generate`` stage splits the responses it writes.

The result has one row per scored unit: ``method``, the columns of
``hallulab.core.units.COLUMNS``, ``text``
(the unit's text where the records hold it: the sentence, the response, the prompt, a span)
and ``headline`` (the variant is one the method's paper reports as its headline, the ones
the run's summary shows). By default only the headline variants' rows are returned;
``variants="all"`` returns every variant the method computes.

``Detector`` composes the settings from ``conf/`` exactly as ``dvc exp run -S`` does
(Hydra overrides, every setting checked, unknown keys refused), then runs what the DAG runs
for the method, in its order and through the same functions: ``generate`` (samples for the
records that have none, as ``generate.mode`` says), every shared artifact the method needs
(each artifact's ``build``), the method's ``score`` and ``aggregate`` steps, with the one call
cache. The steps run through ``hallulab.pipeline.executor``, the executor the stage scripts
call, so a step runs the same way here and in the DAG. Between steps every value takes the
round trip the stage files give it (JSON for records and stored scores, Parquet for tables),
so the returned DataFrame equals the
``data/aggregated/<dataset>/<method>.parquet`` a DAG run over the same records writes.

A step that needs a file the DAG produces elsewhere reads it where the DAG puts it (the
offline NLI model under ``models/`` after ``dvc repro train_nli``; a hub model by id needs
nothing).
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hallulab.core.call_cache import CallCache
from hallulab.core.config import CONF_DIR, ConfigError, compose
from hallulab.core.errors import UserFacingError
from hallulab.core.units import score_frame
from hallulab.data.records import LengthCheck, SentenceSplitter, load_jsonl_records, with_sentences
from hallulab.data.schema import Record, check_unique_ids, record_from_dict
from hallulab.llm import check_llm_roles
from hallulab.pipeline import registry
from hallulab.pipeline.context import BuildContext
from hallulab.pipeline.controls import AggregateControls
from hallulab.pipeline.executor import aggregate_method, build_artifact, run_step, score_method
from hallulab.pipeline.graph import GENERATED, PipelineGraph, pipeline_graph
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.resources import Resources
from hallulab.pipeline.settings_schema import check_settings
from hallulab.pipeline.spec import MethodSpec

Records = str | Path | Iterable[Record | Mapping[str, Any]]
#: settings as ``-S`` takes them (``["ccp.aggregate.k=[5]"]``) or as a mapping (``{"ccp.aggregate.k": [5]}``)
Settings = Sequence[str] | Mapping[str, Any]
VARIANT_CHOICES = ("headline", "all")


def override_strings(settings: Settings) -> list[str]:
    """Hydra override strings: given as they are, or one ``key=value`` per mapping item, the
    value written as a Hydra value (JSON for lists, numbers, booleans and null; a string
    quoted unless it is a plain word)."""
    if isinstance(settings, Mapping):
        return [f"{key}={_hydra_value(value)}" for key, value in settings.items()]
    if isinstance(settings, str):
        raise TypeError(f"settings: a list of KEY=VALUE strings or a mapping, not the string {settings!r}")
    return [str(item) for item in settings]


def _hydra_value(value: Any) -> str:
    if isinstance(value, str):
        plain = value.replace("_", "").replace("-", "").replace(".", "").replace("/", "").isalnum()
        return value if plain else json.dumps(value)
    return json.dumps(value)


def _as_stored(value: Any) -> Any:
    """The value as a stage file gives it back: Parquet for a DataFrame, JSON otherwise."""
    if isinstance(value, pd.DataFrame):
        buffer = io.BytesIO()
        value.to_parquet(buffer, index=False)
        buffer.seek(0)
        return pd.read_parquet(buffer)
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


class NoRecordsError(ValueError, UserFacingError):
    """Nothing to score: an empty records file (or one of blank lines), or an empty list."""


def _records(records: Records, split: SentenceSplitter, fits: LengthCheck | None = None) -> list[Record]:
    """Records from a JSONL file in the canonical schema, or Records / mappings; a record
    with a response and no ``sentences`` is split by ``split`` (``fits`` checks its length
    first). None at all is an error naming the file."""
    if isinstance(records, str | Path):
        parsed = load_jsonl_records(Path(records), split, fits)
        if not parsed:
            raise NoRecordsError(f"{records}: no records (the file is empty or holds only blank lines)")
        return parsed
    given = list(records)
    if not given:
        raise NoRecordsError("records: no records to score (an empty list)")
    raws = with_sentences([r for r in given if not isinstance(r, Record)], split, fits)
    filled = iter(raws)
    parsed = [
        r if isinstance(r, Record) else record_from_dict(next(filled), position=i + 1) for i, r in enumerate(given)
    ]
    check_unique_ids(parsed)
    return parsed


def check_variants(variants: str) -> None:
    """Refuse a ``variants`` choice other than "headline" and "all"."""
    if variants not in VARIANT_CHOICES:
        raise ConfigError(f"variants: {variants!r} is not one of {list(VARIANT_CHOICES)}")


def with_headline(frame: pd.DataFrame, headline: Sequence[str] | None, variants: str = "headline") -> pd.DataFrame:
    """``frame`` with a ``headline`` column (the variant is among ``headline``; every variant
    when the method names none), only those rows unless ``variants`` is "all"."""
    check_variants(variants)
    marked = frame.assign(headline=frame["variant"].isin(list(headline)) if headline is not None else True)
    return marked if variants == "all" else marked[marked["headline"]].reset_index(drop=True)


def unit_texts(frame: pd.DataFrame, records: Sequence[Record]) -> list[str | None]:
    """Each row's unit text where the records hold it: a span of the response (``start`` /
    ``end``), the sentence, the whole response or the prompt; None for a unit the records do
    not spell out (a knowledge-graph fact, a concept)."""
    by_id = {p.id: p for p in records}
    texts: list[str | None] = []
    for row in frame.itertuples(index=False):
        record = by_id.get(str(row.record_id))
        text: str | None = None
        if record is not None:
            if row.level == "response":
                text = record.response
            elif row.level == "prompt":
                text = record.prompt
            elif pd.notna(row.start) and pd.notna(row.end) and record.response is not None:
                text = record.response[int(row.start) : int(row.end)]
            elif row.level == "sentence" and pd.notna(row.sentence_index):
                index = int(row.sentence_index)
                text = record.sentences[index] if index < len(record.sentences) else None
        texts.append(text)
    return texts


@dataclass(frozen=True)
class DetectorRun:
    """One method's run over records: its unit scores (as ``Detector.score`` returns them),
    its aggregate step's diagnostics (what the DAG writes beside the scores, and a results
    file's ``diagnostics``: the counts its role checks read) and the records as its steps saw
    them (split into sentences, with the samples ``generate`` drew)."""

    scores: pd.DataFrame
    diagnostics: dict[str, Any]
    records: list[Record]


@dataclass(frozen=True)
class _Stepped:
    scores: pd.DataFrame
    controls: AggregateControls
    diagnostics: dict[str, Any]
    records: list[Record]


@dataclass
class Detector:
    """One method with its settings (``settings`` as ``-S`` takes them, e.g.
    ``["samples.used=5"]``, or as a mapping, ``{"samples.used": 5}``);
    ``score`` runs it on records."""

    method: str
    settings: Settings = ()
    dataset: str = "api"  # the name a step sees (log lines, a cache of nothing else)
    conf_dir: Path = CONF_DIR
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("hallulab.api"))

    def __post_init__(self) -> None:
        self.spec: MethodSpec = registry.method(self.method)
        self.overrides: list[str] = override_strings(self.settings)
        self.params: dict[str, Any] = compose(self.overrides, self.conf_dir)
        check_settings(self.params)
        check_llm_roles(self.params)

    def view(self, declared: Iterable[str], owner: str) -> ParamsView:
        return ParamsView(self.params, declared, owner)

    def score(
        self,
        records: Records,
        cache: CallCache | None = None,
        variants: str = "headline",
        calibration: str | Path | None = None,
    ) -> pd.DataFrame:
        """Unit-level scores of ``records``: the columns of ``hallulab.core.units.COLUMNS``,
        then ``text`` and ``headline`` (see the module docstring); ``variants``: "headline"
        (the default) or "all". No records (an empty file or list) is an error.

        ``calibration`` (a calibration file, or the name of a data set whose committed
        calibration of this method to read, as ``hallulab score --calibration`` takes it) adds
        ``probability``, ``flag`` and ``calibration`` on the rows of its variant and level."""
        check_variants(variants)  # before any model runs
        stored = None
        if calibration is not None:
            from hallulab.calibration.stored import resolve_calibration

            stored = resolve_calibration(calibration, self.method)
        if cache is not None:
            scores = self.run(records, cache, variants).scores
        else:
            with CallCache() as opened:
                scores = self.run(records, opened, variants).scores
        if stored is None:
            return scores
        from hallulab.calibration.stored import calibrated, outside_fitted_range, range_warning

        out = calibrated(scores, stored)
        outside = outside_fitted_range(out, stored)
        if outside:
            self.log.warning("%s", range_warning(stored, outside, int(out["calibration"].notna().sum())))
        return out

    def graph(self) -> PipelineGraph:
        """The pipeline graph under this detector's settings: a combining method's members (the
        member list checked first, each problem one line) and the correction's methods are
        edges of it (``PipelineGraph.configured``)."""
        if self.spec.combines is not None:
            from hallulab.pipeline.members import parse_members

            setting = self.spec.combines
            parse_members(self.view((setting,), "api").get(setting), setting, self.method)
        return pipeline_graph().configured(lambda key: self.view((key,), "api").get(key))

    def check_models(self) -> None:
        """The NLI model every step of the method (of each member, for a combining method)
        loads, checked before any step spends work: a missing local folder or a hub model the
        hub and its cache cannot give is a one-line error now, not after the LLM calls."""
        reads_nli = any(
            key == "nli" or key.startswith("nli.")
            for node in self.graph().steps_for(self.method)
            for key in node.inputs.params
        )
        if reads_nli:
            from hallulab.nli.scorer import NLIKnobs, check_model_available

            config = self.view(("nli",), "api").typed(NLIKnobs, "nli")
            check_model_available(config.model, config.revision)

    def run(self, records: Records, cache: CallCache, variants: str = "headline") -> DetectorRun:
        """What ``score`` returns (without a calibration), with the method's diagnostics
        and the records as its steps saw them (split into sentences, samples drawn). The
        models are checked first (``check_models``)."""
        check_variants(variants)
        self.check_models()
        stepped = self._run(self.records_of(records, cache), cache)
        frame = stepped.scores
        frame["text"] = unit_texts(frame, stepped.records)
        frame.insert(0, "method", self.method)
        scores = with_headline(frame, stepped.controls.headline_variants, variants)
        return DetectorRun(scores, stepped.diagnostics, stepped.records)

    def records_of(self, records: Records, cache: CallCache) -> list[Record]:
        """``records`` as the steps read them: a record with a response and no ``sentences``
        split by the configured spaCy model (its length checked first); none at all is an
        error naming the file."""
        spacy = Resources(self.view(("spacy",), "api"), cache).spacy
        return _records(records, spacy.sentences, spacy.require_fits)

    def _run(self, records: list[Record], cache: CallCache) -> _Stepped:
        """The method's unit scores (as the DAG's aggregate stage writes them), controls and
        diagnostics: the steps of the configured pipeline graph (``PipelineGraph.steps_for``: a
        combining method's members' steps first), in its order, each through the executor the
        stages call."""
        inputs: dict[str, Any] = {}
        raws: dict[str, Any] = {}
        scores: dict[str, pd.DataFrame] = {}
        members: dict[str, dict[str, pd.DataFrame]] = {}
        controls: dict[str, AggregateControls] = {}
        diagnostics: dict[str, dict[str, Any]] = {}
        for node in self.graph().steps_for(self.method):
            view = self.view(node.inputs.param_keys(), node.stage)
            if node.kind == "generate":
                records, main_tokens = self._generate(records, view, cache)
                inputs.update(dict.fromkeys(GENERATED, main_tokens))
            elif node.kind == "artifact":
                required = {r: inputs[r] for r in registry.artifact(node.name).requires}
                built = build_artifact(node.name, self.dataset, records, required, view, cache, self.log)
                inputs[node.name] = _as_stored(built.value)
            elif node.kind == "score":
                spec = registry.method(node.name)
                needed = {name: inputs[name] for name in spec.requires}
                stored = score_method(spec, self.dataset, records, needed, view, cache, self.log).value
                raws[node.name] = spec.read_raw(_as_stored(stored.to_dict()), node.stage)
            elif node.kind == "members":
                members[node.name] = self._members(node.name, view, scores)
            elif node.kind == "aggregate":
                spec = registry.method(node.name)
                needed = {name: inputs[name] for name in spec.requires}
                result = aggregate_method(
                    spec, self.dataset, records, needed, raws.get(node.name), view, self.log, members.get(node.name)
                )
                scores[node.name], controls[node.name] = _as_stored(score_frame(result.scores)), result.controls
                diagnostics[node.name] = _as_stored(result.record())
        return _Stepped(scores[self.method], controls[self.method], diagnostics[self.method], records)

    def _members(self, combiner: str, view: ParamsView, scores: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        """A combining method's members step: each member's rows out of its method's unit scores
        (what the members_<name> stages copy from the members' aggregate stages)."""
        from hallulab.pipeline.members import check_level, member_rows, parse_members

        spec = registry.method(combiner)
        assert spec.combines is not None
        section = spec.combines.rsplit(".", 1)[0]
        level = check_level(str(view.get(f"{section}.level")), f"{section}.level")
        listed = parse_members(self.view((spec.combines,), "api").get(spec.combines), spec.combines, combiner)
        return {m.key: member_rows(scores[m.method], m, level, f"{m.method}'s scores", self.log) for m in listed}

    def _generate(
        self, records: list[Record], view: ParamsView, cache: CallCache
    ) -> tuple[list[Record], list[dict[str, Any]]]:
        """The ``generate`` stage's step: samples (and main responses) as ``generate.mode`` says,
        run through the executor with the generator's resources."""
        from hallulab.generation import GenerateKnobs, generate_records

        cfg = view.typed(GenerateKnobs, "generate")

        def generate(ctx: BuildContext) -> Any:
            return generate_records(
                list(ctx.records), ctx.resources.llm("generator"), cfg, ctx.resources.spacy.sentences
            )

        generated, mains, report = run_step(generate, self.dataset, records, {}, view, cache, self.log).value
        self.log.info("%s", report.summary(cfg))
        stored = [record_from_dict(_as_stored(p.to_dict())) for p in generated]
        return stored, [_as_stored(row) for row in mains]


def detect(
    records: Records,
    method: str,
    settings: Settings = (),
    variants: str = "headline",
    calibration: str | Path | None = None,
) -> pd.DataFrame:
    """Unit-level scores of ``records`` by ``method`` (see ``Detector``); with ``calibration``,
    each unit's probability of being hallucinated and its flag beside the score."""
    return Detector(method, settings).score(records, variants=variants, calibration=calibration)


def methods() -> list[MethodSpec]:
    """Every registered method's spec, in listing order."""
    return list(registry.methods().values())


def with_hallucination_scores(
    chain: Any, method: str = "selfcheck_ngram", samples_to_draw: int = 5, overrides: Sequence[str] = ()
) -> Any:
    """A LangChain ``Runnable``: ``chain``'s output with the method's scores of it.

    The wrapped runnable invokes ``chain`` once for the response and ``samples_to_draw`` more times
    (``chain.batch``) for the samples a sampling-consistency method compares it with, so the
    samples come from the same chain (give its model a temperature above 0), splits the
    response into sentences with the configured spaCy model, and scores the record with
    ``Detector``. It returns ``{"output", "samples", "scores"}``: the chain's text, the
    samples and the unit-level DataFrame (sentence and response rows, higher = more likely
    hallucinated)."""
    from langchain_core.runnables import RunnableLambda

    from hallulab.text.spacy_tokens import SpacyTokenizer

    detector = Detector(method, overrides)
    spacy = SpacyTokenizer(str(detector.params["spacy"]["model"]))

    def text_of(value: Any) -> str:
        return str(getattr(value, "content", value))

    def run(question: Any) -> dict[str, Any]:
        output = text_of(chain.invoke(question))
        samples = [text_of(s) for s in chain.batch([question] * samples_to_draw)] if samples_to_draw else []
        sentences = spacy.sentences([output])[0] or [output]
        record = {
            "id": "chain",
            "prompt": str(question),
            "response": output,
            "sentences": sentences,
            "samples": samples,
        }
        return {"output": output, "samples": samples, "scores": detector.score([record])}

    return RunnableLambda(run)
