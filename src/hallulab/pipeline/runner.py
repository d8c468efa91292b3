"""The stage skeleton: logging, one-line errors, run statistics, and the stage files.

Every stage script is ``main()`` wrapped in :func:`run_stage`:

* an error a person can act on (:class:`hallulab.core.errors.UserFacingError`: a bad record, a bad
  setting, a missing data file; also a missing file or a model that cannot load) is printed
  as one line ``hallulab <stage>: error: <what, where, what to do>`` and the stage exits with
  status 2; ``HALLULAB_DEBUG=1`` shows the full traceback instead;
* torch runs on a fixed number of threads (:mod:`hallulab.pipeline.threads`), so a stage's
  float results do not depend on the machine's core count;
* run statistics (seconds, call-cache hits and misses) go to the log and to
  ``logs/<dataset>/<stage>.json``, which no stage reads and DVC does not track, so the same
  inputs give byte-identical outputs.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hallulab.core.errors import UserFacingError
from hallulab.core.io import atomic_open, read_json, read_jsonl, write_json
from hallulab.pipeline import paths
from hallulab.pipeline.threads import fix_torch_threads

DEBUG_ENV = "HALLULAB_DEBUG"
#: When set to a folder, every stage writes there the hallulab source files it actually ran
#: (from ``sys.modules``), so a test can check each stage's code manifest against the real imports.
IMPORT_TRACE_ENV = "HALLULAB_IMPORT_TRACE"


def stage_logger(name: str) -> logging.Logger:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return logging.getLogger(f"hallulab.{name}")


def _actionable(error: BaseException) -> bool:
    if isinstance(error, UserFacingError):
        return True
    return isinstance(error, FileNotFoundError | UnicodeDecodeError | PermissionError)


def _trace_imports(name: str) -> None:
    folder = os.environ.get(IMPORT_TRACE_ENV)
    if not folder:
        return
    files = sorted(
        str(Path(str(module.__file__)).resolve())
        for key, module in list(sys.modules.items())
        if key.split(".")[0] == "hallulab" and getattr(module, "__file__", None)
    )
    Path(folder).mkdir(parents=True, exist_ok=True)
    target = Path(folder) / f"{name}-{os.getpid()}.json"
    target.write_text(json.dumps({"argv": sys.argv, "files": files}), encoding="utf-8")


def run_stage(name: str, main: Callable[[], None]) -> None:
    """Run a stage's ``main`` on the stages' fixed torch thread count
    (:mod:`hallulab.pipeline.threads`); see the module docstring for the error contract."""
    try:
        fix_torch_threads()
        main()
        _trace_imports(name)
    except KeyboardInterrupt:
        print(
            f"hallulab {name}: interrupted; finished batches are in the call cache, a re-run resumes", file=sys.stderr
        )
        raise SystemExit(130) from None
    except Exception as error:
        if os.environ.get(DEBUG_ENV) or not _actionable(error):
            raise
        print(f"hallulab {name}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def write_run_log(stage: str, dataset: str, stats: Mapping[str, Any]) -> None:
    """Run statistics beside the outputs, never read by a stage (see the module docstring)."""
    try:
        write_json(paths.run_log(stage, dataset), {"stage": stage, "finished": time.time(), **stats})
    except OSError:  # a read-only workspace still runs
        logging.getLogger("hallulab.runner").warning("could not write the run log of %s", stage)


def read_artifact(name: str, dataset: str) -> Any:
    """An input a step requires: a shared artifact (JSON -> object, Parquet -> DataFrame), or
    the ``generate`` stage's white-box record of the responses it wrote (``main_tokens``: a
    list of dicts, :data:`hallulab.pipeline.graph.GENERATED`)."""
    from hallulab.pipeline.graph import required_path, required_suffix

    path, suffix = Path(required_path(name, dataset)), required_suffix(name)
    if not suffix:
        return [row for _, row in read_jsonl(path)] if path.is_file() else []
    return pd.read_parquet(path) if suffix == "parquet" else read_json(path)


def read_artifacts(names: Sequence[str], dataset: str) -> dict[str, Any]:
    """The named inputs of a data set's steps, loaded (see :func:`read_artifact`)."""
    return {name: read_artifact(name, dataset) for name in names}


def write_table(path: str | os.PathLike[str], frame: pd.DataFrame) -> None:
    """Atomically write a DataFrame as Parquet (deterministic bytes for equal content)."""
    with atomic_open(path, "wb") as handle:
        frame.to_parquet(handle, index=False)


def write_artifact(value: Any, path: str) -> None:
    if isinstance(value, pd.DataFrame):
        write_table(path, value)
    else:
        write_json(path, value, indent=None)
