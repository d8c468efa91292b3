"""What a labelled JSONL file provides, read off its records: the needs it meets and the levels
it labels, as a data set's loader declares them for the table's own columns
(:class:`hallulab.data.provision.Provision`), and the checks that refuse a file no column can
be computed from, each in one line naming the file, before any model runs.

The rules, over every record of the file:

* ``prompts``: every record carries its prompt;
* ``samples_in_data``: every record carries samples. A record without samples gets them from
  ``generate`` (``generate.mode: auto``, the default, draws them from its prompt with the
  configured ``llms.generator``): a record with neither samples nor a prompt, where other
  records carry samples, is refused, naming the record;
* ``sac3_outputs``: every record carries SAC3's verifier outputs (``meta.perb_sc`` and
  ``meta.self_sc``);
* the labels: ``claim`` where some claim has a label, ``sentence`` (and ``passage``, their
  mean) where some record has sentence ``labels``, ``response`` where some record has a
  ``response_label``, ``prompt`` where some record has a ``prompt_label``. A file with none is
  refused; so is a labelled level whose units are all of one class (no ranking metric is defined
  on it), naming the level and the counts. The positive class is the evaluation's: a label
  above 0.499 is hallucinated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hallulab.core.errors import UserFacingError
from hallulab.data.provision import LABEL_LEVELS, Provision
from hallulab.data.schema import Record
from hallulab.evaluation.protocol import ProtocolKnobs

#: the record fields that label each level, as the error names them
LABEL_FIELDS = {
    "claim": "claims[].label",
    "sentence": "labels",
    "response": "response_label",
    "prompt": "prompt_label",
}


class ColumnInputError(ValueError, UserFacingError):
    """A labelled file no column can be computed from (no labels, one class only, a record
    without the samples the others carry and no prompt to draw them from)."""


@dataclass(frozen=True)
class LevelCounts:
    """One labelled level's units: how many are hallucinated (positive) and how many are not."""

    level: str
    positive: int
    negative: int


def _labels(records: Sequence[Record], level: str, threshold: float) -> list[bool]:
    if level == "claim":
        return [c.label > threshold for p in records for c in p.claims if c.label is not None]
    if level == "sentence":
        return [label > threshold for p in records if p.labels is not None for label in p.labels]
    if level == "response":
        return [p.response_label > threshold for p in records if p.response_label is not None]
    return [p.prompt_label > threshold for p in records if p.prompt_label is not None]


def label_counts(records: Sequence[Record], cfg: ProtocolKnobs | None = None) -> tuple[LevelCounts, ...]:
    """Every level some record labels, finest first, with its class counts."""
    threshold = (cfg or ProtocolKnobs()).nonfact_threshold
    found = []
    for level in LABEL_FIELDS:
        labels = _labels(records, level, threshold)
        if labels:
            found.append(LevelCounts(level, sum(labels), len(labels) - sum(labels)))
    return tuple(found)


def _check_samples(records: Sequence[Record], where: str) -> None:
    with_samples = sum(1 for p in records if p.samples)
    if not with_samples:
        return
    for p in records:
        if not p.samples and not p.prompt:
            raise ColumnInputError(
                f"{where}: record {p.id!r}, field 'samples': missing while {with_samples} of {len(records)} records "
                "carry samples, and no 'prompt' to draw them from (generate.mode=auto draws a record's samples from "
                "its prompt with llms.generator)"
            )


def records_provision(records: Sequence[Record], where: str) -> Provision:
    """The provision of the records of ``where`` (the file's name, for the errors): the module
    docstring's rules; a file without labels, or with a labelled level of one class, is refused."""
    counts = label_counts(records)
    if not counts:
        fields = ", ".join(f"'{name}'" for name in LABEL_FIELDS.values())
        raise ColumnInputError(f"{where}: no labels: a column needs labelled units ({fields}) in some records")
    for found in counts:
        if not found.positive or not found.negative:
            raise ColumnInputError(
                f"{where}: field {LABEL_FIELDS[found.level]!r}: every {found.level} unit is of one class "
                f"({found.positive} hallucinated, {found.negative} not); ROC-AUC needs both"
            )
    _check_samples(records, where)
    labelled = {found.level for found in counts} | (
        {"passage"} if any(f.level == "sentence" for f in counts) else set()
    )
    return Provision(
        prompts=all(p.prompt for p in records),
        samples_in_data=all(p.samples for p in records),
        sac3_outputs=all(bool(p.meta.get("perb_sc")) and bool(p.meta.get("self_sc")) for p in records),
        labels=tuple(level for level in LABEL_LEVELS if level in labelled),
        responses_in_data=all(p.response is not None for p in records),
    )
