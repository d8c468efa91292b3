"""What the report shows beside a HalluCheck fact: its question and, for every regenerated
answer, the decision path of Section 3 as the headline variant reads it (the answer span of the
original response and that of the regenerated answer, the judge's verdict on the two, their
whitespace-token F1 (the ``_f1`` reading), how many of the tested steps look guessed under the
KS test against the released reference). Written by the aggregate step (a per-unit detail
table), so the report recomputes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hallulab.methods.hallucheck.checks import alignment_f1, span_check_steps, step_is_uniform
from hallulab.methods.hallucheck.raw import reply_text


def fact_details(
    entry: Mapping[str, Any], f1_threshold: float, ks_alpha: float, ks_steps: int
) -> list[tuple[str, str]]:
    """(name, value) rows of one fact: the question, then each answer's decision path."""
    rows: list[tuple[str, str]] = [("question", str(entry.get("question") or "(no question formed)"))]
    if "original_span" in entry:
        rows.append(("original span", _shown(entry["original_span"])))
    for key, answer in (entry.get("answers") or {}).items():
        rows.extend(decision_path(entry, key, answer, f1_threshold, ks_alpha, ks_steps))
    return rows


def _shown(span: Mapping[str, Any] | None) -> str:
    return f"'{span['text']}' ({span['how'].replace('_', ' ')})" if span else "(no words to read)"


def decision_path(
    entry: Mapping[str, Any],
    key: str,
    answer: Mapping[str, Any],
    f1_threshold: float,
    ks_alpha: float,
    ks_steps: int,
) -> list[tuple[str, str]]:
    """HalluCheck's checks on one regenerated answer, as the headline variant reads them."""
    rows = [(f"{key}: answer", reply_text(answer).strip() or "(empty)")]
    if "original_span" not in entry or "span" not in answer:
        return [*rows, (f"{key}: alignment", "spans not read (raw scores of an older score step)")]
    original, read = entry["original_span"], answer["span"]
    rows.append((f"{key}: alignment", f"span {_shown(read)} against {_shown(original)}"))
    rows.append((f"{key}: judge", _verdict(entry, key)))
    f1 = alignment_f1(read["text"] if read else "", original["text"] if original else "")
    rows.append(
        (
            f"{key}: token F1",
            f"{f1:.2f} ({'aligned' if f1 >= f1_threshold else 'not aligned'} at {f1_threshold:g})",
        )
    )
    steps: list[str] | None = answer.get("steps")
    tops = answer.get("top")
    if steps is not None and read and tops:
        tested = span_check_steps(steps, (read["start"], read["end"]), min(ks_steps, len(tops)))
        uniform = sum(step_is_uniform(tops[i], ks_alpha) for i in tested.indices)
        rows.append(
            (
                f"{key}: KS check",
                f"{uniform} of {len(tested.indices)} tested steps uniform at α = {ks_alpha:g}"
                + ("" if tested.verdict is None else f" (span {tested.outcome.replace('_', ' ')})"),
            )
        )
    return rows


def _verdict(entry: Mapping[str, Any], key: str) -> str:
    """The judge's verdict on one regenerated answer's span, in words."""
    if "judge" not in entry:
        return "not asked"
    verdict = entry["judge"].get(key)
    if verdict is None:
        return "no verdict (its reply was not read, or a span is missing)"
    return "the same thing (0): aligned" if verdict else "not the same thing (1): not aligned"
