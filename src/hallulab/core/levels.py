"""What names a score row without the score tables' pandas: the levels a score can be given at,
and the prefix of a combining method's member variants. The stage contract
(:mod:`hallulab.pipeline.spec`) and the knob classes import them from here, so that declaring
a method loads no pandas."""

from __future__ import annotations

#: sentence of a passage, claim or atomic fact of a sentence, the whole response, the prompt
LEVELS = ("sentence", "claim", "fact", "response", "prompt")
#: A combining method (the ensemble) also writes each member's own scores, as the variant
#: ``member.<method>.<variant>``: the evaluation compares it with each on the same resamples.
MEMBER_PREFIX = "member."
