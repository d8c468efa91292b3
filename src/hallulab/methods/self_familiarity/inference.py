"""The concept-inference input of one concept (Self-Familiarity §3.2.2, Eq. 3-4): what the
model is asked, and the text whose length is the prompt length P of the total normalisation.

The released code (soap117/Self-evaluation, ``run_exp_self_familiarity.py``) formats the
inference prompt P_I around the explanation, wraps it for the model (Vicuna:
``USER: {instruction} ASSISTANT:``, :data:`RELEASED_WRAPPER`), masks the whole wrapped text,
and tokenises it with the tokenizer's BOS token; transformers' beam scorer (< 4.36) then
divides a hypothesis's log-probability by that prompt's length plus the answer's, so

    s_i = exp(sum_t log p(y_t) / (P + L)),  P = |BOS + mask(wrapper(P_I ⊕ R_i))|.

* ``masking: released`` (:func:`~hallulab.methods.self_familiarity.masking.mask_released`):
  P is counted on the masked released wrapper, whatever the model is given. A model with
  that wrapper as its ``prompt_format`` (Vicuna's config) is given exactly that text
  (``as_is``: nothing wrapped again; its config adds the BOS token); a model with a chat
  template is given its template's rendering of the masked instruction (the template and its
  default system prompt, some 25-30 tokens for SmolLM2, are not masked and not in P: the
  labelled variant ``selffam_inputnorm`` counts them, :mod:`~hallulab.methods.self_familiarity.aggregate`).
* ``substring`` / ``whole_word`` (this project's earlier reading): the explanation alone is
  masked, its newlines made spaces; P is counted on the released wrapper around it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hallulab.llm.base import Prompt, prompt_text
from hallulab.methods.self_familiarity.masking import mask_concept, mask_released, released_explanation

#: The released code's wrapper for Vicuna (MPT, Dolly, Alpaca and Falcon had their own).
RELEASED_WRAPPER = "USER: {prompt} ASSISTANT:"

Messages = Callable[[str], Sequence[dict[str, str]]]


@dataclass(frozen=True)
class InferenceInput:
    """``prompt``: what the model is given (``as_is``: already its input text);
    ``length_text``: the text whose tokens, after BOS, are P; ``masked``: the masked
    instruction (P_I ⊕ R_i*); ``spans``: spans masked in the explanation."""

    prompt: Prompt
    as_is: bool
    length_text: str
    masked: str
    spans: int


def _wrap(wrapper: str, instruction: str) -> str:
    return wrapper.format(prompt=instruction)


def inference_input(
    explanation: str, concept: str, messages: Messages, *, masking: str, prompt_format: str | None
) -> InferenceInput:
    """The inference input of ``concept`` from its ``explanation``; ``messages(text)`` is the
    inference prompt's messages around a text; ``prompt_format`` the model's own wrapper, if
    it has one (it then stands for the released wrapper)."""
    wrapper = prompt_format or RELEASED_WRAPPER
    if masking == "released":
        text = released_explanation(explanation)
        spans = mask_released(text, concept)[1]
        chat = list(messages(text))
        length_text = mask_released(_wrap(wrapper, prompt_text(chat)), concept)[0]
        masked_chat = [{**m, "content": mask_released(m["content"], concept)[0]} for m in chat]
        masked = prompt_text(masked_chat)
        if prompt_format:
            return InferenceInput(length_text, True, length_text, masked, spans)
        return InferenceInput(masked_chat, False, length_text, masked, spans)
    masked_explanation, spans = mask_concept(explanation, concept, masking=masking)
    chat = list(messages(masked_explanation.replace("\n", " ").strip()))
    instruction = prompt_text(chat)
    return InferenceInput(chat, False, _wrap(wrapper, instruction), instruction, spans)
