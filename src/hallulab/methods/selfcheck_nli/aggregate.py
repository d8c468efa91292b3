"""SelfCheckGPT NLI, cheap step: Eq. 10 over the chosen N samples of the stored matrix."""

from hallulab.methods.sample_matrix import aggregate_step as aggregate

__all__ = ["aggregate"]
