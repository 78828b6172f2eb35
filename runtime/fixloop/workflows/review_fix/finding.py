"""Review-fix, one finding: dispatch the fixer, check its claim, verify, commit or roll back.

The worktree is the truth, not the fixer's report: git lists what really changed,
and a fix is committed only when that equals what the fixer reported and stays inside the finding's
files. Every failure (an inconclusive agent, a mismatch, a tier-2 error, a failed commit) rolls back
exactly the changed files with the git protocol's `rollback-files` step and records why the
finding was skipped (each check raises `SkipItem`; `fix` catches it once). Earlier findings'
commits are never touched.

A write the backend refused skips the finding too, naming the file, whatever the fixer reported
after it: the fix it wanted was not the one it made.

Scope is the finding's declared files (its File and Files lines). A fixer that needs another file
asks first (a scope expansion). The run's declared policy answers it (`--on-scope-expansion`:
`ask` a person at the terminal, deferred when there is none; `approve`, `reject`, `defer`), never
the review's text; protected files (git metadata, CI configuration, the pack's documents, secrets)
need a person's yes. Approved, the fixer is dispatched once more with the wider scope; anything
else skips the finding, saying how to allow it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.agents.backend import AgentOutcome
from fixloop.agents.project_skills import project_skills
from fixloop.reviews.fix_report import HUMAN_VERIFICATION
from fixloop.reviews.model import ReviewFinding
from fixloop.reviews.yamltext import one_line
from fixloop.runs.show import save_diff
from fixloop.schemas.results import FixReport, ScopeExpansionRequest
from fixloop.steps.runner import step_inputs
from fixloop.workflows.kernel.denied_writes import sort_denials
from fixloop.workflows.kernel.errors import SkipItem
from fixloop.workflows.kernel.scope_policy import APPROVE, ScopePolicy, answer_expansion
from fixloop.workflows.kernel.workflow import AnyWorkflow
from fixloop.workflows.review_fix.outcome import FindingOutcome, FindingStatus
from fixloop.workflows.review_fix.worktree import GitChangeFailed, Worktree

ROLLED_BACK = "fix caused errors, rolled back"
# Words that mark a finding about behaviour rather than form: syntax checks cannot vouch for it.
_LOGIC_WORDS = re.compile(
    r"\b(logic|logical|condition|off[- ]by[- ]one|algorithm|state handling|wrong result|"
    r"incorrect result|race)\b",
    re.IGNORECASE,
)
_MESSAGE_TITLE_LIMIT = 72


def fixer_key(finding_id: str, iteration: int) -> str:
    return f"fixer/{finding_id}/iteration-{iteration}"


def commit_message(padded_phase: str, finding: ReviewFinding) -> str:
    title = one_line(finding.title)
    if len(title) > _MESSAGE_TITLE_LIMIT:
        title = title[: _MESSAGE_TITLE_LIMIT - 1].rstrip() + "…"
    return f"fix({padded_phase}): {finding.id} {title}"


def is_logic_finding(finding: ReviewFinding) -> bool:
    return bool(_LOGIC_WORDS.search(f"{finding.title}\n{finding.issue}"))


def _finding_input(finding: ReviewFinding) -> dict[str, Any]:
    return {
        "id": finding.id,
        "severity": str(finding.severity),
        "title": finding.title,
        "file": finding.file,
        "line": finding.line,
        "files": list(finding.files),
        "mentioned": list(finding.mentioned),
        "issue": finding.issue,
        "fix": finding.fix,
    }


def _task(finding: ReviewFinding, files: list[str]) -> str:
    return (
        f"Fix review finding {finding.id} in this worktree. The finding, its files and the rules "
        "are in your instructions. Edit only these files: "
        + ", ".join(files)
        + ". Do not stage or commit. Answer with one FixerResult JSON object."
    )


def _normalise(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _check_claim(report: FixReport, changed: list[str], files: list[str]) -> None:
    """Skip unless the worktree bears out the fixer's report."""
    outside = sorted(set(changed) - set(files))
    if outside:
        raise SkipItem(
            "fixer edited files outside the finding, rolled back",
            "changed " + ", ".join(outside),
            report.summary,
        )
    if not changed:
        raise SkipItem("fixer reported a fix but changed nothing", summary=report.summary)
    claimed = {_normalise(path) for path in report.files_changed}
    if claimed != set(changed):
        raise SkipItem(
            "fixer's files_changed does not match its edits, rolled back",
            f"reported {sorted(claimed)}, changed {sorted(changed)}",
            report.summary,
        )


