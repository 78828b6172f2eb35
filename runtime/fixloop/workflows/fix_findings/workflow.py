"""fix-findings: the bounded fix-verify loop over confirmed P0/P1 findings (`fix-findings.md`).

Per finding, one at a time: an optional verifier pre-gate, then at most two rounds of
fix → (Round 1 only: pre-staged hunk check) → stage → verify → decide. Fixes are staged with
`git add -- <files_changed>` and never committed. The git commands are the document's steps
(run through `StagingSteps`); the verdict → bucket table is data in `verdicts.py`; this module
sequences them and saves every step in the run's state, so a killed run resumes where it stopped
(`resolve` dispatches on the state, so it is the same code for a new run and a resumed one).

Decisions the document leaves to the implementation, made fail-closed:
- An inconclusive pre-gate consumes one of the two attempts: Round 1 is then the last round.
- A fixer call that is inconclusive, reports unsafe paths or files outside its scope, or asks for
  more scope twice, is a failed attempt with nothing staged; the files in its scope are restored
  to their content before the call (per file), so a half-made edit is not left behind.
- A fixer refused a write to another repository file has asked for scope, whatever it reports
  (`scope_expansion`); one refused outside the repository or in `.git` has failed the attempt.
  So has one that changed another file by other means (`tree_guard` finds and puts it back);
  a change that cannot be put back exactly fails the attempt.
- Headless with `ask` (no terminal): scope expansion is deferred and pre-staged hunks are left
  alone (the finding is escalated with its fix unstaged): neither touches the user's work.
- The user's uncommitted work is never part of a fix: a fix is staged whole, so a finding whose
  files hold unstaged edits or an untracked file of the user's stops before its fixer runs
  (`user-work-check`), escalated with nothing staged, in one line naming the files.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fixloop import gitrepo
from fixloop.agents.backend import AgentOutcome, BackendFailed
from fixloop.diagnostics import FixloopError, display_path
from fixloop.runs.exclusive import exclusive_run
from fixloop.runs.preflight import check_index_lock
from fixloop.runs.show import save_diff
from fixloop.schemas.results import FixerResult, FixReport, ScopeExpansionRequest
from fixloop.steps.paths import check_path
from fixloop.workflows.fix_findings import escalation, scope_expansion, snapshots
from fixloop.workflows.fix_findings.briefs import (
    REAL,
    RESOLVED,
    fix_brief,
    pre_gate_artifact,
    verifier_brief,
)
from fixloop.workflows.fix_findings.checks import fix_failure
from fixloop.workflows.fix_findings.dry_run import plan_only
from fixloop.workflows.fix_findings.fixer_call import (
    before_round,
    call_fixer,
    restore_round_files,
    take_back_unverified,
    undo_interrupted_call,
)
from fixloop.workflows.fix_findings.intake import (
    finished_earlier,
    first_calls,
    load_state,
    needs_pre_gate,
)
from fixloop.workflows.fix_findings.options import FixFindingsOptions, PrestagedPolicy
from fixloop.workflows.fix_findings.prestaged import settle_prestaged
from fixloop.workflows.fix_findings.result import FixFindingsResult
from fixloop.workflows.fix_findings.staging import StagingSteps
from fixloop.workflows.fix_findings.state import (
    FindingRecord,
    FindingStatus,
    FixFindingsState,
    Phase,
    RoundRecord,
)
from fixloop.workflows.fix_findings.tree_guard import TreeGuard
from fixloop.workflows.fix_findings.verdicts import (
    Judgement,
    Next,
    decide,
    decide_pre_gate,
    judge,
)
from fixloop.workflows.kernel.errors import Escalate, StepFailed
from fixloop.workflows.kernel.scope_policy import APPROVE, DEFER
from fixloop.workflows.kernel.workflow import Context, Workflow, implements

MAX_ATTEMPTS = 2


class FixFindings(Workflow[FixFindingsOptions, FixFindingsState, FixFindingsResult]):
    name = "fix-findings"
    state: FixFindingsState

    def __init__(self, context: Context, options: FixFindingsOptions) -> None:
        super().__init__(context, options)
        self.brief = fix_brief(self.doc)

    # -- the parts of the kernel's run -----------------------------------------------------

    def plan(self) -> FixFindingsState:
        state = self.intake()
        self.repo = Path(state.repo)
        check_index_lock(self.repo)
        return state

    def new_result(self, state: FixFindingsState) -> FixFindingsResult:
        return FixFindingsResult(state)

    def repository(self, state: FixFindingsState) -> Path:
        return Path(state.repo)

    def nothing_to_do(self, state: FixFindingsState) -> str | None:
        return finished_earlier(state)

    def first_calls(self, state: FixFindingsState) -> list[str]:
        return [] if state.resumed_from else first_calls(state)

    def dry_run(self, state: FixFindingsState) -> None:
        self.result.planned = plan_only(self, state)

    @contextmanager
    def one_at_a_time(self, state: FixFindingsState) -> Iterator[Callable[[str], None]]:
        """One fix-findings run per repository: they would stage into the same index."""
        state_dir = gitrepo.state_dir_of(self.repo)
        where = display_path(self.repo)
        with exclusive_run(state_dir, self.name, where=where, wait_s=self.options.wait_s) as claim:
            yield claim.record

    def new_state(self, state: FixFindingsState) -> FixFindingsState:
        return state  # the intake's state is the run's: a resumed run's goes on where it stopped

    def work(self, state: FixFindingsState) -> None:
        """Every undecided finding to its bucket, one at a time, then the report."""
        run, repo = self.active_run, self.repo
        self.result.run_dir = run.dir
        findings = shlex.quote(str(Path(self.options.findings).resolve()))
        run.annotate(
            resume_with=f"fixloop fix-findings {findings} --repo {shlex.quote(str(repo))} "
            f"--resume {run.id}"
        )
        self.steps = StagingSteps(self.doc, repo, run, run.dir / "scratch")
        self.guard = TreeGuard(self.steps, repo, run.dir / "kept")
        record: FindingRecord | None = None
        try:
            total = len(state.records)
            for index, record in enumerate(state.records, start=1):
                if record.bucket is None:
                    finding, where = record.finding, {"index": index, "total": total}
                    self.item(
                        str(finding.id), FindingStatus.RUNNING, title=finding.title, data=where
                    )
                    self.resolve(index, record)
                    bucket = FindingStatus(record.bucket or "escalated")
                    diff = record.rounds[-1].diff if record.rounds else ""
                    self.item(
                        str(finding.id), bucket, title=finding.title, data={**where, "diff": diff}
                    )
            self.report()
        except BackendFailed:
            if record is not None:  # a fix nobody verified goes back out of the user's tree
                take_back_unverified(self, record, staged=True)
            raise
        except StepFailed as exc:
            if record is not None:
                take_back_unverified(self, record)
            stopped = f"(the run stopped; continue it with --resume {run.id})"
            located = StepFailed(exc.result, f"{exc.result.describe_failure()} {stopped}")
            # A step that refuses the repository as it is (a git-ignored file, say) is bad input.
            raise FixloopError(located.diagnostics, exit_code=2) from None

    def run_details(self) -> dict[str, int]:
        output = self.state.output()
        return {
            "resolved": len(output.resolved),
            "escalated": len(output.escalated),
            "dropped": len(output.dropped),
            "demoted": len(output.demoted),
        }

    def save(self) -> None:
        self.save_state()

    # -- the document's sections ---------------------------------------------------------

    @implements("intake")
    def intake(self) -> FixFindingsState:
        """The findings, checked and filtered (or a stopped run's state) before anything changes."""
        state = load_state(self.options.findings, self.options.repo, self.options.resume)
        if state.resumed_from:
            self.note(f"resuming run {state.resumed_from}")
        return state

    def resolve(self, index: int, record: FindingRecord) -> None:
        """One finding to its bucket: from wherever its saved state says it stopped."""
        if record.in_flight is not None:
            undo_interrupted_call(self, index, record)
        if record.pre_gate is None:
            self.pre_gate(record)
        while record.bucket is None:
            last = record.rounds[-1] if record.rounds else None
            if last is None:
                self.fix_brief(index, record, 1)
            elif last.phase in ("fixed", "staging"):
                self.stage(index, record, last)
            elif last.phase == "staged":
                self.verify(record, last)
            else:
                self.decide(index, record, last)

    def max_rounds(self, record: FindingRecord) -> int:
        return max(MAX_ATTEMPTS - record.failed_attempts, 1)

    @implements("pre-gate")
    def pre_gate(self, record: FindingRecord) -> None:
        finding = record.finding
        if not needs_pre_gate(finding):
            record.pre_gate = "skipped"
            self.save()
            return
        artifact = pre_gate_artifact(self.repo, finding)
        inputs, task = verifier_brief(finding, REAL, artifact, record.scope, self.repo)
        outcome = self.call(
            "verifier", inputs, task, self.repo, writable=[], key=f"verifier/{finding.id}/pre-gate"
        )
        judgement = judge(outcome, finding)
        record.pre_gate, record.pre_gate_evidence = judgement.verdict, judgement.evidence
        if not judgement.conclusive:
            record.failed_attempts += 1
        if decide_pre_gate(judgement) is Next.DROPPED:
            record.bucket, record.evidence = "dropped", judgement.evidence
        self.save()

    @implements("fix-brief")
    def fix_brief(self, index: int, record: FindingRecord, number: int) -> None:
        """One round's fixer call, with the scope question when it reaches past its files."""
        key = f"fixer/{record.finding.id}/round-{number}"
        if self.stopped_for_user_work(record, record.scope):
            return
        before = before_round(self, index, number, record.scope)
        record.in_flight = before
        self.save()
        outcome, denials = call_fixer(self, record, number, key, note="")
        result = _fix_result(outcome)
        request = (
            None
            if denials.forbidden
            else scope_expansion.scope_request(outcome, result, denials, record.scope)
        )
        if request is not None:
            self.note(
                f"finding {record.finding.id}: the fixer asks to also edit "
                f"{', '.join(request.additional_files)}",
                item=str(record.finding.id),
                data={"scope_request": list(request.additional_files)},
            )
            # The re-dispatched call starts from the files as they were, not from a partial fix.
            snapshots.restore(self.repo, Path(before.snapshot_dir), before.snapshot)
            answer = scope_expansion.answer(
                self.options.on_scope_expansion,
                self.context.prompter,
                request,
                repo=self.repo,
                finding_id=record.finding.id,
                notes=record.notes,
            )
            if answer == DEFER:
                deferred = f"scope expansion deferred: {request.justification}"
                record.rounds.append(_round(before, phase="verified", summary=deferred))
                record.in_flight = None
                self.escalate(record, None)
                self.save()
                return
            if answer == APPROVE:
                wanted = [check_path(self.repo, f) for f in request.additional_files]
                added = [f for f in dict.fromkeys(wanted) if f not in record.scope]
                if self.stopped_for_user_work(record, added):
                    record.in_flight = None
                    self.save()
                    return
                record.scope += added
                record.approved_files += added
                more = before_round(self, index, number, added)
                before.snapshot |= more.snapshot
                before.index_before |= more.index_before
                record.in_flight = before
                key, note = f"{key}/expanded", f"The user approved these files: {added}."
            else:
                key, note = f"{key}/original-scope", "The user rejected expanding the scope."
            self.save()
            outcome, denials = call_fixer(self, record, number, key, note=note)
            result = _fix_result(outcome)
        failure = fix_failure(
            self.repo, outcome, result, denials=denials, record=record, before=before
        )
        if failure is not None:
            restore_round_files(self, before)
            record.rounds.append(_round(before, phase="verified", summary=failure))
        else:
            assert isinstance(result, FixReport)
            files = list(dict.fromkeys(check_path(self.repo, p) for p in result.files_changed))
            fixed = _round(before, phase="fixed", summary=result.summary)
            fixed.files_changed, fixed.verdict = files, None
            record.rounds.append(fixed)
        record.in_flight = None
        self.save()

    @implements("user-work-check")
    def stopped_for_user_work(self, record: FindingRecord, files: list[str]) -> bool:
        """True when `files` hold the user's unstaged or untracked work: a fix is staged whole,
        so the finding stops here, before its fixer runs, escalated with nothing staged."""
        theirs = self.steps.user_work(files) if files else []
        if not theirs:
            return False
        line = (
            f"{', '.join(theirs)}: your uncommitted work there would be staged with the fix; "
            "stage or commit it (or set it aside) and run again; nothing was changed"
        )
        record.notes.append(line)
        record.bucket, record.evidence, record.staged_summary = "escalated", line, "nothing staged"
        self.warn(f"finding {record.finding.id}: {line}", item=str(record.finding.id))
        self.save()
        return True

    @implements("stage")
    def stage(self, index: int, record: FindingRecord, last: RoundRecord) -> None:
        files = last.files_changed
        # Round 1 only: anything staged in these files now is the user's. Once `staging`, our own
        # `git add` may already have run, and the check would mistake the fix for the user's work.
        if last.number == 1 and last.phase == "fixed" and files:
            try:
                again = settle_prestaged(self, index, record, files)
            except Escalate as exc:
                record.notes.append(str(exc))
                record.rounds[-1].summary += f" (not staged: {exc})"
                self.escalate(record, None, staged="nothing staged: the fix is left unstaged")
                self.save()
                return
            if again:  # made on top of the user's lines, now set aside: not an attempt
                record.rounds.pop()
                self.save()
                self.fix_brief(index, record, 1)
                return
        last.phase = "staging"
        self.save()
        try:
            self.steps.stage(files)
        except StepFailed:
            last.phase = "fixed"  # `git add` changes the index whole or not at all
            raise
        self.state.staged_by_run.update(self.steps.index_entries(files))
        last.phase = "staged"
        self.save()

    @implements("verify")
    def verify(self, record: FindingRecord, last: RoundRecord) -> None:
        finding = record.finding
        files = list(dict.fromkeys([*record.files, *record.approved_files]))
        diff = self.steps.staged_diff(files) if files else ""
        last.diff = save_diff(self.active_run.dir, str(finding.id), f"round-{last.number}", diff)
        artifact = diff or "(nothing is staged for this finding's files)"
        inputs, task = verifier_brief(finding, RESOLVED, artifact, files, self.repo)
        key = f"verifier/{finding.id}/round-{last.number}"
        outcome = self.call("verifier", inputs, task, self.repo, writable=[], key=key)
        judgement = judge(outcome, finding)
        last.verdict, last.severity = judgement.verdict, judgement.severity
        last.evidence = judgement.evidence
        last.phase = "verified"
        self.save()

    @implements("decide")
    def decide(self, index: int, record: FindingRecord, last: RoundRecord) -> None:
        assert last.verdict is not None
        judgement = Judgement(last.verdict, last.severity, last.evidence)
        step = decide(judgement, last_round=last.number >= self.max_rounds(record))
        if step is Next.NEXT_ROUND:
            self.fix_brief(index, record, last.number + 1)
            return
        if step is Next.RESOLVED:
            record.bucket, record.evidence = "resolved", last.evidence
        elif step is Next.DEMOTED:
            record.bucket, record.new_severity = "demoted", last.severity
            record.evidence = last.evidence
        else:
            self.escalate(record, last.evidence if judgement.conclusive else None)
        self.save()

    @implements("staged-summary")
    def escalate(self, record: FindingRecord, evidence: str | None, staged: str = "") -> None:
        """No Round 3: say what is staged, then ask what next (headless: defer)."""
        record.bucket, record.evidence = "escalated", evidence
        record.staged_summary = staged or escalation.staged_summary(self.steps, record)
        self.note(escalation.escalation_text(record), item=str(record.finding.id))
        answer = escalation.ask(self.context.prompter, record)
        if answer == escalation.DISCARD:
            escalation.discard_last_round(self.steps, self.repo, self.state, record)
        else:
            record.notes.append(escalation.NOTES[answer])

    @implements("report")
    def report(self) -> None:
        self.state.done = True
        self.save()


def _fix_result(outcome: AgentOutcome) -> FixReport | ScopeExpansionRequest | None:
    if outcome.ok and isinstance(outcome.output, FixerResult):
        return outcome.output.root
    return None


def _round(before: RoundRecord, *, phase: Phase, summary: str) -> RoundRecord:
    """A round's record: the pre-round snapshot, and by default a failed (inconclusive) attempt."""
    return before.model_copy(update={"phase": phase, "summary": summary}, deep=True)


def run_fix_findings(options: FixFindingsOptions, context: Context) -> FixFindingsResult:
    return FixFindings(context, options).run()


__all__ = [
    "MAX_ATTEMPTS",
    "FixFindings",
    "FixFindingsOptions",
    "FixFindingsResult",
    "PrestagedPolicy",
    "run_fix_findings",
]
