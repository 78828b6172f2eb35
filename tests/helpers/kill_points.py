"""The crash matrices' golden tables of kill points: one test per point, named by its table.

A table is a golden file (`goldens/kill-points/<workflow>.txt` next to its matrix), one row a
point: a case (the scenario or run the point belongs to) and the exact `FIXLOOP_CRASH_AT` value
(`STEP#N:K`: right after command K of the N-th run of STEP). The matrix reads its table when
pytest collects it, so each point is a test of its own that pytest-xdist can hand to any
worker; a test of the matrix derives the points from uncrashed runs and compares them with the
table, so a step that gains or loses a command, or a new step, fails until the table is
regenerated (`pytest --update-goldens -k table`) and the diff reviewed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Golden(Protocol):
    """The `golden` fixture (tests/conftest.py): compares, or rewrites under --update-goldens."""

    def check(self, path: Path, actual: str) -> None: ...


@dataclass(frozen=True)
class KillPoint:
    workflow: str
    case: str
    crash_at: str

    @property
    def id(self) -> str:
        """The test id: workflow/case/STEP#N:K."""
        return f"{self.workflow}/{self.case}/{self.crash_at}"

    @property
    def step(self) -> str:
        """The step run the point is in (`STEP#N`, or `STEP` when the point names no N)."""
        return self.crash_at.rpartition(":")[0]

    @property
    def command(self) -> int:
        """K: the point is right after the step's K-th command."""
        return int(self.crash_at.rpartition(":")[2])


def expand(counts: Mapping[tuple[str, int], int], prefix: str = "") -> list[str]:
    """`PREFIXSTEP#N:K` for every K of every step run, from the commands each ran."""
    return [
        f"{prefix}{step}#{occurrence}:{k}"
        for (step, occurrence), count in counts.items()
        for k in range(1, count + 1)
    ]


class Table:
    """One workflow's kill points, as committed under tests."""

    def __init__(self, path: Path, workflow: str, matrix: str) -> None:
        self.path = path
        self.workflow = workflow
        self.matrix = matrix  # the test file that reads it, for the header

    def points(self, case: str) -> list[KillPoint]:
        """The case's rows; none while the table is missing (its check then fails)."""
        if not self.path.is_file():
            return []
        found = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            row_case, _, crash_at = line.partition(" ")
            if not crash_at or ":" not in crash_at:
                raise ValueError(f"{self.path}:{number}: a row is `CASE STEP#N:K`, not {line!r}")
            if row_case == case:
                found.append(KillPoint(self.workflow, row_case, crash_at))
        return found

    def render(self, cases: Mapping[str, Iterable[str]]) -> str:
        lines = [
            f"# Kill points of {self.workflow}'s crash matrix ({self.matrix}), one test each.",
            "# A row: CASE FIXLOOP_CRASH_AT. Derived from uncrashed runs; after a step changes,",
            f"# regenerate: .venv/bin/python -m pytest --update-goldens -k table {self.matrix}",
            "# then review the diff (docs/testing.md).",
        ]
        lines += [f"{case} {crash_at}" for case, points in cases.items() for crash_at in points]
        return "\n".join(lines) + "\n"

    def check(self, golden: Golden, cases: Mapping[str, Iterable[str]]) -> None:
        golden.check(self.path, self.render(cases))
