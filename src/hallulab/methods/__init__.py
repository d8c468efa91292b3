"""Hallucination-detection methods: pure functions from in-memory records to scores."""
