"""Evaluation: ranking metrics, the SelfCheckGPT protocol, the CI metric gate."""
