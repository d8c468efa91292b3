"""SelfCheckGPT BERTScore, cheap step: Eq. 2's mean over the chosen N samples."""

from hallulab.methods.sample_matrix import aggregate_step as aggregate

__all__ = ["aggregate"]
