"""The committed dvc.lock and toy metrics come from the committed code, params and data.

On a fresh clone the cached outputs (passages, scores, models) are absent, which `dvc status`
reports as deleted; anything else it reports (a code, param, prompt or data dependency whose
hash differs from the lock, or a changed command) means the committed results are stale:
run `make run` (dvc repro) and commit dvc.lock and metrics/ with the change.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.workspace import copy_workspace, dvc


def _stale(status: dict[str, list[object]]) -> list[str]:
    problems = []
    for stage, changes in status.items():
        for change in changes:
            if change == "always changed":
                continue
            if isinstance(change, dict):
                for kind, entries in change.items():
                    if kind == "changed outs":
                        continue  # cached outputs are not in git
                    if kind == "changed deps":
                        for path, state in entries.items():
                            if state == "deleted" and not path.startswith(("src/", "stages/", "conf/", "data/toy")):
                                continue  # an upstream cached output, absent from a clone
                            if isinstance(state, dict):  # params.yaml: {key: state}
                                problems.extend(f"{stage}: param {k} {v}" for k, v in state.items())
                            else:
                                problems.append(f"{stage}: {path} {state}")
                    else:
                        problems.append(f"{stage}: {kind}")
            else:
                problems.append(f"{stage}: {change}")
    return problems


def test_the_committed_lock_matches_the_committed_code_params_and_data(tmp_path: Path) -> None:
    root = copy_workspace(tmp_path / "clone")
    status = json.loads(dvc(root, "status", "--json"))
    problems = _stale(status)
    assert not problems, "committed dvc.lock is stale (run `make run`, commit dvc.lock and metrics/):\n" + "\n".join(
        problems
    )
