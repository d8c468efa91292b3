"""What a method needs of a data set or of the models that fill its LLM roles.

One vocabulary read from two sides: a method lists the needs it has
(:attr:`hallulab.pipeline.spec.MethodSpec.needs`), a loader's data sets the needs they meet
(:mod:`hallulab.data.provision`), and the benchmark's applicability rule
(:mod:`hallulab.benchmark.applicability`) marks a method ``n/a`` on a data set with the
``reason`` of the first need the data set does not meet. It lives in the foundation so that
both the data layer and the stage contract can name it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Need:
    """What a method needs of a data set or of the LLM that fills a role, with the one line a
    table shows where it is missing (the benchmark's applicability rule reads it)."""

    name: str
    reason: str


#: the response's question or instruction (a method that asks the model about the prompt again)
PROMPTS = Need("prompts", "needs prompts")
#: stochastic samples of the response: in the data, or drawn by the generator from the prompts
SAMPLES = Need("samples", "needs sampled responses (in the data, or drawn from its prompts)")
#: the LLM's token log-probabilities of the text (a white-box model teacher-forces it)
TEXT_LOGPROBS = Need("text_logprobs", "needs token log-probabilities of the text (a white-box LLM)")
#: SAC3's perturbed questions with their answers and verdicts, as the SAC3 data sets carry them
SAC3_OUTPUTS = Need("sac3_outputs", "needs the data set's SAC3 verifier outputs")
