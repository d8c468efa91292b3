"""CCP's formulas on hand-built words, alternatives and NLI classes (Fadeeva et al., §4)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from hallulab.artifacts.claims.alignment import align_claim, align_to_sentence, tokens_in_spans, words
from hallulab.artifacts.claims.parsing import parse_claims
from hallulab.core.token_stats import TokenStats
from hallulab.methods.ccp.aggregate import unit_log_ccp, variant_modes, variant_name
from hallulab.methods.ccp.formula import claim_ccp, combine_nli, word_log_ccp
from hallulab.methods.ccp.knobs import CCPKnobs
from hallulab.methods.ccp.score import nli_class, p_true
from hallulab.methods.ccp.units import alternatives, claim_words, nli_pairs, outside_top_k, token_spans
from hallulab.methods.token_statistics import max_entropy, max_probability, perplexity


@pytest.mark.parametrize(
    ("forward", "backward", "combined"),
    [
        ("e", "e", "e"),
        ("c", "c", "c"),
        ("e", "c", "n"),
        ("c", "e", "n"),
        ("e", "n", "e"),
        ("n", "c", "c"),
        ("n", "n", "n"),
    ],
)
def test_two_directions_combine_as_lm_polygraph_does(forward: str, backward: str, combined: str) -> None:
    assert combine_nli(forward, backward) == combined


def test_word_ccp_is_entailed_mass_over_entailed_plus_contradicted_mass() -> None:
    # P: word 0.5, a synonym (e) 0.2, a different value (c) 0.2, another claim type (n) 0.1
    logprobs = [math.log(0.5), math.log(0.2), math.log(0.2), math.log(0.1)]
    value = math.exp(word_log_ccp(logprobs, ["?", "e", "c", "n"]))
    assert value == pytest.approx(0.7 / 0.9)
    assert word_log_ccp([math.log(0.3), math.log(0.6)], ["?", "n"]) == 0.0  # nothing contradicts: CCP = 1


def test_claim_aggregations_of_table_9() -> None:
    logs = [math.log(0.9), math.log(0.5)]
    assert claim_ccp(logs, "prod") == pytest.approx(1 - 0.45)
    assert claim_ccp(logs, "len") == pytest.approx(1 - math.sqrt(0.45))
    assert claim_ccp(logs, "min") == pytest.approx(0.5)
    assert claim_ccp(logs, "mean") == pytest.approx(1 - 0.7)
    with pytest.raises(ValueError, match="at least one word"):
        claim_ccp([], "prod")


def test_baselines_of_section_4_1() -> None:
    logprobs = [math.log(0.5), math.log(0.25)]
    assert max_probability(logprobs) == pytest.approx(1 - 0.125)
    assert perplexity(logprobs) == pytest.approx(math.exp(-(math.log(0.5) + math.log(0.25)) / 2))
    assert max_entropy([0.3, 2.0, 1.0]) == 2.0
    first = TokenStats("True", math.log(0.6), top=(("True", math.log(0.6)), (" true", math.log(0.1)), ("False", -1)))
    assert p_true([first]) == pytest.approx(0.7)
    assert p_true([TokenStats("The", -0.1, top=(("The", -0.1),))]) == 0.0


def test_function_words_are_certain_and_whitespace_alternatives_are_neutral_in_the_papers_mode() -> None:
    head = TokenStats(
        " the", math.log(0.4), top=((" the", math.log(0.4)), (" a", math.log(0.4)), ("\n", math.log(0.2)))
    )
    classes = "cccc"  # both alternatives contradict, both ways
    assert unit_log_ccp(head, " the", classes, 10, "paper", words=True) == 0.0
    assert unit_log_ccp(head, " the", classes, 10, "none", words=True) == pytest.approx(math.log(0.5))
    # lm-polygraph's mode keeps the class the NLI model gave the empty string
    assert unit_log_ccp(head, " the", classes, 10, "reference", words=False) == pytest.approx(math.log(0.4))
    assert unit_log_ccp(head, " the", classes, 2, "none", words=True) == pytest.approx(math.log(0.5))  # K = 2
    assert unit_log_ccp(head, " the", classes, 1, "none", words=True) == 0.0  # K = 1: the word alone, CCP = 1


def test_k_counts_every_option_with_the_written_token_among_them() -> None:
    """Figure 7's K: K options in all (lm-polygraph's top-K list, written token first), so K = 9
    and K = 10 differ, and K never yields K + 1 options."""
    top = tuple((f" w{i}", math.log(0.5 / 2**i)) for i in range(12))
    head = TokenStats(" w0", top[0][1], top=top)
    for k in (1, 2, 9, 10):
        options = alternatives(head, k)
        assert len(options) == k and options[0][0] == " w0"
        assert [text for text, _ in options] == [text for text, _ in top[:k]]
    assert not outside_top_k(head, 1)


def test_a_teacher_forced_token_outside_its_top_k_is_kept_and_counted() -> None:
    top = ((" a", -0.5), (" b", -1.0), (" c", -2.0), (" d", -3.0))
    head = TokenStats(" z", -6.0, top=top)  # the written token is not in its position's top list
    options = alternatives(head, 3)
    assert [text for text, _ in options] == [" z", " a", " b"]  # K = 3 in all: it replaces the 3rd
    assert outside_top_k(head, 3) and outside_top_k(head, 4)
    with pytest.raises(ValueError, match="K >= 1"):
        alternatives(head, 0)


#: three ids of SmolLM2-135M's byte-level vocabulary that decode alike: fragments of multi-byte
#: characters, each "\ufffd" on its own (312 ids of that vocabulary share three such texts)
FRAGMENT_IDS = (126, 139, 247)
FRAGMENT = "\ufffd"


def test_the_written_token_is_found_in_its_top_list_by_id_not_by_its_text() -> None:
    """A written fragment (id 247) whose top list holds another fragment (id 139, the same text):
    lm-polygraph compares token ids, so the other fragment is an alternative like any token. A
    match by text dropped it as if it were the written token, and took a further token in its
    place: at K = 3, CCP 0.667 by id (0.4 + 0.2 entailing of 0.9) against 0.857 by text."""
    written, other, _ = FRAGMENT_IDS[2], FRAGMENT_IDS[1], FRAGMENT_IDS[0]
    top = ((FRAGMENT, math.log(0.4)), (FRAGMENT, math.log(0.3)), (" x", math.log(0.2)), (" y", math.log(0.1)))
    head = TokenStats(FRAGMENT, math.log(0.4), token_id=written, top=top, top_ids=(written, other, 500, 600))
    assert alternatives(head, 3) == [(FRAGMENT, math.log(0.4)), (FRAGMENT, math.log(0.3)), (" x", math.log(0.2))]
    # the other fragment contradicts the written one, " x" entails it, " y" contradicts it
    by_id = unit_log_ccp(head, FRAGMENT, "ccee", 3, "reference", words=False)
    assert math.exp(by_id) == pytest.approx(0.6 / 0.9)
    by_text = TokenStats(FRAGMENT, math.log(0.4), token_id=written, top=top)  # a backend that gives no ids
    assert alternatives(by_text, 3) == [(FRAGMENT, math.log(0.4)), (" x", math.log(0.2)), (" y", math.log(0.1))]
    assert math.exp(unit_log_ccp(by_text, FRAGMENT, "eecc", 3, "reference", words=False)) == pytest.approx(0.6 / 0.7)


def test_a_fragment_outside_its_top_k_is_outside_though_its_text_is_inside() -> None:
    """A teacher-forced fragment (id 126) whose top list holds only other fragments: by text it
    looked inside its top-K and lost an alternative; by id it is outside, first with its own
    probability, and the K - 1 most probable tokens follow."""
    written = FRAGMENT_IDS[0]
    top = tuple((FRAGMENT, math.log(0.3 - 0.05 * i)) for i in range(4))
    head = TokenStats(FRAGMENT, math.log(0.01), token_id=written, top=top, top_ids=(139, 247, 115, 232))
    assert outside_top_k(head, 4) and outside_top_k(head, 1)
    assert alternatives(head, 3) == [(FRAGMENT, math.log(0.01)), *top[:2]]
    assert not outside_top_k(TokenStats(FRAGMENT, math.log(0.01), token_id=written, top=top), 4)  # by text
    with pytest.raises(ValueError, match="top_ids"):
        TokenStats(FRAGMENT, 0.0, token_id=written, top=top, top_ids=(1, 2))
    stored = head.to_dict()
    assert stored["top_ids"] == [139, 247, 115, 232] and TokenStats.from_dict(stored) == head
    assert "top_ids" not in TokenStats(" a", 0.0, top=((" a", 0.0),)).to_dict()  # files without ids stay as they were


def test_nli_argmax_ties_go_to_entailment_then_contradiction() -> None:
    assert nli_class(np.array([0.4, 0.2, 0.4])) == "e"
    assert nli_class(np.array([0.2, 0.4, 0.4])) == "c"
    assert nli_class(np.array([0.1, 0.8, 0.1])) == "n"


RESPONSE = "Marie Curie was born in Warsaw in 1867. She won two Nobel Prizes."


def _tokens() -> list[TokenStats]:
    pieces = ["Marie", " Cur", "ie", " was", " born", " in", " War", "saw", " in", " 1867", ".", " She", " won", " two"]
    out, offset = [], 0
    for piece in pieces:
        out.append(TokenStats(piece, -0.5, top=((piece, -0.5), (" Paris", -1.0)), offset=offset))
        offset += len(piece)
    return out


def test_claims_align_to_words_and_tokens_through_a_character_mask() -> None:
    sentence = words(RESPONSE[:39])
    alignment = align_to_sentence("Curie was born in 1867.", sentence)
    assert alignment.aligned and alignment.unmatched_words == ()
    assert [RESPONSE[a:b] for a, b in alignment.spans] == ["Curie", "was", "born", "in", "1867"]
    spans = token_spans(_tokens(), RESPONSE)
    assert tokens_in_spans(spans, alignment.spans) == [1, 2, 3, 4, 5, 9]
    missing = align_to_sentence("The Eiffel Tower is tall.", sentence)
    assert not missing.aligned and "Eiffel" in missing.unmatched_words
    index, best = align_claim("She won two awards.", [words(RESPONSE[:39]), words(RESPONSE[40:], 40)], None)
    assert index == 1 and best.unmatched_words == ("awards",)


def test_sub_word_tokens_merge_into_one_word_only_in_the_papers_mode() -> None:
    mask = align_to_sentence("Marie Curie was born in Warsaw", words(RESPONSE[:39])).spans
    merged = claim_words(mask, _tokens(), RESPONSE, word_merge=True)
    assert [w.text for w in merged] == ["Marie", " Curie", " was", " born", " in", " Warsaw"]
    assert merged[1].tokens == (1, 2)
    separate = claim_words(mask, _tokens(), RESPONSE, word_merge=False)
    assert len(separate) == 8


def test_nli_contexts_of_table_11() -> None:
    words_ = claim_words(
        align_to_sentence("Curie was born in Warsaw", words(RESPONSE[:39])).spans, _tokens(), RESPONSE, word_merge=True
    )
    last = words_[-1]
    assert nli_pairs("no_context", last, words_[:-1], last.text, " Paris", "") == ("Warsaw", "Paris")
    assert nli_pairs("claim_prefix", last, words_[:-1], last.text, " Paris", "") == (
        " Curie was born in Warsaw",
        " Curie was born in Paris",
    )
    before = RESPONSE[: _tokens()[6].offset]
    assert (
        nli_pairs("sentence_prefix", last, words_[:-1], last.text, " Paris", before)[1]
        == "Marie Curie was born in Paris"
    )


def test_extractor_replies_are_parsed_and_failures_are_none() -> None:
    assert parse_claims("- He was born in London.\n- He was raised there.") == [
        "He was born in London.",
        "He was raised there.",
    ]
    assert parse_claims("1. A claim\n2) Another") == ["A claim", "Another"]
    assert parse_claims("- There aren't any claims in this sentence.") == []
    assert parse_claims("I think the sentence is true.") is None


def test_variant_names_encode_the_hyperparameters() -> None:
    assert variant_name(10, "claim_prefix", merge=True, stopwords="paper", aggregation="prod") == "ccp_k10_claimpref"
    assert (
        variant_name(10, "no_context", merge=False, stopwords="reference", aggregation="prod")
        == "ccp_k10_nocontext_ref"
    )
    assert (
        variant_name(5, "sentence_prefix", merge=True, stopwords="none", aggregation="len")
        == "ccp_k5_sentpref_stopnone_len"
    )


def test_a_blank_alternative_is_neutral_or_the_models_class_by_the_named_rule() -> None:
    """``ccp.aggregate.blank_alternatives``: a word's alternative that is only spaces or
    punctuation counts as neutral (this project's rule) or as the NLI model judged it (as
    lm-polygraph judges every alternative); both readings are written, the other one labelled."""
    head = TokenStats(" Paris", math.log(0.5), top=((" Paris", math.log(0.5)), (",", math.log(0.5))))
    contradiction = "cc"  # the model's class of the blank alternative, both directions
    neutral = unit_log_ccp(head, " Paris", contradiction, 2, "paper", words=True, blank="neutral")
    judged = unit_log_ccp(head, " Paris", contradiction, 2, "paper", words=True, blank="nli")
    assert neutral == 0.0 and judged == pytest.approx(math.log(0.5))
    names = set(variant_modes(CCPKnobs(k=(3,), nli_context=("claim_prefix",))))
    assert {"ccp_k3_claimpref", "ccp_k3_claimpref_blanknli"} <= names
    names = set(variant_modes(CCPKnobs(k=(3,), nli_context=("claim_prefix",), blank_alternatives="nli")))
    assert {"ccp_k3_claimpref_blanknli", "ccp_k3_claimpref"} <= names


def test_the_docs_say_which_reading_is_lm_polygraphs_ccp() -> None:
    """Only the ``_ref`` reading equals lm-polygraph's CCP; the rows the pages show by default
    are the paper reading (words, stop words). Every sentence or table cell of the README and
    the CCP page that says CCP equals or matches lm-polygraph's names the ``_ref`` reading."""
    root = Path(__file__).resolve().parents[1]
    claims = re.compile(r"(equal(s)? to|equal|match(es)?) (lm-polygraph's( CCP)?|the reference)")
    pages = (root / "README.md", root / "docs" / "papers" / "ccp.md", root / "docs" / "papers" / "factselfcheck.md")
    for path in pages:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for piece in re.split(r"(?<=[.;|])\s", text):
            said = claims.search(piece) and not re.search(r"not (equal|match)", piece)
            if said and ("CCP" in piece or "ccp" in piece or "reading" in piece):
                assert "_ref" in piece, f"{path.name}: {piece[:160]}"
