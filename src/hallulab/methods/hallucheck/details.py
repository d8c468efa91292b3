"""What the report shows beside a HalluCheck fact: its question and, for every regenerated
answer, the decision path of Section 3 as the headline variant reads it (the answer span, its
whitespace-token F1 against the fact, how many of the tested steps look guessed under the KS
test against the released reference). Written by the aggregate step (a per-unit detail table),
so the report recomputes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hallulab.methods.hallucheck.checks import alignment_f1, locate_answer, span_check_steps, step_is_uniform


def fact_details(
    entry: Mapping[str, Any], f1_threshold: float, ks_alpha: float, ks_steps: int
) -> list[tuple[str, str]]:
    """(name, value) rows of one fact: the question, then each answer's decision path."""
    rows: list[tuple[str, str]] = [("question", str(entry.get("question") or "(no question formed)"))]
    for key, answer in (entry.get("answers") or {}).items():
        rows.extend(decision_path(str(entry["text"]), key, answer, f1_threshold, ks_alpha, ks_steps))
    return rows


def decision_path(
    fact: str, key: str, answer: Mapping[str, Any], f1_threshold: float, ks_alpha: float, ks_steps: int
) -> list[tuple[str, str]]:
    """HalluCheck's checks on one regenerated answer, as the headline variant reads them."""
    steps: list[str] | None = answer.get("steps")
    located = locate_answer(steps, str(answer.get("text", "")), fact)
    f1 = alignment_f1(located.span_text, fact)
    rows = [
        (f"{key}: answer", located.reply.strip() or "(empty)"),
        (
            f"{key}: alignment",
            f"span '{located.span_text}', token F1 {f1:.2f} "
            f"({'aligned' if f1 >= f1_threshold else 'not aligned'} at {f1_threshold:g})",
        ),
    ]
    tops = answer.get("top")
    if steps is not None and located.span is not None and tops:
        tested = span_check_steps(steps, located.span, min(ks_steps, len(tops)))
        uniform = sum(step_is_uniform(tops[i], ks_alpha) for i in tested.indices)
        rows.append(
            (
                f"{key}: KS check",
                f"{uniform} of {len(tested.indices)} tested steps uniform at α = {ks_alpha:g}"
                + ("" if tested.verdict is None else f" (span {tested.outcome.replace('_', ' ')})"),
            )
        )
    return rows
