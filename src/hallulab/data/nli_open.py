"""Where the openly licensed NLI pairs committed with the project lie (``data/nli_open/``), and
which NLI source name reads which of its files.

The data layer's record of those files: the NLI readers (:mod:`hallulab.nli.data`) and the
command that writes them (:mod:`hallulab.nli.open_subset`) sit above it, and the data-file
fingerprints (:mod:`hallulab.data.fingerprints`) hash the files a recipe reads without
importing the NLI layer.
"""

from __future__ import annotations

from hallulab.core.config import REPO_ROOT

#: where the files live in the repository (the train_nli stage runs at the repository root)
OPEN_DIR = REPO_ROOT / "data" / "nli_open"

#: source name (as a recipe names it) -> file under :data:`OPEN_DIR`
OPEN_FILES = {
    "open_snli_dev": "snli_dev.jsonl.gz",
    "open_fever": "fever.jsonl.gz",
    "open_snli_test": "snli_test.jsonl.gz",
}
OPEN_TRAINING = ("open_snli_dev", "open_fever")
OPEN_HELDOUT = ("open_snli_test",)
