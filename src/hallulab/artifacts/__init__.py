"""Shared extraction artifacts: computed once per data set by their own ``extract_<name>``
stage and read by every method that requires them (see :mod:`hallulab.pipeline.spec`)."""
