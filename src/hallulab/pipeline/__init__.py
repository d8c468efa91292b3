"""The contract every stage runs on: method and artifact declarations (spec), their registry,
the params and paths a stage reads, and the generic stage runner. The DAG that wires the
stages together is written by :mod:`hallulab.dag`."""
