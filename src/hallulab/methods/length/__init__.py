"""Unit length (a trivial baseline): a unit's score is its length in tokens,

    s(u) = |tokens(u)|,

longer = more likely hallucinated (a higher score means more likely hallucinated, as for every
method): a longer unit states more that can be wrong. No paper proposes it as a detector; it is
the control every detector's table should show beside the random scorer, so that a detector
that only tracks length is seen to. No model and no score step: the aggregate step reads the
records.

Tokens (:func:`hallulab.methods.length.tokens.token_count`): the matches of the regular
expression ``\\w+|[^\\w\\s]`` (Python's Unicode ``\\w``): a maximal run of letters, digits and
underscores is one token, every other non-space character (a punctuation mark, a symbol) one
token of its own. It needs no model download and counts the same on every machine; on English
prose it is close to spaCy's and the Penn Treebank's counts (they split "don't" in two where
the expression makes three).

Units, every one a record holds (each level the evaluation may label):

* ``claim``: each claim the data set gives (FactualBio's atomic facts), its text's length;
* ``sentence``: each sentence of the response;
* ``response``: the whole response, counted as one text;
* ``prompt``: the prompt's own length. A prompt-level unit is the prompt, scored before any
  response exists (:mod:`hallulab.core.units`), so its length is the prompt's, not the length
  of the response the generator writes to it (that is the ``response`` unit's).
"""

from hallulab.pipeline.spec import MethodSpec, StepInputs

SPEC = MethodSpec(
    name="length",
    title="Unit length (trivial baseline)",
    paper="hallulab (a trivial baseline: a unit's length in tokens)",
    section="unit length in regex tokens",
    level="sentence",
    score=None,
    aggregate=StepInputs(),
    order=99,
    benchmark_variants=("length_tokens",),
    trivial_baseline=True,
    other_levels=("claim", "response", "prompt"),
)
