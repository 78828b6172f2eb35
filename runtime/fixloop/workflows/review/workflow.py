"""review: the reviewer role, headless, as `workflows/review.md` says; its output for the fixers.

    result = run_review(ReviewOptions(paths=("02",), repo=repo), context)

`Review.run` is the document's order of work: choose the files (checked before anything runs),
review them (the reviewer writes nothing; an answer that does not validate is inconclusive and
nothing is written), write the review in the format its fixer takes.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.schemas.findings import Finding, ReviewOutput
from fixloop.steps.paths import unsafe_reason
from fixloop.steps.result import required_count
from fixloop.workflows.kernel.result import Result
from fixloop.workflows.kernel.workflow import Context, Workflow, implements
from fixloop.workflows.review.output import as_findings_json, as_review_md, check_written
from fixloop.workflows.review.plan import ReviewOptions, ReviewPlan, choose_files, plan_review


class FoundStatus(StrEnum):
    """A finding the reviewer reported."""

    FOUND = "found"


REVIEWER_KEY = "reviewer/review/findings"


@dataclass
class ReviewResult(Result):
    output_path: str
    format: str
    files: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # no file: kept as notes in a REVIEW.md
    phase: str = ""

    def details(self) -> dict[str, Any]:
        return {
            "output_path": self.output_path,
            "format": self.format,
            "phase": self.phase,
            "files": self.files,
            "findings": len(self.findings),
            "notes": [str(n.id) for n in self.notes],
        }

    def work_items(self) -> list[Finding]:
        return self.findings

    def item_json(self, item: Finding) -> dict[str, Any]:
        return {**item.model_dump(mode="json"), "status": str(FoundStatus.FOUND)}

    def summary_lines(self) -> list[str]:
        lines = [
            f"review run {self.run_id}: {len(self.files)} file(s) reviewed, "
            f"{len(self.findings)} finding(s) -> {self.output_path} ({self.format})"
        ]
        for finding in self.findings:
            where = f"{finding.file}:{finding.line_start}" if finding.line_start else finding.file
            lines.append(f"  {finding.severity} {where or '(no file)'}: {finding.title}")
        if self.notes:
            lines.append(
                f"  {len(self.notes)} finding(s) name no file: kept as notes, not for review-fix"
            )
        return lines


class Review(Workflow[ReviewOptions, ReviewPlan, ReviewResult]):
    name = "review"
    needs_git = False  # it reads the files and writes one review file; no branch is touched

    def plan(self) -> ReviewPlan:
        plan = plan_review(self.options)  # the inputs, checked: nothing has run yet
        phase_files = self.phase_files(plan) if plan.phase and not plan.paths else []
        self.choose_files(plan, phase_files)
        return plan

    def new_result(self, plan: ReviewPlan) -> ReviewResult:
        result = ReviewResult(display_path(plan.output), self.options.format, phase=plan.phase)
        result.files = plan.files
        return result

    def first_calls(self, plan: ReviewPlan) -> list[str]:
        return [REVIEWER_KEY]

    def work(self, plan: ReviewPlan) -> None:
        output = self.review_files(plan)
        self.write_review(plan, output, self.result)

    # -- the document's sections, in its order of work ------------------------------------

    @implements("phase-files")
    def phase_files(self, plan: ReviewPlan) -> list[str]:
        # The step writes the list outside the repository, into a folder gone after it.
        with tempfile.TemporaryDirectory(prefix="fixloop-review-") as folder:
            listing = Path(folder) / "files"
            found = self.step(
                "phase-files", plan.repo, PADDED_PHASE=plan.phase, FILES_LIST=str(listing)
            )
            required_count(found, "COUNT")
            return [path for path in listing.read_bytes().decode().split("\0") if path]

    @implements("choose-files")
    def choose_files(self, plan: ReviewPlan, phase_files: list[str]) -> None:
        plan.files.extend(choose_files(plan, phase_files))
        self.note(f"reviewing {len(plan.files)} file(s): {', '.join(plan.files)}")

    @implements("review-files")
    def review_files(self, plan: ReviewPlan) -> ReviewOutput:
        inputs = {
            "mode": "findings",
            "files": plan.files,
            "worktree": str(plan.repo),
            "criteria": self.options.criteria,
            "depth": self.options.depth,
            "phase": plan.phase,
        }
        task = (
            "Review these files and return one ReviewOutput JSON object. Write no file: "
            + ", ".join(plan.files)
        )
        outcome = self.call("reviewer", inputs, task, plan.repo, writable=[], key=REVIEWER_KEY)
        if not outcome.ok or not isinstance(outcome.output, ReviewOutput):
            problem = f"the reviewer's answer is inconclusive ({outcome.reason}): {outcome.detail}"
            raise FixloopError(Diagnostic("review", 1, 1, "review", problem), exit_code=1)
        for finding in outcome.output.findings:
            # A fixer is pointed at the file a finding names: the model's path must pass the
            # repository's safe-path rule (not absolute, no `..` out, no link out) first.
            reason = unsafe_reason(plan.repo, finding.file) if finding.file else None
            if reason is not None:
                problem = f"the reviewer's finding {finding.id} names {finding.file!r}: {reason}"
                raise FixloopError(Diagnostic("review", 1, 1, "review", problem), exit_code=1)
        if outcome.denied:
            tried = ", ".join(d.path for d in outcome.denied)
            self.warn(f"the reviewer tried to write {tried}; refused (it writes nothing)")
        return outcome.output

    @implements("write-review")
    def write_review(self, plan: ReviewPlan, output: ReviewOutput, result: ReviewResult) -> None:
        if self.options.format == "review-md":
            text, result.notes = as_review_md(
                output, phase=plan.phase, files=plan.files, depth=self.options.depth
            )
        else:
            text = as_findings_json(output)
        check_written(text, plan.output, self.options.format)
        plan.output.write_text(text, encoding="utf-8")
        result.findings = list(output.findings)
        for finding in output.findings:
            self.item(
                str(finding.id),
                FoundStatus.FOUND,
                f"{finding.severity} {finding.file or '-'}",
                title=finding.title,
            )
        kept = f"; {len(result.notes)} name no file (notes)" if result.notes else ""
        self.note(f"{len(output.findings)} finding(s) written to {result.output_path}{kept}")


def run_review(options: ReviewOptions, context: Context) -> ReviewResult:
    return Review(context, options).run()


__all__ = ["Review", "ReviewResult", "run_review"]
