"""NLI: corpora readers and the offline cross-encoder."""
