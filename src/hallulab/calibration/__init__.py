"""What a score means: a detector's scores made into calibrated probabilities and a flag,
fitted on labelled data, evaluated on held-out records and across data sets.

:mod:`~hallulab.calibration.maps` (isotonic and Platt maps as plain numbers),
:mod:`~hallulab.calibration.measure` (Brier score, ECE, precision / recall / F1, threshold
rules), :mod:`~hallulab.calibration.fit` (one cell's split, fit, cross-fitted threshold and
held-out figures), :mod:`~hallulab.calibration.stored` (the file, and applying it to scores),
:mod:`~hallulab.calibration.table` (every committed cell, the transfer table and the page).
"""
