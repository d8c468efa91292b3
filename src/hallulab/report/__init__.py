"""A run's report page: the summary, every record with the units each method scored, the
curves and the correction table, in one HTML file that opens with no network.

:mod:`~hallulab.report.inputs` reads a run's files, :mod:`~hallulab.report.units` says what
each scored unit is, :mod:`~hallulab.report.payload` turns both into the page's data and
:mod:`~hallulab.report.page` writes the page (``python -m hallulab.report --dataset toy``).
"""
