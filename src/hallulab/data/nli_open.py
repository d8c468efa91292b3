"""Where the openly licensed NLI pairs committed with the project lie (``data/nli_open/``, shipped
in the package), and which NLI source name reads which of its files.

The data layer's record of those files: the NLI readers (:mod:`hallulab.nli.data`) and the
command that writes them (:mod:`hallulab.nli.open_subset`) sit above it, and the data-file
fingerprints (:mod:`hallulab.data.fingerprints`) hash the files a recipe reads without
importing the NLI layer.
"""

from __future__ import annotations

from pathlib import Path

#: where the files live: the package's ``nli_open`` folder, in the checkout a link to the
#: repository's ``data/nli_open`` (what the train_nli stage declares), in a wheel the files
#: themselves, so that ``hallulab nli train`` trains the quick recipe from an installed package
OPEN_DIR = Path(__file__).resolve().parents[1] / "nli_open"

#: source name (as a recipe names it) -> file under :data:`OPEN_DIR`
OPEN_FILES = {
    "open_snli_dev": "snli_dev.jsonl.gz",
    "open_fever": "fever.jsonl.gz",
    "open_snli_test": "snli_test.jsonl.gz",
}
OPEN_TRAINING = ("open_snli_dev", "open_fever")
OPEN_HELDOUT = ("open_snli_test",)
