"""The openly licensed NLI pairs committed with the project (``data/nli_open/``).

The toy run's offline NLI model (the ``quick`` recipe) trains and is evaluated on these files
alone, so that ``make run`` needs nothing beside the clone. Only corpora whose licence allows
redistribution are used, each file keeping its source's licence (see the folder's README):

* ``snli_dev.jsonl.gz``: every labelled pair of SNLI dev (Bowman et al., 2015; CC BY-SA 4.0);
* ``snli_test.jsonl.gz``: a seeded sample of SNLI test (the e-SNLI copy; CC BY-SA 4.0), held out;
* ``fever.jsonl.gz``: a seeded sample of FEVER 1.0 train claims against their gold Wikipedia
  evidence (Thorne et al., 2018; CC BY-SA 3.0): SUPPORTS -> entailment, REFUTES -> contradiction.

MultiNLI (via TaxiNLI: C-UDA), SICK (CC BY-NC-SA), ANLI and XNLI (CC BY-NC) stay under the
data root: their licences forbid commercial reuse or redistribution.

One JSON object per line: ``{"premise", "hypothesis", "label"}``. The files are written by
``python -m hallulab.nli.open_subset --root DATA_ROOT`` from the corpora under
``DATA_ROOT/nli`` (``hallulab data fetch nli``): the same bytes every time (sorted keys,
gzip without a timestamp), so a test rebuilds them and compares. Where the files lie and which
source reads which is :mod:`hallulab.data.nli_open`; :mod:`hallulab.nli.data` reads them
(:func:`~hallulab.nli.data.open_sources`) as it reads the corpora they are drawn from.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
from collections.abc import Iterable
from pathlib import Path

from hallulab.data.nli_open import OPEN_DIR, OPEN_FILES
from hallulab.nli.data import heldout_sources, training_sources
from hallulab.nli.pairs import NLIPair

#: pairs drawn (seed :data:`SEED`) from the sources too large to commit whole
SNLI_TEST_PAIRS = 1000
FEVER_PAIRS = 3000
SEED = 0


def _write(path: Path, pairs: Iterable[NLIPair]) -> int:
    """Write ``pairs`` as gzipped JSON Lines, byte-identical for the same pairs."""
    lines = [
        json.dumps({"premise": p.premise, "hypothesis": p.hypothesis, "label": p.label}, sort_keys=True) for p in pairs
    ]
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as handle:
        handle.write(("\n".join(lines) + "\n").encode("utf-8"))
    path.write_bytes(buffer.getvalue())
    return len(lines)


def build(data_root: Path, out: Path) -> dict[str, int]:
    """Write the three files from the corpora under ``data_root/nli``; returns pairs per file."""
    training, heldout = training_sources(data_root), heldout_sources(data_root)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    chosen = {
        "open_snli_dev": list(training["snli_dev"]()),
        "open_snli_test": rng.sample(list(heldout["snli_test"]()), SNLI_TEST_PAIRS),
        "open_fever": rng.sample(list(training["fever"]()), FEVER_PAIRS),
    }
    return {name: _write(out / OPEN_FILES[name], pairs) for name, pairs in chosen.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True, help="the data root holding nli/ (hallulab data fetch nli)")
    parser.add_argument("--out", type=Path, default=OPEN_DIR, help="output folder (default: %(default)s)")
    args = parser.parse_args()
    for name, count in build(args.root, args.out).items():
        print(f"{args.out / OPEN_FILES[name]}: {count} pairs")


if __name__ == "__main__":
    main()
