"""The ``hallulab`` command: score records or list methods, without DVC (:mod:`hallulab.api`).

    hallulab methods
    hallulab data list
    hallulab data fetch sac3_qa_halu concept7 --root ~/hallulab-data
    hallulab score data.jsonl --method selfcheck_ngram -o scores.parquet
    hallulab score data.jsonl --method ccp -S ccp.aggregate.k=[5] -o scores.csv --variants all
    hallulab nli train
    hallulab calibrate scores.csv --records labelled.jsonl -o mine.json

Records are JSONL in the canonical schema; a record with a response and no ``sentences`` is
split into sentences by the configured spaCy model. The output holds one row per scored unit
with its text; by default only each method's headline variants (``--variants all``: every one).

An error a user can act on (a bad record, a bad or unknown setting, a missing model) prints
one line that starts with ``hallulab <command>: error:`` and exits with status 2, as the
stages do (``HALLULAB_DEBUG=1`` shows the traceback instead).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from hallulab.command_options import add_output_option, add_setting_option
from hallulab.core.errors import UserFacingError
from hallulab.core.io import check_output_path, file_in_the_way

if TYPE_CHECKING:
    import pandas as pd


#: the hidden earlier spelling of ``-o/--output`` (``plan`` and ``nli train`` took ``--out``), still accepted


def _methods() -> int:
    from hallulab.api import methods

    for spec in methods():
        keys = (*spec.aggregate.params, *(spec.score.params if spec.score else ()))
        sections = sorted({key.split(".")[0] for key in keys})
        print(f"{spec.name:<20} {spec.level:<9} {spec.paper} ({spec.section})")
        print(f"{'':<20} settings: {', '.join(sections) or '-'}; needs: {', '.join(spec.requires) or '-'}")
    return 0


#: what ``score -o`` writes, by suffix
OUTPUT_SUFFIXES = (".parquet", ".csv", ".jsonl")


class OutputSuffixError(ValueError, UserFacingError):
    """``-o`` names a file of a kind the command does not write."""


def write_scores(scores: pd.DataFrame, out: Path) -> None:
    """``scores`` written to ``out`` in the format its suffix names (Parquet otherwise), every
    negative zero written as 0.0 (a score of ``-0.0`` means nothing more than 0)."""
    from pandas.api.types import is_float_dtype

    scores = scores.copy()
    for column in scores.columns:
        if is_float_dtype(scores[column]):
            scores[column] = scores[column] + 0.0  # -0.0 + 0.0 is 0.0; NaN stays NaN
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".csv":
        scores.to_csv(out, index=False)
    elif out.suffix == ".jsonl":
        scores.to_json(out, orient="records", lines=True, force_ascii=False)
    else:
        scores.to_parquet(out, index=False)


def _score(args: argparse.Namespace) -> int:
    from hallulab.api import Detector

    out = Path(args.output)
    if out.suffix not in OUTPUT_SUFFIXES and str(out) != os.devnull:
        raise OutputSuffixError(f"-o {out}: unknown suffix {out.suffix!r}; write one of {list(OUTPUT_SUFFIXES)}")
    check_output_path(out, "-o")
    scores = Detector(args.method, args.set).score(
        Path(args.records), variants=args.variants, calibration=args.calibration
    )
    write_scores(scores, out)
    variants = ", ".join(dict.fromkeys(scores["variant"]))
    print(f"{len(scores)} unit scores ({variants}) -> {out}")
    if args.calibration is not None:
        used = next(name for name in scores["calibration"] if isinstance(name, str))
        print(f"probability and flag by the calibration {used} (hallucinated: probability >= its threshold)")
    return 0


def _benchmark(args: argparse.Namespace) -> int:
    from hallulab.column.page import terminal_table
    from hallulab.column.run import run_column
    from hallulab.column.write import write_column

    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"-o {out}: a file is in the way of the folder to write")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else None

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    column = run_column(Path(args.records), args.name, args.set, methods, progress=say, no_llm=args.no_llm)
    page = write_column(column, out, say)
    print(terminal_table(column))
    print(f"Column: {page} (and {out / 'column.json'}, units and calibrations under {out})")
    return 0


def _report(args: argparse.Namespace) -> int:
    from hallulab.pipeline import registry
    from hallulab.report.scored_file import write_scored_report

    check_output_path(args.output, "-o")
    titles = {name: spec.title for name, spec in registry.methods().items()}
    path = write_scored_report([Path(p) for p in args.scores], Path(args.records), Path(args.output), titles)
    print(f"Report: {path} (open it in a browser, no server needed)")
    return 0


#: ``data`` defaults as its help names them (hallulab.data.loaders.DATA_ROOT_ENV, hallulab.data.fetch.GITHUB_RAW)
DATA_ROOT_ENV_NAME = "HALLULAB_DATA_ROOT"
GITHUB_RAW_URL = "https://raw.githubusercontent.com"


def dataset_sources() -> dict[str, str]:
    """The pipeline's data sets whose files another data source holds, as the help names them
    (the data-set registry's: :func:`hallulab.data.sets.dataset_sources`)."""
    from hallulab.data.sets import dataset_sources as from_registry

    return from_registry()


class DataRootError(ValueError, UserFacingError):
    """``data fetch`` has no data root (neither ``--root`` nor the environment variable), or
    the one given is a file."""


def _nli_train(args: argparse.Namespace) -> int:
    import logging

    from hallulab.nli.recipe import train_offline_model

    # minutes of training: its progress lines (steps done, time left) go to stderr
    progress = logging.StreamHandler()
    progress.setFormatter(logging.Formatter("%(message)s"))
    training = logging.getLogger("hallulab.nli")
    training.addHandler(progress)
    training.setLevel(logging.INFO)

    where, trained = train_offline_model(args.recipe, tuple(args.set), Path(args.output) if args.output else None)
    heldout = ", ".join(f"{name} {value:.2f}%" for name, value in trained.metrics["heldout_accuracy"].items())
    print(f"NLI model (recipe {args.recipe}, {trained.metrics['train']['pairs']} pairs): {where}")
    print(f"held-out accuracy: {heldout or 'no held-out set'}")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from hallulab.calibration.own_data import calibrate_scored, check_inputs, settings_from_flags, summary_lines

    out = Path(args.output)
    settings = settings_from_flags(args.rule, args.target_precision)
    check_inputs(Path(args.scores), Path(args.records), out)
    calibration = calibrate_scored(Path(args.scores), Path(args.records), out, settings, args.variant, args.level)
    print("\n".join(summary_lines(calibration, out)))
    return 0


def _calibrations() -> int:
    from hallulab.calibration.own_data import print_committed

    return print_committed()


def _data_root(arg: str | None) -> Path | None:
    """The data root ``--root`` or the environment names (None: neither); one that is a file,
    or lies under a file, is refused."""
    from hallulab.data.loaders import data_root

    root = Path(arg).expanduser() if arg else data_root()
    if root is None:
        return None
    root = root.absolute()
    blocking = file_in_the_way((root, *root.parents))
    if blocking is not None:
        given = "--root" if arg else f"${DATA_ROOT_ENV_NAME}"
        raise DataRootError(f"{given} {root}: {blocking} is a file, not a folder; the data root is a folder")
    return root


def _data_list(args: argparse.Namespace) -> int:
    from hallulab.data.fetch import DATA_SOURCES, missing_files

    root = _data_root(args.root)
    for source in DATA_SOURCES:
        if root is None:
            state = "not checked (no data root)"
        else:
            missing = len(missing_files(source, root))
            state = "complete" if not missing else f"{missing} of {len(source.files)} missing"
        no_source = sum(f.source is None for f in source.files)
        fetchable = f"{len(source.files) - no_source} fetchable" + (
            f", {no_source} to put by hand" if no_source else ""
        )
        count = f"{len(source.files)} file" + ("s" if len(source.files) != 1 else "")
        print(f"{source.name:<14} {count} ({fetchable}): {state}")
        print(f"{'':<14} {source.title}")
        print(f"{'':<14} licence: {source.licence}")
        if also := [alias for alias, name in dataset_sources().items() if name == source.name]:
            print(f"{'':<14} the pipeline's data sets {', '.join(also)} (-S dataset=NAME) come from it")
    print(f"data root: {root}" if root is not None else f"data root: not set (--root DIR or ${DATA_ROOT_ENV_NAME})")
    return 0


def _data_fetch(args: argparse.Namespace) -> int:
    from hallulab.data.fetch import FileResult, data_source, fetch

    # an unknown name stops before anything is fetched; a pipeline data set's name fetches the
    # data set it comes from (nq_open and hotpotqa: sac3_qa_halu, once)
    names = list(dict.fromkeys(data_source(name).name for name in args.names))
    for given in dict.fromkeys(args.names):
        if data_source(given).name != given:
            print(f"{given}: comes from {data_source(given).name}", flush=True)
    root = _data_root(args.root)
    if root is None:
        raise DataRootError(f"no data root to fetch into: pass --root DIR or set {DATA_ROOT_ENV_NAME}")

    def say(result: FileResult) -> None:
        done = {"fetched": "fetched", "replaced": "replaced (had another sha256)", "present": "already present"}
        source = f" <- {result.url}" if result.outcome != "present" and result.url else ""
        print(f"{done[result.outcome]}: {result.target}{source}", flush=True)

    with _terminate_as_exit():
        for name in names:
            report = fetch(name, root, base_url=args.base_url, on_file=say)
            print(
                f"{name}: {len(report.fetched)} fetched, {len(report.present)} already present, sha256 checked, "
                f"in {root}"
            )
    return 0


def _data_add(args: argparse.Namespace) -> int:
    from hallulab.column.add import add_dataset
    from hallulab.column.provision import ColumnInputError
    from hallulab.core.config import package_checkout

    checkout = Path(args.checkout) if args.checkout else package_checkout()
    if checkout is None or not (checkout / "conf" / "dataset").is_dir():
        raise ColumnInputError(
            "data add: no repository checkout (conf/dataset) to add the data set to: pass --checkout DIR; "
            "from an installed package, `hallulab benchmark FILE -o DIR` makes the file's column"
        )
    added = add_dataset(args.name, Path(args.file), checkout)
    provision = added.provision
    carries = [word for word, held in (("prompts", provision.prompts), ("samples", provision.samples_in_data)) if held]
    print(f"{added.config}: written ({added.records} records)")
    print(f"  carries: {', '.join(carries) or 'responses only'}; labels: {', '.join(provision.labels)}")
    if added.ensemble_level is not None:
        listed = ", ".join(member.key for member in added.members)
        print(f"  ensemble candidates at the {added.ensemble_level} level: {listed}")
    print(f"  its column: make benchmark DATASET={added.name}  (the cells: make benchmark-list)")
    return 0


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """While the block runs, SIGTERM (``kill``, a job scheduler) exits through the block's
    ``finally`` clauses, as Ctrl-C does, so a download in progress removes its partial file;
    the exit status is the one SIGTERM gives."""

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hallulab")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


#: a reST cross-reference role (``:class:`~hallulab.api.Detector```, ``:mod:`hallulab.api```,
#: ``:func:`title <hallulab.api.detect>```), with its text or target
_REST_ROLE = re.compile(r":(?:py:)?(?P<role>\w+):`(?P<tilde>~?)(?P<body>[^`]+)`")
#: a reST inline literal (two backticks each side)
_REST_LITERAL = re.compile(r"``(?P<code>.+?)``", re.DOTALL)


def terminal_text(docstring: str | None) -> str:
    """A docstring as a terminal shows it: reST cross-references as the name they point to
    (the last part of a class, function, method or attribute; a module's full name; a titled
    reference's title) and inline literals as their plain text: help is no Markdown, so it
    holds no backtick."""

    def name(match: re.Match[str]) -> str:
        body = match["body"]
        titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", body, re.DOTALL)
        if titled:
            return titled["title"]
        if match["role"] == "mod" and not match["tilde"]:
            return body
        return body.rsplit(".", 1)[-1]

    text = _REST_ROLE.sub(name, docstring or "")
    return _REST_LITERAL.sub(lambda match: match["code"], text)


#: a parser of the ``hallulab`` command by the words of its subcommand after ``hallulab``
#: (``()`` for ``hallulab`` itself)
Parsers = dict[tuple[str, ...], argparse.ArgumentParser]


def _by_source(aliases: dict[str, str]) -> dict[str, str]:
    """``{"nq_open and hotpotqa": "sac3_qa_halu"}`` for ``{"nq_open": ..., "hotpotqa": ...}``."""
    grouped: dict[str, list[str]] = {}
    for alias, source in aliases.items():
        grouped.setdefault(source, []).append(alias)
    return {" and ".join(names): source for source, names in grouped.items()}


def _add_data_commands(data: argparse.ArgumentParser, parsers: Parsers) -> None:
    """``data list`` and ``data fetch``, each entered in ``parsers``; the manifest
    (:mod:`hallulab.data.fetch`) is imported only when they run, so the help names its defaults
    as literals (a test holds them equal)."""
    actions = data.add_subparsers(dest="data_command", required=True)
    listing = actions.add_parser(
        "list",
        help="list each data set, its licence and whether it is complete under the root",
        description="List each data set: its files (how many can be fetched, how many are put by hand), its "
        "licence, and whether every file is under the data root.",
    )
    fetching = actions.add_parser(
        "fetch",
        help="download data sets, check their sha256 and write them under the root",
        description="Download data sets from their public sources into the data root: each file is pinned to a "
        "repository commit and checked by sha256, and a file already there with the right sha256 is kept.",
    )
    adding = actions.add_parser(
        "add",
        help="make a labelled JSONL file of your own a data set: a column of make benchmark",
        description="Make a labelled JSONL file (the canonical record schema) a data set of the checkout: "
        "conf/dataset/NAME.yaml names the file and declares what its records carry and the levels they "
        "label, read off them, so make benchmark DATASET=NAME fills its column with every detector that "
        "applies (samples drawn with the configured LLM for a record that has none). A file without "
        "labels, or with one class only, is refused before anything is written.",
    )
    adding.add_argument("name", metavar="NAME", help="the data set's name (-S dataset=NAME)")
    adding.add_argument("file", metavar="FILE", help="the labelled JSONL records")
    adding.add_argument(
        "--checkout",
        default=None,
        help="the repository checkout to add it to (default: the one hallulab runs from)",
    )
    parsers["data", "list"] = listing
    parsers["data", "fetch"] = fetching
    parsers["data", "add"] = adding
    from_bundle = ", ".join(f"{alias} come from {source}" for alias, source in _by_source(dataset_sources()).items())
    fetching.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="a data set: a name that hallulab data list shows, or a pipeline data set (-S dataset=NAME) "
        f"that fetches the one it comes from ({from_bundle}; wikibio, factualbio and concept7 are "
        "the same in both)",
    )
    for sub in (listing, fetching):
        sub.add_argument("--root", default=None, help=f"the data root (default: ${DATA_ROOT_ENV_NAME})")
    fetching.add_argument(
        "--base-url",
        default=None,
        help="a mirror laid out as <repository>/<commit>/<path>, in place of GitHub's raw files "
        f"(default: {GITHUB_RAW_URL})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``hallulab`` command's parser, every subcommand included."""
    return command_parsers()[()]


def command_parsers() -> Parsers:
    """The ``hallulab`` command's parser and each subcommand's, by the subcommand's words after
    ``hallulab`` (``()`` for ``hallulab`` itself), depth first in the order ``--help`` lists
    them; ``()``'s parser is :func:`build_parser`'s. The documentation's CLI reference is
    rendered from them (``format_help`` of each)."""
    parsers: Parsers = {}
    parser = argparse.ArgumentParser(
        prog="hallulab", description=terminal_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parsers[()] = parser
    parser.add_argument("--version", action="version", version=f"hallulab {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    parsers[("methods",)] = commands.add_parser(
        "methods",
        help="list the registered methods, their unit level and settings",
        description="List the registered methods: each one's unit level, paper and section, the sections of "
        "settings it reads (-S KEY=VALUE) and the shared artifacts it needs.",
    )
    score = commands.add_parser(
        "score",
        help="score a JSONL file of records with one method",
        description="Score a JSONL file of records with one method (in-process, no DVC).",
    )
    score.add_argument(
        "records",
        help="JSONL in the canonical schema: id, response, samples (sentences optional: split when absent)",
    )
    score.add_argument("--method", required=True, help="a registered method (hallulab methods lists them)")
    add_setting_option(
        score, help="a setting, as dvc exp run -S takes it (repeatable; unknown keys are refused; default: none)"
    )
    add_output_option(
        score,
        default="scores.parquet",
        help=f"the unit scores with their text; the suffix picks the format: {', '.join(OUTPUT_SUFFIXES)}"
        " (default: scores.parquet)",
    )
    score.add_argument(
        "--variants",
        choices=("headline", "all"),
        default="headline",
        help="the method's headline variants only, or every variant it computes (default: headline)",
    )
    score.add_argument(
        "--calibration",
        default=None,
        metavar="DATASET_OR_FILE",
        help="add each unit's calibrated probability of being hallucinated and its flag, by a calibration file "
        "or by the committed calibration of the method on the data set named (docs/calibration.md; default: none)",
    )
    parsers[("score",)] = score
    report = commands.add_parser(
        "report",
        help="render the report page of scored files",
        description="Render the report page (one self-contained HTML file) of files that hallulab score wrote.",
    )
    report.add_argument("scores", nargs="+", help="scored files (.parquet, .csv or .jsonl), one method or several")
    report.add_argument("--records", required=True, help="the JSONL records that were scored")
    add_output_option(report, default="report.html", help="the page to write (default: report.html)")
    parsers[("report",)] = report
    data = commands.add_parser(
        "data",
        help="list the real data sets, fetch them from their public sources, or add your own",
        description="List the real data sets, fetch them from their public sources into the data root "
        "(each file pinned to a repository commit and checked by sha256), or add a labelled file of your own "
        "as a data set of the checkout.",
    )
    parsers[("data",)] = data
    _add_data_commands(data, parsers)
    plan = commands.add_parser(
        "plan",
        help="estimate, before a big run, each expensive stage's model calls, what the cache holds and the time",
        description="Count the LLM requests, generated tokens and NLI pairs of the expensive stages on a data set "
        "(or on --responses new responses), look up how many the call cache already holds, and estimate the wall "
        "time from the rates make bench recorded, or from stated ones.",
    )
    from hallulab.plan import add_arguments as add_plan_arguments

    add_plan_arguments(plan)
    parsers[("plan",)] = plan
    nli = commands.add_parser(
        "nli",
        help="make the offline NLI model that the NLI methods use",
        description="Make the offline NLI model (an NLI cross-encoder fine-tuned from all-MiniLM-L6-v2) "
        "that the NLI methods use by default.",
    )
    parsers[("nli",)] = nli
    nli_actions = nli.add_subparsers(dest="nli_command", required=True)
    train = nli_actions.add_parser(
        "train",
        help="train the offline NLI model (by default from the NLI pairs shipped with hallulab, minutes on a CPU)",
        description="Train the offline NLI model from a recipe (conf/nli_train/): quick, the default, "
        "reads only the openly licensed SNLI + FEVER pairs shipped with hallulab, as make run does; "
        "the others read the NLI corpora under $HALLULAB_DATA_ROOT. The model is written to "
        "$HALLULAB_MODEL_DIR/nli_minilm (default ~/.cache/hallulab/models/nli_minilm), where the "
        "NLI methods find it, and replaces the one there only when training completes.",
    )
    train.add_argument("--recipe", default="quick", help="a recipe in conf/nli_train/ (default: quick)")
    add_setting_option(train, help="a recipe setting, e.g. nli_train.epochs=2 (repeatable; default: none)")
    add_output_option(
        train,
        help="another model folder (default: the one the methods read); a new or empty folder, or one an earlier "
        "run of this command wrote (its hallulab-nli-train.json lists every file in it): a folder holding "
        "anything else is refused before training, and nothing in it is deleted",
    )
    parsers[("nli", "train")] = train
    calibrate = commands.add_parser(
        "calibrate",
        help="fit a calibration (score -> probability, and a flag) on your own labelled records",
        description="Fit a calibration of one method's scores on labelled records: the file hallulab score wrote "
        "and the records it scored, with their labels. A seeded half of the records fits isotonic regression and "
        "Platt scaling and chooses the flag's threshold (cross-fitted); the other half measures them. The file it "
        "writes is what hallulab score --calibration FILE takes (docs/calibration.md).",
    )
    calibrate.add_argument("scores", help="a file that hallulab score wrote (.parquet, .csv or .jsonl), of one method")
    calibrate.add_argument("--records", required=True, help="the JSONL records that were scored, with their labels")
    calibrate.add_argument(
        "--variant", default=None, help="the variant to calibrate (default: the method's headline benchmark variant)"
    )
    calibrate.add_argument(
        "--level", default=None, help="the unit level (default: the finest labelled level the variant scores)"
    )
    calibrate.add_argument(
        "--rule", choices=("best_f1", "precision"), default="best_f1", help="the threshold rule (default: best_f1)"
    )
    calibrate.add_argument(
        "--target-precision", type=float, default=0.8, help="the precision rule's target (default: 0.8)"
    )
    add_output_option(
        calibrate, default="calibration.json", help="the calibration file to write (default: calibration.json)"
    )
    parsers[("calibrate",)] = calibrate
    benchmark = commands.add_parser(
        "benchmark",
        help="every detector that applies on your labelled records: the table's column, its page and calibrations",
        description="Run every detector that applies to what the records carry (samples, prompts, labels) on a "
        "labelled JSONL file, with the benchmark table's statistics: ROC-AUC, PR-AUC and PRR with record-resampled "
        "intervals, the paired difference against the length baseline, each cell's verdict (valid or "
        "model-limited), its cost, an ensemble of the valid cells and a calibration of each. Writes column.json, "
        "column.md, the units and the calibrations to the folder, and prints the table.",
    )
    benchmark.add_argument("records", help="the labelled JSONL records (the canonical schema)")
    benchmark.add_argument(
        "--methods",
        default=None,
        help="comma-separated methods to run (default: every one that applies; the length baseline always runs)",
    )
    benchmark.add_argument(
        "--no-llm",
        action="store_true",
        help="only the detectors that call no LLM and read no NLI model (seconds on a CPU)",
    )
    benchmark.add_argument("--name", default=None, help="the column's name (default: the file's stem)")
    add_setting_option(benchmark, help="a setting for every method, as dvc exp run -S takes it (repeatable)")
    add_output_option(benchmark, default="column", help="the folder to write (default: column)")
    parsers[("benchmark",)] = benchmark
    parsers[("calibrations",)] = commands.add_parser(
        "calibrations",
        help="list the committed calibrations (data set, method, variant, level, held-out Brier)",
        description="List the committed calibrations, one per line: data set, method, variant, unit level, "
        "held-out units, Brier score uncalibrated and isotonic, and the file. They are read from the checkout's "
        "results/calibration, or from the copy an installed package ships; hallulab calibrate makes one from your "
        "own labelled records.",
    )

    def depth_first(path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
        yield path, parsers[path]
        for child in parsers:
            if child and child[:-1] == path:
                yield from depth_first(child)

    return dict(depth_first(()))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "data":
        if args.data_command == "add":
            return _data_add(args)
        return _data_list(args) if args.data_command == "list" else _data_fetch(args)
    if args.command == "report":
        return _report(args)
    if args.command == "nli":
        return _nli_train(args)
    if args.command == "calibrate":
        return _calibrate(args)
    if args.command == "calibrations":
        return _calibrations()
    if args.command == "benchmark":
        return _benchmark(args)
    if args.command == "plan":
        from hallulab.plan import run as run_plan

        return run_plan(args)
    return _methods() if args.command == "methods" else _score(args)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # inside the try: a reader that stopped early is met here, not at exit
        return code
    except BrokenPipeError:
        # the reader stopped early (`hallulab calibrations | head`): no traceback; stdout goes
        # to the null device so the interpreter's final flush raises nothing, as the Python
        # documentation's note on SIGPIPE does it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:
        actionable = isinstance(error, UserFacingError | FileNotFoundError | UnicodeDecodeError | PermissionError)
        if os.environ.get("HALLULAB_DEBUG") or not actionable:
            raise
        print(f"hallulab {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
