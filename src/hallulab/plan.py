"""A cost plan before a big run: what each expensive stage will ask of the models, how much of
it the call cache already holds, and how long the rest takes at stated rates.

``hallulab plan --dataset wikibio`` counts on the data set's own records with the settings
``dvc exp run -S dataset=wikibio`` composes (``-S`` adds more, as there).
``--responses 100000`` plans a run of that many new responses instead: each needs its N_max
samples generated and carries the data set's mean number of sentences, so every count is
scaled from the data set's per-response means (and nothing of it is in the cache).

Counted, for the stages whose requests follow from the records and the settings alone:

* ``generate``: LLM requests (main responses when ``generate.mode=all``, N_max samples for a
  record that has none) and the generated tokens they may take (``max_new_tokens`` each: an
  upper bound), cache hits by the exact keys the stage will ask for;
* ``score_selfcheck_nli``: NLI pairs, sentence x sample (SelfCheckGPT Sec. 5.5), distinct pairs
  and cache hits by the NLI model's keys (once the model is trained or downloaded);
* ``score_selfcheck_prompt``: one LLM verdict per sentence and sample (SelfCheckGPT Sec. 5.6),
  at most ``selfcheck_prompt.max_new_tokens`` tokens each.

The chained methods (HalluCheck's questions and re-answers, FactSelfCheck's triples, MQAG's
questions, CCP's alternatives, Self-Familiarity's explanations, the correction) ask for calls
whose number depends on earlier replies: they are listed as not planned, with why.

Rates: generated tokens per second per endpoint and NLI pairs per second, by default the ones
``make bench`` recorded (``benchmarks/results.json``: the embedded SmolLM2 on that CPU, the
offline MiniLM NLI model in float32), or stated (``--llm-tokens-per-second``,
``--nli-pairs-per-second``; ``--endpoints`` for a fleet). The LLM time is an upper bound (every
request its full ``max_new_tokens``); the NLI time is for the distinct pairs the cache lacks.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from hallulab.core.config import compose, typed
from hallulab.data.records import load_jsonl_passages
from hallulab.data.schema import Passage
from hallulab.generation import GenerateConfig, needs_samples, sample_seed

BENCH_RESULTS = Path("benchmarks/results.json")
TOY_PASSAGES = Path("data/toy/passages.jsonl")

#: stages left out of the plan, and why
NOT_PLANNED: dict[str, str] = {
    "score_hallucheck": "its questions come from extracted facts and its re-answers from the questions",
    "score_factselfcheck": "its triples come from an LLM's extraction of each sample",
    "score_selfcheck_mqag": "its questions and answers come from earlier replies",
    "score_ccp": "its NLI pairs follow the white-box pass's top-K alternatives",
    "score_self_familiarity": "its explanations and concept checks come from earlier replies",
    "correct": "its rewrites follow the detection scores",
}


@dataclass(frozen=True)
class Rates:
    """Throughput the wall-time estimate assumes."""

    llm_tokens_per_second: float  #: generated tokens per second, per endpoint
    nli_pairs_per_second: float
    prompt_verdicts_per_second: float  #: SelfCheckGPT-Prompt verdicts per second, per endpoint
    endpoints: int
    source: str  #: where the rates come from


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
    not_planned: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def table(self) -> str:
        """The plan as a Markdown table, with its rates and what it leaves out."""
        lines = [
            f"Plan for {self.responses:,} responses of {self.dataset} (counted on {self.records:,} records)",
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
        return "\n".join(lines) + "\n"


#: the ``nli`` bench row of each NLI runtime (``nli.runtime``)
NLI_BENCH_ROWS = {"torch": "fp32", "openvino_int8": "ov_int8"}


def bench_rates(path: Path = BENCH_RESULTS, endpoints: int = 1, nli_runtime: str = "torch") -> Rates:
    """The batched generation, SelfCheckGPT-Prompt and NLI rates ``make bench`` recorded, the
    NLI rate of ``nli_runtime`` (float32 torch, or OpenVINO int8). The Prompt row times every
    verdict of the toy set (its sentence x sample pairs, counted here from data/toy), the
    opening its prompts share encoded once."""
    results = json.loads(path.read_text(encoding="utf-8"))
    llm = {row["key"]: row for row in results["llm"]["rows"]}
    nli = {row["key"]: row for row in results["nli"]["rows"]}[NLI_BENCH_ROWS[nli_runtime]]
    machine = results["nli"].get("machine", {})
    toy = load_jsonl_passages(TOY_PASSAGES)
    toy_verdicts = sum(len(p.sentences) * len(p.samples) for p in toy if p.response is not None)
    return Rates(
        llm_tokens_per_second=float(llm["generate_batched"]["value"]),
        nli_pairs_per_second=float(nli["value"]),
        prompt_verdicts_per_second=toy_verdicts / float(llm["prompt_shared_opening"]["value"]),
        endpoints=endpoints,
        source=f"make bench: {results['llm']['setup']['model']} and the offline NLI model "
        f"(nli.runtime={nli_runtime}), {machine.get('cpus', '?')} CPU cores",
    )


def _cached_count(cache: Any, keys: Sequence[str]) -> int:
    return len(cache.get_many(list(keys))) if keys else 0


def plan_generate(
    passages: Sequence[Passage], params: dict[str, Any], cache: Any, responses: int | None, rates: Rates
) -> StagePlan:
    cfg = typed(GenerateConfig, params["generate"], "generate")
    if responses is not None:
        requests = responses * cfg.num_samples + (responses if cfg.mode == "all" else 0)
        max_tokens = responses * cfg.num_samples * cfg.max_new_tokens
        max_tokens += responses * cfg.main_max_new_tokens if cfg.mode == "all" else 0
        basis = f"{cfg.num_samples} samples per new response (generate.num_samples)"
        cached = None
    else:
        mains = len(passages) if cfg.mode == "all" else 0
        targets = [p for p in passages if needs_samples(p, cfg)] if cfg.num_samples > 0 else []
        requests = mains + len(targets) * cfg.num_samples
        max_tokens = mains * cfg.main_max_new_tokens + len(targets) * cfg.num_samples * cfg.max_new_tokens
        basis = (
            f"{len(targets)} records without samples x {cfg.num_samples} (generate.mode={cfg.mode}); "
            f"{mains} main responses; cache hits counted for the samples"
        )
        cached = _generate_cached(targets, params, cfg, cache) if targets and cache is not None else 0
        if cache is None:
            cached = None
    seconds = max_tokens / (rates.llm_tokens_per_second * rates.endpoints)
    if cached and requests:
        seconds *= 1 - cached / requests
    return StagePlan("generate", "LLM requests", requests, requests, cached, max_tokens, seconds, basis)


def _generate_cached(targets: Sequence[Passage], params: dict[str, Any], cfg: GenerateConfig, cache: Any) -> int:
    """How many of the samples the stage will ask for the call cache holds (the keys of
    :class:`hallulab.llm.cached.CachedLLM`)."""
    from hallulab.cache import cache_key
    from hallulab.llm import build_llm
    from hallulab.llm.base import DecodingParams

    entry = params["llms"]["generator"]
    identity = build_llm(params["llm_catalogue"][entry], f"llm_catalogue.{entry}").identity().as_key()
    sampling = DecodingParams(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p)
    keys = [
        cache_key("llm.generate", identity, sampling.as_key(), sample_seed(cfg.seed, p.id, k), p.prompt)
        for p in targets
        for k in range(cfg.num_samples)
    ]
    return _cached_count(cache, keys)


def _sentence_sample_counts(
    passages: Sequence[Passage], params: dict[str, Any], responses: int | None
) -> tuple[int, int, float]:
    """(pairs, responses counted, mean sentences per response), samples per response being
    the stored ones (or N_max for new responses)."""
    scored = [p for p in passages if p.response is not None and p.sentences]
    mean_sentences = sum(len(p.sentences) for p in scored) / max(len(scored), 1)
    if responses is not None:
        n = int(params["selfcheck"]["num_samples"] or params["generate"]["num_samples"])
        return round(responses * mean_sentences * n), responses, mean_sentences
    return sum(len(p.sentences) * len(p.samples) for p in scored), len(scored), mean_sentences


def plan_selfcheck_nli(
    passages: Sequence[Passage], params: dict[str, Any], cache: Any, responses: int | None, rates: Rates
) -> StagePlan:
    pairs, counted, mean_sentences = _sentence_sample_counts(passages, params, responses)
    cached: int | None = None
    distinct = pairs
    why = "cache not checked for new responses"
    if responses is None:
        grid = [
            (sentence, sample)
            for p in passages
            if p.response is not None
            for sentence in p.sentences
            for sample in p.samples
        ]
        unique = list(dict.fromkeys(grid))
        distinct = len(unique)
        cached, why = _nli_cached(unique, params, cache)
    seconds = (distinct - (cached or 0)) / rates.nli_pairs_per_second
    basis = f"{counted:,} responses x {mean_sentences:.1f} sentences x their samples; {why}"
    return StagePlan("score_selfcheck_nli", "NLI pairs", pairs, distinct, cached, 0, seconds, basis)


def _nli_cached(pairs: list[tuple[str, str]], params: dict[str, Any], cache: Any) -> tuple[int | None, str]:
    from hallulab.nli.scorer import NLIConfig, NLIScorer

    if cache is None:
        return None, "cache not checked (--no-cache)"
    scorer = NLIScorer(typed(NLIConfig, params["nli"], "nli"), cache=cache)
    try:
        keys = scorer.contradiction_keys([s for s, _ in pairs], [x for _, x in pairs])
    except OSError as error:  # the offline model is not trained yet, or a hub model not here
        return None, f"cache not checked: the NLI model does not load ({type(error).__name__})"
    return _cached_count(cache, keys), "cache hits by the NLI model's keys"


def plan_selfcheck_prompt(
    passages: Sequence[Passage], params: dict[str, Any], responses: int | None, rates: Rates
) -> StagePlan:
    requests, counted, mean_sentences = _sentence_sample_counts(passages, params, responses)
    max_new = int(params["selfcheck_prompt"]["max_new_tokens"])
    seconds = requests / (rates.prompt_verdicts_per_second * rates.endpoints)
    basis = (
        f"one verdict per sentence and sample ({counted:,} responses x {mean_sentences:.1f} sentences); "
        f"at most {max_new} tokens each; timed per verdict; cache not checked"
    )
    return StagePlan(
        "score_selfcheck_prompt", "LLM requests", requests, requests, None, requests * max_new, seconds, basis
    )


def make_plan(
    dataset: str,
    overrides: Sequence[str] = (),
    *,
    responses: int | None = None,
    rates: Rates,
    use_cache: bool = True,
) -> Plan:
    """The plan of ``dataset`` with the settings ``-S dataset=<dataset> <overrides>`` compose."""
    from hallulab.cache import CallCache
    from hallulab.data.loaders import load_dataset

    params = compose([f"dataset={dataset}", *overrides])
    passages, _ = load_dataset(params["dataset"])
    cache = CallCache() if use_cache and responses is None else None
    try:
        stages = (
            plan_generate(passages, params, cache, responses, rates),
            plan_selfcheck_nli(passages, params, cache, responses, rates),
            plan_selfcheck_prompt(passages, params, responses, rates),
        )
    finally:
        if cache is not None:
            cache.close()
    return Plan(
        dataset=dataset,
        records=len(passages),
        responses=responses if responses is not None else len(passages),
        rates=rates,
        stages=stages,
        not_planned=dict(NOT_PLANNED),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``hallulab plan`` options."""
    parser.add_argument("--dataset", required=True, help="a data set of conf/dataset (as -S dataset=<name>)")
    parser.add_argument("-S", "--set", action="append", default=[], metavar="KEY=VALUE", help="a setting (repeatable)")
    parser.add_argument("--responses", type=int, help="plan this many new responses (default: the data set's records)")
    parser.add_argument("--endpoints", type=int, default=1, help="endpoints serving the LLM role (default: 1)")
    parser.add_argument("--llm-tokens-per-second", type=float, help="generated tokens/s per endpoint (default: bench)")
    parser.add_argument("--nli-pairs-per-second", type=float, help="NLI pairs/s (default: make bench's float32 rate)")
    parser.add_argument(
        "--prompt-verdicts-per-second", type=float, help="Prompt verdicts/s per endpoint (default: bench)"
    )
    parser.add_argument("--no-cache", action="store_true", help="do not look the requests up in the call cache")
    parser.add_argument("--out", help="also write the plan to OUT.json and its table to OUT.md")


def run(args: argparse.Namespace) -> int:
    """``hallulab plan``: print the plan (and write it with ``--out``)."""
    runtime = str(compose([f"dataset={args.dataset}", *args.set])["nli"].get("runtime", "torch"))
    rates = bench_rates(endpoints=args.endpoints, nli_runtime=runtime)
    stated = {
        name: value
        for name in ("llm_tokens_per_second", "nli_pairs_per_second", "prompt_verdicts_per_second")
        if (value := getattr(args, name)) is not None
    }
    if stated:
        others = "" if len(stated) == 3 else f"; the others: {rates.source}"
        rates = replace(rates, **stated, source="stated: " + ", ".join(sorted(stated)) + others)
    plan = make_plan(args.dataset, args.set, responses=args.responses, rates=rates, use_cache=not args.no_cache)
    table = plan.table()
    sys.stdout.write(table)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(plan.to_dict(), indent=2) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(table, encoding="utf-8")
    return 0
