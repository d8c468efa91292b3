"""Sample generation: the main response and N_max stochastic samples per record.

Modes (``generate.mode``):
  * ``keep``: records pass through unchanged (WikiBio keeps its GPT-3 samples);
  * ``auto``: records without samples get ``samples_to_draw`` (N_max) of them; the others pass
    through with their own samples (the report counts both and the sample counts found);
  * ``samples``: every record's samples are regenerated from its prompt;
  * ``all``: the main response is regenerated greedily (with per-token log-probabilities,
    entropies and top-K alternatives, written for the white-box methods) and split into
    sentences with spaCy; samples are regenerated; labels no longer apply and are dropped,
    except that a record with gold answers (the QA sets) is labelled again: the new answer is
    correct when a gold answer occurs in it after SQuAD normalisation (``relabel: containment``).

Seeds: sample k of record r is drawn with seed ``sha256(f"{seed}:{r}:{k}")`` mod 2^31, so it
does not depend on batching, order, or which other records are in the run, and every
draw is a separate entry in the call cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hallulab.core.config import setting
from hallulab.core.errors import RecordError
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams, Generation
from hallulab.llm.cached import CachedLLM
from hallulab.text.answers import contains_gold_answer

MODES = ("keep", "auto", "samples", "all")

#: What the generate stage reads: its section, spaCy (to split regenerated responses) and the
#: ``generator`` LLM role.


@dataclass(frozen=True)
class GenerateKnobs:
    """params ``generate``."""

    mode: str = setting("auto", choices=MODES)
    samples_to_draw: int = setting(20, minimum=0, doc="N_max: samples drawn for a record that has none")
    temperature: float = setting(1.0, minimum=0.0)
    top_p: float = setting(1.0, above=0.0, maximum=1.0)
    max_new_tokens: int = setting(256, minimum=1)
    main_max_new_tokens: int = setting(256, minimum=1)
    top_k_alternatives: int = setting(10, minimum=0, doc="white-box top-K stored with a regenerated main response")
    seed: int = 0
    relabel: str = setting(
        "containment", choices=("containment", "none"), doc="label regenerated answers against the gold answers"
    )


def sample_seed(base: int, record_id: str, index: int) -> int:
    digest = hashlib.sha256(f"{base}:{record_id}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (2**31)


def needs_samples(record: Record, cfg: GenerateKnobs) -> bool:
    """Whether the generate stage draws samples for ``passage`` (``generate.mode``)."""
    if record.response is None:  # a prompt-only record: nothing to check samples against
        return False
    return cfg.mode in ("samples", "all") or (cfg.mode == "auto" and not record.samples)


def _require_prompt(record: Record) -> str:
    if not record.prompt:
        raise RecordError(record.id, "prompt", "is needed to generate, but is missing")
    return record.prompt


@dataclass
class GenerationReport:
    main_generated: int = 0
    samples_generated: int = 0
    records_kept: int = 0
    records_given_samples: int = 0
    labels_dropped: int = 0
    relabelled: int = 0
    empty_samples: int = 0
    prompt_only_records: int = 0
    empty_main_responses: list[str] = field(default_factory=list)  # regenerated empty: kept prompt-only
    sample_counts: dict[int, int] = field(default_factory=dict)  # samples per record -> records, after the stage

    def _empty_note(self) -> str:
        empty = len(self.empty_main_responses)
        return f" ({empty} because the regenerated response was empty)" if empty else ""

    def summary(self, cfg: GenerateKnobs) -> str:
        counts = ", ".join(f"{n} samples: {k} records" for n, k in sorted(self.sample_counts.items()))
        return (
            f"mode {cfg.mode}: {self.records_given_samples} record(s) got N_max={cfg.samples_to_draw} new samples, "
            f"{self.records_kept} kept their own; {self.main_generated} main responses regenerated; "
            f"{self.prompt_only_records} prompt-only record(s) left as they are{self._empty_note()}; "
            f"now {counts or 'no samples'}"
        )


def generate_records(
    records: Sequence[Record],
    llm: CachedLLM,
    cfg: GenerateKnobs,
    split_sentences: Callable[[list[str]], list[list[str]]],
) -> tuple[list[Record], list[dict[str, Any]], GenerationReport]:
    """New records, white-box records of regenerated main responses, and counts.

    ``split_sentences`` splits regenerated responses (the spaCy splitter in the stage)."""
    report = GenerationReport()
    records = list(records)
    main_records: list[dict[str, Any]] = []
    if cfg.mode == "all":
        prompts = [_require_prompt(p) for p in records]
        greedy = DecodingParams(
            max_new_tokens=cfg.main_max_new_tokens, temperature=0.0, top_k_alternatives=cfg.top_k_alternatives
        )
        mains = llm.generate(prompts, greedy, [None] * len(prompts))
        sentence_lists = split_sentences([g.text for g in mains])
        rebuilt = []
        for record, main, sentences in zip(records, mains, sentence_lists, strict=True):
            report.labels_dropped += record.labels is not None
            if not sentences:  # nothing to score: the record is kept prompt-only, and counted
                report.empty_main_responses.append(record.id)
                rebuilt.append(
                    dataclasses.replace(
                        record, response=None, sentences=(), samples=(), labels=None, claims=(), response_label=None
                    )
                )
                continue
            gold = record.meta.get("gold_answers")
            response_label = None
            if cfg.relabel == "containment" and gold:
                response_label = 0.0 if contains_gold_answer(main.text, gold) else 1.0
                report.relabelled += 1
            rebuilt.append(
                dataclasses.replace(
                    record,
                    response=main.text,
                    sentences=tuple(sentences),
                    samples=(),  # the data's samples were another model's: only new ones (if any) stay
                    labels=None,
                    claims=(),
                    response_label=response_label,
                )
            )
            main_records.append({"id": record.id, **main.to_dict()})
        records = rebuilt
        report.main_generated = len(records)

    report.prompt_only_records = sum(p.response is None for p in records)
    targets = [p for p in records if needs_samples(p, cfg)]
    report.records_kept = len(records) - len(targets) - report.prompt_only_records
    report.records_given_samples = len(targets) if cfg.samples_to_draw > 0 else 0
    if targets and cfg.samples_to_draw > 0:
        sampling = DecodingParams(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p)
        prompts, seeds = [], []
        for record in targets:
            prompt = _require_prompt(record)
            for k in range(cfg.samples_to_draw):
                prompts.append(prompt)
                seeds.append(sample_seed(cfg.seed, record.id, k))
        outputs: list[Generation] = llm.generate(prompts, sampling, seeds)
        by_id: dict[str, tuple[str, ...]] = {}
        for i, record in enumerate(targets):
            texts = tuple(g.text.strip() for g in outputs[i * cfg.samples_to_draw : (i + 1) * cfg.samples_to_draw])
            report.empty_samples += sum(not t for t in texts)
            by_id[record.id] = texts
        records = [dataclasses.replace(p, samples=by_id[p.id]) if p.id in by_id else p for p in records]
        report.samples_generated = len(outputs)
    for record in records:
        if record.response is not None:
            report.sample_counts[len(record.samples)] = report.sample_counts.get(len(record.samples), 0) + 1
    return records, main_records, report
