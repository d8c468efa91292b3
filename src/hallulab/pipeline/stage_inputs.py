"""What the two stages outside the method / artifact registry read: ``generate`` (responses
and samples) and ``correct`` (FactSelfCheck §4.5). Declared here, in the pipeline's contract
layer beside :mod:`hallulab.pipeline.spec`, so that the DAG generator reads the declarations
without importing the steps (which import the model layer)."""

from __future__ import annotations

from hallulab.pipeline.spec import StepInputs

GENERATE_INPUTS = StepInputs(params=("generate", "spacy"), llm_roles=("generator",))

#: the correct stage's prompt files, by their key under ``correction.prompts``
CORRECTION_PROMPTS = ("baseline", "sentence", "fact", "judge", "fact_judge")

#: the artifact whose facts the correction rewrites (FactSelfCheck §4.5: the knowledge graphs)
CORRECTION_ARTIFACT = "knowledge_graphs"

CORRECTION_INPUTS = StepInputs(
    params=("correction",),
    llm_roles=("corrector", "judge"),
    prompts=tuple(f"correction.prompts.{name}" for name in CORRECTION_PROMPTS),
)
