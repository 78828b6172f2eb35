"""Fix-engine, one checklist item: executor attempts, each judged by the verifier, then a commit
or a rollback. The document's "Fix one item" section, as methods of the workflow.

Each attempt: the executor works in the run's worktree; git, not its report, says what changed.
A changed path no attempt of the item reported, and a protected one even when reported (CI or git
configuration, the pack's documents, secret files: `kernel.scope_policy.not_granted`), is put back
(per file, `rollback-files`), warned about, recorded with the attempt in meta.yaml (`put_back`)
and named in the next attempt's failure context (`briefs.executor_brief`); a
missing or malformed result, a `failed` one, or a reported path outside the repository fails the
attempt before any verdict. The verifier's ReviewOutput is saved for `record-verdict`, which
decides passed or failed from it (a missing or invalid verdict is a failed attempt) and records
it in meta.yaml. A passed item is committed (exactly its changed files, `commit-paths`), then
recorded; an item whose third attempt failed is rolled back file by file.

Only the coordinator writes the engine's own files (`ENGINE_FILES` in the section's state
folder). The state lives under `.git`, which no role's file tools may write, but a shell without
a sandbox can: so each role call is bracketed, and a file it changed, added or removed there is
put back byte for byte and warned about before anything reads it (a forged `COMPLETE` on an
escalated section, a `meta.yaml` that says `completed`).

An executor that commits on its own has its commit undone by the protocol's steps (rollback to
the last checkpoint, then a commit recording the undo; history is never rewritten).

A run budget that refuses a call stops the item where it is: nothing is recorded for the
attempt, the item stays pending, and `--resume` continues it later.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.agents.backend import AgentOutcome, StopReason
from fixloop.masking import dumps_masked, mask_text
from fixloop.runs.git_session import GitSession
from fixloop.schemas.findings import ReviewOutput
from fixloop.schemas.results import ImplResult
from fixloop.steps.paths import check_path, path_problem
from fixloop.workflows.fix_engine.briefs import (
    commit_message,
    executor_brief,
    executor_key,
    undo_message,
    verifier_brief,
    verifier_key,
)
from fixloop.workflows.fix_engine.result import ChecklistStatus, FixEngineResult, outcome_of
from fixloop.workflows.fix_engine.section import FixEngineOptions, ItemRecord, Section, read_item
from fixloop.workflows.kernel.errors import SkipItem
from fixloop.workflows.kernel.scope_policy import not_granted
from fixloop.workflows.kernel.workflow import Workflow, implements

LAST_ITEM = "last-item"  # the run's tag at its last item commit: where an undo goes back to
ENGINE_FILES = ("mini-prd.md", "checklist.md", "meta.yaml", "error_report.yaml", "COMPLETE")


class ItemLoop(Workflow[FixEngineOptions, Section, FixEngineResult]):
    """The per-item part of fix-engine; `FixEngine` sets `section` and `git` before using it."""

    section: Section
    git: GitSession
    stopped = ""  # why no new role call may start (a spent run budget)
    put_back: list[str]  # what the current attempt changed outside the item, put back

    @implements("fix-item")
    def fix_item(self, item: ItemRecord, where: Mapping[str, int]) -> ItemRecord:
        """One item to done or failed; left as it is when the run budget is spent."""
        self.item(item.id, ChecklistStatus.RUNNING, title=item.text, data=where)
        while item.status == "pending" and not self.stopped:
            if self.section_attempts_spent(item):
                break
            item = self.attempt(item, item.next_attempt)
        if item.status == "passed":
            item = self.commit_item(item)
        elif item.status == "failed":
            self.roll_back_item(item)
        status, message = outcome_of(item, self.stopped)
        data = {**where, "commit": item.commit[:7], "attempts": len(item.attempts)}
        self.item(item.id, status, message, title=item.text, data=data)
        return item

    def section_attempts_spent(self, current: ItemRecord) -> bool:
        """With `--section-attempts N`: N attempts recorded in the section (meta.yaml keeps
        those of earlier runs) stop the run before another starts; one never started is not
        counted."""
        limit = self.options.section_attempts
        others = sum(len(i.attempts) for i in self.result.items if i.id != current.id)
        if limit is None or others + len(current.attempts) < limit:
            return False
        self.stopped = f"the section's attempt budget ({limit}) is spent"
        return True

    def attempt(self, item: ItemRecord, number: int) -> ItemRecord:
        folder = self.section.state / "attempts" / item.id / str(number)
        folder.mkdir(parents=True, exist_ok=True)
        impl, verdict = folder / "impl-result.json", folder / "verdict.json"
        for stale in (impl, verdict):  # an interrupted run's, for this same attempt number
            stale.unlink(missing_ok=True)
        reason, self.put_back = "", []
        try:
            changed = self.implement_item(item, number, impl)
            if changed is not None:
                self.verify_item(item, number, changed, verdict)
        except SkipItem as failed:  # this attempt cannot be judged: it failed, as the reason says
            reason = f"{failed.reason}: {failed.detail}" if failed.detail else failed.reason
        if self.stopped:
            return item  # nothing recorded: the attempt is made again when the run resumes
        recorded = self.record_verdict(item, number, impl, verdict, reason)
        last = recorded.last
        if last is not None:
            said = "passed" if last.passed else "not passed"
            verdict_word = last.verdict or "no verdict"
            self.note(
                f"{item.id} attempt {number}: {said} ({verdict_word}): {last.evidence}",
                item=item.id,
            )
        return recorded

    @implements("implement-item")
    def implement_item(
        self, item: ItemRecord, number: int, result_path: Path
    ) -> dict[str, str] | None:
        """The executor's attempt; the item's changed paths (path → git status), None when the
        run budget refused the call."""
        worktree = self.git.worktree
        inputs, task = executor_brief(self.section, item, number, worktree, result_path)
        with self.engine_files_kept(item, "executor"):
            outcome = self.call("executor", inputs, task, worktree, key=executor_key(item, number))
        if self._refused(outcome):
            return None
        if self.git.head_moved():
            self.undo_executor_commit(item)
            raise SkipItem("the executor committed on its own; its commit was undone")
        result = outcome.output if outcome.ok else None
        if not isinstance(result, ImplResult):
            raise SkipItem(f"executor result inconclusive ({outcome.reason})", outcome.detail)
        _write_json(result_path, result.model_dump(mode="json"))
        reported = [str(path) for path in result.filesModified]
        unsafe = [problem for path in reported if (problem := path_problem(worktree, path))]
        if unsafe:
            raise SkipItem("the executor reported a path outside the repository", "; ".join(unsafe))
        if result.status == "failed":
            raise SkipItem("the executor could not implement it", result.notes)
        files = {*item.files, *(check_path(worktree, path) for path in reported)}
        changed = gitrepo.changed_paths(worktree)
        stray = not_granted(changed, (), reported=files)
        if stray:
            self.git.rollback(stray)
            self.put_back = stray
            self.warn(
                f"{item.id}: put back {', '.join(stray)}: changed outside the item (not reported, "
                "or a protected file)",
                item=item.id,
            )
            changed = {path: code for path, code in changed.items() if path not in stray}
        return changed

    @implements("verify-item")
    def verify_item(
        self, item: ItemRecord, number: int, changed: Mapping[str, str], verdict_path: Path
    ) -> None:
        """The verifier's verdict on this one item, saved for `record-verdict` to judge."""
        worktree = self.git.worktree
        inputs, task = verifier_brief(self.section, item, changed, worktree)
        key = verifier_key(item, number)
        with self.engine_files_kept(item, "verifier"):
            outcome = self.call("verifier", inputs, task, worktree, writable=[], key=key)
        if self._refused(outcome):
            return
        if not (outcome.ok and isinstance(outcome.output, ReviewOutput)):
            raise SkipItem(f"verifier result inconclusive ({outcome.reason})", outcome.detail)
        _write_json(verdict_path, outcome.output.model_dump(mode="json"))

    @implements("record-verdict")
    def record_verdict(
        self, item: ItemRecord, number: int, impl: Path, verdict: Path, reason: str
    ) -> ItemRecord:
        recorded = self.step(
            "record-verdict",
            self.section.repo,
            STATE=str(self.section.state),
            ITEM=item.id,
            ATTEMPT=str(number),
            IMPL_RESULT=str(impl),
            VERDICT_FILE=str(verdict),
            REASON=mask_text(reason),
            PUT_BACK=json.dumps(self.put_back),
            RUN_ID=self.active_run.id,
        )
        return read_item(recorded)

    def commit_item(self, item: ItemRecord) -> ItemRecord:
        """Exactly the item's changed files, one commit; then meta.yaml records it."""
        changed = sorted(gitrepo.changed_paths(self.git.worktree))
        commit = self.commit_paths(item, changed) if changed else ""
        recorded = self.record_commit(item, commit)
        if commit:
            self.tag_last_item(commit)
        return recorded

    @implements("commit-paths")
    def commit_paths(self, item: ItemRecord, paths: list[str]) -> str:
        return self.git.commit(paths, commit_message(self.section, item, paths)) or ""

    @implements("record-commit")
    def record_commit(self, item: ItemRecord, commit: str) -> ItemRecord:
        recorded = self.step(
            "record-commit",
            self.section.repo,
            STATE=str(self.section.state),
            ITEM=item.id,
            COMMIT=commit,
        )
        return read_item(recorded)

    @implements("tag")
    def tag_last_item(self, commit: str) -> None:
        self.git.checkpoint_at(commit, LAST_ITEM)

    @implements("rollback-files")
    def roll_back_item(self, item: ItemRecord) -> None:
        """Every path the failed item changed, back to the last commit, file by file."""
        changed = sorted(gitrepo.changed_paths(self.git.worktree))
        if changed:
            self.git.rollback(changed)
            self.note(f"{item.id}: rolled back {', '.join(changed)}", item=item.id)

    def undo_executor_commit(self, item: ItemRecord) -> None:
        """`undo-agent-commit` of the git protocol: back to `last-item` (or `baseline`)."""
        changed = gitrepo.changed_paths(self.git.worktree)
        self.git.undo_agent_commit(changed, undo_message(self.section, item), LAST_ITEM)
        self.warn(f"{item.id}: the executor committed on its own; its commit was undone")

    @contextmanager
    def engine_files_kept(self, item: ItemRecord, role: str) -> Iterator[None]:
        """The engine's files after the `with` block exactly as before it."""
        state = self.section.state
        before = {name: _bytes_of(state / name) for name in ENGINE_FILES}
        try:
            yield
        finally:
            changed = [name for name, data in before.items() if _bytes_of(state / name) != data]
            for name in changed:
                target, data = state / name, before[name]
                target.unlink(missing_ok=True)  # a link the role put there goes, not its target
                if data is not None:
                    target.write_bytes(data)
            if changed:
                self.warn(
                    f"{item.id}: put back {', '.join(changed)}: the {role} changed the engine's "
                    "own files, which only fixloop writes",
                    item=item.id,
                )

    def _refused(self, outcome: AgentOutcome) -> bool:
        if outcome.reason is StopReason.RUN_BUDGET:
            self.stopped = outcome.detail or "the run budget is spent"
        return bool(self.stopped)


def _bytes_of(path: Path) -> bytes | None:
    """A file's bytes; None when there is no regular file (a link counts as a change)."""
    if path.is_symlink() or not path.is_file():
        return None if not path.is_symlink() else b"\0link"
    return path.read_bytes()


def _write_json(path: Path, data: Any) -> None:
    """A role's answer on disk (meta.yaml and the error report quote it): secrets masked."""
    path.write_text(dumps_masked(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


__all__ = ["ENGINE_FILES", "LAST_ITEM", "ItemLoop"]
