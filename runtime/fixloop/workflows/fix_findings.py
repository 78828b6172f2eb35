"""fix-findings: seed 002's bounded fix-verify loop over confirmed P0/P1 findings.

Per finding, one at a time: an optional verifier pre-gate, then at most two rounds of
fix → (Round 1 only: pre-staged hunk check) → stage → verify → decide. Fixes are staged with
`git add -- <files_changed>` and never committed. The git commands are the steps of
`workflows/fix-findings.md` (run through `StagingSteps`); the verdict → bucket table is data in
`verdicts.py`; this module only sequences them and records every step in `LoopState` on disk, so a
killed run resumes where it stopped.

Decisions the seed leaves to the implementation, made fail-closed:
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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fixloop.agents.backend import AgentOutcome
from fixloop.agents.dispatch import Dispatcher
from fixloop.documents.pack import WorkflowDoc
from fixloop.schemas.results import FixerResult, FixReport, ScopeExpansionRequest
from fixloop.steps.paths import check_path
from fixloop.steps.run import Run
from fixloop.workflows import escalation, scope_expansion, snapshots
from fixloop.workflows import fix_findings_state as store
from fixloop.workflows.choices import Prompter, question
from fixloop.workflows.denied_writes import Denials, sort_denials
from fixloop.workflows.fix_findings_briefs import (
    REAL,
    RESOLVED,
    fix_brief,
    fixer_brief,
    pre_gate_artifact,
    verifier_brief,
)
from fixloop.workflows.fix_findings_checks import fix_failure
from fixloop.workflows.fix_findings_state import FindingRecord, LoopState, Phase, RoundRecord
from fixloop.workflows.intake import needs_pre_gate
from fixloop.workflows.prestaged import PrestagedChoice, assess
from fixloop.workflows.scope_expansion import APPROVE, DEFER, ScopePolicy, scope_request
from fixloop.workflows.staging import StagingSteps, StepFailed
from fixloop.workflows.tree_guard import TreeGuard
from fixloop.workflows.verdicts import Judgement, Next, decide, decide_pre_gate, judge

MAX_ATTEMPTS = 2
PrestagedPolicy = Literal["ask", "commit", "stash", "proceed"]


@dataclass(frozen=True)
class Policies:
    on_prestaged: PrestagedPolicy = "ask"
    on_scope_expansion: ScopePolicy = "ask"


class FixFindingsLoop:
    def __init__(
        self,
        *,
        workflow: WorkflowDoc,
        dispatcher: Dispatcher,
        repo: Path,
        run: Run,
        state: LoopState,
        policies: Policies,
        prompter: Prompter,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.dispatcher = dispatcher
        self.repo = repo
        self.run = run
        self.state = state
        self.policies = policies
        self.prompter = prompter
        self.say = say
        self.brief = fix_brief(workflow)
        self.steps = StagingSteps(workflow, repo, run, run.dir / "scratch")
        self.guard = TreeGuard(self.steps, repo, run.dir / "kept")

    def save(self) -> None:
        store.save(self.state, self.run.dir)

    def execute(self) -> LoopState:
        total = len(self.state.records)
        for index, record in enumerate(self.state.records, start=1):
            if record.bucket is None:
                self.say(f"[{index}/{total}] finding {record.finding.id}: {record.finding.title}")
                self._process(index, record)
                self.say(f"[{index}/{total}] finding {record.finding.id}: {record.bucket}")
        self.state.done = True
        self.save()
        return self.state

    # -- one finding -------------------------------------------------------------------------

    def _process(self, index: int, record: FindingRecord) -> None:
        if record.in_flight is not None:
            # Killed during a fixer call: put its files back before the call is made again.
            interrupted = record.in_flight
            snapshots.restore(self.repo, Path(interrupted.snapshot_dir), interrupted.snapshot)
            if interrupted.tree_before:
                here = self.run.dir / "resumed" / f"finding-{index}"  # the old run stays as it was
                stray = self.guard.after(Path(interrupted.tree_before), record.scope, into=here)
                record.notes += stray.notes("an interrupted fixer call")
            record.in_flight = None
            self.save()
        if record.pre_gate is None:
            self._pre_gate(record)
        while record.bucket is None:
            last = record.rounds[-1] if record.rounds else None
            if last is None:
                self._fix(index, record, 1)
            elif last.phase in ("fixed", "staging"):
                self._stage(index, record, last)
            elif last.phase == "staged":
                self._verify(record, last)
            else:
                self._decide(index, record, last)

    def _max_rounds(self, record: FindingRecord) -> int:
        return max(MAX_ATTEMPTS - record.failed_attempts, 1)

    def _pre_gate(self, record: FindingRecord) -> None:
        finding = record.finding
        if not needs_pre_gate(finding):
            record.pre_gate = "skipped"
            self.save()
            return
        artifact = pre_gate_artifact(self.repo, finding)
        inputs, task = verifier_brief(finding, REAL, artifact, record.scope, self.repo)
        outcome = self._call("verifier", inputs, task, [], f"verifier/{finding.id}/pre-gate")
        judgement = judge(outcome, finding)
        record.pre_gate, record.pre_gate_evidence = judgement.verdict, judgement.evidence
        if not judgement.conclusive:
            record.failed_attempts += 1
        if decide_pre_gate(judgement) is Next.DROPPED:
            record.bucket, record.evidence = "dropped", judgement.evidence
        self.save()

    def _decide(self, index: int, record: FindingRecord, last: RoundRecord) -> None:
        assert last.verdict is not None
        judgement = Judgement(last.verdict, last.severity, last.evidence)
        step = decide(judgement, last_round=last.number >= self._max_rounds(record))
        if step is Next.NEXT_ROUND:
            self._fix(index, record, last.number + 1)
            return
        if step is Next.RESOLVED:
            record.bucket, record.evidence = "resolved", last.evidence
        elif step is Next.DEMOTED:
            record.bucket, record.new_severity = "demoted", last.severity
            record.evidence = last.evidence
        else:
            self._escalate(record, last.evidence if judgement.conclusive else None)
        self.save()

    # -- fix ------------------------------------------------------------------------------

    def _fix(self, index: int, record: FindingRecord, number: int) -> None:
        key = f"fixer/{record.finding.id}/round-{number}"
        before = self._before_round(index, number, record.scope)
        record.in_flight = before
        self.save()
        outcome, denials = self._fixer(record, number, key, note="")
        result = _fix_result(outcome)
        request = (
            None if denials.forbidden else scope_request(outcome, result, denials, record.scope)
        )
        if request is not None:
            # The re-dispatched call starts from the files as they were, not from a partial fix.
            snapshots.restore(self.repo, Path(before.snapshot_dir), before.snapshot)
            answer = scope_expansion.answer(
                self.policies.on_scope_expansion, self.prompter, request,
                repo=self.repo, finding_id=record.finding.id, notes=record.notes,
            )  # fmt: skip
            if answer == DEFER:
                deferred = f"scope expansion deferred: {request.justification}"
                record.rounds.append(_round(before, phase="verified", summary=deferred))
                record.in_flight = None
                self._escalate(record, None)
                self.save()
                return
            if answer == APPROVE:
                wanted = [check_path(self.repo, f) for f in request.additional_files]
                added = [f for f in dict.fromkeys(wanted) if f not in record.scope]
                record.scope += added
                record.approved_files += added
                more = self._before_round(index, number, added)
                before.snapshot |= more.snapshot
                before.index_before |= more.index_before
                record.in_flight = before
                key, note = f"{key}/expanded", f"The user approved these files: {added}."
            else:
                key, note = f"{key}/original-scope", "The user rejected expanding the scope."
            self.save()
            outcome, denials = self._fixer(record, number, key, note=note)
            result = _fix_result(outcome)
        failure = fix_failure(
            self.repo, outcome, result, denials=denials, record=record, before=before
        )
        if failure is not None:
            snapshots.restore(self.repo, Path(before.snapshot_dir), before.snapshot)
            record.rounds.append(_round(before, phase="verified", summary=failure))
        else:
            assert isinstance(result, FixReport)
            files = list(dict.fromkeys(check_path(self.repo, p) for p in result.files_changed))
            fixed = _round(before, phase="fixed", summary=result.summary)
            fixed.files_changed, fixed.verdict = files, None
            record.rounds.append(fixed)
        record.in_flight = None
        self.save()

    def _before_round(self, index: int, number: int, files: Sequence[str]) -> RoundRecord:
        """What the round's files were before the fixer ran: bytes on disk, index entries."""
        folder = self.run.dir / "snapshots" / f"finding-{index}" / f"round-{number}"
        return RoundRecord(
            number=number, phase="fixed", summary="", verdict="inconclusive",
            snapshot_dir=str(folder), snapshot=snapshots.take(self.repo, files, folder),
            index_before=self.steps.index_entries(files) if files else {},
        )  # fmt: skip

    def _denials(self, record: FindingRecord, number: int, outcome: AgentOutcome) -> Denials:
        if outcome.denied:
            refused = ", ".join(f"{d.path} ({d.reason})" for d in outcome.denied)
            record.notes.append(f"R{number}: the fixer's writes were refused: {refused}")
        return sort_denials(self.repo, outcome.denied, record.scope)

    def _fixer(
        self, record: FindingRecord, number: int, key: str, note: str
    ) -> tuple[AgentOutcome, Denials]:
        """One fixer call between two tree fingerprints: its denials, plus what it changed."""
        inputs, task = fixer_brief(
            record, number, max_rounds=self._max_rounds(record), repo=self.repo,
            rules=self.brief, note=note,
        )  # fmt: skip
        assert record.in_flight is not None
        tree = self.guard.before(Path(record.in_flight.snapshot_dir))
        record.in_flight.tree_before = str(tree)
        self.save()
        outcome = self._call("fixer", inputs, task, record.scope, key)
        stray = self.guard.after(tree, record.scope)
        record.notes += stray.notes(f"R{number}")
        denials = self._denials(record, number, outcome)
        return outcome, denials.with_stray(stray.changed, stray.unrestorable)

    # -- stage ----------------------------------------------------------------------------

    def _stage(self, index: int, record: FindingRecord, last: RoundRecord) -> None:
        files = last.files_changed
        # Round 1 only: anything staged in these files now is the user's. Once `staging`, our own
        # `git add` may already have run, and the check would mistake the fix for the user's work.
        first_check = last.number == 1 and last.phase == "fixed" and bool(files)
        if first_check and not self._settle_prestaged(index, record, files):
            self.save()
            return
        last.phase = "staging"
        self.save()
        self.steps.stage(files)
        self.state.staged_by_run.update(self.steps.index_entries(files))
        last.phase = "staged"
        self.save()

    def _settle_prestaged(self, index: int, record: FindingRecord, files: Sequence[str]) -> bool:
        """False when the finding cannot go on (it is escalated with the fix left unstaged)."""
        entries = self.steps.index_entries(files)
        ours = self.state.staged_by_run
        files = [f for f in files if f not in entries or entries[f] != ours.get(f)]
        if not files:
            return True
        diffs = self.steps.prestaged(files)
        if not diffs.found:
            return True
        report = assess(diffs.staged, diffs.fix)
        choice = self._prestaged_choice(report.summary(), report.recommendation)
        found = f"pre-existing staged hunks: {report.summary()}"
        try:
            if choice is None:
                raise _Halt(f"{found}; they need your decision (--on-prestaged)")
            if choice is PrestagedChoice.COMMIT:
                message = f"Pre-existing staged changes ({', '.join(files)})"
                commit = self.steps.commit_prestaged(files, message)
                record.notes.append(f"{found}; committed first as {commit[:12]}")
            elif choice is PrestagedChoice.STASH:
                ref = f"refs/fixloop/prestaged/{self.run.id}/{index}"
                patch = self.run.dir / f"prestaged-{index}.patch"
                self.steps.set_aside_prestaged(files, ref, patch)
                record.notes.append(
                    f"{found}; set aside in {ref} and {patch} (restore: git apply --index {patch})"
                )
            else:
                record.notes.append(f"{found}; staged together with the fix")
        except (_Halt, StepFailed) as exc:
            record.notes.append(str(exc))
            record.rounds[-1].summary += f" (not staged: {exc})"
            self._escalate(record, None, staged="nothing staged: the fix is left unstaged")
            return False
        return True

    def _prestaged_choice(
        self, summary: str, recommended: PrestagedChoice
    ) -> PrestagedChoice | None:
        policy = self.policies.on_prestaged
        if policy != "ask":
            return PrestagedChoice(policy)
        labels = [choice.label for choice in PrestagedChoice]
        answer = self.prompter.ask(question(summary, labels, recommended.label))
        return next((c for c in PrestagedChoice if c.label == answer), None)

    # -- verify and escalate ----------------------------------------------------------------

    def _verify(self, record: FindingRecord, last: RoundRecord) -> None:
        finding = record.finding
        files = list(dict.fromkeys([*record.files, *record.approved_files]))
        diff = self.steps.staged_diff(files) if files else ""
        artifact = diff or "(nothing is staged for this finding's files)"
        inputs, task = verifier_brief(finding, RESOLVED, artifact, files, self.repo)
        outcome = self._call(
            "verifier", inputs, task, [], f"verifier/{finding.id}/round-{last.number}"
        )
        judgement = judge(outcome, finding)
        last.verdict, last.severity, last.evidence = (
            judgement.verdict, judgement.severity, judgement.evidence,
        )  # fmt: skip
        last.phase = "verified"
        self.save()

    def _escalate(self, record: FindingRecord, evidence: str | None, staged: str = "") -> None:
        record.bucket, record.evidence = "escalated", evidence
        record.staged_summary = staged or self._staged_summary(record)
        self.say(escalation.escalation_text(record))
        answer = escalation.ask(self.prompter, record)
        if answer == escalation.DISCARD:
            self._discard_last_round(record)
        else:
            record.notes.append(escalation.NOTES[answer])

    def _staged_summary(self, record: FindingRecord, discarded: int = 0) -> str:
        files = record.files
        summary = self.steps.staged_summary(files) if files else None
        if summary is None or not (summary.added or summary.removed):
            return "nothing staged"
        number = (discarded or record.rounds[-1].number + 1) - 1
        changes = f"R{number}'s changes" if number > 0 else "changes"
        return f"{changes} to {', '.join(files)}, +{summary.added}/-{summary.removed} lines"

    def _discard_last_round(self, record: FindingRecord) -> None:
        """Per file: the last round's files get back their pre-round index entry and bytes."""
        last = record.rounds[-1]
        files = [f for f in last.files_changed if f in last.snapshot]
        self.steps.restore_index(files, last.index_before)
        kept = {f: last.snapshot[f] for f in files}
        snapshots.restore(self.repo, Path(last.snapshot_dir), kept)
        for name in files:
            if last.number > 1 and name in last.index_before:
                self.state.staged_by_run[name] = last.index_before[name]
            else:
                self.state.staged_by_run.pop(name, None)
        record.notes.append(
            f"R{last.number}'s changes to {', '.join(files)} discarded: index entries and files "
            f"restored to their state before R{last.number}"
        )
        record.staged_summary = self._staged_summary(record, discarded=last.number)

    def _call(
        self, role: str, inputs: dict[str, Any], task: str, writable: Sequence[str], key: str
    ) -> AgentOutcome:
        return self.dispatcher.call(role, inputs, task, self.repo, writable=writable, key=key)


class _Halt(Exception):
    """Stop work on one finding (it is escalated); the message says why."""


def _fix_result(outcome: AgentOutcome) -> FixReport | ScopeExpansionRequest | None:
    if outcome.ok and isinstance(outcome.output, FixerResult):
        return outcome.output.root
    return None


def _round(before: RoundRecord, *, phase: Phase, summary: str) -> RoundRecord:
    """A round's record: the pre-round snapshot, and by default a failed (inconclusive) attempt."""
    return before.model_copy(update={"phase": phase, "summary": summary}, deep=True)
