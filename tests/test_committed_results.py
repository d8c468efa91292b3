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


def _only_ignore_files(folder: Path) -> bool:
    """A folder of cached outputs, as a clone has it: nothing in it but DVC's .gitignore."""
    return folder.is_dir() and all(p.name == ".gitignore" for p in folder.rglob("*") if p.is_file())


def _stale(status: dict[str, list[object]], root: Path) -> list[str]:
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
                            if state == "deleted" and not path.startswith(("data/code_files/", "conf/", "data/toy")):
                                continue  # an upstream cached output, absent from a clone
                            if state == "modified" and _only_ignore_files(root / path):
                                continue  # a folder of upstream cached outputs (members_ensemble's)
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
    dvc(root, "repro", "--single-item", "code_files")  # the code manifests, from the committed code
    status = json.loads(dvc(root, "status", "--json"))
    problems = _stale(status, root)
    assert not problems, "committed dvc.lock is stale (run `make run`, commit dvc.lock and metrics/):\n" + "\n".join(
        problems
    )


def test_no_committed_output_names_the_machine_it_was_made_on() -> None:
    """Outputs name models by package and hash, never by an absolute path (a venv, a home
    folder, the clone): a fresh clone's `make run` then rewrites no committed file."""
    root = Path(__file__).resolve().parents[1]
    markers = ("site-packages", str(root), "/home/", "/root/")
    found = []
    committed = ("metrics", "data/prepared", "data/data_files", "data/code_files", "results", "docs/results")
    committed += ("dvc.lock",)
    for folder in committed:
        target = root / folder
        for path in [target] if target.is_file() else sorted(p for p in target.rglob("*") if p.is_file()):
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path.relative_to(root)}: {m}" for m in markers if m in text]
    assert not found, "machine-specific paths in committed outputs:\n" + "\n".join(found)


def test_every_registered_method_has_a_toy_gate_baseline() -> None:
    """The DAG tier gates every method's toy metrics against tests/baselines/toy/<method>.json;
    a method added without one would fail only there, after the whole toy run."""
    from hallulab.pipeline import registry

    baselines = Path(__file__).parent / "baselines" / "toy"
    missing = [name for name in registry.methods() if not (baselines / f"{name}.json").is_file()]
    assert not missing, f"no toy baseline for {missing}: python -m hallulab.evaluation.gate ... --update"
