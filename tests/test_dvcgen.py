"""dvc.yaml is generated from the registry: the committed file must be what the generator
writes; each stage names its code through one manifest (``data/code_files/<stage>.json``),
which must cover what the generic stages import for each method and change exactly when
code the stage runs changes."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from hallulab.dag import code_manifests, dvcgen, method_defaults, stage_code
from hallulab.dag.imports import closure, imported_names, module_roots
from hallulab.pipeline import paths, registry
from tests.conftest import REPO


def _stages() -> dict[str, Any]:
    stages: dict[str, Any] = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    return stages


def _manifest_files(name: str, body: dict[str, Any]) -> list[str]:
    """The source files the committed manifest of stage ``name`` lists (its one code dep)."""
    manifests = [str(d) for d in body["deps"] if str(d).startswith(paths.CODE_MANIFEST_DIR + "/")]
    assert manifests == [paths.code_manifest(name)], f"{name} names its code as {manifests}"
    return list(json.loads((REPO / manifests[0]).read_text())["files"])


def test_committed_dvc_yaml_equals_the_generated_one() -> None:
    committed = (REPO / "dvc.yaml").read_text()
    assert committed == dvcgen.render(), "dvc.yaml is stale: run `make dvcyaml` and commit it"


def test_the_committed_method_defaults_list_is_the_generated_one(tmp_path: Path) -> None:
    """conf/config.yaml names every registered method that has a conf file, in listing order
    (``make regen``); a conf file of no registered method is an error."""
    assert method_defaults.main(["--check"]) == 0
    committed = method_defaults.CONFIG.read_text()
    assert method_defaults.rendered(committed, list(reversed(method_defaults.method_entries()))) != committed
    (tmp_path / "selfcheck_ngram.yaml").write_text("")
    (tmp_path / "no_such_method.yaml").write_text("")
    with pytest.raises(ValueError, match=r"\['no_such_method'\] name no registered method"):
        method_defaults.method_entries(tmp_path)


def test_committed_code_manifests_are_what_the_code_files_stage_writes(tmp_path: Path) -> None:
    """Byte for byte (DVC hashes the bytes), written from this checkout's code into a copy."""
    root = _checkout_copy(tmp_path / "checkout")
    written = {p.name: p.read_bytes() for p in code_manifests.write_manifests(dvcgen.code_sets(), root)}
    committed = {p.name: p.read_bytes() for p in (REPO / paths.CODE_MANIFEST_DIR).glob("*.json")}
    assert committed == written, "data/code_files is stale: run `make dvcyaml` and commit it"


def test_every_stage_depends_on_every_module_its_script_and_step_import() -> None:
    problems = []
    for name, stage in _stages().items():
        if stage.get("always_changed"):  # runs on every repro: needs no code dependency
            continue
        body = stage.get("do", stage)
        words = body["cmd"].removeprefix(f"{dvcgen.CMD_ENV} ").split()
        roots = [REPO / words[1]]
        step_script = words[1].endswith(("score.py", "aggregate.py"))
        if "--method" in words and "${item}" not in body["cmd"] and step_script:
            method = words[words.index("--method") + 1]
            step = "score" if words[1].endswith("score.py") else "aggregate"
            roots += module_roots(f"hallulab.methods.{method}", f"hallulab.methods.{method}.{step}")
        if "--artifact" in words:
            artifact = words[words.index("--artifact") + 1]
            roots += module_roots(f"hallulab.artifacts.{artifact}", f"hallulab.artifacts.{artifact}.build")
        listed = set(_manifest_files(name, body))
        for file in sorted(closure(roots)):
            relative = file.relative_to(REPO).as_posix()
            if relative not in listed:
                problems.append(f"{name}: {relative}")
    assert not problems, "stage code manifests miss imported code:\n" + "\n".join(problems)


def test_no_stage_lists_source_files_in_dvc_yaml() -> None:
    """Code reaches dvc.lock only as manifests: DVC rewrites the whole lock after every stage
    it runs, so each source path listed per stage costs every later stage's bookkeeping."""
    for name, stage in _stages().items():
        deps = [str(d) for d in stage.get("do", stage).get("deps", [])]
        assert not [d for d in deps if d.startswith(("src/", "stages/"))], f"{name} lists source files"


def test_cheap_stages_import_no_model_backend() -> None:
    stages = _stages()
    cheap = [n for n in stages if n.startswith("aggregate_")] + ["curve", "summary"]
    for name in cheap:
        files = " ".join(_manifest_files(name, stages[name].get("do", stages[name])))
        for backend in ("src/hallulab/llm/", "src/hallulab/nli/", "src/hallulab/text/spacy_tokens.py"):
            assert backend not in files, f"{name} runs {backend}"


