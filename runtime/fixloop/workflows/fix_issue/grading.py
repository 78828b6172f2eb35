"""The verdict on a patch, test by test: fail-to-pass tests must pass, pass-to-pass tests must
keep passing, as the runner's own report says at the base and with the patch.

    grade = grade_tests(selection, base=runs_at_base, accepted=runs_with_patch)
    grade.ok, grade.reason, grade.rows

Fail closed: a selected test that is skipped, xfailed, deselected, not collected or missing from
the report counts as failed; so does every test of a command that wrote no report. A command of
a program without a runner (`runners.py`) is graded by its exit code, as before. Defaults, when a
task or a run names none: fail-to-pass, every test that failed or erred at the base; pass-to-pass,
every test that passed there (a file the base could not load is no test, and names none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fixloop.workflows.fix_issue.runners import TestReport, TestStatus, runner_named, worse
from fixloop.workflows.fix_issue.suite import CommandRun

SHOWN_FAILURES = 5


@dataclass(frozen=True)
class TestSelection:
    """Which tests decide: named ones, or the defaults (see the module docstring)."""

    __test__ = False  # not a test class, whatever pytest guesses from its name
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] | None = None
    require_fail_to_pass: bool = False  # a benchmark task: without one, nothing proves the fix


@dataclass(frozen=True)
class TestRow:
    __test__ = False  # not a test class, whatever pytest guesses from its name
    id: str
    key: str  # as the runner's report names it
    role: str  # fail_to_pass or pass_to_pass
    base: TestStatus
    accepted: TestStatus

    def to_json(self) -> dict[str, str]:
        return {
            "id": self.id,
            "role": self.role,
            "base": str(self.base),
            "accepted": str(self.accepted),
        }


@dataclass
class Grade:
    ok: bool
    reason: str
    rows: list[TestRow] = field(default_factory=list)

    def count(self, role: str) -> tuple[int, int]:
        """(passed, selected) of one role."""
        chosen = [row for row in self.rows if row.role == role]
        return sum(1 for row in chosen if row.accepted.passed), len(chosen)

    def to_json(self) -> dict[str, Any]:
        f2p, p2p = self.count("fail_to_pass"), self.count("pass_to_pass")
        return {
            "ok": self.ok,
            "reason": self.reason,
            "fail_to_pass": {"passed": f2p[0], "selected": f2p[1]},
            "pass_to_pass": {"passed": p2p[0], "selected": p2p[1]},
            "tests": [row.to_json() for row in self.rows],
        }


def merged(runs: Sequence[CommandRun]) -> dict[str, TestReport]:
    """Every test of every command's report, by key; a test two commands ran: the worse."""
    found: dict[str, TestReport] = {}
    for run in runs:
        for key, test in (run.tests or {}).items():
            earlier = found.get(key)
            found[key] = (
                test
                if earlier is None
                else TestReport(test.id, worse(earlier.status, test.status), test.collection)
            )
    return found


def _key(test_id: str, runs: Sequence[CommandRun], known: dict[str, TestReport]) -> str:
    """A named test's key, as the runner of the commands names it."""
    candidates: list[str] = []
    for run in runs:
        runner = runner_named(run.runner)
        if runner is not None and runner.key(test_id) not in candidates:
            candidates.append(runner.key(test_id))
    found = [key for key in candidates if key in known]
    return (found or candidates or [test_id])[0]


def _status(known: dict[str, TestReport], key: str) -> TestStatus:
    test = known.get(key)
    return TestStatus.MISSING if test is None else test.status


def grade_tests(
    selection: TestSelection, *, base: Sequence[CommandRun], accepted: Sequence[CommandRun]
) -> Grade:
    """The verdict on `accepted` (the tests with the patch) against `base` (without it)."""
    if not accepted:
        return Grade(False, "no acceptance test ran")
    problems = [
        f"{run.command} wrote no report" for run in accepted if run.runner and run.tests is None
    ]
    problems += [
        f"{run.command}: {run.status}" for run in accepted if not run.runner and not run.passed
    ]
    problems += [
        f"{run.command}: the worktree changed" for run in accepted if run.workspace_changed
    ]
    at_base, now = merged(base), merged(accepted)
    known = {**at_base, **now}
    shown = {key: test.id for key, test in known.items()}
    if selection.fail_to_pass:
        f2p = [_key(test_id, accepted, known) for test_id in selection.fail_to_pass]
        shown.update(zip(f2p, selection.fail_to_pass, strict=True))
    else:
        f2p = [k for k, t in at_base.items() if not t.status.passed and not t.collection]
    if selection.pass_to_pass is not None:
        p2p = [_key(test_id, accepted, known) for test_id in selection.pass_to_pass]
        shown.update(zip(p2p, selection.pass_to_pass, strict=True))
    else:
        p2p = [k for k, t in at_base.items() if t.status.passed and not t.collection]
    p2p = [key for key in dict.fromkeys(p2p) if key not in f2p]
    rows = [
        TestRow(shown.get(key, key), key, role, _status(at_base, key), _status(now, key))
        for role, keys in (("fail_to_pass", list(dict.fromkeys(f2p))), ("pass_to_pass", p2p))
        for key in keys
    ]
    if selection.require_fail_to_pass and not f2p:
        problems.append("no fail-to-pass test: nothing shows the issue fixed")
    failing = [row for row in rows if not row.accepted.passed]
    problems += [f"{row.id} {row.accepted}" for row in failing[:SHOWN_FAILURES]]
    if len(failing) > SHOWN_FAILURES:
        problems.append(f"{len(failing) - SHOWN_FAILURES} more tests not passing")
    grade = Grade(not problems, "", rows)
    f2p_count, p2p_count = grade.count("fail_to_pass"), grade.count("pass_to_pass")
    counts = (
        f"fail-to-pass {f2p_count[0]}/{f2p_count[1]}, pass-to-pass {p2p_count[0]}/{p2p_count[1]}"
    )
    grade.reason = counts if grade.ok else f"{counts}: " + "; ".join(problems)
    return grade


__all__ = ["Grade", "TestRow", "TestSelection", "grade_tests", "merged"]
