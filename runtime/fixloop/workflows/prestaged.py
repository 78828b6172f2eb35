"""The pre-staged hunk check's judgement: what the user already staged, and what to recommend.

Both diffs are read in *index* coordinates: the user's staged hunks are `git diff --staged`
(HEAD → index, so their `+` side is in the index), and the fix's own edits are `git diff`
(index → working tree, so their `-` side is in the index). Seed 002's heuristic, in order:

1. the staged hunks overlap the fix's lines, or they are large or sprawling → "Stash pre-existing";
2. they sit right next to the fix's lines (they continue its logical change) → "Proceed";
3. otherwise (small, apart, unrelated) → "Commit pre-existing first".

What each choice then does to the repository is in `workflows/fix-findings.md`, steps
`commit-prestaged` and `set-aside-prestaged`; "proceed" just stages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

_FILE = re.compile(r"^diff --git a/(?P<a>.*) b/(?P<b>.*)$")
_HUNK = re.compile(r"^@@ -(?P<a>\d+)(?:,(?P<an>\d+))? \+(?P<b>\d+)(?:,(?P<bn>\d+))? @@")

LARGE_LINES = 40  # changed lines across the staged hunks
SPRAWLING_HUNKS = 4
ADJACENT_LINES = 3


class PrestagedChoice(StrEnum):
    COMMIT = "commit"
    STASH = "stash"
    PROCEED = "proceed"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    PrestagedChoice.COMMIT: "Commit pre-existing first",
    PrestagedChoice.STASH: "Stash pre-existing",
    PrestagedChoice.PROCEED: "Proceed (treat as part of this fix)",
}


@dataclass(frozen=True)
class Hunk:
    file: str
    start: int  # first index line the hunk covers
    length: int  # index lines it covers (0 for a pure insertion/deletion point)
    changed: int  # `+` and `-` lines in it

    @property
    def end(self) -> int:
        return self.start + max(self.length, 1) - 1

    def distance(self, other: Hunk) -> int | None:
        """Lines between the two ranges (0 when they overlap); None for different files."""
        if self.file != other.file:
            return None
        if self.start <= other.end and other.start <= self.end:
            return 0
        return min(abs(self.start - other.end), abs(other.start - self.end))


def parse_hunks(diff: str, *, index_side: str) -> list[Hunk]:
    """Hunks of a unified diff; `index_side` is "+" (HEAD→index) or "-" (index→worktree)."""
    hunks: list[Hunk] = []
    file = ""
    current: list[int] | None = None  # [start, length, changed]
    for line in diff.splitlines():
        header = _FILE.match(line)
        hunk = _HUNK.match(line)
        if header is not None:
            _close(hunks, file, current)
            current = None
            file = header["b"]
        elif hunk is not None:
            _close(hunks, file, current)
            start, count = (hunk["b"], hunk["bn"]) if index_side == "+" else (hunk["a"], hunk["an"])
            current = [int(start), 1 if count is None else int(count), 0]
        elif current is not None and line[:1] in {"+", "-"} and not line.startswith(("+++", "---")):
            current[2] += 1
    _close(hunks, file, current)
    return hunks


def _close(hunks: list[Hunk], file: str, current: list[int] | None) -> None:
    if current is not None:
        hunks.append(Hunk(file, current[0], current[1], current[2]))


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
        recommendation = PrestagedChoice.STASH
    elif adjacent:
        recommendation = PrestagedChoice.PROCEED
    else:
        recommendation = PrestagedChoice.COMMIT
    return PrestagedReport(tuple(staged), overlap, adjacent, recommendation)
