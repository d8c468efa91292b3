"""Text processing shared by methods: spaCy sentences and tokens."""
