"""Results files awaiting re-publication: what changed since each was made, and the command that remakes it.

When a change moves what a method computes (or renames the settings its command uses), the
results files it made stay as they were until their command is run again, which can take hours.
``results/pending.json`` lists them, so that no page shows an earlier reading's number under the
new reading's name without saying so:

    {"nq_open/hallucheck_100": {
        "made_at": "<the git revision the file names>",
        "since": "what changed since that revision, in one sentence",
        "command": "make result ... (the command that re-publishes it today)"}}

Every table of a pending file (:mod:`hallulab.report.result_tables`) opens with a line saying that its
numbers are the earlier reading, what changed and which command remakes them, and a row the new
reading adds, missing from the file, reads ``pending``. An entry must name the revision its file
names: once the file is re-published, rendering fails until its entry is removed, so the note can
never outlive the numbers it describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.io import read_json
from hallulab.results.published import RESULTS_DIR, PublishedResult

PENDING_FILE = "pending.json"


@dataclass(frozen=True)
class PendingRepublication:
    """One results file that an earlier revision made and a change since has made stale."""

    file: str  # "<dataset>/<name>", as a table marker names it
    made_at: str  # the git revision the results file names
    since: str  # what changed since then, in one sentence
    command: str  # the command that re-publishes it with today's code and settings

    @classmethod
    def from_entry(cls, file: str, raw: Mapping[str, Any]) -> PendingRepublication:
        missing = sorted({"made_at", "since", "command"} - set(raw))
        if missing:
            raise ValueError(f"{RESULTS_DIR}/{PENDING_FILE}: entry {file!r} lacks {', '.join(missing)}")
        return cls(file, str(raw["made_at"]), str(raw["since"]), str(raw["command"]))

    def check(self, result: PublishedResult) -> None:
        """Refuse an entry whose file has been re-published since (its revision moved on)."""
        if result.git_revision != self.made_at:
            raise ValueError(
                f"results {self.file} was re-published at {result.git_revision[:10]}: remove its entry"
                f" from {RESULTS_DIR}/{PENDING_FILE}"
            )

    def note(self, awaited_rows: bool) -> str:
        """The line a table of this file opens with (``awaited_rows``: the table shows a row the
        file does not have yet)."""
        awaited = "; a row marked *pending* is one the new reading adds" if awaited_rows else ""
        return (
            f"> Re-publication pending: these numbers were made at revision `{self.made_at[:10]}`, before"
            f" {self.since}{awaited}. Remade by `{self.command}`."
        )


def load_pending(root: Path) -> dict[str, PendingRepublication]:
    """The pending entries under ``root`` by file (none when the checkout has no such list)."""
    path = root / RESULTS_DIR / PENDING_FILE
    if not path.exists():
        return {}
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise ValueError(f"{RESULTS_DIR}/{PENDING_FILE}: expected an object of entries by file")
    entries = {file: PendingRepublication.from_entry(file, entry) for file, entry in raw.items()}
    for file in entries:
        if not (root / RESULTS_DIR / f"{file}.json").is_file():
            raise ValueError(f"{RESULTS_DIR}/{PENDING_FILE}: entry {file!r} names no results file")
    return entries
