"""dvc.yaml is generated from the registry: the committed file must be what the generator
writes, and its code deps must cover what the generic stages import for each method."""

from __future__ import annotations

import yaml

from hallulab.dag import dvcgen
from hallulab.dag.imports import closure, module_roots
from hallulab.pipeline import registry
from tests.conftest import REPO


def test_committed_dvc_yaml_equals_the_generated_one() -> None:
    committed = (REPO / "dvc.yaml").read_text()
    assert committed == dvcgen.render(), "dvc.yaml is stale: run `make dvcyaml` and commit it"


def _covered(relative: str, deps: list[str]) -> bool:
    return any(relative == d or relative.startswith(d.rstrip("/") + "/") for d in deps)


def test_every_stage_depends_on_every_module_its_script_and_step_import() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    problems = []
    for name, stage in stages.items():
        body = stage.get("do", stage)
        words = body["cmd"].split()
        if words[0] == dvcgen.CMD_ENV:
            words = words[1:]
        roots = [REPO / words[1]]
        step_script = words[1].endswith(("score.py", "aggregate.py"))
        if "--method" in words and "${item}" not in body["cmd"] and step_script:
            method = words[words.index("--method") + 1]
            step = "score" if words[1].endswith("score.py") else "aggregate"
            roots += module_roots(f"hallulab.methods.{method}", f"hallulab.methods.{method}.{step}")
        if "--artifact" in words:
            artifact = words[words.index("--artifact") + 1]
            roots += module_roots(f"hallulab.artifacts.{artifact}", f"hallulab.artifacts.{artifact}.build")
        for file in sorted(closure(roots)):
            relative = file.relative_to(REPO).as_posix()
            if not _covered(relative, [str(d) for d in body["deps"]]):
                problems.append(f"{name}: {relative}")
    assert not problems, "stage deps miss imported code:\n" + "\n".join(problems)


def test_cheap_stages_import_no_model_backend() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    cheap = [n for n in stages if n.startswith("aggregate_")] + ["evaluate", "curve", "summary"]
    for name in cheap:
        body = stages[name].get("do", stages[name])
        deps = " ".join(str(d) for d in body["deps"])
        for backend in ("src/hallulab/llm", "src/hallulab/nli", "src/hallulab/text/spacy_tokens.py"):
            assert backend not in deps, f"{name} depends on {backend}"


def test_every_registered_method_is_scored_aggregated_and_evaluated() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    for name, spec in registry.methods().items():
        assert f"aggregate_{name}" in stages
        assert (f"score_{name}" in stages) == (spec.score is not None)
        assert name in stages["evaluate"]["foreach"]
        assert (name in stages.get("curve", {}).get("foreach", [])) == spec.sample_curve


def test_every_stage_names_the_kernel_as_folders_not_files() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    for name, stage in stages.items():
        deps = [str(d) for d in stage.get("do", stage)["deps"]]
        for kernel in ("src/hallulab/core", "src/hallulab/pipeline"):
            assert kernel in deps, f"{name} lacks {kernel}"
            assert not [d for d in deps if d.startswith(kernel + "/")], f"{name} lists {kernel} file by file"
