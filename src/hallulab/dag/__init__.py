"""The orchestration layer: it writes ``dvc.yaml`` from the registry (:mod:`hallulab.dag.dvcgen`)
and finds the code each stage runs by static import analysis (:mod:`hallulab.dag.imports`).

No stage imports this package: stages run on the contract in :mod:`hallulab.pipeline`, and
this layer only reads that contract to describe the DAG."""
