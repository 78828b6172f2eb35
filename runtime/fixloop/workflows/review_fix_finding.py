"""Review-fix, one finding: dispatch the fixer, check its claim, verify, commit or roll back.

The worktree is the truth, not the fixer's report: `inspect-changes` lists what really changed,
and a fix is committed only when that equals what the fixer reported and stays inside the finding's
files. Every failure (an inconclusive agent, a mismatch, a tier-2 error, a failed commit) rolls back
exactly the changed files with the git protocol's `rollback-files` step and records why the
finding was skipped. Earlier findings' commits are never touched.

A write the backend refused skips the finding too, naming the file, whatever the fixer reported
after it: the fix it wanted was not the one it made, and seed 004 has no scope expansion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.agents.backend import AgentOutcome
from fixloop.reviews.fix_report import HUMAN_VERIFICATION
from fixloop.reviews.model import ReviewFinding
from fixloop.reviews.yamltext import one_line
from fixloop.schemas.results import FixReport, ScopeExpansionRequest
from fixloop.workflows.denied_writes import sort_denials
from fixloop.workflows.review_fix_session import Session

ROLLED_BACK = "skipped: fix caused errors, rolled back"
# Words that mark a finding about behaviour rather than form: syntax checks cannot vouch for it.
_LOGIC_WORDS = re.compile(
    r"\b(logic|logical|condition|off[- ]by[- ]one|algorithm|state handling|wrong result|"
    r"incorrect result|race)\b",
    re.IGNORECASE,
)
_MESSAGE_TITLE_LIMIT = 72


@dataclass(frozen=True)
class FindingOutcome:
    finding: ReviewFinding
    iteration: int
    status: str  # "fixed", HUMAN_VERIFICATION, or "skipped: <reason>"
    files: tuple[str, ...] = ()
    commit: str = ""
    summary: str = ""
    detail: str = ""  # errors, concerns: why, in the user's words

    @property
    def fixed(self) -> bool:
        return self.status.startswith("fixed")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.finding.id,
            "severity": str(self.finding.severity),
            "title": self.finding.title,
            "iteration": self.iteration,
            "status": self.status,
            "files": list(self.files),
            "commit": self.commit,
            "summary": self.summary,
            "detail": self.detail,
        }


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


def _claim_mismatch(
    report: FixReport, changed: list[str], files: list[str]
) -> tuple[str, str] | None:
    """Why the worktree does not bear out the fixer's report (reason, detail), or None."""
    outside = sorted(set(changed) - set(files))
    if outside:
        reason = "skipped: fixer edited files outside the finding, rolled back"
        return reason, "changed " + ", ".join(outside)
    if not changed:
        return "skipped: fixer reported a fix but changed nothing", ""
    claimed = {_normalise(path) for path in report.files_changed}
    if claimed != set(changed):
        reason = "skipped: fixer's files_changed does not match its edits, rolled back"
        return reason, f"reported {sorted(claimed)}, changed {sorted(changed)}"
    return None


def _scope_refusal(
    worktree: Path, outcome: AgentOutcome, result: object, files: list[str]
) -> tuple[str, str] | None:
    """Why the fixer's reach beyond its files skips the finding (reason, detail), or None."""
    denials = sort_denials(worktree, outcome.denied, files)
    if isinstance(result, FixReport):
        said = f"it then reported: {result.summary}"
    elif isinstance(result, ScopeExpansionRequest):
        said = f"it then asked for {', '.join(result.additional_files)}"
    else:
        said = f"its call ended {outcome.status} ({outcome.reason}): {outcome.detail}"
    if denials.forbidden:
        where = "; ".join(denials.forbidden)
        return one_line(f"skipped: fixer tried to write {where}"), f"refused; {said}"
    if isinstance(result, ScopeExpansionRequest):
        wanted = ", ".join(result.additional_files)
        return "skipped: fix needs files outside the finding", (
            f"asked for {wanted}: {result.justification}"
        )
    if denials.outside_scope:
        tried = ", ".join(denials.outside_scope)
        reason = f"skipped: fixer tried to edit {tried}, outside the finding; rolled back"
        return one_line(reason), f"the write was refused; {said}"
    return None


