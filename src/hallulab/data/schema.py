"""The canonical record every loader produces and every stage consumes.

One record per response, whatever the source data set: an id, the prompt (or concept)
that produced the response, the response text, its sentences, one label per sentence
(0 = accurate, 0.5 = minor inaccurate, 1 = major inaccurate, as SelfCheckGPT §6 maps the
WikiBio annotation), N stochastic samples, an optional reference text and the provenance
of the record. Labels at the other levels a paper evaluates are optional fields: claims
given by the data set with their labels (FactualBio), a label of the whole response (the
SAC3 QA sets: was the answer wrong?) and a label of the prompt (Concept-7: should the model
refuse?). A prompt-only record (no response yet: Self-Familiarity) has ``response = None``.

Validation happens at the boundary: :func:`record_from_dict` checks every field and
raises :class:`RecordError` naming the record and the field, so a bad line in a
10k-record JSONL file is found by its id, not by a stack trace three stages later.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hallulab.core.errors import RecordError

#: WikiBio annotation vocabulary -> numeric label (SelfCheckGPT §6 and its notebooks).
LABEL_VALUES: dict[str, float] = {
    "accurate": 0.0,
    "minor_inaccurate": 0.5,
    "major_inaccurate": 1.0,
}

#: Response-level and prompt-level label names -> numbers (1 = the positive class).
RESPONSE_LABEL_VALUES: dict[str, float] = {"correct": 0.0, "hallucinated": 1.0}
PROMPT_LABEL_VALUES: dict[str, float] = {"familiar": 0.0, "unfamiliar": 1.0}

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class GivenClaim:
    """An atomic claim the data set provides with the response (e.g. FactualBio's facts).

    ``label``: 0 = true, 0.5 = minor false, 1 = major false (None = unlabelled);
    ``sentence_index``: the sentence that states it, when the data set says so."""

    text: str
    label: float | None = None
    sentence_index: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "label": self.label, "sentence_index": self.sentence_index}


@dataclass(frozen=True)
class Record:
    """One LLM response with its sentences, labels and stochastic samples.

    Attributes:
        id: unique within the data set.
        response: the main response R that is assessed.
        sentences: R split into sentences r_1..r_I (the unit SelfCheckGPT scores).
        samples: N stochastic samples S_1..S_N drawn from the same prompt.
        labels: one label per sentence in [0, 1], or None when unlabelled.
        claims: atomic claims given by the data set, with their labels.
        response_label: 1 = the response is hallucinated / wrong, 0 = correct, None = unknown.
        prompt_label: 1 = the model should refuse (unfamiliar concepts), 0 = familiar.
        prompt: the prompt or concept that produced R, when known.
        reference: a reference text (e.g. the real Wikipedia passage), when known.
        source: provenance, e.g. ``"potsawee/wiki_bio_gpt3_hallucination:evaluation[12]"``.
        meta: further source fields kept verbatim (JSON-serialisable).
    """

    id: str
    response: str | None
    sentences: tuple[str, ...]
    samples: tuple[str, ...] = ()
    labels: tuple[float, ...] | None = None
    prompt: str | None = None
    reference: str | None = None
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    claims: tuple[GivenClaim, ...] = ()
    response_label: float | None = None
    prompt_label: float | None = None

    @property
    def passage_label(self) -> float | None:
        """Passage-level label: the mean of the sentence labels (SelfCheckGPT §6)."""
        if self.labels is None or not self.labels:
            return None
        return sum(self.labels) / len(self.labels)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict in the on-disk field order."""
        return {
            "id": self.id,
            "prompt": self.prompt,
            "response": self.response,
            "sentences": list(self.sentences),
            "labels": None if self.labels is None else list(self.labels),
            "samples": list(self.samples),
            "reference": self.reference,
            "source": self.source,
            "meta": dict(self.meta),
            "claims": [c.to_dict() for c in self.claims],
            "response_label": self.response_label,
            "prompt_label": self.prompt_label,
        }


def _encodable(value: str, rid: str, name: str) -> str:
    """Text that UTF-8 can hold: a lone surrogate (``"\\ud83d"`` in JSON, half an emoji) would
    pass here and crash the first stage that writes the record."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise RecordError(
            rid, name, f"holds {value[error.start : error.end]!r} at character {error.start}, not valid UTF-8"
        ) from None
    return value


def _require_str(raw: Mapping[str, Any], rid: str, name: str, *, allow_empty: bool) -> str:
    if name not in raw:
        raise RecordError(rid, name, "missing (required)")
    value = raw[name]
    if not isinstance(value, str):
        raise RecordError(rid, name, f"expected a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise RecordError(rid, name, "is empty")
    return _encodable(value, rid, name)


def _optional_str(raw: Mapping[str, Any], rid: str, name: str) -> str | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError(rid, name, f"expected a string or null, got {type(value).__name__}")
    return _encodable(value, rid, name)


def _str_list(raw: Mapping[str, Any], rid: str, name: str, *, required: bool) -> tuple[str, ...]:
    if name not in raw or raw[name] is None:
        if required:
            raise RecordError(rid, name, "missing (required)")
        return ()
    value = raw[name]
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise RecordError(rid, name, f"expected a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise RecordError(rid, f"{name}[{i}]", f"expected a string, got {type(item).__name__}")
        _encodable(item, rid, f"{name}[{i}]")
    return tuple(value)


def parse_label(value: Any, rid: str, where: str) -> float:
    """Map a label (number in [0, 1] or a WikiBio annotation string) to a float."""
    if isinstance(value, bool):
        raise RecordError(rid, where, "expected a number in [0, 1] or a label name, got a bool")
    if isinstance(value, str):
        if value not in LABEL_VALUES:
            raise RecordError(rid, where, f"unknown label {value!r}; expected one of {sorted(LABEL_VALUES)}")
        return LABEL_VALUES[value]
    if isinstance(value, int | float):
        number = float(value)
        if math.isnan(number) or not 0.0 <= number <= 1.0:
            raise RecordError(rid, where, f"label {value!r} is outside [0, 1]")
        return number
    raise RecordError(rid, where, f"expected a number or label name, got {type(value).__name__}")


def record_from_dict(raw: Mapping[str, Any], *, position: int | None = None) -> Record:
    """Validate one raw record and build a :class:`Record`.

    ``position`` (the line or row number) names the record when it has no usable id.
    """
    if not isinstance(raw, Mapping):
        where = f"#{position}" if position is not None else "?"
        raise RecordError(where, "<record>", f"expected an object, got {type(raw).__name__}")
    rid_value = raw.get("id")
    fallback = f"#{position}" if position is not None else "?"
    if not isinstance(rid_value, str | int) or isinstance(rid_value, bool) or str(rid_value) == "":
        raise RecordError(fallback, "id", "missing or not a non-empty string/integer")
    rid = str(rid_value)

    response: str | None
    if raw.get("response") is None and "response" in raw and raw.get("prompt"):
        response = None  # a prompt-only record
    else:
        response = _require_str(raw, rid, "response", allow_empty=False)
    sentences = _str_list(raw, rid, "sentences", required=response is not None)
    if response is not None and not sentences:
        raise RecordError(rid, "sentences", "is empty; a passage needs at least one sentence")
    if response is None and sentences:
        raise RecordError(rid, "sentences", "given without a response")
    for i, sentence in enumerate(sentences):
        if not sentence.strip():
            raise RecordError(rid, f"sentences[{i}]", "is blank; every scored sentence needs text")
    samples = _str_list(raw, rid, "samples", required=False)

    labels: tuple[float, ...] | None = None
    raw_labels = raw.get("labels")
    if raw_labels is not None:
        if isinstance(raw_labels, str) or not isinstance(raw_labels, Sequence):
            raise RecordError(rid, "labels", f"expected a list, got {type(raw_labels).__name__}")
        if len(raw_labels) != len(sentences):
            raise RecordError(
                rid,
                "labels",
                f"has {len(raw_labels)} labels for {len(sentences)} sentences; need one per sentence",
            )
        labels = tuple(parse_label(v, rid, f"labels[{i}]") for i, v in enumerate(raw_labels))

    meta = raw.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise RecordError(rid, "meta", f"expected an object, got {type(meta).__name__}")
    source = raw.get("source") or ""
    if not isinstance(source, str):
        raise RecordError(rid, "source", f"expected a string, got {type(source).__name__}")

    return Record(
        id=rid,
        response=response,
        sentences=sentences,
        samples=samples,
        labels=labels,
        prompt=_optional_str(raw, rid, "prompt"),
        reference=_optional_str(raw, rid, "reference"),
        source=source,
        meta=dict(meta),
        claims=_claims(raw, rid, len(sentences)),
        response_label=_named_label(raw.get("response_label"), rid, "response_label", RESPONSE_LABEL_VALUES),
        prompt_label=_named_label(raw.get("prompt_label"), rid, "prompt_label", PROMPT_LABEL_VALUES),
    )


def _named_label(value: Any, rid: str, where: str, names: Mapping[str, float]) -> float | None:
    """A record-level label: a number in [0, 1] or one of ``names``; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in names:
            raise RecordError(
                rid, where, f"unknown label {value!r}; expected a number in [0, 1] or one of {sorted(names)}"
            )
        return names[value]
    return parse_label(value, rid, where)


def _claims(raw: Mapping[str, Any], rid: str, sentence_count: int) -> tuple[GivenClaim, ...]:
    value = raw.get("claims")
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise RecordError(rid, "claims", f"expected a list of claims, got {type(value).__name__}")
    claims = []
    for i, item in enumerate(value):
        where = f"claims[{i}]"
        if not isinstance(item, Mapping):
            raise RecordError(rid, where, f"expected an object with 'text', got {type(item).__name__}")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise RecordError(rid, f"{where}.text", "missing or blank")
        label = item.get("label")
        sentence_index = item.get("sentence_index")
        if sentence_index is not None and (
            isinstance(sentence_index, bool)
            or not isinstance(sentence_index, int)
            or not 0 <= sentence_index < max(sentence_count, 1)
        ):
            raise RecordError(rid, f"{where}.sentence_index", f"{sentence_index!r} is not a sentence index")
        claims.append(
            GivenClaim(
                text=text,
                label=None if label is None else parse_label(label, rid, f"{where}.label"),
                sentence_index=sentence_index,
            )
        )
    return tuple(claims)


def check_unique_ids(records: Sequence[Record]) -> None:
    """Raise :class:`RecordError` on the first repeated id."""
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            raise RecordError(record.id, "id", "duplicated; ids must be unique in a data set")
        seen.add(record.id)
