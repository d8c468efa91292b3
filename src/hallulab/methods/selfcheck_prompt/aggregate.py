"""SelfCheckGPT Prompt, cheap step: the mean over the chosen N samples of each stored matrix."""

from hallulab.methods.sample_matrix import aggregate_step as aggregate

__all__ = ["aggregate"]
