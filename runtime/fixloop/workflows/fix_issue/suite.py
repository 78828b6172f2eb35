"""The preset test commands of a worktree, run in its sandbox, each result tied to a revision.

Tests are argv lists fixed before the run starts (the user's `--test` words, split like a shell
would split them but never run by one); the model only chooses which of them to run. Every run
records the worktree's revision before it started: a result holds for that revision only, and
`results_at(revision)` never answers with a pass from an older one. A run during which the
worktree changed (a test writing into the tree) holds for no revision at all.

Exit codes read as pytest defines them, which most runners share: 0 passed, 1 failed, 5 no tests
collected (not a pass); 127 the command was not found; anything else an error. A timeout is its
own status.

With a `reports` folder (outside the worktree, writable in the sandbox and nowhere the patch
can reach), a command of a known runner (`runners.py`) also writes the runner's own report
there, and its result carries every test's status as that report says (None: no usable report).
The file is read and removed at once: it may quote test output, and the run folder keeps only
masked text. With a `records` folder, every command run leaves a record there, masked:
`0001.json`, `0002.json`, … (the command, its revision, status, exit code, time, each test's
status from the report, the output's tail), the evidence behind every result the run names.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from fixloop.masking import dumps_masked
from fixloop.sandboxes import Sandbox
from fixloop.workflows.fix_issue.runners import TestReport, runner_for
from fixloop.workflows.fix_issue.versions import workspace_revision

OUTPUT_TAIL_CHARS = 4000
# Tests must not leave byte code or caches behind: they would become part of the next revision.
TEST_ENVIRONMENT = {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
EXIT_NO_TESTS = 5
EXIT_NOT_FOUND = 127  # as every sandbox reports a program it cannot find


@dataclass(frozen=True)
class PresetTest:
    argv: tuple[str, ...]

    @property
    def shown(self) -> str:
        return shlex.join(self.argv)


class RunStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NO_TESTS = "no_tests"
    TIMED_OUT = "timed_out"
    NOT_FOUND = "not_found"
    ERROR = "error"


def status_of(exit_code: int, timed_out: bool) -> RunStatus:
    if timed_out:
        return RunStatus.TIMED_OUT
    return {
        0: RunStatus.PASSED,
        1: RunStatus.FAILED,
        EXIT_NO_TESTS: RunStatus.NO_TESTS,
        EXIT_NOT_FOUND: RunStatus.NOT_FOUND,
    }.get(exit_code, RunStatus.ERROR)


@dataclass(frozen=True)
class CommandRun:
    command: str
    exit_code: int
    status: RunStatus
    revision: str  # the worktree's revision when the command started
    duration_s: float
    output: str  # the tail of stdout then stderr
    workspace_changed: bool = False  # the tree changed while it ran: it holds for no revision
    runner: str = ""  # pytest or unittest: per-test statuses were asked for; "": exit code only
    tests: dict[str, TestReport] | None = None  # by key, from the runner's report (None: none)

    @property
    def passed(self) -> bool:
        return self.status is RunStatus.PASSED and not self.workspace_changed

    def to_json(self, *, output_chars: int = OUTPUT_TAIL_CHARS) -> dict[str, Any]:
        return {
            "command": self.command,
            "status": str(self.status),
            "exit_code": self.exit_code,
            "revision": self.revision,
            "duration_s": round(self.duration_s, 3),
            "workspace_changed": self.workspace_changed,
            "runner": self.runner,
            "report": self.report_summary(),
            "output": self.output[-output_chars:] if output_chars else "",
        }

    def report_summary(self) -> str:
        """`12 passed, 1 skipped` from the runner's report; `no report` when it wrote none."""
        if not self.runner:
            return ""
        if self.tests is None:
            return "no report"
        counts: dict[str, int] = {}
        for test in self.tests.values():
            counts[str(test.status)] = counts.get(str(test.status), 0) + 1
        return ", ".join(f"{count} {status}" for status, count in sorted(counts.items())) or (
            "no tests"
        )


def all_passed(runs: Sequence[CommandRun]) -> bool:
    return bool(runs) and all(run.passed for run in runs)


