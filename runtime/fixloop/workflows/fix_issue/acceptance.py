"""Acceptance: a patch counts only when it applies to a clean checkout of its base and its
fail-to-pass and pass-to-pass tests pass there, test by test, as the runner's own report says,
with the base's test infrastructure (`infrastructure.py`; `grading.py` for the verdict).

The check is a run of its own (`<run-id>-verify`): its lock keeps other runs' recovery away
while it works, its trace holds its steps, and a kill leaves a worktree `fixloop recover` knows
(`worktrees/<run-id>-verify`). Its worktree is made by the document's `setup-verify-worktree`
(detached at the base commit). The tests run there twice: first at the base with the hidden
tests (what passes and fails without the patch), then, the worktree reset, with the patch
applied, the test files put back or removed and the hidden tests copied in by `apply-patch`.
The runners write their reports into the verification run's folder, which the sandbox lets
them write and the patch cannot reach. The worktree is always removed by the protocol's
`recover-run`.

`verify_patch` needs no fix-issue run: the efficacy harness scores another agent's patches with
it too.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.documents.pack import WorkflowDoc
from fixloop.events import Event, EventKind, EventStream
from fixloop.gitrepo import files_at, git_repo, patch_paths
from fixloop.runs.run import Run
from fixloop.sandboxes import open_sandbox
from fixloop.steps.caller import Steps
from fixloop.steps.paths import write_paths_file
from fixloop.steps.result import required_output
from fixloop.workflows.fix_issue.grading import Grade, TestSelection, grade_tests
from fixloop.workflows.fix_issue.infrastructure import (
    config_refusal,
    is_config,
    is_test_path,
    path_refusal,
    to_restore,
)
from fixloop.workflows.fix_issue.plan import SandboxOpener
from fixloop.workflows.fix_issue.suite import CommandRun, PresetTest, Suite

VERIFY_SUFFIX = "-verify"
TEST_RUNS = "test-runs"  # a record of every command run (`suite.py`)
REPORTS = "reports"


@dataclass(frozen=True)
class PatchCheck:
    """What to verify: a patch against `base`, and how to run the acceptance tests."""

    repo: Path
    base: str
    patch: Path
    commands: tuple[PresetTest, ...]
    opener: SandboxOpener = open_sandbox
    sandbox: str = "auto"
    image: str | None = None
    hidden_files: Path | None = None
    timeout_s: float = 600.0
    selection: TestSelection = field(default_factory=TestSelection)


@dataclass
class Acceptance:
    run_id: str
    folder: Path | None = None  # the verification run's folder (its trace)
    applied: bool = False
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # test files the patch added
    base_results: list[CommandRun] = field(default_factory=list)  # at the base, hidden tests in
    results: list[CommandRun] = field(default_factory=list)
    grade: Grade | None = None
    problem: str = ""  # why the patch is not accepted, when it is not

    @property
    def accepted(self) -> bool:
        return self.applied and self.grade is not None and self.grade.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "accepted": self.accepted,
            "applied": self.applied,
            "restored": self.restored,
            "removed": self.removed,
            "base": [result.to_json() for result in self.base_results],
            "tests": [result.to_json() for result in self.results],
            "grade": self.grade.to_json() if self.grade else None,
            "problem": self.problem,
        }


def restored_tests(check: PatchCheck) -> list[str]:
    """Test files of the base commit the patch changes or deletes: they go back."""
    at_base = set(files_at(check.repo, check.base))
    return to_restore(patch_paths(check.repo, check.patch), at_base)[0]


def verify_patch(
    check: PatchCheck,
    *,
    document: WorkflowDoc,
    protocol: WorkflowDoc,
    run_id: str,
    events: EventStream,
) -> Acceptance:
    """Apply `check.patch` to a fresh worktree of `check.base` and run the acceptance tests."""
    verify_id = run_id + VERIFY_SUFFIX

    def forward(event: Event) -> None:
        if event.kind not in (EventKind.RUN_START, EventKind.RUN_END):
            events.emit(event)

    run = Run.start(check.repo, document.spec.name, run_id=verify_id, events=EventStream(forward))
    run.annotate(part_of=run_id)  # not a run of the user's: `runs show latest` passes it by
    acceptance = Acceptance(verify_id, run.dir)
    with run.failing_closed(acceptance.to_json, lambda exc: _remove_worktree(check, protocol, run)):
        _verify(check, document, run, acceptance)
    removed = _remove_worktree(check, protocol, run)
    run.finish("finished" if removed else "failed", **acceptance.to_json())
    return acceptance


def _verify(check: PatchCheck, document: WorkflowDoc, run: Run, acceptance: Acceptance) -> None:
    steps = Steps(document, run)
    setup = steps.must("setup-verify-worktree", check.repo, RUN_ID=run.id, BASE=check.base)
    worktree = Path(required_output(setup, "WORKTREE"))
    reports = run.dir / REPORTS
    reports.mkdir(parents=True, exist_ok=True)
    at_base = set(files_at(check.repo, check.base))
    touched = patch_paths(check.repo, check.patch)
    acceptance.restored, acceptance.removed = to_restore(touched, at_base)
    refused = [why for path in touched if (why := path_refusal(path, at_base)) is not None]
    with _sandbox(check, worktree, run, reports) as suite:
        acceptance.base_results = _at_base(check, worktree, suite)
        if refused:
            acceptance.problem = "the patch touches the test infrastructure: " + refused[0]
            return
        if not _apply(check, steps, run, worktree, acceptance):
            return
        refused = _config_refusals(check, worktree, touched)
        if refused:
            acceptance.applied = False
            acceptance.problem = "the patch touches the test infrastructure: " + refused[0]
            return
        acceptance.results = suite.run()
    acceptance.grade = grade_tests(
        check.selection, base=acceptance.base_results, accepted=acceptance.results
    )
    if not acceptance.accepted:
        acceptance.problem = "acceptance tests did not pass: " + acceptance.grade.reason


@contextmanager
def _sandbox(check: PatchCheck, worktree: Path, run: Run, reports: Path) -> Iterator[Suite]:
    """The verification worktree's sandbox and suite; its report folder writable there."""
    opened = check.opener(
        check.sandbox, worktree=worktree, image=check.image, run_id=run.id, writable=(reports,)
    )
    with opened as sandbox:
        yield Suite(
            check.commands,
            sandbox,
            worktree,
            timeout_s=check.timeout_s,
            reports=reports,
            records=run.dir / TEST_RUNS,
        )


