"""The published results: ``results/<data set>/<name>.json`` files, each holding a run's metrics
with their intervals and the provenance that re-derives them (:mod:`hallulab.results.published`),
the notes of files waiting for a re-run (:mod:`hallulab.results.pending`), and the tracked files a
run rewrites that no results file holds (:mod:`hallulab.results.run_files`).

The pages rendered from these files (the README's tables, the docs' tables, the report pages)
live in :mod:`hallulab.report`; the detector table's cells are results files too
(:mod:`hallulab.benchmark`)."""
