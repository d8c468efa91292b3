"""No measured timing in the code's comments, docstrings, configuration comments or the Makefile.

A comment says why the code is as it is, never how long something took on some machine: a
timing typed into a comment rots as the code, the packages and the machines change, and soon
disagrees with the benchmark that measures it now. Measured numbers live in the results files
(``perf/results.json``, ``results/``) and the pages rendered from them. The check is a
plain grep, so the word it looks for stays out of these files in every sense.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATTERN = "measured|[0-9] s on|on 2 cores"
PLACES = ("src", "stages", "Makefile", "conf")


def test_no_measured_timings_in_code_comments_or_configuration() -> None:
    found = subprocess.run(
        ["git", "grep", "-nE", PATTERN, "--", *PLACES],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    # git grep exits 1 when nothing matches, 0 when something does, above 1 on an error
    assert found.returncode != 0, (
        "timings belong in perf/results.json or results/, not in code or configuration:\n" + found.stdout
    )
    assert found.returncode == 1, found.stderr
