"""The benchmark: every registered method on every data set, in one table.

:mod:`hallulab.benchmark.applicability` decides each cell: where a method applies, at which
levels it is evaluated, and where it does not, the one-line reason its declaration gives.
Nothing below this package imports it.
"""
