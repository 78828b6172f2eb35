"""`bench efficacy validate`: proof that each task of a corpus is a task at all.

A task is valid when its reference patch (`tasks/<id>/gold.patch`, or `GOLD/<id>.patch`) goes
through the very acceptance a fix goes through (clean checkout of the base, the base's test
infrastructure, the hidden tests, per-test grading) and:

- every fail-to-pass test fails at the base (hidden tests in): else nothing shows the issue;
- every pass-to-pass test passes at the base: else it is no pass-to-pass test;
- every selected test passes with the reference patch: else the task cannot be solved as graded.

One line per task, then a summary; invalid when any of it does not hold, or when the task has
no reference patch or could not be built (its reason on the line).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.pack import Pack
from fixloop.extras.efficacy.corpus import Task, load_corpus
from fixloop.extras.efficacy.harness import BenchOptions, accept_patch
from fixloop.extras.efficacy.materialize import materialize
from fixloop.sandboxes import choose_sandbox
from fixloop.workflows.fix_issue.acceptance import Acceptance

SHOWN = 3


@dataclass(frozen=True)
class TaskValidity:
    id: str
    valid: bool
    reason: str
    fail_to_pass: int = 0
    pass_to_pass: int = 0

    def line(self) -> str:
        return f"{'valid  ' if self.valid else 'INVALID'} {self.id}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "valid": self.valid,
            "reason": self.reason,
            "fail_to_pass": self.fail_to_pass,
            "pass_to_pass": self.pass_to_pass,
        }


def _some(ids: list[str]) -> str:
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(ids[:SHOWN]) + more


def judge(task_id: str, acceptance: Acceptance) -> TaskValidity:
    """What the reference patch's acceptance says of the task."""
    grade = acceptance.grade
    if grade is None:
        return TaskValidity(task_id, False, f"the reference patch: {acceptance.problem}")
    f2p = [row for row in grade.rows if row.role == "fail_to_pass"]
    p2p = [row for row in grade.rows if row.role == "pass_to_pass"]
    problems: list[str] = []
    if not f2p:
        problems.append("no fail-to-pass test")
    if passing := [row.id for row in f2p if row.base.passed]:
        problems.append(f"fail-to-pass passes at the base: {_some(passing)}")
    if failing := [f"{row.id} {row.base}" for row in p2p if not row.base.passed]:
        problems.append(f"pass-to-pass does not pass at the base: {_some(failing)}")
    if not grade.ok:
        problems.append(f"the reference patch is rejected: {grade.reason}")
    if problems:
        return TaskValidity(task_id, False, "; ".join(problems), len(f2p), len(p2p))
    reason = (
        f"fail-to-pass {len(f2p)} fail at the base; with the reference patch "
        f"fail-to-pass {len(f2p)}/{len(f2p)} and pass-to-pass {len(p2p)}/{len(p2p)} pass"
    )
    return TaskValidity(task_id, True, reason, len(f2p), len(p2p))


def _reference(task: Task, gold: Path | None) -> Path | None:
    if gold is not None:
        path = gold / f"{task.id}.patch"
        return path if path.is_file() else None
    return task.gold


def validate_task(options: BenchOptions, pack: Pack, task: Task, gold: Path | None) -> TaskValidity:
    reference = _reference(task, gold)
    if reference is None or not reference.read_bytes().strip():
        where = f"{gold}/{task.id}.patch" if gold is not None else "gold.patch"
        return TaskValidity(task.id, False, f"no reference patch ({where})")
    with tempfile.TemporaryDirectory(prefix=f"fixloop-validate-{task.id}-") as folder:
        repo = Path(folder) / "repo"
        try:
            base = materialize(task, repo)
            acceptance = accept_patch(options, pack, task, repo, base=base, patch=reference)
        except FixloopError as exc:
            return TaskValidity(task.id, False, str(exc).splitlines()[0])
    return judge(task.id, acceptance)


def validate_corpus(
    options: BenchOptions, pack: Pack, gold: Path | None = None
) -> list[TaskValidity]:
    """Every task (or those `options.tasks` names) proved with its reference patch."""
    corpus = load_corpus(options.corpus)
    choose_sandbox(options.sandbox, image=options.image)  # bad sandbox input: exit 2, no task
    if gold is not None and not gold.is_dir():
        raise FixloopError(Diagnostic(str(gold), 1, 1, "usage", "no such folder"))
    tasks = corpus.select(list(options.tasks)) if options.tasks else corpus.tasks
    return [validate_task(options, pack, task, gold) for task in tasks]


def summary(found: list[TaskValidity]) -> str:
    valid = sum(1 for task in found if task.valid)
    return f"{valid} of {len(found)} tasks valid" + (
        "" if valid == len(found) else f"; invalid: {_some([t.id for t in found if not t.valid])}"
    )


__all__ = ["TaskValidity", "judge", "summary", "validate_corpus", "validate_task"]
