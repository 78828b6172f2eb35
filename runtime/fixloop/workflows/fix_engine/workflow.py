"""Fix-engine: a mini-PRD's acceptance criteria → verified commits, as `workflows/fix-engine.md`.

    result = run_fix_engine(FixEngineOptions(mini_prd=Path("sections/auth/mini-prd.md")), context)

`FixEngine.run` is the document's "Order of work", top to bottom. The section's files are the
document's steps' business (`workflows/lib/fix_engine.py`); this class decides which step runs
when, dispatches the executor and the verifier, and drives the git protocol. Bad input stops the
run before anything changes (a FixloopError, exit 2, naming the file, the line and the key); the
git protocol's cleanup runs on every way out once the worktree exists.

Decisions the seed leaves open (docs/fix-engine.md says why):
- The seed's loop works on a whole section; here each checklist item has its own executor
  attempts and verifier verdicts, at most 3 attempts, and its own commit. An item that fails its
  third attempt is rolled back and the run goes on with the next; the section is escalated at the
  end with one error report naming every failed item.
- COMPLETE is written after the user's branch has fast-forwarded to every item commit, so it never
  exists for a section whose commits the branch lacks.
"""

from __future__ import annotations

from pathlib import Path

from fixloop.runs.state import digest
from fixloop.steps.result import StepFailed, required_output
from fixloop.workflows.fix_engine.item import ItemLoop
from fixloop.workflows.fix_engine.result import FixEngineResult
from fixloop.workflows.fix_engine.resume import resume_interrupted
from fixloop.workflows.fix_engine.section import (
    FixEngineOptions,
    FixEngineState,
    ItemRecord,
    Section,
    locate_mini_prd,
    read_items,
    refused_input,
    section_from,
)
from fixloop.workflows.kernel.workflow import Context, implements


class FixEngine(ItemLoop):
    name = "fix-engine"
    escalated_at = ""  # the item `--stop-on-escalation` stopped the section at

    state: FixEngineState

    # -- the parts of the kernel's run -----------------------------------------------------

    def claimed_input(self) -> Path:
        given = self.options.mini_prd  # its section folder and its meta.yaml: one run at a time
        return given / "mini-prd.md" if given.is_dir() else given

    def plan(self) -> Section:
        self.section = self.load_section()
        return self.section

    def new_result(self, section: Section) -> FixEngineResult:
        return FixEngineResult(
            str(self.options.mini_prd),
            section_id=section.id,
            state_dir=str(section.state),
            items=section.items,
        )

    def nothing_to_do(self, section: Section) -> str | None:
        if section.mode != "complete":
            return None
        self.result.status = "already-complete"
        self.result.complete = str(section.state / "COMPLETE")
        return f"section {section.id} is already complete: nothing to do"

    def new_state(self, section: Section) -> FixEngineState:
        return FixEngineState(
            input_path=section.mini_prd,
            input_digest=section.digest,
            section_id=section.id,
            state_dir=str(section.state),
        )

    def work(self, section: Section) -> None:
        result = self.result
        start = section.mode == "start"
        result.items = self.make_checklist() if start else self.resume_interrupted()
        with self.git_session() as git:
            self.git = git
            self.fix_items(result.items)
        self.settle()
        self.state.done = result.status in ("completed", "escalated")
        self.save_state()

    def fix_items(self, items: list[ItemRecord]) -> None:
        """Each item not yet done or failed, in checklist order, until a budget stops the run."""
        for index, item in enumerate(items):
            if item.status in ("done", "failed") or self.stopped:
                continue
            items[index] = self.fix_item(item, {"index": index + 1, "total": len(items)})
            if items[index].status == "failed" and self.options.stop_on_escalation:
                self.escalated_at = item.id
                self.note(f"{item.id} failed: stopping at the first escalation")
                return

    def settle(self) -> None:
        """After cleanup: the error report, or COMPLETE once the branch holds every commit."""
        result, items = self.result, self.result.items
        undecided = [item for item in items if item.status not in ("done", "failed")]
        if self.stopped or (undecided and not self.escalated_at):
            result.status, result.stopped_by = "stopped", self.stopped or "items left undecided"
        elif result.failed:
            self.error_report()
        elif not result.fast_forwarded:
            result.status = "stopped"
            result.stopped_by = (
                f"your branch moved: merge {result.kept_branch}, then resume to complete"
            )
        else:
            self.complete()

    # -- the document's sections, in its order of work ------------------------------------

    @implements("load-section")
    def load_section(self) -> Section:
        repo, mini_prd = locate_mini_prd(self.options)
        resume = "yes" if self.options.resume else "no"
        loaded = self.try_step("load-section", repo, MINI_PRD=mini_prd, RESUME=resume)
        refused = refused_input(loaded, repo)
        if refused is not None:
            raise refused
        if not loaded.ok:
            raise StepFailed(loaded)
        return section_from(loaded, repo, mini_prd, digest((repo / mini_prd).read_bytes()))

    @implements("make-checklist")
    def make_checklist(self) -> list[ItemRecord]:
        section = self.section
        made = self.step(
            "make-checklist",
            section.repo,
            MINI_PRD=section.mini_prd,
            STATE=str(section.state),
            RUN_ID=self.active_run.id,
        )
        items = read_items(made, "ITEMS")
        self.note(f"{section.state / 'checklist.md'}: {required_output(made, 'TOTAL')} item(s)")
        return items

    @implements("resume-interrupted")
    def resume_interrupted(self) -> list[ItemRecord]:
        items = resume_interrupted(self, self.section)
        done = sum(item.status == "done" for item in items)
        self.note(f"resuming section {self.section.id}: {done} of {len(items)} item(s) done")
        return items

    @implements("error-report")
    def error_report(self) -> None:
        reported = self.step("error-report", self.section.repo, STATE=str(self.section.state))
        self.result.error_report = required_output(reported, "ERROR_REPORT")
        self.result.status = "escalated"
        self.warn(f"section {self.section.id} escalated: {self.result.error_report}")

    @implements("complete")
    def complete(self) -> None:
        completed = self.step("complete", self.section.repo, STATE=str(self.section.state))
        self.result.complete = required_output(completed, "COMPLETE")
        self.result.status = "completed"
        self.note(f"section {self.section.id} complete: {self.result.complete}")


def run_fix_engine(options: FixEngineOptions, context: Context) -> FixEngineResult:
    return FixEngine(context, options).run()


__all__ = ["FixEngine", "run_fix_engine"]
