"""Which of its candidate members a combining cell (the ensemble's) combines: those whose own
cells are not model-limited, judged from their files when the combining cell runs.

A data set's config lists the combining method's candidate members (``ensemble.members`` in
``conf/dataset/<name>.yaml``: what its run can afford). Each candidate is one variant of another
method, and that method has its own cell in the same column: the candidate's **judgement** is
that cell's verdict for the variant (:mod:`hallulab.benchmark.validity`), computed exactly as the
table computes it, from

* the variant's labelled units, kept by the member's cell (its units file for a variant the
  table shows, its member-units file for one only a combining cell reads:
  :attr:`hallulab.benchmark.runs.CellRun.member_variants`), for its flat share;
* the member cell's results file, whose ``diagnostics`` hold the counts of the role checks its
  method declares for the variant.

A model-limited candidate is left out: its scores speak of the model that filled its role, and
a combination reads them as if they spoke of the units. A candidate that cannot be judged (its
cell has not run, or did not keep the variant's units) is kept in the listing of the cells, and
the combining cell does not run until it is judged (:func:`hallulab.benchmark.runs.run_pending`
runs the member cells first). Fewer than :data:`MIN_MEMBERS` members not model-limited leave
nothing to combine: the combining cell is not run, and says why.

Nothing here is typed per data set: the members a combining cell runs with are the candidates
less the model-limited ones, and its run's settings carry them
(``-S ensemble.members=[...]``) only where some candidate is left out, so that a combining cell
whose candidates are all judged valid runs exactly as its data set's config says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.benchmark.units import read_units
from hallulab.benchmark.validity import CellVerdict, cell_verdict
from hallulab.core.io import read_json
from hallulab.pipeline.members import Member
from hallulab.pipeline.role_checks import DeclaredCheck

#: a combination needs at least this many members not model-limited
MIN_MEMBERS = 2


@dataclass(frozen=True)
class MemberFiles:
    """Where a candidate's cell keeps what judges it: its results file and the units files that
    may hold the variant (the table's first, then the member-units file), each relative to the
    checkout ``root`` (the paths a reason names), and the command that runs the cell again."""

    results_file: Path
    units_files: tuple[Path, ...]
    root: Path = Path(".")
    command: str = ""


@dataclass(frozen=True)
class Judgement:
    """One candidate and its cell's verdict; ``verdict`` is None where it cannot be judged yet,
    and ``why`` then says why."""

    member: Member
    verdict: CellVerdict | None = None
    why: str = ""

    @property
    def judged(self) -> bool:
        return self.verdict is not None

    @property
    def limited(self) -> bool:
        return self.verdict is not None and self.verdict.limited

    def to_dict(self) -> dict[str, Any]:
        if self.verdict is None:
            return {"member": self.member.key, "verdict": None, "reason": self.why}
        return {"member": self.member.key, "verdict": self.verdict.verdict, "reason": self.verdict.reason}


def judge(member: Member, files: MemberFiles | None, checks: Sequence[DeclaredCheck]) -> Judgement:
    """The verdict of ``member``'s cell for its variant (``files``: None where the member's
    method has no cell in the column), with the role checks its method declares (``checks``)."""
    if files is None:
        return Judgement(member, why=f"{member.method} has no cell in this column")
    again = f": `{files.command}` runs it" if files.command else ""
    results = files.root / files.results_file
    if not results.is_file():
        return Judgement(member, why=f"its cell has not run ({files.results_file.as_posix()} is not there){again}")
    for path in files.units_files:
        if not (files.root / path).is_file():
            continue
        units = read_units(files.root / path)
        if member.variant in units:
            diagnostics = read_json(results).get("diagnostics", {})
            where = files.results_file.as_posix()
            return Judgement(member, cell_verdict(units[member.variant], checks, diagnostics, where))
    kept = " or ".join(path.as_posix() for path in files.units_files)
    return Judgement(member, why=f"its cell has kept no units of {member.variant!r} in {kept}{again}")


@dataclass(frozen=True)
class MemberChoice:
    """A combining cell's candidates, each judged, and what that makes of them."""

    #: the params key of the member list (``MethodSpec.combines``: ``ensemble.members``)
    key: str
    judgements: tuple[Judgement, ...]

    @property
    def candidates(self) -> tuple[Member, ...]:
        return tuple(found.member for found in self.judgements)

    @property
    def kept(self) -> tuple[Member, ...]:
        """The candidates not model-limited (those not judged yet among them), in config order."""
        return tuple(found.member for found in self.judgements if not found.limited)

    @property
    def left_out(self) -> tuple[Judgement, ...]:
        return tuple(found for found in self.judgements if found.limited)

    @property
    def unjudged(self) -> tuple[Judgement, ...]:
        return tuple(found for found in self.judgements if not found.judged)

    @property
    def blocked(self) -> str | None:
        """Why the combining cell cannot run now, or None: a candidate not judged yet, or too
        few members left to combine."""
        if self.unjudged:
            return "; ".join(f"member {found.member.key} is not judged yet: {found.why}" for found in self.unjudged)
        if len(self.kept) < MIN_MEMBERS:
            left = ", ".join(found.member.key for found in self.left_out)
            return (
                f"{len(self.kept)} member(s) not model-limited, fewer than the {MIN_MEMBERS} a combination"
                f" needs (model-limited: {left})"
            )
        return None

    @property
    def settings(self) -> tuple[str, ...]:
        """The ``-S`` setting that narrows the member list, where a candidate is left out;
        nothing where every candidate is kept (the data set's config then holds the list)."""
        if not self.left_out:
            return ()
        return (members_setting(self.key, self.kept),)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "candidates": [found.to_dict() for found in self.judgements]}


def members_setting(key: str, members: Sequence[Member]) -> str:
    """The ``-S`` setting that lists ``members`` under ``key`` (``ensemble.members``), in
    Hydra's override grammar."""
    listed = ",".join(f"{{method:{member.method},variant:{member.variant}}}" for member in members)
    return f"{key}=[{listed}]"


def choose(
    key: str,
    candidates: Sequence[Member],
    files: Mapping[str, MemberFiles],
    checks: Mapping[str, Sequence[DeclaredCheck]],
) -> MemberChoice:
    """Every candidate judged (``files`` and ``checks`` by the member's method)."""
    return MemberChoice(
        key, tuple(judge(member, files.get(member.method), checks.get(member.method, ())) for member in candidates)
    )
