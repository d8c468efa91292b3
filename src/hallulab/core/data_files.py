"""The groups of files under the data root that stages read besides the data set.

The always-run ``data_files`` stage writes one fingerprint per group
(:mod:`hallulab.data.fingerprints` computes them) and a stage that reads a group's files depends
on its fingerprint (:mod:`hallulab.pipeline.stage_outputs` names the paths). Named here, in the
foundation, so that both read one list.
"""

from __future__ import annotations

#: ``nli_corpora``: what the offline NLI model's training reads; ``word_list``: Self-Familiarity's
#: ranked word list
DATA_FILE_GROUPS = ("nli_corpora", "word_list")