def _check_reach(worktree: Path, outcome: AgentOutcome, result: object, files: list[str]) -> None:
    """Skip when the fixer reached beyond its files (a refused write, or a request for more)."""
    denials = sort_denials(worktree, outcome.denied, files)
    if isinstance(result, FixReport):
        said = f"it then reported: {result.summary}"
    elif isinstance(result, ScopeExpansionRequest):
        said = f"it then asked for {', '.join(result.additional_files)}"
    else:
        said = f"its call ended {outcome.status} ({outcome.reason}): {outcome.detail}"
    if denials.forbidden:
        where = "; ".join(denials.forbidden)
        raise SkipItem(one_line(f"fixer tried to write {where}"), f"refused; {said}")
    if isinstance(result, ScopeExpansionRequest):
        wanted = ", ".join(result.additional_files)
        raise SkipItem(
            "fix needs files outside the finding",
            f"asked for {wanted}: {result.justification} (list every file a fix needs on the "
            "finding's File or Files line, or approve the expansion: --on-scope-expansion)",
        )
    if denials.outside_scope:
        tried = ", ".join(denials.outside_scope)
        reason = f"fixer tried to edit {tried}, outside the finding; rolled back"
        raise SkipItem(one_line(reason), f"the write was refused; {said}")


class FindingFixer:
    """Fixes findings one at a time inside the run's worktree."""

    def __init__(
        self,
        flow: AnyWorkflow,
        worktree: Worktree,
        padded_phase: str,
        inputs: dict[str, str],
        on_scope_expansion: ScopePolicy = "ask",
    ) -> None:
        self.flow = flow
        self.on_scope_expansion = on_scope_expansion
        self.worktree = worktree
        self.padded_phase = padded_phase
        self.inputs = inputs  # the review-fix inputs every step of the document receives

    def assigned_files(self, finding: ReviewFinding) -> list[str]:
        """The finding's declared files: its File line, then its Files line."""
        return list(finding.files)

    def dispatch(
        self, finding: ReviewFinding, files: list[str], key: str, note: str = ""
    ) -> AgentOutcome:
        return self.flow.call(
            "fixer",
            {
                "finding": _finding_input(finding),
                "files": files,
                "worktree": str(self.worktree.path),
                "failure_context": f"{finding.issue}\n\n{note}".strip(),
                "skills": project_skills(self.worktree.path),
            },
            _task(finding, files),
            self.worktree.path,
            writable=files,
            key=key,
        )

    def fix(self, finding: ReviewFinding, iteration: int) -> FindingOutcome:
        files = self.assigned_files(finding)
        key = fixer_key(finding.id, iteration)
        outcome = self.dispatch(finding, files, key)
        asked = getattr(outcome.output, "root", None) if outcome.ok else None
        if isinstance(asked, ScopeExpansionRequest):
            self.flow.note(
                f"{finding.id}: the fixer asks to also edit {', '.join(asked.additional_files)}: "
                f"{asked.justification}",
                item=finding.id,
                data={"scope_request": list(asked.additional_files)},
            )
        wanted = self.granted_expansion(finding, outcome, files)
        if wanted and self._clean_slate():
            self.flow.note(
                f"{finding.id}: scope expansion to {', '.join(wanted)} approved; asking the "
                "fixer again with them in scope",
                item=finding.id,
            )
            files = [*files, *wanted]
            note = f"Scope expanded: you may now also edit {', '.join(wanted)}."
            outcome = self.dispatch(finding, files, f"{key}/expanded", note)
        changed = self.worktree.changed_paths()
        if self.worktree.head_moved:
            message = (
                f"revert({self.padded_phase}): undo the commit the fixer made for {finding.id}"
            )
            try:
                self.worktree.undo_foreign_commit(changed, message)
                detail = "its commit was undone"
            except GitChangeFailed as exc:
                detail = f"undoing it failed: {exc}"
            reason = "fixer committed on its own"
            return FindingOutcome(finding, iteration, FindingStatus.SKIPPED, reason, detail=detail)
        try:
            return self._verify_and_commit(finding, iteration, outcome, files, changed)
        except SkipItem as skip:
            detail = skip.detail
            try:
                self.worktree.rollback(changed)
            except GitChangeFailed as exc:
                detail = f"{detail}; rollback failed: {exc}".lstrip("; ")
            return FindingOutcome(
                finding,
                iteration,
                FindingStatus.SKIPPED,
                skip.reason,
                summary=skip.summary,
                detail=detail,
            )

    def _clean_slate(self) -> bool:
        """Undo whatever a call that asked for more files changed anyway; False if it cannot be."""
        try:
            self.worktree.rollback(self.worktree.changed_paths())
        except GitChangeFailed:
            return False
        return not self.worktree.head_moved

    def granted_expansion(
        self, finding: ReviewFinding, outcome: AgentOutcome, files: list[str]
    ) -> list[str]:
        """The files a scope-expansion request asks for, when the run's policy (or a person
        asked) approves them; else nothing, and the finding is skipped as asking too much. What
        the review's Fix text says grants nothing: it is text a reviewer (or an injected
        prompt) wrote."""
        result = getattr(outcome.output, "root", None) if outcome.ok else None
        if not isinstance(result, ScopeExpansionRequest) or outcome.denied:
            return []
        wanted = list(
            dict.fromkeys(
                clean for raw in result.additional_files if (clean := _normalise(raw)) not in files
            )
        )
        if not wanted:
            return []
        asking = (
            f"Finding {finding.id}: the fixer asks to also edit {', '.join(wanted)}: "
            f"{result.justification}"
        )
        notes: list[str] = []
        chosen = answer_expansion(
            self.on_scope_expansion,
            self.flow.context.prompter,
            wanted,
            asking,
            repo=self.worktree.path,
            notes=notes,
        )
        for note in notes:
            self.flow.warn(f"{finding.id}: {note}", item=finding.id)
        return wanted if chosen == APPROVE else []

    def _verify_and_commit(
        self,
        finding: ReviewFinding,
        iteration: int,
        outcome: AgentOutcome,
        files: list[str],
        changed: list[str],
    ) -> FindingOutcome:
        result = getattr(outcome.output, "root", outcome.output) if outcome.ok else None
        _check_reach(self.worktree.path, outcome, result, files)
        if result is None:
            raise SkipItem(f"fixer result inconclusive ({outcome.reason})", outcome.detail)
        if not isinstance(result, FixReport):
            raise SkipItem("fixer result inconclusive (unexpected output)")
        summary = result.summary.strip()
        concerns = "; ".join(result.concerns or [])
        if summary.startswith("skipped"):
            reason = summary.removeprefix("skipped").removeprefix(":").strip() or "fixer skipped it"
            raise SkipItem(one_line(reason), concerns, summary)
        _check_claim(result, changed, files)
        unreadable = self._tier1(changed)
        if unreadable:
            raise SkipItem(ROLLED_BACK, unreadable, summary)
        syntax = self.flow.try_step(
            "syntax-check",
            self.worktree.path,
            **step_inputs(self.flow.doc, "syntax-check", self.inputs),
            PATHS_FILE=str(self.worktree.git.paths_file(changed)),
        )
        if not syntax.ok:
            raise SkipItem(ROLLED_BACK, f"syntax check did not run: {syntax.describe_failure()}")
        if syntax.outputs.get("RESULT") != "pass":
            raise SkipItem(ROLLED_BACK, syntax.outputs.get("NEW_ERRORS", "").strip(), summary)
        try:
            commit = self.worktree.commit(changed, commit_message(self.padded_phase, finding))
        except GitChangeFailed as exc:
            raise SkipItem("commit failed", str(exc), summary) from None
        diff = save_diff(
            self.flow.active_run.dir,
            finding.id,
            f"iteration-{iteration}",
            gitrepo.commit_diff(self.worktree.path, commit),
        )
        needs_human = summary.startswith(HUMAN_VERIFICATION) or is_logic_finding(finding)
        pre_existing = syntax.outputs.get("PREEXISTING", "").split()
        notes = [concerns] if concerns else []
        if pre_existing:
            notes.append("syntax errors already present before the fix: " + ", ".join(pre_existing))
        return FindingOutcome(
            finding,
            iteration,
            FindingStatus.NEEDS_HUMAN if needs_human else FindingStatus.FIXED,
            files=tuple(changed),
            commit=commit[:7],
            summary=summary,
            detail="; ".join(notes),
            diff=diff,
        )

    def _tier1(self, changed: list[str]) -> str:
        """Tier 1: every changed file that still exists is a regular file of readable text."""
        for path in changed:
            target = self.worktree.path / path
            if not target.exists() and not target.is_symlink():
                continue  # deleted on purpose
            if target.is_symlink() or not target.is_file():
                return f"{path}: not a regular file after the fix"
            try:
                target.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                return f"{path}: cannot be re-read as text after the fix ({exc})"
        return ""