def summary(runs: Sequence[CommandRun]) -> str:
    """`2 passed, 1 failed` (or `not run`)."""
    if not runs:
        return "not run"
    counts: dict[str, int] = {}
    for run in runs:
        counts[str(run.status)] = counts.get(str(run.status), 0) + 1
    return ", ".join(f"{count} {status}" for status, count in counts.items())


def _tail(stdout: str, stderr: str) -> str:
    joined = stdout + (("\n" if stdout and not stdout.endswith("\n") else "") + stderr)
    return joined[-OUTPUT_TAIL_CHARS:]


class Suite:
    """The commands of one worktree and every result they gave, by revision."""

    def __init__(
        self,
        commands: Sequence[PresetTest],
        sandbox: Sandbox,
        worktree: Path,
        *,
        timeout_s: float,
        reports: Path | None = None,
        records: Path | None = None,
    ) -> None:
        self.commands = tuple(commands)
        self.records = records
        self._recorded = 0
        self.sandbox = sandbox
        self.worktree = worktree
        self.timeout_s = timeout_s
        self.reports = reports
        self._runs = 0
        self._results: dict[tuple[str, int], CommandRun] = {}

    def revision(self) -> str:
        return workspace_revision(self.worktree)

    def use(self, sandbox: Sandbox) -> None:
        """Run the commands in `sandbox` from now on (an image the fixer built): a result from
        the old one says nothing about the new, so none is reused."""
        self.sandbox = sandbox
        self._results.clear()

    def run(self, indexes: Sequence[int] | None = None) -> list[CommandRun]:
        """Run the commands (all, or those at `indexes`) now, at the current revision."""
        chosen = range(len(self.commands)) if indexes is None else indexes
        return [self._run_one(index) for index in chosen]

    def _run_one(self, index: int) -> CommandRun:
        command = self.commands[index]
        runner = runner_for(command.argv) if self.reports is not None else None
        argv, report = command.argv, None
        if runner is not None and self.reports is not None:
            self._runs += 1
            report = self.reports / f"{self._runs:04d}-{index}.report"
            report.unlink(missing_ok=True)  # only what this run writes counts
            argv = runner.command(command.argv, report)
        before = self.revision()
        done = self.sandbox.run(
            argv, cwd=self.worktree, env=TEST_ENVIRONMENT, timeout_s=self.timeout_s
        )
        changed = self.revision() != before
        tests = None
        if runner is not None and report is not None:
            tests = runner.read(report)
            report.unlink(missing_ok=True)
        result = CommandRun(
            command=command.shown,
            exit_code=done.exit_code,
            status=status_of(done.exit_code, done.timed_out),
            revision=before,
            duration_s=done.duration_s,
            output=_tail(done.stdout, done.stderr),
            workspace_changed=changed,
            runner=runner.name if runner is not None else "",
            tests=tests,
        )
        if not changed:
            self._results[before, index] = result
        self._record(result)
        return result

    def _record(self, result: CommandRun) -> None:
        if self.records is None:
            return
        self.records.mkdir(exist_ok=True)
        self._recorded += 1
        tests = {key: str(test.status) for key, test in (result.tests or {}).items()}
        data = {"number": self._recorded, **result.to_json(), "tests": tests}
        path = self.records / f"{self._recorded:04d}.json"
        path.write_text(dumps_masked(data, indent=2, ensure_ascii=False) + "\n", "utf-8")

    def results_at(self, revision: str) -> list[CommandRun] | None:
        """Every command's result at exactly `revision`, or None when one has none there."""
        found = [self._results.get((revision, index)) for index in range(len(self.commands))]
        if any(result is None for result in found):
            return None
        return [result for result in found if result is not None]

    def current(self) -> list[CommandRun]:
        """The results at the current revision: the recorded ones, or a fresh run."""
        return self.results_at(self.revision()) or self.run()


__all__ = [
    "TEST_ENVIRONMENT",
    "CommandRun",
    "PresetTest",
    "RunStatus",
    "Suite",
    "all_passed",
    "status_of",
    "summary",
]
