"""A cost plan before a big run: what each expensive stage will ask of the models, how much of
it the call cache already holds, and how long the rest takes at stated rates.

``hallulab plan --dataset wikibio`` counts on the data set's own records with the settings
``dvc exp run -S dataset=wikibio`` composes (``-S`` adds more, as there).
``--responses 100000`` plans a run of that many new responses instead: each needs its N_max
samples generated and carries the data set's mean number of sentences, so every count is
scaled from the data set's per-response means (and nothing of it is in the cache).

Every node of the pipeline graph (:mod:`hallulab.pipeline.graph`) is planned by the call count
its step declares (:class:`hallulab.pipeline.spec.CallCount`), so a new method is planned, or
listed with why not, without an edit here:

* ``llm_generate`` (the ``generate`` stage): LLM requests (main responses when
  ``generate.mode=all``, N_max samples for a record that has none) and the generated tokens
  they may take (``max_new_tokens`` each: an upper bound), cache hits by the exact keys the
  stage will ask for;
* ``nli_sentence_sample`` (SelfCheck-NLI): NLI pairs, sentence x sample (SelfCheckGPT Sec. 5.4),
  distinct pairs and cache hits by the NLI model's keys (once the model is trained or
  downloaded);
* ``llm_sentence_sample`` (SelfCheck-Prompt): one LLM verdict per sentence and sample
  (SelfCheckGPT Sec. 5.5), at most ``<method>.max_new_tokens`` tokens each;
* ``unplanned``: the chained steps (HalluCheck's questions and re-answers, FactSelfCheck's
  triples, MQAG's questions, CCP's alternatives, Semantic Entropy's classes, Self-Familiarity's
  explanations, the extractions, the correction) ask for calls whose number depends on earlier
  replies: they are listed as not planned, with the reason their declaration gives;
* ``none``: steps that call no LLM and no NLI model, listed as such.

Rates: generated tokens per second per endpoint and NLI pairs per second, by default the ones
``make bench`` recorded (``perf/results.json``: the embedded SmolLM2 on that CPU, the
offline MiniLM NLI model in float32), or stated (``--llm-tokens-per-second``,
``--nli-pairs-per-second``; ``--endpoints`` for a fleet). The LLM time is an upper bound (every
request its full ``max_new_tokens``); the NLI time is for the distinct pairs the cache lacks.
The bench file (and data/toy, for the Prompt rate) is read only for a rate not stated: in the
working folder when it holds them, else in the checkout hallulab runs from (an editable install
or a source tree), so the plan runs from any folder.

``--method M`` (repeatable) plans only the stages those methods' scores need (the graph's
:meth:`~hallulab.pipeline.graph.PipelineGraph.steps_for`: generate, the artifacts, the method's
score and aggregate steps).

Before anything is read, the options and settings are checked (one line, exit status 2): a
count below 1, a rate that is not a finite number above 0, an ``-S dataset=`` naming another
data set than ``--dataset``, an ``-o`` that cannot be written, and every setting as a stage
checks it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from hallulab.benchmark.table_costs import TableCost, cell_costs, cost_lines
from hallulab.command_options import add_output_option, add_setting_option
from hallulab.core.config import compose, package_checkout, typed
from hallulab.core.errors import UserFacingError
from hallulab.core.io import check_output_path
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.generation import GenerateKnobs, needs_samples, sample_seed
from hallulab.pipeline.graph import pipeline_graph, setting_of

BENCH_RESULTS = Path("perf/results.json")
TABLE_RESULTS = Path("results/benchmark.json")
TOY_PASSAGES = Path("data/toy/passages.jsonl")


class PlanError(ValueError, UserFacingError):
    """A ``hallulab plan`` option, setting or input file that gives no plan; names it."""


#: the rates a user may state, by their ``hallulab plan`` option
RATE_OPTIONS = ("llm_tokens_per_second", "nli_pairs_per_second", "prompt_verdicts_per_second")


def _option(name: str) -> str:
    """The ``hallulab plan`` option of a :class:`Rates` field or argument (``--endpoints``)."""
    return "--" + name.replace("_", "-")


def check_rate(name: str, value: float) -> None:
    """A rate is a finite number above 0 (a negative rate or NaN gives a plan of no meaning)."""
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise PlanError(f"{_option(name)}: expected a finite number above 0, got {value!r}")


def check_count(name: str, value: int) -> None:
    """A count (endpoints, responses) is a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlanError(f"{_option(name)}: expected a whole number of at least 1, got {value!r}")


