"""What a method and a shared artifact declare: the contract between the library and the DAG.

The shape follows lm-polygraph's calculators (which provide statistics) and estimators
(which require them): a **shared artifact** (sentence units with spans, token statistics
with top-K alternatives, claims, triples ...) is computed once by its own ``extract_<name>``
stage and read by every method that requires it; a **method** has an expensive ``score``
step (model calls; reads no sweep knob) and a cheap ``aggregate`` step (arithmetic over the
stored scores; reads the sweep knobs) that returns unit-level scores (:mod:`hallulab.core.units`).

Each declaration lists exactly the params each step reads (``section`` or
``section.key``), the LLM roles it calls (params ``llms.<role>``), the prompt files it
renders and any other file it needs, so that ``dvc.yaml`` (generated from these
declarations by :mod:`hallulab.dag.dvcgen`) re-runs a stage exactly when something it
reads changes. A step that reads an undeclared param fails (:class:`ParamsView`).

Code layout of a method package ``hallulab.methods.<name>``: ``__init__.py`` (the
:class:`MethodSpec` named ``SPEC``, no heavy imports), ``score.py`` for a method with an
expensive step (``score(ctx: BuildContext) -> <raw class>``: an instance of the spec's
``raw`` class, which :meth:`MethodSpec.checked_raw` checks) and ``aggregate.py``
(``aggregate(ctx: AggregateContext[<raw class>]) -> Aggregated``, ``AggregateContext[None]``
without a score step: :meth:`MethodSpec.read_raw` checks the instance the aggregate stage reads
back, so the step needs no check of its own; the three classes are
:mod:`hallulab.pipeline.context`'s). An artifact package ``hallulab.artifacts.<name>`` holds
``SPEC`` (an :class:`ArtifactSpec`) in ``__init__.py`` and, in ``build.py``,
``build(ctx: BuildContext)``, which returns the artifact: a ``dict[str, Any]`` for a JSON
artifact, a ``pandas.DataFrame`` for a Parquet one (its ``suffix``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

from hallulab.core.errors import StaleScoresError
from hallulab.core.levels import LEVELS

# the needs a method declares (MethodSpec.needs); their vocabulary lives in the foundation, where
# the data layer's declaration of what each data set meets names it too (hallulab.data.provision)
from hallulab.core.needs import PROMPTS as PROMPTS
from hallulab.core.needs import SAC3_OUTPUTS as SAC3_OUTPUTS
from hallulab.core.needs import SAMPLES as SAMPLES
from hallulab.core.needs import TEXT_LOGPROBS as TEXT_LOGPROBS
from hallulab.core.needs import Need

# the success rates of its LLM roles a method declares (MethodSpec.role_checks)
from hallulab.pipeline.role_checks import AnswerSpread as AnswerSpread
from hallulab.pipeline.role_checks import DeclaredCheck
from hallulab.pipeline.role_checks import RoleCheck as RoleCheck
from hallulab.pipeline.row_labels import RowLabel
from hallulab.pipeline.unit_texts import UnitTexts


class StoredRaw(Protocol):
    """What a :attr:`MethodSpec.raw` class is: the score step returns an instance, the score
    stage stores its ``to_dict()`` as JSON, and the aggregate stage reads it back with the
    class's ``from_dict(raw, where)`` (``hallulab.methods.raw_scores.RawScores`` and its
    subclasses; the sample-matrix methods' ``SampleMatrixScores``; MQAG's ``StoredMQAG``)."""

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "") -> Self: ...


@dataclass(frozen=True)
class StepInputs:
    """What one step reads besides the passages."""

    params: tuple[str, ...] = ()  # params keys, e.g. "nli" or "samples.used"
    llm_roles: tuple[str, ...] = ()  # roles whose config is params llms.<role>
    prompts: tuple[str, ...] = ()  # params keys whose value names a prompt file conf/prompts/<value>.yaml
    files: tuple[str, ...] = ()  # further file deps; may use ${...} params templates (DVC resolves them)
    #: groups of data-root files it reads (hallulab.core.data_files): it depends on their
    #: fingerprints, which the data_files stage writes
    data_files: tuple[str, ...] = ()

    def param_keys(self) -> tuple[str, ...]:
        """Params keys for DVC: a role depends on its name and on the catalogue entry it names
        (DVC resolves the ``${...}`` template against params.yaml)."""
        roles = [key for role in self.llm_roles for key in (f"llms.{role}", f"llm_catalogue.${{llms.{role}}}")]
        return (*self.params, *roles, *self.prompts)


@dataclass(frozen=True)
class CallCount:
    """How ``hallulab plan`` counts a step's model calls before a run.

    ``kind`` is one of :data:`CALL_KINDS`: ``none`` (no LLM or NLI call), ``llm_generate`` (the
    generate step's main responses and samples, as ``generate.mode`` asks), ``nli_sentence_sample``
    (one NLI pair per sentence and sample, SelfCheckGPT §5.4), ``llm_sentence_sample`` (one LLM
    verdict per sentence and sample, §5.5), or ``unplanned``: the calls follow from earlier
    replies, so they cannot be counted before the run (``reason`` says why)."""

    kind: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CALL_KINDS:
            raise ValueError(f"call count {self.kind!r} is not one of {CALL_KINDS}")
        if (self.kind == "unplanned") != bool(self.reason):
            raise ValueError("an unplanned call count, and only it, says why (reason)")


CALL_KINDS = ("none", "llm_generate", "nli_sentence_sample", "llm_sentence_sample", "unplanned")
NO_MODEL_CALLS = CallCount("none")
NLI_PER_SENTENCE_SAMPLE = CallCount("nli_sentence_sample")
LLM_VERDICT_PER_SENTENCE_SAMPLE = CallCount("llm_sentence_sample")


def unplanned(reason: str) -> CallCount:
    """Calls that follow from earlier replies; ``reason`` is the line the plan prints."""
    return CallCount("unplanned", reason)


@dataclass(frozen=True)
class KnobSection:
    """A params section a step builds its settings from (``typed(cls, section)``) and the
    dataclass that is the one declaration of its knobs: names, defaults, choices and docs.

    ``cls`` names the class as ``<module>:<Class>`` inside the declaring package (e.g.
    ``aggregate:NgramKnobs``), so that declaring it imports nothing heavy; a reader that needs
    the class imports it (:func:`hallulab.pipeline.registry.knob_sections`). ``elsewhere``: keys
    of the section that are not fields because another reader takes them (a prompt file's name,
    a score stage's own key)."""

    section: str
    cls: str
    elsewhere: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        module, _, name = self.cls.partition(":")
        if not (module and name.isidentifier()):
            raise ValueError(f"knob section {self.section!r}: cls {self.cls!r} is not '<module>:<Class>'")


@dataclass(frozen=True)
class ArtifactSpec:
    """A shared extraction artifact (one ``extract_<name>`` stage per data set)."""

    name: str
    description: str
    inputs: StepInputs = field(default_factory=StepInputs)
    requires: tuple[str, ...] = ()  # other artifacts it is built from
    suffix: str = "json"  # file suffix of the artifact (json or parquet)
    #: how the plan counts its model calls (required when it calls an LLM role)
    calls: CallCount = NO_MODEL_CALLS
    #: its first batched model request is the bulk of its cost: ``make dvcyaml SHARDS=S`` splits it
    shards: bool = False
    #: the units its file defines (claims, knowledge-graph triples) and how the report page reads
    #: them (:mod:`hallulab.pipeline.unit_texts`); a method that requires it shows them at their level
    units: UnitTexts | None = None
    #: the params sections its build step reads through a knob class
    knobs: tuple[KnobSection, ...] = ()

    def __post_init__(self) -> None:
        if self.inputs.llm_roles and self.calls == NO_MODEL_CALLS:
            raise ValueError(f"artifact {self.name!r} calls {self.inputs.llm_roles}: declare how they are counted")
        if self.units is not None and self.suffix != "json":
            raise ValueError(f"artifact {self.name!r}: units are read from a JSON artifact, not a {self.suffix} one")
        if self.units is not None and not set(self.units.reads) <= set(self.requires):
            raise ValueError(f"artifact {self.name!r}: its units read {self.units.reads}, not all among requires")


@dataclass(frozen=True)
class MethodSpec:
    """A registered method (see the module docstring)."""

    name: str
    title: str
    paper: str
    section: str
    level: str  # the level of the units it scores
    requires: tuple[str, ...] = ()  # shared artifacts read by score and aggregate
    score: StepInputs | None = None  # None: no expensive step of its own
    aggregate: StepInputs = field(default_factory=StepInputs)
    sample_curve: bool = False  # stores I x N_max sample matrices: the N-curve stage applies
    knob_curve: str | None = None  # a knob whose values are variants (CCP's K): the knob-curve stage plots them
    #: the params sections its steps read through a knob class (SelfCheckGPT n-gram's
    #: ``selfcheck_ngram`` section, CCP's ``ccp.score`` and ``ccp.aggregate``, ...)
    knobs: tuple[KnobSection, ...] = ()
    paper_table: str | None = None  # key of its published numbers in hallulab.evaluation.paper_tables
    order: int = 100  # position in listings (summary table, metrics), then by name
    #: the class its score step returns and its aggregate step reads, with ``to_dict`` and
    #: ``from_dict(raw, where)`` (a RawScores subclass; the sample-matrix methods'
    #: SampleMatrixScores; MQAG's StoredMQAG); required with a score step, None without one
    raw: type[StoredRaw] | None = None
    #: a combining method (the ensemble): the params key of its member list, each member a
    #: mapping ``{method, variant}``; the DAG gives each member a ``members_<name>`` stage that
    #: copies that variant's unit scores, and the aggregate step reads them as ``ctx.members``
    combines: str | None = None
    #: what it needs of a data set or of its models (the benchmark's "n/a" reasons)
    needs: tuple[Need, ...] = ()
    #: the levels besides ``level`` its aggregate step writes unit scores at, each from the units
    #: it scores by a rule of its paper or of this project (SelfCheckGPT §7.2's passage score, the
    #: mean of the sentence scores; CCP's sentence, its most uncertain claim): the evaluation
    #: evaluates every level the data set labels, so the benchmark's applicability rule reads them
    other_levels: tuple[str, ...] = ()
    #: how the plan counts its score step's model calls; required with a score step
    calls: CallCount | None = None
    #: the variants the benchmark table shows, by their names at the default settings: its
    #: paper's headline reading (:mod:`hallulab.benchmark.runs`); empty: every variant it writes
    benchmark_variants: tuple[str, ...] = ()
    #: a benchmark variant written at some of its scored levels only, with those levels
    #: (LUQ's ``luq_response``, lm-polygraph's response reading, has no sentence scores): on a
    #: data set labelled at another level the table's cell of that variant is ``n/a``, and its
    #: run does not wait for units it cannot write (:meth:`variant_scores_level`)
    variant_levels: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: a trivial baseline (unit length): the benchmark table compares every other row of a
    #: column against it (:mod:`hallulab.benchmark.table_file`)
    trivial_baseline: bool = False
    #: its score step's first batched model request is the bulk of its cost: ``make dvcyaml
    #: SHARDS=S`` splits it (:mod:`hallulab.pipeline.sharding`)
    shards: bool = False
    #: the units its stored raw scores describe at one of its levels (their texts, sentences and
    #: details) and how the report page reads them (:mod:`hallulab.pipeline.unit_texts`); they
    #: take the place of those of an artifact it requires at that level
    units: UnitTexts | None = None
    #: its fact-level scores drive FactSelfCheck's fact-level correction (§4.5): the DAG has a
    #: ``correct`` stage when a registered method declares this
    corrects_facts: bool = False
    #: the success rates of its LLM roles that its results file counts in ``diagnostics``
    #: (replies parsed, questions formed, an evaluator's most common answer ...,
    #: :mod:`hallulab.pipeline.role_checks`): the benchmark table reads them to tell a cell the
    #: model that filled a role could not play (:mod:`hallulab.benchmark.validity`)
    role_checks: tuple[DeclaredCheck, ...] = ()
    #: the words after its title in the benchmark table's rows, from its filled cells (who
    #: wrote the answers it checks, which model filled a role: :mod:`hallulab.pipeline.row_labels`)
    row_label: RowLabel | None = None

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"method {self.name!r}: level {self.level!r} is not one of {LEVELS}")
        unknown = [level for level in self.other_levels if level not in LEVELS]
        if unknown:
            raise ValueError(f"method {self.name!r}: other_levels {unknown} are not among {LEVELS}")
        if len(set(self.scored_levels)) != len(self.scored_levels):
            raise ValueError(f"method {self.name!r}: other_levels {self.other_levels} repeat a level")
        if (self.score is None) != (self.raw is None):
            raise ValueError(
                f"method {self.name!r}: a score step and a raw class (what it returns) come together "
                f"(score {'absent' if self.score is None else 'declared'}, raw {self.raw!r})"
            )
        if (self.score is None) != (self.calls is None):
            raise ValueError(f"method {self.name!r}: a score step declares how its model calls are counted (calls)")
        if self.shards and self.score is None:
            raise ValueError(f"method {self.name!r}: only a score step's model work shards")
        if (self.units is not None or self.corrects_facts) and self.score is None:
            raise ValueError(f"method {self.name!r}: units and corrects_facts describe a score step's output")
        if self.units is not None and self.units.level not in self.scored_levels:
            raise ValueError(f"method {self.name!r}: units at {self.units.level!r}, a level it does not score")
        if self.units is not None and not set(self.units.reads) <= set(self.requires):
            raise ValueError(f"method {self.name!r}: its units read {self.units.reads}, not all among requires")
        self._check_role_checks()
        for variant, levels in self.variant_levels:
            if variant not in self.benchmark_variants:
                raise ValueError(f"method {self.name!r}: variant_levels names {variant!r}, not a benchmark variant")
            if not levels or not set(levels) <= set(self.scored_levels):
                raise ValueError(
                    f"method {self.name!r}: variant {variant!r} at levels {levels}, not among {self.scored_levels}"
                )

    def variant_scores_level(self, variant: str, level: str | None) -> bool:
        """Whether ``variant`` writes unit scores at ``level``: every variant writes them at each
        scored level unless :attr:`variant_levels` names its own (``None``, no binary level: True)."""
        declared = dict(self.variant_levels).get(variant)
        return level is None or declared is None or level in declared

    def _check_role_checks(self) -> None:
        """Each role check names one of the method's own LLM roles and, where it is limited to
        some variants, variants the benchmark table shows."""
        roles = {role for step in (self.score, self.aggregate) if step is not None for role in step.llm_roles}
        for check in self.role_checks:
            if check.role not in roles:
                raise ValueError(
                    f"method {self.name!r}: a role check of {check.role!r}, not one of its roles {sorted(roles)}"
                )
            unknown = [v for v in check.variants if self.benchmark_variants and v not in self.benchmark_variants]
            if unknown:
                raise ValueError(
                    f"method {self.name!r}: a role check of variants {unknown}, not among {self.benchmark_variants}"
                )

    @property
    def scored_levels(self) -> tuple[str, ...]:
        """Every level its aggregate step writes unit scores at: ``level``, then ``other_levels``."""
        return (self.level, *self.other_levels)

    def checked_raw(self, value: object) -> StoredRaw:
        """``value`` when it is an instance of the spec's raw class (what the score step must
        return); a TypeError naming both otherwise."""
        if self.raw is None or not isinstance(value, self.raw):
            expected = getattr(self.raw, "__qualname__", None)
            raise TypeError(
                f"{self.name}'s score step returned {type(value).__qualname__}, not its raw class {expected}"
            )
        return value

    def read_raw(self, stored: Any, where: str) -> StoredRaw:
        """An instance of the raw class, read back by its ``from_dict`` from the mapping its
        ``to_dict`` stored; any shape it cannot read is a
        :class:`hallulab.core.errors.StaleScoresError` naming ``where`` (one line, not a traceback).

        The one runtime check of the aggregate step's input: every path that builds an
        :class:`hallulab.pipeline.context.AggregateContext` with stored scores (the aggregate
        stage, the API) reads them here, so a step annotated ``AggregateContext[<raw class>]``
        gets an instance of that class or never runs (a TypeError naming both)."""
        if self.raw is None:
            raise TypeError(f"method {self.name!r} has no score step, so no stored scores to read")
        try:
            value = self.raw.from_dict(stored, where)
        except StaleScoresError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise StaleScoresError(where, self.raw.__qualname__, f"{type(error).__name__} {error}") from error
        if not isinstance(value, self.raw):
            raise TypeError(
                f"{where}: {self.raw.__qualname__}.from_dict returned {type(value).__qualname__}, "
                f"not the raw class of {self.name}"
            )
        return value
