"""SAC3-Q and SAC3's self-consistency, from the verifier outputs the SAC3 QA sets carry
(Zhang et al., 2023: semantic-aware cross-check consistency; HalluCheck's Table 2 baseline).

SAC3-Q (question-level cross-check consistency): the share of perturbed questions whose
answer the verifier judged *not* equivalent to the original answer (``perb_SC`` verdicts
"Guess: No"); SC2 (self-consistency): the same over the resampled answers (``self_SC``).
No model runs: the verdicts are in the data (gpt-3.5 as the verifier), so these are the
published system's scores, recomputed. Records without verdicts are skipped and counted.
"""

from hallulab.pipeline.spec import SAC3_OUTPUTS, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="sac3",
    title="SAC3-Q / SAC3 self-consistency (from the data's verifier outputs)",
    paper="Zhang et al., 2023 (SAC3), as HalluCheck's Table 2 baseline",
    section="HalluCheck App. A.2",
    level="response",
    score=None,
    aggregate=StepInputs(),
    order=75,
    benchmark_variants=("sac3_q",),  # SAC3-Q, HalluCheck Table 2's baseline
    needs=(SAC3_OUTPUTS,),
)
