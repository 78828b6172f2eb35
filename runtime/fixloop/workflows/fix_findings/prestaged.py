"""The pre-staged hunk check's judgement: what the user already staged, and what to recommend.

Both diffs are read in *index* coordinates: the user's staged hunks are `git diff --staged`
(HEAD → index, so their `+` side is in the index), and the fix's own edits are `git diff`
(index → working tree, so their `-` side is in the index). The document's heuristic, in order:

1. the staged hunks overlap the fix's lines, or they are large or sprawling → "Set pre-existing
   aside" (nothing uses `git stash`: the hunks go to a private ref and a patch);
2. they sit right next to the fix's lines (they continue its logical change) → "Proceed";
3. otherwise (small, apart, unrelated) → "Commit pre-existing first".

What each choice then does to the repository is in `workflows/fix-findings.md`, steps
`commit-prestaged` and `set-aside-prestaged`; "proceed" just stages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from fixloop.workflows.fix_findings import snapshots
from fixloop.workflows.fix_findings.state import FindingRecord
from fixloop.workflows.kernel.choices import question
from fixloop.workflows.kernel.errors import Escalate, StepFailed

if TYPE_CHECKING:
    from fixloop.workflows.fix_findings.findings_run import FindingsRun

_FILE = re.compile(r"^diff --git a/(?P<a>.*) b/(?P<b>.*)$")
_HUNK = re.compile(r"^@@ -(?P<a>\d+)(?:,(?P<an>\d+))? \+(?P<b>\d+)(?:,(?P<bn>\d+))? @@")

LARGE_LINES = 40  # changed lines across the staged hunks
SPRAWLING_HUNKS = 4
ADJACENT_LINES = 3


class PrestagedChoice(StrEnum):
    COMMIT = "commit"
    SET_ASIDE = "set-aside"
    PROCEED = "proceed"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    PrestagedChoice.COMMIT: "Commit pre-existing first",
    PrestagedChoice.SET_ASIDE: "Set pre-existing aside",
    PrestagedChoice.PROCEED: "Proceed (treat as part of this fix)",
}


@dataclass(frozen=True)
class Hunk:
    """The changed lines of one diff hunk, as a range of index lines (context lines excluded)."""

    file: str
    start: int
    end: int
    changed: int  # `+` and `-` lines in it

    def distance(self, other: Hunk) -> int | None:
        """Lines between the two ranges (0 when they overlap); None for different files."""
        if self.file != other.file:
            return None
        if self.start <= other.end and other.start <= self.end:
            return 0
        return min(abs(self.start - other.end), abs(other.start - self.end))


def parse_hunks(diff: str, *, index_side: str) -> list[Hunk]:
    """Hunks of a unified diff; `index_side` is "+" (HEAD→index) or "-" (index→worktree).

    Each changed line is placed at its index line: on the index side, the line itself; on the
    other side, the index line where it was removed or inserted.
    """
    hunks: list[Hunk] = []
    file = ""
    old = new = 0
    positions: list[int] = []
    in_hunk = False
    previous = " "
    for line in diff.splitlines():
        header = _FILE.match(line)
        if header is not None:
            _close(hunks, file, positions)
            positions, file, in_hunk = [], header["b"], False
            continue
        hunk = _HUNK.match(line)
        if hunk is not None:
            _close(hunks, file, positions)
            positions, in_hunk, previous = [], True, " "
            old, new = int(hunk["a"]), int(hunk["b"])
            continue
        if not in_hunk or line[:1] not in {" ", "+", "-"}:
            continue  # file headers (`---`, `+++`, `index …`) and `\ No newline` markers
        kind = line[0]
        if kind == " ":
            old, new = old + 1, new + 1
        elif kind == index_side:
            positions.append(new if kind == "+" else old)
        else:
            # A line of the other side sits where the index line before it was replaced, or
            # before the next index line when it is a pure insertion/deletion.
            here = new if index_side == "+" else old
            positions.append(here - 1 if previous == index_side else here)
        if kind == "+":
            new += 1
        elif kind == "-":
            old += 1
        previous = kind
    _close(hunks, file, positions)
    return hunks


def _close(hunks: list[Hunk], file: str, positions: list[int]) -> None:
    if positions:
        hunks.append(Hunk(file, min(positions), max(positions), len(positions)))


@dataclass(frozen=True)
class PrestagedReport:
    hunks: tuple[Hunk, ...]
    overlap: bool
    adjacent: bool
    recommendation: PrestagedChoice

    @property
    def changed_lines(self) -> int:
        return sum(h.changed for h in self.hunks)

    def summary(self) -> str:
        files = sorted({h.file for h in self.hunks})
        count = len(self.hunks)
        relation = (
            "overlapping the fix's edits"
            if self.overlap
            else "next to the fix's edits"
            if self.adjacent
            else "no overlap with fix's edits"
        )
        return (
            f"{count} hunk{'s' if count != 1 else ''} in {', '.join(files)} totaling "
            f"{self.changed_lines} lines, {relation}"
        )


def assess(staged_diff: str, fix_diff: str) -> PrestagedReport:
    staged = parse_hunks(staged_diff, index_side="+")
    fix = parse_hunks(fix_diff, index_side="-")
    distances = [d for s in staged for f in fix if (d := s.distance(f)) is not None]
    overlap = any(d == 0 for d in distances)
    adjacent = not overlap and any(d <= ADJACENT_LINES for d in distances)
    large = sum(h.changed for h in staged) > LARGE_LINES or len(staged) > SPRAWLING_HUNKS
    if overlap or large:
        recommendation = PrestagedChoice.SET_ASIDE
    elif adjacent:
        recommendation = PrestagedChoice.PROCEED
    else:
        recommendation = PrestagedChoice.COMMIT
    return PrestagedReport(tuple(staged), overlap, adjacent, recommendation)


def settle_prestaged(
    flow: FindingsRun, index: int, record: FindingRecord, files: Sequence[str]
) -> bool:
    """Round 1: deal with hunks the user staged in the fixed files before the fix is staged.

    Commit them first, set them aside, or stage them with the fix: the user's answer (or the
    `--on-prestaged` policy). Returns True when Round 1 must be made again: the fix rewrote the
    user's staged lines, so they were set aside from the file as it was before the fix. Raises
    Escalate when nobody can answer or the choice cannot be carried out cleanly: the fix is then
    left unstaged and nothing of the user's is touched."""
    steps = flow.steps
    entries = steps.index_entries(files)
    ours = flow.state.staged_by_run
    files = [f for f in files if f not in entries or entries[f] != ours.get(f)]
    if not files:
        return False
    diffs = steps.prestaged(files)
    if not diffs.found:
        return False
    report = assess(diffs.staged, diffs.fix)
    found = f"pre-existing staged hunks: {report.summary()}"
    policy = flow.options.on_prestaged
    if policy != "ask":
        choice: PrestagedChoice | None = PrestagedChoice(POLICY_ALIASES.get(policy, policy))
    else:
        labels = [choice.label for choice in PrestagedChoice]
        asked = question(report.summary(), labels, report.recommendation.label)
        answer = flow.context.prompter.ask(asked)
        choice = next((c for c in PrestagedChoice if c.label == answer), None)
    if choice is None:
        raise Escalate(f"{found}; they need your decision (--on-prestaged)")
    try:
        if choice is PrestagedChoice.COMMIT:
            commit = steps.commit_prestaged(
                files, f"Pre-existing staged changes ({', '.join(files)})"
            )
            record.notes.append(f"{found}; committed first as {commit[:12]}")
        elif choice is PrestagedChoice.SET_ASIDE:
            return _set_aside(flow, index, record, files, found)
        else:
            record.notes.append(f"{found}; staged together with the fix")
    except StepFailed as exc:
        raise Escalate(str(exc)) from None
    return False


