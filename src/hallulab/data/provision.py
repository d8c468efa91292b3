"""What the data sets of a loader provide: the needs they meet and the levels they label.

What the benchmark's applicability rule (:mod:`hallulab.benchmark.applicability`) reads of a
data set: each data set's spec declares it (``DatasetSpec.provision``,
:mod:`hallulab.data.sets`). A method names what it needs
(:attr:`hallulab.pipeline.spec.MethodSpec.needs`, the vocabulary of :mod:`hallulab.core.needs`);
a data set meets

* ``PROMPTS`` when every record carries the question or instruction that produced it;
* ``SAMPLES`` when its records carry stochastic samples, or carry prompts the ``generate``
  stage draws samples from (``generate.mode: auto`` / ``all``);
* ``TEXT_LOGPROBS`` always: a white-box LLM role (``llms.proxy``) teacher-forces any text, so
  the token log-probabilities are a matter of the model, not of the data;
* ``SAC3_OUTPUTS`` when its records carry SAC3's perturbed questions, answers and verdicts
  (the SAC3 QA sets, ``meta.perb_sc`` / ``meta.self_sc``).

The levels a data set labels are the evaluation's (:mod:`hallulab.evaluation.levels`):
``claim`` (claims given by the data set, with labels), ``sentence`` (one label per sentence),
``passage`` (the mean of a passage's sentence labels, SelfCheckGPT §6: the sentence-level
protocol's passage correlations, so a data set labels passages exactly where it labels
sentences), ``response`` (a label of the whole response: the SAC3 QA sets) and ``prompt``
(Concept-7's familiarity labels).

The ``jsonl`` loader declares none: a JSONL file holds whatever its records hold
(:mod:`hallulab.column.provision` reads one off a labelled file's records).
``tests/test_provision.py`` checks each declaration against the records its loader reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.needs import PROMPTS, SAC3_OUTPUTS, SAMPLES, TEXT_LOGPROBS, Need

#: The levels a data set can label, finest first (``passage``: the sentence protocol's).
LABEL_LEVELS = ("claim", "sentence", "passage", "response", "prompt")


@dataclass(frozen=True)
class Provision:
    """What every data set of one loader holds (see the module docstring)."""

    #: every record carries its prompt (question, instruction)
    prompts: bool
    #: every record carries stochastic samples (otherwise ``generate`` draws them from the prompts)
    samples_in_data: bool
    #: every record carries SAC3's verifier outputs
    sac3_outputs: bool
    #: the levels it labels, among :data:`LABEL_LEVELS`, finest first
    labels: tuple[str, ...]
    #: every record carries the response to check (otherwise ``generate`` writes it: Concept-7)
    responses_in_data: bool = True
    #: who wrote the responses its records carry (the model the data set names), which a
    #: benchmark row's label says (:mod:`hallulab.pipeline.row_labels`); None without responses
    responses_by: str | None = None

    def __post_init__(self) -> None:
        if self.responses_by is not None and not self.responses_in_data:
            raise ValueError("responses_by names who wrote the responses a data set carries: it carries none")
        unknown = [level for level in self.labels if level not in LABEL_LEVELS]
        if unknown:
            raise ValueError(f"labels {unknown} are not among {LABEL_LEVELS}")
        if list(self.labels) != [level for level in LABEL_LEVELS if level in self.labels]:
            raise ValueError(f"labels {self.labels} are not in the order of {LABEL_LEVELS}")
        if ("passage" in self.labels) != ("sentence" in self.labels):
            raise ValueError("a passage label is the mean of its sentence labels: label both or neither")

    @property
    def needs(self) -> tuple[Need, ...]:
        """The needs its data sets meet (see the module docstring for each rule)."""
        met = [PROMPTS] if self.prompts else []
        if self.samples_in_data or self.prompts:
            met.append(SAMPLES)
        met.append(TEXT_LOGPROBS)
        if self.sac3_outputs:
            met.append(SAC3_OUTPUTS)
        return tuple(met)
