"""One data set's column of the benchmark table, from any labelled JSONL file: every detector
that applies to what the records carry, with the table's statistics, the length baseline, the
paired verdicts, each cell's verdict (valid or model-limited), its cost and calibration, and an
ensemble of the valid cells.

``hallulab benchmark FILE -o DIR`` runs it (:mod:`hallulab.column.run`), through the API
(:class:`hallulab.api.Detector`) and the call cache, with no checkout and no DVC:

* :mod:`hallulab.column.provision`: what the records carry and the levels they label, read off
  the records (the declaration a data set's loader makes for the table's own columns), and
  the refusals before any model runs;
* :mod:`hallulab.column.run`: the cells, computed as the table computes its cells
  (:mod:`hallulab.benchmark.units`, :mod:`hallulab.benchmark.statistics`,
  :mod:`hallulab.benchmark.validity`);
* :mod:`hallulab.column.page`: the column's table for the terminal and its Markdown page.
"""
