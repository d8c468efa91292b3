"""What a method declares of its LLM roles' success: counts its results file already holds.

A method that calls an LLM asks the model to play a role (evaluator, question generator, proxy
...) and counts, in its published result's ``diagnostics``, how often the role's replies could
be used: replies parsed, questions formed, facts aligned, words within the proxy's top K. Those
counts say whether the model that filled the role could play it, which the metrics alone do not
(a method whose evaluator answers No to every pair scores every unit alike). Two declarations,
each naming its counts by their dotted paths in ``diagnostics`` (:class:`Count`):

* :class:`RoleCheck`: a success rate, ``succeeded`` of ``of``, e.g. SelfCheckGPT-Prompt's
  ``verdicts.replies - verdicts.other`` replies parsed of ``verdicts.replies``;
* :class:`AnswerSpread`: for a role that answers from a closed set (Yes or No), how often it
  gave its most common answer: a role that answers alike whatever it is asked tells units apart
  no better than a flat score.

Each reads into a :class:`RoleReading` (counts and words); whether a reading makes its cell
model-limited is the benchmark's rule (:mod:`hallulab.benchmark.validity`), which states the
bounds. The declarations sit on :attr:`hallulab.pipeline.spec.MethodSpec.role_checks`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.core.config import ConfigError, dotted_value

#: one dotted path into ``diagnostics``: keys of word characters (and ``/``, as in HalluCheck's
#: ``decision_paths.ner/generator/greedy.passed``), joined by dots
_PATH = re.compile(r"[\w/]+(?:\.[\w/]+)*")
_TERM = re.compile(r"\s*([+-])\s*")


@dataclass(frozen=True)
class Count:
    """A whole number in a results file's ``diagnostics``: the sum of the values at ``plus``
    less those at ``minus``, each a dotted path (``verdicts.replies``). Written as text,
    ``Count.parse("verdicts.replies - verdicts.other")``."""

    plus: tuple[str, ...]
    minus: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.plus:
            raise ValueError("a count adds at least one path")
        bad = [path for path in (*self.plus, *self.minus) if not _PATH.fullmatch(path)]
        if bad:
            raise ValueError(f"count paths {bad}: not dotted keys of word characters")

    @classmethod
    def parse(cls, text: str) -> Count:
        """``a.b + c - d`` (the first path added) as a :class:`Count`."""
        parts = _TERM.split(" + " + text.strip())
        plus = [path.strip() for sign, path in zip(parts[1::2], parts[2::2], strict=True) if sign == "+"]
        minus = [path.strip() for sign, path in zip(parts[1::2], parts[2::2], strict=True) if sign == "-"]
        return cls(tuple(plus), tuple(minus))

    def __str__(self) -> str:
        return " + ".join(self.plus) + "".join(f" - {path}" for path in self.minus)

    def read(self, diagnostics: Mapping[str, Any], where: str) -> int:
        """The count in ``diagnostics``, a path that is not there read as 0 (a method counts
        with a counter, which leaves its zeros out); a path that holds no whole number is an
        error naming ``where``."""
        return sum(_value(diagnostics, path, where) for path in self.plus) - sum(
            _value(diagnostics, path, where) for path in self.minus
        )

    def found(self, diagnostics: Mapping[str, Any]) -> bool:
        """Whether any of its paths is in ``diagnostics`` (a file that counts none of them does
        not count it at all)."""
        return any(dotted_value(diagnostics, path) is not None for path in (*self.plus, *self.minus))


def _value(diagnostics: Mapping[str, Any], path: str, where: str) -> int:
    node = dotted_value(diagnostics, path)
    if node is None:
        return 0
    if isinstance(node, bool) or not isinstance(node, int):
        raise ConfigError(f"{where}: diagnostics {path!r} is {node!r}, not a whole number")
    return node


def _calls(of: str, diagnostics: Mapping[str, Any], where: str) -> int:
    """The calls a check is of; a results file that counts none of its paths is an error (made
    before the method counted them, or by another method)."""
    count = Count.parse(of)
    if not count.found(diagnostics):
        raise ConfigError(f"{where}: diagnostics has no {str(count)!r}, which a role check reads: run the cell again")
    return count.read(diagnostics, where)


@dataclass(frozen=True)
class RoleReading:
    """One declared check read from one results file: ``succeeded`` of ``of`` calls.

    ``one_answer``: the reading of an :class:`AnswerSpread`, whose ``succeeded`` counts the
    calls that gave another answer than the most common one, so that ``of - succeeded`` is how
    often the role gave that answer. ``passed`` and ``failed`` are the counts in words, for the
    table's reasons."""

    role: str
    label: str
    succeeded: int
    of: int
    passed: str
    failed: str
    one_answer: bool = False

    @property
    def rate(self) -> float | None:
        """``succeeded / of``; None where the role made no call."""
        return None if self.of == 0 else self.succeeded / self.of

    def to_dict(self) -> dict[str, Any]:
        rate = self.rate
        return {
            "role": self.role,
            "label": self.label,
            "succeeded": self.succeeded,
            "of": self.of,
            "rate": None if rate is None else round(rate, 4),
        }


