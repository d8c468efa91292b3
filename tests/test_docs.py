"""The documentation site builds in strict mode, and every command the README and the pages tell
a user to run is run by a test, or says why not.

The code blocks of README.md, DEVELOPERS.md, CHANGELOG.md and every page under docs/ follow one
convention, by their language tag (DEVELOPERS.md, "Documentation", says the same):

* ``python``: run. A page's Python blocks run in order in one interpreter (the venv's), each
  block with the names the blocks before it defined (a page reads as one session), in a
  temporary copy of the checkout's tracked files (a clone as a user has it: ``data/toy/``,
  ``conf/``, the committed outputs; no venv, no trained model, no history); the shell commands
  this test runs (below) run between them, in document order, in the same folder.
* ``bash``, ``sh``, ``shell``, ``console`` (only the ``$ `` lines of a console block are
  commands): every simple command in them is accounted for, by the longest prefix of its words
  found in the three tables below:

  - :data:`RUN_HERE`: run by this test, in the page's folder (cheap, offline, seconds); so is
    any command whose last word is ``--help`` or ``-h``;
  - :data:`COVERED_BY`: run by another test, named as ``tests/<file>.py::<function>`` (or a
    script, ``.ci/run``). That file holds the prefix's words, and that function every option
    (``--root``, ``-S``) and ``NAME=`` argument the command uses;
  - :data:`NOT_RUN`: not run by the suite, for the reason the table gives (a reproduction that
    takes hours on a CPU, a prerequisite that ``make test`` runs anyway, ...);
  - and shell set-up (``cd``, ``export``, ``source``, ``.``) runs nothing of the project's.

  A command found in none fails this suite, naming its page and line. Whichever table it is
  in, every ``make`` command is dry-run (``make -n``: the target exists), every ``dvc exp run``
  and ``dvc repro`` (given, or in a make recipe) names stages of dvc.yaml with settings that
  compose from conf/ and pass the settings' schema (unknown keys and mistyped values refused;
  a sweep by its first value), and every ``python -m hallulab...`` module and
  ``python <file>.py`` script exists.
* any other tag (``text``, ``yaml``, ``json``, ``jsonl``, ``toml``, ...): shown, not run: output,
  a file's content, an example to read.
* no tag: refused (an untagged block could hide a command), and so is an indented code block.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from markdown_it import MarkdownIt

from tests.helpers.modules import load_module
from tests.workspace import BIN, HANG_GUARD_S, environment

REPO = Path(__file__).resolve().parents[1]
#: the Markdown a user reads: the root's pages (the site includes DEVELOPERS.md and CHANGELOG.md)
#: and every page of the site
PAGES = [p for p in (REPO / "README.md", REPO / "DEVELOPERS.md", REPO / "CHANGELOG.md") if p.exists()] + sorted(
    (REPO / "docs").rglob("*.md")
)

PYTHON_TAGS = {"python"}
SHELL_TAGS = {"bash", "sh", "shell", "console"}
#: shell built-ins that set up the user's shell: nothing of the project's runs
SETUP = {"cd", "export", "source", "."}

#: command prefixes this test runs itself, in the page's folder (cheap, offline)
RUN_HERE = (
    "hallulab --version",
    "hallulab methods",
    "hallulab data list",
    # scoring with a cheap method (a heavy one gets a longer prefix in COVERED_BY)
    "hallulab score",
    "hallulab report",
    "hallulab calibrate",
    "hallulab calibrations",
    # a labelled file's column: the pages run it with --no-llm (seconds)
    "hallulab benchmark",
    # read the committed metrics of the toy run
    "python -m hallulab.evaluation.summary",
    "python -m hallulab.evaluation.gate",
    # writes a page's example file
    "cat",
)

#: command prefix -> the test (``path::function``) or script (``path``) that runs it
COVERED_BY: dict[str, str] = {
    "make run": "tests/conftest.py::toy_run",
    "make test": ".ci/run",
    "hallulab data fetch": "tests/test_data_fetch.py::test_the_cli_fetches_into_the_root",
    "python -m llama_cpp.server": "tests/conftest.py::llamacpp_server",
    "python -m hallulab.dag.committed_outputs": (
        "tests/test_committed_outputs.py::test_last_digit_changes_are_named_measured_and_restorable"
    ),
    "dvc exp run --queue": "tests/test_dag.py::test_queued_sweep_over_n_runs_offline_without_rescoring",
    "dvc exp run -S selfcheck_ngram.n=2": (
        "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run"
    ),
    "dvc queue start": "tests/test_dag.py::_run_queue_to_the_end",
    "dvc exp run --pull": "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run",
    "make dvcyaml": "tests/test_sharding.py::test_dvc_runs_each_shard_as_a_stage_and_merges_before_aggregate",
    "hallulab plan": "tests/test_plan.py::test_the_published_plan_is_what_its_command_writes",
    "dvc repro": "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run",
    "dvc remote add": "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run",
    "dvc push": "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run",
    "make pull": "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run",
    "dvc remote modify": "tests/test_dvc_remote.py::test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run",
    "make report": "tests/test_report.py::test_make_report_rewrites_the_page_of_every_data_set_run",
    "make regen": "tests/test_regen.py::test_make_regen_leaves_the_checkout_as_committed",
    "hallulab nli train": "tests/test_package.py::test_after_hallulab_nli_train_a_wheel_scores_with_nli",
    "pip wheel": "tests/test_package.py::wheel_site",
    "make benchmark-list": (
        "tests/test_benchmark_runs.py::test_the_list_shows_every_cell_with_its_state_command_or_reason"
    ),
    # writes conf/dataset/NAME.yaml: run in a copy of the checkout's configs, never in its own
    "hallulab data add": "tests/test_data_add.py::test_an_added_file_is_a_column_with_nq_opens_cells_but_sac3",
    "make benchmark-list DATASET=mine": (
        "tests/test_data_add.py::test_an_added_file_is_a_column_with_nq_opens_cells_but_sac3"
    ),
}

#: command prefix -> why the suite does not run it (the static checks above still apply)
NOT_RUN: dict[str, str] = {
    "make result": "a reproduction: hours on a CPU; its results file (results/) names the command that made it",
    "make experiment": "a paper's method on its data set: hours on a CPU",
    "make wikibio": "the WikiBio reproduction: hours on a CPU (tests/test_wikibio_reproduction.py runs its core)",
    "make nli-result": "trains the offline NLI model: an hour or more on a CPU",
    "dvc exp run": "a DAG run on another data set or profile: hours on a CPU",
    "make install": "every `make test` (.ci/run) runs it first, as its prerequisite",
    "make llamacpp": "every `make test` (.ci/run) runs it first, as its prerequisite",
    "pip install": (
        "installs into the user's environment from PyPI (torch from PyTorch's CPU index, out of reach offline;"
        " tests/test_torch_source.py checks that make install chooses that source); tests/test_package.py builds"
        " the wheel with pip wheel, runs it from a folder outside the checkout and trains the NLI model with"
        " hallulab nli train"
    ),
    "make lock": "resolves against PyPI and rewrites the lock files (tests/test_environment.py checks them)",
    "make bench": "benchmarks: timings on an idle machine, not tests",
    "make benchmark": (
        "fills the detector table cell by cell: days on a CPU; tests/test_benchmark_runs.py runs its resume and"
        " its cell list, and each cell's results file names the command that made it"
    ),
    "python perf/cpu_reproducibility.py": (
        "a probe run once per machine; tests/test_cpu_reproducibility.py checks the results file it writes"
    ),
}

#: pytest marks of a page's runnable blocks (a page whose Python loads a model, or waits minutes)
PAGE_MARKS: dict[str, tuple[str, ...]] = {}


@dataclass(frozen=True)
class Block:
    """One code block: its page (relative to the checkout), first line (1-based, the fence's),
    language tag and text."""

    page: str
    line: int
    tag: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Command:
    """One simple command of a shell block: where it is, the text that runs it (the whole line,
    a here-document included) and its words as the shell splits them (leading ``NAME=value``
    assignments and redirections left out)."""

    where: str
    text: str
    words: tuple[str, ...]


def code_blocks(text: str, page: str) -> list[Block]:
    """Every code block of a Markdown text, as CommonMark parses it; an indented block has the
    tag ``<indented>``."""
    blocks = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map is not None:
            tag = (token.info.split() or [""])[0] if token.type == "fence" else "<indented>"
            blocks.append(Block(page, token.map[0] + 1, tag, token.content))
    return blocks


def logical_lines(block: Block) -> list[tuple[int, str]]:
    """A shell block's command lines as (line, text): continuation lines joined, a
    here-document kept with its command, comments and blank lines dropped; in a console block
    only the ``$ `` lines (and their continuations)."""
    lines = block.code.splitlines()
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        i += 1
        if block.tag == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i].strip()
            i += 1
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc[1]:
                body.append(lines[i])
                i += 1
            line = "\n".join([line, *body, heredoc[1]])
            i += 1
        out.append((block.line + 1 + start, line))
    return out


#: the shell's operators between simple commands, and redirections (with their target)
_SEPARATORS = {"&&", "||", ";", "|", "&"}
_REDIRECTION = re.compile(r"^\d*(>>?|<<?-?|>&|&>)$")
#: what a command substitution, ``$(...)``, stands as among a command's words
SUBSTITUTION = "$(...)"


def _without_substitutions(line: str) -> str:
    """``$(...)`` (nested, quoted) as one word, :data:`SUBSTITUTION`."""
    out, i = "", 0
    while i < len(line):
        if line.startswith("$(", i):
            depth, quote, j = 1, "", i + 2
            while j < len(line) and depth:
                char = line[j]
                if quote:
                    quote = "" if char == quote else quote
                elif char in "'\"":
                    quote = char
                elif char in "()":
                    depth += 1 if char == "(" else -1
                j += 1
            out, i = out + SUBSTITUTION, j
        else:
            out, i = out + line[i], i + 1
    return out


def simple_commands(line: str) -> list[tuple[str, ...]]:
    """The words of each simple command of a command line (``a && b | c``: three)."""
    lexer = shlex.shlex(_without_substitutions(line), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    skip = False
    for word in lexer:
        if skip:
            skip = False
        elif word in _SEPARATORS:
            commands.append([])
        elif _REDIRECTION.match(word):
            skip = True
        else:
            commands[-1].append(word)
    words = [tuple(_without_assignments(c)) for c in commands]
    return [w for w in words if w]


def _without_assignments(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) and re.match(r"^[A-Za-z_]\w*=", words[i]):
        i += 1
    return words[i:]


def shell_commands(block: Block) -> list[Command]:
    out = []
    for line, text in logical_lines(block):
        for words in simple_commands(text.splitlines()[0]):
            out.append(Command(f"{block.page}:{line}", text, words))
    return out


def _prefix_words(prefix: str) -> tuple[str, ...]:
    return tuple(shlex.split(prefix))


def matching_prefix(words: tuple[str, ...], prefixes: list[str]) -> str | None:
    """The longest prefix whose words begin the command's."""
    found = [p for p in prefixes if words[: len(_prefix_words(p))] == _prefix_words(p)]
    return max(found, key=lambda p: len(_prefix_words(p)), default=None)


def table_of(words: tuple[str, ...]) -> str | None:
    """Which table accounts for a command: ``setup``, ``run_here``, ``covered_by``, ``not_run``,
    or None."""
    if words[0] in SETUP:
        return "setup"
    if words[-1] in ("--help", "-h"):
        return "run_here"
    prefix = matching_prefix(words, [*RUN_HERE, *COVERED_BY, *NOT_RUN])
    if prefix is None:
        return None
    return "run_here" if prefix in RUN_HERE else "covered_by" if prefix in COVERED_BY else "not_run"


def sources_of(target: str) -> tuple[str, str]:
    """(the named function's source, or the whole file's when none is named; the whole file's)"""
    path, _, name = target.partition("::")
    file = REPO / path
    assert file.is_file(), f"COVERED_BY: {target}: no file {path}"
    text = file.read_text(encoding="utf-8")
    if not name:
        return text, text
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return ast.get_source_segment(text, node) or "", text
    raise AssertionError(f"COVERED_BY: {target}: {path} has no function {name}")


def arguments_named(words: tuple[str, ...]) -> list[str]:
    """The options a command uses after its first word (without their values) and the names of
    its ``NAME=`` arguments (``make experiment DATASET=...``)."""
    named = [
        word.split("=", 1)[0]
        for word in words[1:]
        if (word.startswith("-") and len(word) > 1) or re.match(r"^[A-Z_][A-Z0-9_]*=", word)
    ]
    return list(dict.fromkeys(named))


def uncovered(command: Command) -> str | None:
    """Why a command is accounted for by no table, or None when it is."""
    words = command.words
    table = table_of(words)
    if table is None:
        return f"{command.where}: `{' '.join(words)}` is run by no test (RUN_HERE, COVERED_BY, NOT_RUN)"
    if table != "covered_by":
        return None
    prefix = matching_prefix(words, list(COVERED_BY))
    assert prefix is not None
    function, module = sources_of(COVERED_BY[prefix])
    given = _prefix_words(prefix)
    missing = [w for w in given if not w.startswith("-") and w not in module]
    missing += [w for w in arguments_named(words[len(given) - 1 :]) if w not in function]
    if missing:
        return f"{command.where}: `{' '.join(words)}`: {COVERED_BY[prefix]} does not name {missing}"
    return None


# --- the static checks of every command ----------------------------------------------------------

#: the options of ``dvc exp run`` / ``dvc repro`` that take a value (the other words are flags
#: or stage names)
DVC_VALUE_OPTIONS = {"-S", "--set-param", "-n", "--name", "-j", "--jobs", "-m", "--message"}


def dvc_settings_and_stages(words: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The ``-S`` settings and the stage names of ``dvc exp run ...`` / ``dvc repro ...``."""
    settings: list[str] = []
    stages: list[str] = []
    rest = list(words[3:] if words[1] == "exp" else words[2:])
    while rest:
        word = rest.pop(0)
        if word in DVC_VALUE_OPTIONS:
            value = rest.pop(0) if rest else ""
            if word in ("-S", "--set-param"):
                settings.append(value)
        elif not word.startswith("-"):
            stages.append(word)
    return settings, stages


@functools.cache
def stage_names() -> tuple[frozenset[str], frozenset[str]]:
    """dvc.yaml's stage names (a ``foreach`` stage's as ``name@key``), and the ``foreach`` stages
    whose keys are interpolated (any ``name@...`` may be one of theirs)."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    names: set[str] = set()
    interpolated: set[str] = set()
    for name, stage in stages.items():
        items = stage.get("foreach")
        if items is None:
            names.add(name)
        elif isinstance(items, str):
            interpolated.add(name)
        else:
            names.update(f"{name}@{key}" for key in items)
    return frozenset(names), frozenset(interpolated)


def first_of_sweep(setting: str) -> str:
    """A Hydra override; a sweep (``n=range(1,6)``, ``n=1,2``) as its first value."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    override = OverridesParser.create().parse_overrides([setting])[0]
    if not override.is_sweep_override():
        return setting
    return f"{override.get_key_element()}={next(override.sweep_string_iterator())}"


@functools.cache
def compose_problem(settings: tuple[str, ...]) -> str | None:
    from hallulab.core.config import compose
    from hallulab.pipeline.settings_schema import check_settings

    try:
        check_settings(compose([first_of_sweep(s) for s in settings]))
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def dvc_problems(words: tuple[str, ...], where: str) -> list[str]:
    """A stage dvc.yaml does not have, settings that do not compose."""
    settings, stages = dvc_settings_and_stages(words)
    names, interpolated = stage_names()
    shown = " ".join(words)
    problems = [
        f"{where}: `{shown}`: no stage {stage!r} in dvc.yaml"
        for stage in stages
        if stage not in names and stage.split("@")[0] not in interpolated
    ]
    if words[1] == "exp" and (why := compose_problem(tuple(settings))):
        problems.append(f"{where}: `{shown}`: the settings do not compose: {why}")
    return problems


def make_problems(words: tuple[str, ...], where: str) -> list[str]:
    """``make -n`` (the target exists; the installed venv taken as current), then the dvc
    commands of the recipe it prints."""
    done = subprocess.run(
        ["make", "-n", "-o", ".venv/.hallulab-installed", *words[1:]],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        return [f"{where}: `{' '.join(words)}`: make -n fails: {done.stderr.strip()[-500:]}"]
    problems = []
    for line in done.stdout.splitlines():
        if "dvc " not in line:
            continue
        recipe = tuple(shlex.split(line.strip().rstrip("\\"), comments=True))
        at = next((i for i, word in enumerate(recipe) if Path(word).name == "dvc"), None)
        if at is not None and (recipe[at + 1 : at + 3] == ("exp", "run") or recipe[at + 1 : at + 2] == ("repro",)):
            problems += dvc_problems(("dvc", *recipe[at + 1 :]), f"{where} (its recipe)")
    return problems


def static_problems(command: Command) -> list[str]:
    words = command.words
    if words[0] == "make":
        return make_problems(words, command.where)
    if words[:3] == ("dvc", "exp", "run") or words[:2] == ("dvc", "repro"):
        return dvc_problems(words, command.where)
    module = words[2] if words[0] == "python" and len(words) > 2 and words[1] == "-m" else ""
    if module.startswith("hallulab") and importlib.util.find_spec(module) is None:
        return [f"{command.where}: `{' '.join(words)}`: no module {module}"]
    if words[0] == "python" and len(words) > 1 and words[1].endswith(".py") and not (REPO / words[1]).is_file():
        return [f"{command.where}: `{' '.join(words)}`: no file {words[1]} in the checkout"]
    return []


def _blocks() -> list[Block]:
    return [b for page in PAGES for b in code_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(REPO)))]


def _commands() -> list[Command]:
    return [c for b in _blocks() if b.tag in SHELL_TAGS for c in shell_commands(b)]


# --- the site ------------------------------------------------------------------------------------


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``make docs``' build of ``config`` into ``site``."""
    return subprocess.run(
        [str(BIN / "mkdocs"), "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        env={**environment(), "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def test_the_site_builds_strict_with_its_generated_reference(tmp_path: Path) -> None:
    """Every page in the nav, every link and anchor found; the API from the docstrings, the
    command line and the configuration keys from the parser and conf/."""
    done = mkdocs_build(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    cli = (tmp_path / "site/reference/cli/index.html").read_text(encoding="utf-8")
    assert "hallulab data fetch --help" in cli and "--variants" in cli
    config = (tmp_path / "site/reference/config/index.html").read_text(encoding="utf-8")
    assert "dataset: toy" in config and "selfcheck_ngram.smoothing_k" in config and "add-k smoothing" in config
    api = (tmp_path / "site/reference/api/index.html").read_text(encoding="utf-8")
    assert "with_hallucination_scores" in api


def _site_copy(tmp_path: Path) -> Path:
    """The site's sources in a temporary folder (the code and conf/ linked), to break."""
    root = tmp_path / "sources"
    root.mkdir()
    shutil.copy2(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "DEVELOPERS.md", "CHANGELOG.md"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, root / name)
    for name in ("src", "conf"):
        (root / name).symlink_to(REPO / name)
    return root


#: what each breakage adds, and the line the strict build must print for it
BREAKAGES = {
    "link": "'reference/cli.md' contains a link 'no-such-page.md'",
    "anchor": "'reference/cli.md' contains a link 'config.md#no-such-heading'",
    "omitted": "reference/orphan.md",
    "nav": "no-such-page-in-nav.md",
    "marker": "unknown generated part 'no-such-part'",
}


@pytest.mark.parametrize(
    "breakages",
    [
        # MkDocs reports every warning of a strict build before it aborts, so the four warnings
        # share one build (each must be named); an unknown marker stops the build at once
        ("link", "anchor", "omitted", "nav"),
        ("marker",),
    ],
    ids=["warnings", "marker"],
)
def test_a_broken_link_or_a_page_missing_from_the_nav_fails_the_strict_build(
    tmp_path: Path, breakages: tuple[str, ...]
) -> None:
    root = _site_copy(tmp_path)
    page = root / "docs/reference/cli.md"
    added = {
        "link": "[gone](no-such-page.md)",
        "anchor": "[gone](config.md#no-such-heading)",
        "marker": "<!-- generated: no-such-part -->",
    }
    for breakage in breakages:
        if breakage in added:
            page.write_text(page.read_text(encoding="utf-8") + f"\n{added[breakage]}\n", encoding="utf-8")
        elif breakage == "omitted":
            (root / "docs/reference/orphan.md").write_text("# Not in the nav\n", encoding="utf-8")
        else:
            config = root / "mkdocs.yml"
            text = config.read_text(encoding="utf-8")
            home = "\n  - Home: index.md\n"
            assert home in text
            config.write_text(text.replace(home, f"{home[:-1]}\n  - no-such-page-in-nav.md\n"))
    done = mkdocs_build(root / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    missing = [name for name in breakages if BREAKAGES[name] not in done.stdout + done.stderr]
    assert not missing, f"not reported: {missing}\n{done.stderr[-3000:]}"


def _hooks() -> Any:
    return load_module("docs_hooks", REPO / "docs" / "hooks.py")


def test_the_configuration_reference_holds_every_option_and_key_with_its_default_and_comment(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    (conf / "method").mkdir(parents=True)
    (conf / "nli").mkdir()
    (conf / "config.yaml").write_text(
        "defaults:\n"
        "  - nli: small        # the offline one\n"
        "  - method:\n"
        "      - ngram\n"
        "  - _self_\n"
        "\n"
        "# how the records are split\n"
        "spacy:\n"
        "  model: en_core_web_sm   # spaCy's | small one\n"
        "  batch_size: 64\n",
        encoding="utf-8",
    )
    (conf / "method" / "ngram.yaml").write_text(
        "# @package _global_\n"
        "# SelfCheckGPT n-gram (see conf/prompts/<name>.yaml).\n"
        "selfcheck_ngram:\n"
        "  # n-gram order(s)\n"
        "  n: [1, 2]\n"
        "  lowercase: true\n"
        '  tag: "a # b"   # not a comment inside quotes\n',
        encoding="utf-8",
    )
    (conf / "nli" / "small.yaml").write_text("name: small\nmodel: ???\nlr: 1e-4\n", encoding="utf-8")
    page = _hooks().config_reference(conf)
    assert "| `spacy` | | how the records are split |" in page
    assert "| `spacy.model` | <code>en_core_web_sm</code> | spaCy's \\| small one |" in page
    assert "### method: ngram" in page and "SelfCheckGPT n-gram (see conf/prompts/&lt;name&gt;.yaml)." in page
    assert "| `selfcheck_ngram.n` | <code>[1, 2]</code> | n-gram order(s) |" in page
    assert "| `selfcheck_ngram.lowercase` | <code>true</code> |  |" in page
    assert "| `selfcheck_ngram.tag` | <code>a # b</code> | not a comment inside quotes |" in page
    assert "the default is `small` (the offline one)" in page and "composed: `ngram`" in page
    assert "| `nli.model` | <code>???</code> |" in page and "| `nli.lr` | <code>0.0001</code> |" in page


def test_the_command_line_reference_holds_every_command() -> None:
    page = _hooks().cli_reference()
    for command in ("hallulab", "hallulab methods", "hallulab score", "hallulab report", "hallulab data fetch"):
        assert f"## `{command}`\n" in page, command
    assert "--base-url BASE_URL" in page


# --- the code blocks -----------------------------------------------------------------------------


def test_every_code_block_has_a_language_tag() -> None:
    untagged = [b.where for b in _blocks() if b.tag in ("", "<indented>")]
    assert not untagged, f"fence these blocks with a tag (text: output; bash: commands a test runs): {untagged}"


def test_every_shell_command_in_the_docs_is_run_by_a_test_or_says_why_not() -> None:
    commands = _commands()
    assert commands, "the README tells a user to run commands"
    problems = [why for c in commands if (why := uncovered(c))]
    assert not problems, "\n".join(problems)


def test_every_make_and_dvc_command_in_the_docs_names_real_targets_stages_and_settings() -> None:
    problems = [problem for c in _commands() for problem in static_problems(c)]
    assert not problems, "\n".join(problems)


def test_every_entry_of_the_tables_is_used_by_a_page() -> None:
    """An entry no command of the pages matches is left over from an edit: remove it."""
    tables = [*COVERED_BY, *NOT_RUN]
    used = {matching_prefix(c.words, [*RUN_HERE, *tables]) for c in _commands()}
    assert not set(tables) - used, sorted(set(tables) - used)


#: runs a page's items in order ({"kind": "python" | "shell", "where", "code"}), in one namespace
DRIVER = r"""
import json, subprocess, sys, traceback
namespace = {"__name__": "__main__"}
for item in json.load(open(sys.argv[1], encoding="utf-8")):
    print(f"--- {item['where']} ({item['kind']})", flush=True)
    if item["kind"] == "python":
        try:
            exec(compile(item["code"], item["where"], "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            sys.exit(f"FAILED: the Python block at {item['where']}")
    else:
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", item["code"]])
        if done.returncode != 0:
            sys.exit(f"FAILED: exit status {done.returncode}: the command at {item['where']}: {item['code']}")
"""


def runnable_items(blocks: list[Block]) -> list[dict[str, str]]:
    """A page's Python blocks and the command lines this test runs, in document order."""
    items = []
    for block in blocks:
        if block.tag in PYTHON_TAGS:
            items.append({"kind": "python", "where": block.where, "code": block.code})
        elif block.tag in SHELL_TAGS:
            for line, text in logical_lines(block):
                tables = {table_of(words) for words in simple_commands(text.splitlines()[0])}
                if tables == {"run_here"}:
                    items.append({"kind": "shell", "where": f"{block.page}:{line}", "code": text})
    return items


def _page_items(name: str) -> list[dict[str, str]]:
    return runnable_items(code_blocks((REPO / name).read_text(encoding="utf-8"), name))


def _page_params() -> list[object]:
    params = []
    for page in PAGES:
        name = str(page.relative_to(REPO))
        if _page_items(name):
            marks = [getattr(pytest.mark, m) for m in PAGE_MARKS.get(name, ())]
            params.append(pytest.param(name, id=name, marks=marks))
    return params


def clone_copy(target: Path) -> Path:
    """The checkout's files that git tracks or would (as the working tree has them) copied under
    ``target``: what a clone holds, without its history, venv or trained models."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    for name in filter(None, listed.stdout.split("\0")):
        source, copy = REPO / name, target / name
        if source.is_symlink():  # as git checks it out (src/hallulab/conf -> ../../conf)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.symlink_to(source.readlink())
        elif source.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
    return target


@pytest.mark.parametrize("page", _page_params())
def test_the_runnable_blocks_of_a_page_run_in_order(page: str, tmp_path: Path) -> None:
    items = tmp_path / "items.json"
    items.write_text(json.dumps(_page_items(page)), encoding="utf-8")
    # the session's call cache (tests/conftest.py), as a user's is shared by every command they
    # run: a model call another page or test made first is served, with the same result
    env = environment()
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(items)],
        cwd=clone_copy(tmp_path / "clone"),
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]


# --- the mechanism itself ------------------------------------------------------------------------

SAMPLE = """# A page

```bash
make run    # comment
dvc exp run -S dataset=wikibio \\
  -S 'selfcheck_ngram.n=range(1,6)' && dvc queue start -j 2
HALLULAB_DEBUG=1 hallulab methods > out.txt
export HALLULAB_DATA_ROOT=~/data
cat > mine.jsonl <<'EOF'
{"id": "a"}
EOF
python -m some.server --model $(python -c "print(f('x'))") --port 8
touch made-up-file
```

```console
$ hallulab --version
hallulab 0.1.0
```

```text
make wikibio
```

    indented
"""


def test_the_commands_of_a_block_are_found_as_the_shell_splits_them() -> None:
    blocks = code_blocks(SAMPLE, "page.md")
    assert [(b.tag, b.line) for b in blocks] == [("bash", 3), ("console", 16), ("text", 21), ("<indented>", 25)]
    commands = [c for b in blocks if b.tag in SHELL_TAGS for c in shell_commands(b)]
    assert [(c.where, c.words) for c in commands] == [
        ("page.md:4", ("make", "run")),
        ("page.md:5", ("dvc", "exp", "run", "-S", "dataset=wikibio", "-S", "selfcheck_ngram.n=range(1,6)")),
        ("page.md:5", ("dvc", "queue", "start", "-j", "2")),
        ("page.md:7", ("hallulab", "methods")),
        ("page.md:8", ("export", "HALLULAB_DATA_ROOT=~/data")),
        ("page.md:9", ("cat",)),
        ("page.md:12", ("python", "-m", "some.server", "--model", SUBSTITUTION, "--port", "8")),
        ("page.md:13", ("touch", "made-up-file")),
        ("page.md:17", ("hallulab", "--version")),
    ]
    assert commands[5].text == 'cat > mine.jsonl <<\'EOF\'\n{"id": "a"}\nEOF'
    assert [item["where"] for item in runnable_items(blocks)] == ["page.md:7", "page.md:9", "page.md:17"]


def test_a_command_no_test_runs_is_named_with_its_page_and_line() -> None:
    blocks = [b for b in code_blocks(SAMPLE, "page.md") if b.tag in SHELL_TAGS]
    problems = [why for b in blocks for c in shell_commands(b) if (why := uncovered(c))]
    assert problems == [
        "page.md:12: `python -m some.server --model $(...) --port 8` is run by no test (RUN_HERE, COVERED_BY, NOT_RUN)",
        "page.md:13: `touch made-up-file` is run by no test (RUN_HERE, COVERED_BY, NOT_RUN)",
    ]


def test_a_covering_test_must_name_the_options_the_command_uses() -> None:
    command = Command("page.md:1", "", ("hallulab", "data", "fetch", "nli", "--root", "x", "--no-such-option"))
    assert uncovered(command) == (
        "page.md:1: `hallulab data fetch nli --root x --no-such-option`: "
        f"{COVERED_BY['hallulab data fetch']} does not name ['--no-such-option']"
    )
    assert arguments_named(("make", "result", "DATASET=x", "ARGS=-S a=b", "-j2", "--root=y")) == [
        "DATASET",
        "ARGS",
        "-j2",
        "--root",
    ]


def test_a_stage_or_a_setting_that_does_not_exist_is_named() -> None:
    assert dvc_problems(("dvc", "exp", "run", "-S", "dataset=wikibio", "aggregate_selfcheck_ngram"), "p:1") == []
    assert dvc_problems(("dvc", "exp", "run", "--queue", "-S", "selfcheck_ngram.n=range(1,6)"), "p:1") == []
    problems = dvc_problems(("dvc", "exp", "run", "-S", "samples.temprature=1", "curve@nope"), "p:1")
    assert problems[0].endswith("no stage 'curve@nope' in dvc.yaml")
    assert "samples.temprature: no such setting" in problems[1]
    assert make_problems(("make", "no-such-target"), "p:1")[0].startswith("p:1: `make no-such-target`: make -n fails")
    recipe = make_problems(("make", "result", "DATASET=wikibio", "METHOD=nope"), "p:1")
    assert recipe == [
        "p:1 (its recipe): `dvc exp run -S dataset=wikibio aggregate_nope`: no stage 'aggregate_nope' in dvc.yaml"
    ]


def test_a_failing_block_fails_its_page_and_names_where_it_is(tmp_path: Path) -> None:
    page = "```python\nvalue = 41\n```\n\n```bash\nhallulab methods\n```\n\n```python\nassert value == 42\n```\n"
    items = runnable_items(code_blocks(page, "page.md"))
    assert [item["kind"] for item in items] == ["python", "shell", "python"]
    script = tmp_path / "items.json"
    script.write_text(json.dumps(items), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(script)], cwd=tmp_path, env=environment(), capture_output=True, text=True
    )
    assert done.returncode != 0 and "FAILED: the Python block at page.md:9" in done.stderr, done.stderr
    assert "selfcheck_ngram" in done.stdout  # the command between the blocks ran


def test_every_covered_by_target_exists() -> None:
    for target in COVERED_BY.values():
        sources_of(target)
