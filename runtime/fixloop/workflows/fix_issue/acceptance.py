"""Acceptance: a patch counts only when it applies to a clean checkout of its base and the
acceptance tests pass there, with the original test files put back.

The check is a run of its own (`<run-id>-verify`): its lock keeps other runs' recovery away
while it works, its trace holds its steps, and a kill leaves a worktree `fixloop recover` knows
(`worktrees/<run-id>-verify`). Its worktree is made by the document's `setup-verify-worktree`
(detached at the base commit), the patch applied and the test files restored by `apply-patch`,
and it is always removed by the protocol's `recover-run`.

`verify_patch` needs no fix-issue run: the efficacy harness scores another agent's patches with
it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from fixloop.documents.pack import WorkflowDoc
from fixloop.events import Event, EventKind, EventStream
from fixloop.gitrepo import files_at, patch_paths
from fixloop.runs.run import Run
from fixloop.sandboxes import open_sandbox
from fixloop.steps.caller import Steps
from fixloop.steps.paths import write_paths_file
from fixloop.steps.result import required_output
from fixloop.workflows.fix_issue.plan import SandboxOpener
from fixloop.workflows.fix_issue.suite import CommandRun, PresetTest, Suite, all_passed

VERIFY_SUFFIX = "-verify"
_TEST_FOLDERS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})
_TEST_NAMES = re.compile(r"^(test_.*|.*_test\.[^.]+|.*\.test\.[^.]+|.*\.spec\.[^.]+|conftest\.py)$")


def is_test_path(path: str) -> bool:
    """A test file by its place or its name (the restore rule the document states)."""
    pure = PurePosixPath(path)
    return bool(_TEST_FOLDERS & set(pure.parts[:-1])) or bool(_TEST_NAMES.match(pure.name))


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


@dataclass
class Acceptance:
    run_id: str
    applied: bool = False
    restored: list[str] = field(default_factory=list)
    results: list[CommandRun] = field(default_factory=list)
    problem: str = ""  # why the patch is not accepted, when it is not

    @property
    def accepted(self) -> bool:
        return self.applied and all_passed(self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "accepted": self.accepted,
            "applied": self.applied,
            "restored": self.restored,
            "tests": [result.to_json() for result in self.results],
            "problem": self.problem,
        }


def restored_tests(check: PatchCheck) -> list[str]:
    """Test files of the base commit the patch changes or deletes: they go back."""
    at_base = set(files_at(check.repo, check.base))
    return [p for p in patch_paths(check.repo, check.patch) if p in at_base and is_test_path(p)]


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
    acceptance = Acceptance(verify_id)
    try:
        _verify(check, document, run, acceptance)
    except BaseException as exc:
        _remove_worktree(check, protocol, run)
        run.finish("failed", error=str(exc), **acceptance.to_json())
        raise
    removed = _remove_worktree(check, protocol, run)
    run.finish("finished" if removed else "failed", **acceptance.to_json())
    return acceptance


def _verify(check: PatchCheck, document: WorkflowDoc, run: Run, acceptance: Acceptance) -> None:
    steps = Steps(document, run)
    setup = steps.must("setup-verify-worktree", check.repo, RUN_ID=run.id, BASE=check.base)
    worktree = Path(required_output(setup, "WORKTREE"))
    acceptance.restored = restored_tests(check)
    apply_inputs = {"WORKTREE": str(worktree), "PATCH_FILE": str(check.patch), "BASE": check.base}
    if acceptance.restored:
        listed = write_paths_file(run.dir / "restore", worktree, acceptance.restored)
        apply_inputs["RESTORE_FILE"] = str(listed)
    if check.hidden_files is not None:
        apply_inputs["HIDDEN_TESTS"] = str(check.hidden_files.resolve())
    applied = steps.attempt("apply-patch", worktree, **apply_inputs)
    if not applied.ok:
        acceptance.problem = (
            f"the patch does not apply to {check.base[:12]}: "
            + (applied.stderr.strip().splitlines() or ["git apply failed"])[-1]
        )
        return
    acceptance.applied = True
    with check.opener(
        check.sandbox, worktree=worktree, image=check.image, run_id=run.id
    ) as sandbox:
        suite = Suite(check.commands, sandbox, worktree, timeout_s=check.timeout_s)
        acceptance.results = suite.run()
    if not acceptance.accepted:
        failed = [r.command for r in acceptance.results if not r.passed]
        acceptance.problem = "acceptance tests did not pass: " + ", ".join(failed)


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
