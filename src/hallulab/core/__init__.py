"""The foundation every other hallulab package stands on: user-facing errors, atomic file
I/O, typed configuration, the evaluation units (levels and score frames), and the needs a
method may have of a data set.

Nothing here imports another hallulab package, so every layer above may import it; the DAG
generator gives each stage this folder as one dependency.
"""