class FindingFixer:
    """Fixes findings one at a time inside the session's worktree."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def assigned_files(self, finding: ReviewFinding) -> list[str]:
        """The File line's path, plus every other named file that exists in the worktree."""
        worktree = self.session.worktree
        return [
            path for path in finding.files if path == finding.file or (worktree / path).is_file()
        ]

    def fix(self, finding: ReviewFinding, iteration: int) -> FindingOutcome:
        session = self.session
        files = self.assigned_files(finding)
        outcome = session.dispatcher.call(
            "fixer",
            {
                "finding": _finding_input(finding),
                "files": files,
                "worktree": str(session.worktree),
                "failure_context": finding.issue,
            },
            _task(finding, files),
            session.worktree,
            writable=files,
            key=fixer_key(finding.id, iteration),
        )
        changed = session.changed_paths()
        if session.head_moved:
            message = (
                f"revert({session.padded_phase}): undo the commit the fixer made for {finding.id}"
            )
            error = session.undo_foreign_commit(changed, message)
            detail = f"undoing it failed: {error}" if error else "its commit was undone"
            return FindingOutcome(
                finding, iteration, "skipped: fixer committed on its own", detail=detail
            )

        def skip(reason: str, detail: str = "", summary: str = "") -> FindingOutcome:
            rollback_error = session.rollback(changed)
            if rollback_error:
                detail = f"{detail}; rollback failed: {rollback_error}".lstrip("; ")
            return FindingOutcome(finding, iteration, reason, summary=summary, detail=detail)

        result = getattr(outcome.output, "root", outcome.output) if outcome.ok else None
        refusal = _scope_refusal(session.worktree, outcome, result, files)
        if refusal is not None:
            return skip(*refusal)
        if result is None:
            return skip(f"skipped: fixer result inconclusive ({outcome.reason})", outcome.detail)
        if not isinstance(result, FixReport):
            return skip("skipped: fixer result inconclusive (unexpected output)")
        summary = result.summary.strip()
        concerns = "; ".join(result.concerns or [])
        if summary.startswith("skipped"):
            reason = summary if summary.startswith("skipped:") else f"skipped: {summary}"
            return skip(one_line(reason), concerns, summary)
        mismatch = _claim_mismatch(result, changed, files)
        if mismatch is not None:
            return skip(mismatch[0], mismatch[1] or concerns, summary)
        unreadable = self._tier1(changed)
        if unreadable:
            return skip(ROLLED_BACK, unreadable, summary)
        syntax = session.step("syntax-check", PATHS_FILE=str(session.paths_file(changed)))
        if not syntax.ok:
            return skip(ROLLED_BACK, f"syntax check did not run: {syntax.describe_failure()}")
        if syntax.outputs.get("RESULT") != "pass":
            return skip(ROLLED_BACK, syntax.outputs.get("NEW_ERRORS", "").strip(), summary)
        commit = session.commit(changed, commit_message(session.padded_phase, finding))
        if commit.error:
            return skip("skipped: commit failed", commit.error, summary)
        needs_human = summary.startswith(HUMAN_VERIFICATION) or is_logic_finding(finding)
        pre_existing = syntax.outputs.get("PREEXISTING", "").split()
        notes = [concerns] if concerns else []
        if pre_existing:
            notes.append("syntax errors already present before the fix: " + ", ".join(pre_existing))
        return FindingOutcome(
            finding,
            iteration,
            HUMAN_VERIFICATION if needs_human else "fixed",
            tuple(changed),
            commit.short,
            summary,
            "; ".join(notes),
        )

    def _tier1(self, changed: list[str]) -> str:
        """Tier 1: every changed file that still exists is a regular file of readable text."""
        for path in changed:
            target = self.session.worktree / path
            if not target.exists() and not target.is_symlink():
                continue  # deleted on purpose
            if target.is_symlink() or not target.is_file():
                return f"{path}: not a regular file after the fix"
            try:
                target.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                return f"{path}: cannot be re-read as text after the fix ({exc})"
        return ""
