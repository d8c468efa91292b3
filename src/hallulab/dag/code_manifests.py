"""The code each stage runs, as one small file per stage: the always-run ``code_files`` stage.

DVC re-runs a stage when the hash of one of its dependencies changes, so a stage must depend
on the source files it runs. Listed one by one in ``dvc.yaml`` they were 848 of the 1,158
paths in ``dvc.lock`` (60% of its 172 KB), and DVC parses and rewrites the whole lock after
every stage it runs: bookkeeping that grows with the lock and cost more than a cheap stage's
own process. With the manifests the lock is 82 KB and the bookkeeping shrinks with it.

Instead every stage depends on one manifest, ``data/code_files/<key>.json``: the sha256 of
each source file the stage runs (the script and every hallulab module it reaches,
:func:`hallulab.dag.imports.code_files`). The ``code_files`` stage runs first on every
``dvc repro`` and rewrites the manifests; an edit changes the manifests of exactly the
stages that import the edited file, so DVC re-runs those and no others, and the same code
gives byte-identical manifests (committed, like the data fingerprints of ``data_files``).

What each stage runs (:class:`~hallulab.dag.stage_code.CodeSet`) is collected while the
generator (:mod:`hallulab.dag.dvcgen`) builds ``dvc.yaml``, in :mod:`hallulab.dag.stage_code`.
One manifest serves every item of a ``foreach`` stage (``curve@<method>`` runs the same
code for every method), so the key is the stage's name in ``dvc.yaml``, not the item's.

What it costs: a DVC command that does not run ``code_files`` first cannot see a code edit:
``dvc status`` (it reports ``code_files`` as always changed; ``make status`` refreshes the
manifests first, then asks DVC), and ``dvc repro`` / ``dvc exp run`` of single stages
(``-s``, ``--downstream``), which then compare the last manifests written.

The outputs persist (DVC does not delete them before the stage runs), so a failure here
leaves the committed manifests in place.

Being the first stage of every run, it then checks every setting of ``params.yaml`` against the
settings' schema (:func:`hallulab.pipeline.settings_schema.main`): Hydra's ``+`` adds a key that
no knob class declares (``-S '+samples.temperature=0.5'``), which no stage would read, and the
run stops here with one line naming it, before any stage runs. Each stage checks the knob
sections it reads again when it starts (:class:`hallulab.pipeline.params.ParamsView`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hallulab.core.io import write_json
from hallulab.dag.stage_code import STAGE, CodeSets
from hallulab.pipeline import paths, settings_schema

#: the composed settings the stages read, checked by this stage after it writes the manifests
PARAMS = "params.yaml"


def write_manifests(code_sets: CodeSets, root: Path) -> list[Path]:
    """Write every manifest of the checkout ``root`` (its code, into its ``data/code_files``)
    and remove those of stages that no longer exist."""
    written = []
    digests: dict[Path, str] = {}
    for code_set in code_sets:
        target = root / code_set.manifest_path
        write_json(target, code_set.manifest(root, digests))
        written.append(target)
    folder = root / paths.CODE_MANIFEST_DIR
    for stale in set(folder.glob("*.json")) - set(written):
        stale.unlink()
    return written


def main() -> int:
    """``python -m hallulab.dag.code_manifests``: the ``code_files`` stage's command, run by
    DVC in the workspace it fingerprints (the current directory)."""
    from hallulab.dag.dvcgen import code_sets  # the generator imports this module

    written = write_manifests(code_sets(), Path.cwd())
    print(f"{STAGE}: {len(written)} code manifests", file=sys.stderr)
    if not Path(PARAMS).is_file():
        return 0
    # the first stage of every run checks every setting, so an unknown one stops it here
    return settings_schema.main([PARAMS])


if __name__ == "__main__":
    sys.exit(main())