def test_every_registered_method_is_scored_aggregated_and_evaluated() -> None:
    stages = _stages()
    for name, spec in registry.methods().items():
        assert f"aggregate_{name}" in stages
        assert (f"score_{name}" in stages) == (spec.score is not None)
        metrics = [next(iter(m)) if isinstance(m, dict) else m for m in stages[f"aggregate_{name}"]["metrics"]]
        assert f"metrics/${{dataset.name}}/{name}.json" in metrics  # the aggregate stage evaluates
        assert (name in stages.get("curve", {}).get("foreach", [])) == spec.sample_curve


def test_the_code_files_stage_writes_one_manifest_per_stage_and_keeps_them() -> None:
    stages = _stages()
    code_stage = stages[stage_code.STAGE]
    assert code_stage["always_changed"] is True
    outs = {next(iter(out)) for out in code_stage["outs"]}
    # persist: DVC does not delete them before the stage runs, so a failed run leaves them
    assert all(next(iter(out.values())) == {"cache": False, "persist": True} for out in code_stage["outs"])
    assert outs == {code_set.manifest_path for code_set in dvcgen.code_sets()}
    named = {str(d) for s in stages.values() for d in s.get("do", s)["deps"] if str(d).startswith("data/code_files/")}
    assert named == outs


def _checkout_copy(destination: Path) -> Path:
    for folder in ("src", "stages"):
        shutil.copytree(REPO / folder, destination / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def test_an_edit_changes_exactly_the_manifests_of_the_stages_that_import_it(tmp_path: Path) -> None:
    root = _checkout_copy(tmp_path / "checkout")
    code_sets = dvcgen.code_sets()
    before = {p.name: p.read_bytes() for p in code_manifests.write_manifests(code_sets, root)}
    edited = "src/hallulab/evaluation/metrics.py"
    (root / edited).write_text((root / edited).read_text() + "\n# edited\n")
    after = {p.name: p.read_bytes() for p in code_manifests.write_manifests(code_sets, root)}
    changed = {name.removesuffix(".json") for name in before if before[name] != after[name]}
    importers = {s.key for s in code_sets if edited in s.files(root)}
    assert changed == importers
    assert "aggregate_selfcheck_ngram" in changed and not any(
        name.startswith(("score_", "extract_")) for name in changed
    )


def test_a_removed_stage_leaves_no_manifest_behind(tmp_path: Path) -> None:
    root = _checkout_copy(tmp_path / "checkout")
    stale = root / paths.code_manifest("score_a_method_since_removed")
    stale.parent.mkdir(parents=True)
    stale.write_text("{}\n")
    code_manifests.write_manifests(dvcgen.code_sets(), root)
    assert not stale.exists()


def test_the_import_scan_finds_imports_in_every_block_and_skips_type_checking(tmp_path: Path) -> None:
    """Imports at module level, in functions, classes, ``try``/``except``/``finally``, ``with``,
    loops and ``match`` count; an ``if TYPE_CHECKING:`` body does not (its ``else`` does); a
    package ``__init__`` that iterates its own ``__path__`` reaches every module beside it."""
    package = tmp_path / "src" / "hallulab" / "demo"
    package.mkdir(parents=True)
    (package / "one.py").write_text("")
    (package / "sub").mkdir()
    (package / "sub" / "__init__.py").write_text("")
    source = textwrap.dedent(
        """
        import pkgutil
        from typing import TYPE_CHECKING
        import hallulab.a
        if TYPE_CHECKING:
            import hallulab.never
        else:
            from hallulab import b
        def f():
            from hallulab.c import d
            class K:
                import hallulab.e
        try:
            import hallulab.f
        except ImportError:
            import hallulab.g
        finally:
            import hallulab.h
        with open(__file__):
            for _ in ():
                import hallulab.i
            else:
                import hallulab.j
        match 1:
            case 1:
                import hallulab.k
        for module in pkgutil.iter_modules(__path__):
            pass
        """
    )
    (package / "__init__.py").write_text(source)
    found = imported_names(package / "__init__.py")
    expected = {"hallulab", "hallulab.a", "hallulab.b", "hallulab.c", "hallulab.c.d", "hallulab.e"}
    expected |= {f"hallulab.{x}" for x in "fghijk"} | {"hallulab.demo.one", "hallulab.demo.sub"}
    assert found == expected
    plain = tmp_path / "plain.py"
    plain.write_text(source.replace("__path__", "[]"))
    assert imported_names(plain) == expected - {"hallulab.demo.one", "hallulab.demo.sub"}
