"""hallulab: zero-resource hallucination detection as a reproducible DVC + Hydra pipeline."""

__version__ = "0.1.0"