@dataclass(frozen=True)
class RoleCheck:
    """A success rate of one LLM role: ``succeeded`` of ``of``, both :class:`Count` texts.

    ``label`` names what succeeded (``replies parsed as Yes or No``); ``failed`` what the other
    calls are (``replies could not be parsed as Yes or No``), read as "1,414 of 1,720 <failed>".
    ``variants``: the variants whose scores read the role's replies (empty: every variant), so
    that a reading made without them (a reply's first-token probabilities) is not judged by it."""

    role: str
    label: str
    succeeded: str
    of: str
    failed: str
    variants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for text in (self.succeeded, self.of):
            Count.parse(text)  # a malformed count fails where it is declared

    def applies_to(self, variant: str) -> bool:
        return not self.variants or variant in self.variants

    def read(self, diagnostics: Mapping[str, Any], where: str) -> RoleReading:
        of = _calls(self.of, diagnostics, where)
        succeeded = Count.parse(self.succeeded).read(diagnostics, where)
        return RoleReading(
            self.role,
            self.label,
            succeeded,
            of,
            passed=f"{self.label}: {succeeded:,} of {of:,}",
            failed=f"{of - succeeded:,} of {of:,} {self.failed}",
        )


@dataclass(frozen=True)
class AnswerSpread:
    """How often a role that answers from a closed set gave its most common answer.

    ``answers``: each answer's word and the :class:`Count` text of how often the role gave it
    (``("No", "verdicts.no")``); ``of``: the calls, ``noun`` what each call was about (``pairs``).
    ``said`` words the most common answer's count (its fields ``role``, ``answer``, ``count``,
    ``of``, ``noun``): "the evaluator replied No to 6,880 of 6,880 pairs". ``variants`` as in
    :class:`RoleCheck`."""

    role: str
    answers: tuple[tuple[str, str], ...]
    of: str
    noun: str
    said: str = "the {role} replied {answer} to {count} of {of} {noun}"
    variants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.answers) < 2:
            raise ValueError(f"answer spread of the {self.role}: a closed set of at least two answers")
        for text in (*(count for _, count in self.answers), self.of):
            Count.parse(text)  # a malformed count fails where it is declared
        self.said.format(role="", answer="", count="", of="", noun="")  # its fields are these

    def applies_to(self, variant: str) -> bool:
        return not self.variants or variant in self.variants

    def read(self, diagnostics: Mapping[str, Any], where: str) -> RoleReading:
        of = _calls(self.of, diagnostics, where)
        given = [(word, Count.parse(count).read(diagnostics, where)) for word, count in self.answers]
        word, most = max(given, key=lambda item: item[1])  # the first listed on a tie
        said = self.said.format(role=self.role, answer=word, count=f"{most:,}", of=f"{of:,}", noun=self.noun)
        return RoleReading(
            self.role,
            f"answers other than its most common ({word})",
            of - most,
            of,
            passed=f"{said} (its most common answer)",
            failed=said,
            one_answer=True,
        )


#: what a method may declare on :attr:`hallulab.pipeline.spec.MethodSpec.role_checks`
DeclaredCheck = RoleCheck | AnswerSpread