def _at_base(check: PatchCheck, worktree: Path, suite: Suite) -> list[CommandRun]:
    """The tests at the base, hidden ones included, then the worktree back as the base has it."""
    if check.hidden_files is not None:
        shutil.copytree(check.hidden_files, worktree, dirs_exist_ok=True, symlinks=True)
    try:
        return suite.run()
    finally:
        repo = git_repo(worktree)
        repo.git.reset("--hard", "--quiet", check.base)
        repo.git.clean("-fdxq")


def _apply(
    check: PatchCheck, steps: Steps, run: Run, worktree: Path, acceptance: Acceptance
) -> bool:
    apply_inputs = {"WORKTREE": str(worktree), "PATCH_FILE": str(check.patch), "BASE": check.base}
    if acceptance.restored:
        listed = write_paths_file(run.dir / "restore", worktree, acceptance.restored)
        apply_inputs["RESTORE_FILE"] = str(listed)
    if acceptance.removed:
        listed = write_paths_file(run.dir / "remove", worktree, acceptance.removed)
        apply_inputs["REMOVE_FILE"] = str(listed)
    if check.hidden_files is not None:
        apply_inputs["HIDDEN_TESTS"] = str(check.hidden_files.resolve())
    applied = steps.attempt("apply-patch", worktree, **apply_inputs)
    if not applied.ok:
        acceptance.problem = (
            f"the patch does not apply to {check.base[:12]}: "
            + (applied.stderr.strip().splitlines() or ["git apply failed"])[-1]
        )
        return False
    acceptance.applied = True
    return True


def _config_refusals(check: PatchCheck, worktree: Path, touched: list[str]) -> list[str]:
    """The runner configuration files the patch changed in their test sections."""
    repo = git_repo(worktree)
    refused: list[str] = []
    for path in (p for p in touched if is_config(p) and not is_test_path(p)):
        try:
            before: str | None = repo.git.show(f"{check.base}:{path}")
        except Exception:
            before = None
        target = worktree / path
        after = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
        why = config_refusal(path, before, after.rstrip("\n") if after is not None else None)
        if why is not None:
            refused.append(why)
    return refused


def _remove_worktree(check: PatchCheck, protocol: WorkflowDoc, run: Run) -> bool:
    return Steps(protocol, run).attempt("recover-run", check.repo, RUN_ID=run.id).ok


__all__ = [
    "VERIFY_SUFFIX",
    "Acceptance",
    "PatchCheck",
    "is_test_path",
    "restored_tests",
    "verify_patch",
]