def _set_aside(
    flow: FindingsRun, index: int, record: FindingRecord, files: Sequence[str], found: str
) -> bool:
    """Set the user's hunks aside; when the fix rewrote them, from the file before the fix."""
    steps = flow.steps
    ref = f"refs/fixloop/prestaged/{flow.active_run.id}/{index}"
    patch = flow.active_run.dir / f"prestaged-{index}.patch"
    saved = f"set aside in {ref} and {patch} (restore: git apply --index {patch})"
    if steps.set_aside_prestaged(files, ref, patch):
        record.notes.append(f"{found}; {saved}")
        return False
    # The fix rewrote the user's lines: from the file as it was before the fix they come out.
    last = record.rounds[-1]
    fixed = {
        name: (flow.repo / name).read_bytes() for name in files if (flow.repo / name).is_file()
    }
    snapshots.restore(flow.repo, Path(last.snapshot_dir), last.snapshot)
    if steps.set_aside_prestaged(files, ref, patch):
        record.notes.append(
            f"{found}; the fix rewrote them, so Round 1 is made again without them; {saved}"
        )
        return True
    for name, data in fixed.items():  # put the fix back as the fixer left it: nothing changes
        (flow.repo / name).write_bytes(data)
    raise Escalate(
        f"{found}; they cannot be set aside cleanly (your unstaged changes rewrite them too); "
        "nothing was changed"
    )


# `--on-prestaged stash`, the old name of `set-aside` (nothing ever used `git stash`).
POLICY_ALIASES = {"stash": PrestagedChoice.SET_ASIDE.value}