@dataclass(frozen=True)
class Rates:
    """Throughput the wall-time estimate assumes; each rate above 0, at least one endpoint."""

    llm_tokens_per_second: float  #: generated tokens per second, per endpoint
    nli_pairs_per_second: float
    prompt_verdicts_per_second: float  #: SelfCheckGPT-Prompt verdicts per second, per endpoint
    endpoints: int
    source: str  #: where the rates come from

    def __post_init__(self) -> None:
        for name in RATE_OPTIONS:
            check_rate(name, getattr(self, name))
        check_count("endpoints", self.endpoints)


@dataclass(frozen=True)
class StagePlan:
    """One stage's model work."""

    stage: str
    work: str  #: "LLM requests" or "NLI pairs"
    count: int
    distinct: int
    cached: int | None  #: of the distinct ones; None: not checked (the reason is in ``basis``)
    max_tokens: int  #: generated tokens at most (LLM requests), 0 for NLI pairs
    seconds: float  #: estimated wall time of the uncached part
    basis: str


@dataclass(frozen=True)
class Plan:
    dataset: str
    records: int  #: records counted on
    responses: int  #: responses planned for (records, or --responses)
    rates: Rates
    stages: tuple[StagePlan, ...]
    not_planned: dict[str, str]  #: stage -> why its calls cannot be counted before the run
    no_model_calls: tuple[str, ...] = ()  #: stages that call no LLM and no NLI model
    methods: tuple[str, ...] = ()  #: the methods whose stages are planned (none: every stage)
    #: each planned method's cost as its detector-table cell on this data set recorded it
    table_costs: tuple[TableCost, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        plan = asdict(self)
        if not self.methods:  # a plan of every stage reads as before --method existed
            del plan["methods"]
        return plan

    def table(self) -> str:
        """The plan as a Markdown table, with its rates and what it leaves out."""
        of_methods = f", the stages of {', '.join(self.methods)}" if self.methods else ""
        lines = [
            f"Plan for {self.responses:,} responses of {self.dataset}{of_methods} "
            f"(counted on {self.records:,} records)",
            f"Rates: {self.rates.llm_tokens_per_second:g} generated tokens/s per endpoint x "
            f"{self.rates.endpoints} endpoint(s), {self.rates.prompt_verdicts_per_second:.3g} Prompt verdicts/s per "
            f"endpoint, {self.rates.nli_pairs_per_second:g} NLI pairs/s ({self.rates.source})",
            "",
            "| stage | work | count | distinct | cached | tokens at most | hours |",
            "|---|---|---|---|---|---|---|",
        ]
        for s in self.stages:
            cached = "not checked" if s.cached is None else f"{s.cached:,}"
            lines.append(
                f"| {s.stage} | {s.work} | {s.count:,} | {s.distinct:,} | {cached} | {s.max_tokens:,} | "
                f"{s.seconds / 3600:.2f} |"
            )
        total = sum(s.seconds for s in self.stages)
        lines += ["", f"Total: {total / 3600:.2f} hours at these rates.", ""]
        lines += [f"- {s.stage}: {s.basis}" for s in self.stages]
        lines += [f"- {stage}: not planned: {why}" for stage, why in self.not_planned.items()]
        if self.no_model_calls:
            lines.append(f"- no LLM or NLI call: {', '.join(self.no_model_calls)}")
        lines += cost_lines(self.table_costs, self.dataset)
        return "\n".join(lines) + "\n"


#: the ``nli`` bench row of each NLI runtime (``nli.runtime``)
NLI_BENCH_ROWS = {"torch": "fp32", "openvino_int8": "ov_int8"}


def _bench_file(path: Path) -> Path:
    """``path`` (relative to a checkout: ``make bench`` writes it there) in the working folder,
    else in the checkout hallulab runs from; or a one-line error saying where it was looked for
    and how to do without it."""
    if path.is_file():
        return path
    checkout = package_checkout()
    if checkout is not None and not path.is_absolute() and (checkout / path).is_file():
        return checkout / path
    stated = ", ".join(_option(name) for name in RATE_OPTIONS)
    where = f"under {Path.cwd()} nor in the hallulab checkout {checkout}" if checkout else f"under {Path.cwd()}"
    raise PlanError(
        f"{path}: not found {where}, and the rates not stated come from it; run the plan in a hallulab "
        f"checkout (make bench writes it there), or state every rate: {stated}"
    )


def bench_rates(path: Path = BENCH_RESULTS, endpoints: int = 1, nli_runtime: str = "torch") -> Rates:
    """The batched generation, SelfCheckGPT-Prompt and NLI rates ``make bench`` recorded, the
    NLI rate of ``nli_runtime`` (float32 torch, or OpenVINO int8). The Prompt row times every
    verdict of the toy set (its sentence x sample pairs, counted here from data/toy), the
    opening its prompts share encoded once."""
    if nli_runtime not in NLI_BENCH_ROWS:
        raise PlanError(
            f"nli.runtime={nli_runtime}: make bench records no NLI rate for it; state one: --nli-pairs-per-second"
        )
    results = json.loads(_bench_file(path).read_text(encoding="utf-8"))
    llm = {row["key"]: row for row in results["llm"]["rows"]}
    nli = {row["key"]: row for row in results["nli"]["rows"]}[NLI_BENCH_ROWS[nli_runtime]]
    machine = results["nli"].get("machine", {})
    toy = load_jsonl_records(_bench_file(TOY_PASSAGES))
    toy_verdicts = sum(len(p.sentences) * len(p.samples) for p in toy if p.response is not None)
    return Rates(
        llm_tokens_per_second=float(llm["generate_batched"]["value"]),
        nli_pairs_per_second=float(nli["value"]),
        prompt_verdicts_per_second=toy_verdicts / float(llm["prompt_shared_opening"]["value"]),
        endpoints=endpoints,
        source=f"make bench: {results['llm']['setup']['model']} and the offline NLI model "
        f"(nli.runtime={nli_runtime}), {machine.get('cpus', '?')} CPU cores",
    )


def costs_in_table(dataset: str, responses: int, methods: Sequence[str]) -> tuple[TableCost, ...]:
    """The detector table's recorded costs on ``dataset`` (:mod:`hallulab.benchmark.table_costs`),
    read from the working folder or the checkout; none where no table file is found."""
    try:
        path = _bench_file(TABLE_RESULTS)
    except PlanError:
        return ()
    return tuple(cell_costs(json.loads(path.read_text(encoding="utf-8")), dataset, responses, methods))


def _cached_count(cache: Any, keys: Sequence[str]) -> int:
    return len(cache.get_many(list(keys))) if keys else 0


def plan_generate(
    records: Sequence[Record], params: dict[str, Any], cache: Any, responses: int | None, rates: Rates
) -> StagePlan:
    cfg = typed(GenerateKnobs, params["generate"], "generate")
    if responses is not None:
        requests = responses * cfg.samples_to_draw + (responses if cfg.mode == "all" else 0)
        max_tokens = responses * cfg.samples_to_draw * cfg.max_new_tokens
        max_tokens += responses * cfg.main_max_new_tokens if cfg.mode == "all" else 0
        basis = f"{cfg.samples_to_draw} samples per new response (generate.samples_to_draw)"
        cached = None
    else:
        mains = len(records) if cfg.mode == "all" else 0
        targets = [p for p in records if needs_samples(p, cfg)] if cfg.samples_to_draw > 0 else []
        requests = mains + len(targets) * cfg.samples_to_draw
        max_tokens = mains * cfg.main_max_new_tokens + len(targets) * cfg.samples_to_draw * cfg.max_new_tokens
        basis = (
            f"{len(targets)} records without samples x {cfg.samples_to_draw} (generate.mode={cfg.mode}); "
            f"{mains} main responses; cache hits counted for the samples"
        )
        cached = _generate_cached(targets, params, cfg, cache) if targets and cache is not None else 0
        if cache is None:
            cached = None
    seconds = max_tokens / (rates.llm_tokens_per_second * rates.endpoints)
    if cached and requests:
        seconds *= 1 - cached / requests
    return StagePlan("generate", "LLM requests", requests, requests, cached, max_tokens, seconds, basis)


def _generate_cached(targets: Sequence[Record], params: dict[str, Any], cfg: GenerateKnobs, cache: Any) -> int:
    """How many of the samples the stage will ask for the call cache holds (the keys of
    :class:`hallulab.llm.cached.CachedLLM`)."""
    from hallulab.core.call_cache import cache_key
    from hallulab.llm import build_llm
    from hallulab.llm.base import DecodingParams

    entry = params["llms"]["generator"]
    identity = build_llm(params["llm_catalogue"][entry], f"llm_catalogue.{entry}").identity().as_key()
    sampling = DecodingParams(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p)
    keys = [
        cache_key("llm.generate", identity, sampling.as_key(), sample_seed(cfg.seed, p.id, k), p.prompt)
        for p in targets
        for k in range(cfg.samples_to_draw)
    ]
    return _cached_count(cache, keys)


def _sentence_sample_counts(
    records: Sequence[Record], params: dict[str, Any], responses: int | None
) -> tuple[int, int, float]:
    """(pairs, responses counted, mean sentences per response), samples per response being
    the stored ones (or N_max for new responses)."""
    scored = [p for p in records if p.response is not None and p.sentences]
    mean_sentences = sum(len(p.sentences) for p in scored) / max(len(scored), 1)
    if responses is not None:
        from hallulab.methods.sample_selection import SampleKnobs

        used = typed(SampleKnobs, params["samples"], "samples").used
        n = used or typed(GenerateKnobs, params["generate"], "generate").samples_to_draw
        return round(responses * mean_sentences * n), responses, mean_sentences
    return sum(len(p.sentences) * len(p.samples) for p in scored), len(scored), mean_sentences


def plan_nli_pairs(
    stage: str, records: Sequence[Record], params: dict[str, Any], cache: Any, responses: int | None, rates: Rates
) -> StagePlan:
    """One NLI pair per sentence and sample (``nli_sentence_sample``)."""
    pairs, counted, mean_sentences = _sentence_sample_counts(records, params, responses)
    cached: int | None = None
    distinct = pairs
    why = "cache not checked for new responses"
    if responses is None:
        grid = [
            (sentence, sample)
            for p in records
            if p.response is not None
            for sentence in p.sentences
            for sample in p.samples
        ]
        unique = list(dict.fromkeys(grid))
        distinct = len(unique)
        cached, why = _nli_cached(unique, params, cache)
    seconds = (distinct - (cached or 0)) / rates.nli_pairs_per_second
    basis = f"{counted:,} responses x {mean_sentences:.1f} sentences x their samples; {why}"
    return StagePlan(stage, "NLI pairs", pairs, distinct, cached, 0, seconds, basis)


def _nli_cached(pairs: list[tuple[str, str]], params: dict[str, Any], cache: Any) -> tuple[int | None, str]:
    from hallulab.nli.scorer import NLIKnobs, NLIScorer

    if cache is None:
        return None, "cache not checked (--no-cache)"
    scorer = NLIScorer(typed(NLIKnobs, params["nli"], "nli"), cache=cache)
    try:
        keys = scorer.contradiction_keys([s for s, _ in pairs], [x for _, x in pairs])
    except OSError as error:  # the offline model is not trained yet, or a hub model not here
        return None, f"cache not checked: the NLI model does not load ({type(error).__name__})"
    return _cached_count(cache, keys), "cache hits by the NLI model's keys"


def plan_llm_verdicts(
    stage: str, method: str, records: Sequence[Record], params: dict[str, Any], responses: int | None, rates: Rates
) -> StagePlan:
    """One LLM verdict per sentence and sample (``llm_sentence_sample``), at most the method's
    ``max_new_tokens`` each."""
    requests, counted, mean_sentences = _sentence_sample_counts(records, params, responses)
    max_new = int(params[method]["max_new_tokens"])
    seconds = requests / (rates.prompt_verdicts_per_second * rates.endpoints)
    basis = (
        f"one verdict per sentence and sample ({counted:,} responses x {mean_sentences:.1f} sentences); "
        f"at most {max_new} tokens each; timed per verdict; cache not checked"
    )
    return StagePlan(stage, "LLM requests", requests, requests, None, requests * max_new, seconds, basis)


def check_dataset_override(dataset: str, overrides: Sequence[str]) -> None:
    """Refuse an override that picks another data set than ``dataset`` (``--dataset toy -S
    dataset=wikibio`` would plan WikiBio under the name toy)."""
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+~").split("@")[0] == "dataset" and value != dataset:
            raise PlanError(
                f"--dataset {dataset} and -S {override} name two data sets; name the one to plan with --dataset"
            )


def plan_params(dataset: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The settings ``-S dataset=<dataset> <overrides>`` compose, with every setting the plan
    reads checked (unknown keys refused, as a stage refuses them) before any record is read."""
    from hallulab.llm import check_llm_roles
    from hallulab.nli.scorer import NLIKnobs
    from hallulab.pipeline.settings_schema import check_settings

    check_dataset_override(dataset, overrides)
    params = compose([f"dataset={dataset}", *overrides])
    check_settings(params)
    typed(GenerateKnobs, params["generate"], "generate")
    typed(NLIKnobs, params["nli"], "nli")
    check_llm_roles(params)
    return params


def make_plan(
    dataset: str,
    overrides: Sequence[str] = (),
    *,
    responses: int | None = None,
    rates: Rates,
    use_cache: bool = True,
    params: Mapping[str, Any] | None = None,
    methods: Sequence[str] = (),
) -> Plan:
    """The plan of ``dataset`` with the settings ``-S dataset=<dataset> <overrides>`` compose
    (``params``: :func:`plan_params` of them, where the caller has it); ``methods``: only the
    stages their scores need (none: every stage)."""
    from hallulab.core.call_cache import CallCache
    from hallulab.data.loaders import load_dataset

    if responses is not None:
        check_count("responses", responses)
    methods = tuple(dict.fromkeys(methods))
    method_stages(methods)  # an unknown name fails before the settings are composed
    params = dict(params) if params is not None else plan_params(dataset, overrides)
    stages_of_methods = method_stages(methods, params)
    records, _ = load_dataset(params["dataset"])
    cache = CallCache() if use_cache and responses is None else None
    stages: list[StagePlan] = []
    not_planned: dict[str, str] = {}
    no_model_calls: list[str] = []
    try:
        for node in pipeline_graph().nodes.values():
            if stages_of_methods is not None and node.stage not in stages_of_methods:
                continue
            kind = node.calls.kind
            if kind == "llm_generate":
                stages.append(plan_generate(records, params, cache, responses, rates))
            elif kind == "nli_sentence_sample":
                stages.append(plan_nli_pairs(node.stage, records, params, cache, responses, rates))
            elif kind == "llm_sentence_sample":
                stages.append(plan_llm_verdicts(node.stage, node.name, records, params, responses, rates))
            elif kind == "unplanned":
                not_planned[node.stage] = node.calls.reason
            elif node.kind in ("artifact", "score"):
                no_model_calls.append(node.stage)
    finally:
        if cache is not None:
            cache.close()
    return Plan(
        dataset=dataset,
        records=len(records),
        responses=responses if responses is not None else len(records),
        rates=rates,
        stages=tuple(stages),
        not_planned=not_planned,
        no_model_calls=tuple(no_model_calls),
        methods=methods,
        table_costs=costs_in_table(dataset, responses if responses is not None else len(records), methods),
    )


def method_stages(methods: Sequence[str], params: Mapping[str, Any] | None = None) -> set[str] | None:
    """The stages the scores of ``methods`` need under the settings ``params`` (a combining
    method's members' stages with its own; without ``params``, its own only); None for no
    method: every stage. An unregistered name is a one-line error listing the registered ones."""
    from hallulab.pipeline.registry import check_method_name

    if not methods:
        return None
    for method in methods:
        check_method_name(method, "--method")
    graph = pipeline_graph() if params is None else pipeline_graph().configured(setting_of(params))
    return {node.stage for method in methods for node in graph.steps_for(method)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``hallulab plan`` options."""
    parser.add_argument("--dataset", required=True, help="a data set of conf/dataset (as -S dataset=NAME takes it)")
    add_setting_option(parser, help="a setting, as dvc exp run -S takes it (repeatable; default: none)")
    parser.add_argument("--responses", type=int, help="plan this many new responses (default: the data set's records)")
    parser.add_argument(
        "--endpoints", type=int, default=1, help="the number of endpoints serving the LLM role (default: 1)"
    )
    parser.add_argument(
        "--llm-tokens-per-second",
        type=float,
        help="the generated tokens per second of one endpoint (default: the rate make bench recorded)",
    )
    parser.add_argument(
        "--nli-pairs-per-second",
        type=float,
        help="the NLI pairs scored per second (default: the float32 rate make bench recorded)",
    )
    parser.add_argument(
        "--prompt-verdicts-per-second",
        type=float,
        help="the SelfCheck-Prompt verdicts per second of one endpoint (default: the rate make bench recorded)",
    )
    parser.add_argument(
        "--method",
        action="append",
        default=[],
        metavar="M",
        help="plan only the stages this method's scores need (repeatable; hallulab methods lists them; "
        "default: every stage)",
    )
    parser.add_argument("--no-cache", action="store_true", help="do not look the requests up in the call cache")
    add_output_option(parser, help="also write the plan to OUTPUT.json and its table to OUTPUT.md (default: neither)")


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse, before anything is read, what gives no plan: a count below 1, a rate that is
    not a finite number above 0, an override naming another data set, an ``-o`` that
    cannot be written."""
    check_count("endpoints", args.endpoints)
    if args.responses is not None:
        check_count("responses", args.responses)
    for name in RATE_OPTIONS:
        if (value := getattr(args, name)) is not None:
            check_rate(name, value)
    check_dataset_override(args.dataset, args.set)
    method_stages(args.method)
    if args.output:
        for suffix in (".json", ".md"):
            check_output_path(Path(args.output).with_suffix(suffix), "-o")


def stated_rates(args: argparse.Namespace, params: Mapping[str, Any]) -> Rates:
    """The rates stated by option, the others ``make bench``'s (its file is read only then)."""
    stated = {name: value for name in RATE_OPTIONS if (value := getattr(args, name)) is not None}
    if len(stated) == len(RATE_OPTIONS):
        return Rates(**stated, endpoints=args.endpoints, source="stated: " + ", ".join(sorted(stated)))
    from hallulab.nli.scorer import NLIKnobs

    runtime = typed(NLIKnobs, params["nli"], "nli").runtime
    rates = bench_rates(endpoints=args.endpoints, nli_runtime=runtime)
    if not stated:
        return rates
    return replace(rates, **stated, source="stated: " + ", ".join(sorted(stated)) + f"; the others: {rates.source}")


def run(args: argparse.Namespace) -> int:
    """``hallulab plan``: print the plan (and write it with ``-o``)."""
    check_arguments(args)
    params = plan_params(args.dataset, args.set)
    rates = stated_rates(args, params)
    plan = make_plan(
        args.dataset,
        args.set,
        responses=args.responses,
        rates=rates,
        use_cache=not args.no_cache,
        params=params,
        methods=args.method,
    )
    table = plan.table()
    sys.stdout.write(table)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(plan.to_dict(), indent=2) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(table, encoding="utf-8")
    return 0
