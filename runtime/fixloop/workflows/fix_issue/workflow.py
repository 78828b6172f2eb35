"""Fix-issue: an issue in, a verified patch out, as `workflows/fix-issue.md` says.

    result = run_fix_issue(FixIssueOptions(issue=Path("ISSUE.md"), repo=repo), context)

`FixIssue.run` is the document's "Order of work", top to bottom. Bad input is a FixloopError
(exit 2) before anything is created. The run's worktree sits on a temporary branch that never
gets a commit: the output is `fix.patch` in the run's folder, so the git protocol's cleanup
leaves the user's branch where it was.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fixloop.agents.backend import AgentOutcome, StopReason
from fixloop.agents.budget import BudgetedBackend, BudgetKind, RunBudget
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.gitrepo import changed_paths, patch_paths, state_dir_of
from fixloop.runs.git_session import GitSession
from fixloop.runs.state import digest, finished_runs
from fixloop.sandboxes import Sandbox
from fixloop.sandboxes.protocol import SandboxChoice
from fixloop.schemas.results import ImplResult
from fixloop.workflows.fix_issue.acceptance import (
    REPORTS,
    TEST_RUNS,
    VERIFY_SUFFIX,
    Acceptance,
    PatchCheck,
    verify_patch,
)
from fixloop.workflows.fix_issue.brief import ROLE, call_key, fixer_inputs, task_text
from fixloop.workflows.fix_issue.diff_tool import DIFF_NAME, DiffTool
from fixloop.workflows.fix_issue.environment import EnvironmentTool
from fixloop.workflows.fix_issue.grading import TestSelection
from fixloop.workflows.fix_issue.plan import (
    FixIssueOptions,
    FixIssuePlan,
    issue_id_of,
    plan_fix_issue,
)
from fixloop.workflows.fix_issue.record import write_artifacts, write_snapshot
from fixloop.workflows.fix_issue.result import (
    FixIssueResult,
    IssueItemStatus,
    IssueStatus,
    write_result,
)
from fixloop.workflows.fix_issue.state import AttemptRecord, FixIssueState
from fixloop.workflows.fix_issue.suite import RunStatus, Suite, all_passed
from fixloop.workflows.fix_issue.tools import IssueTools
from fixloop.workflows.fix_issue.verdict import decide
from fixloop.workflows.kernel.workflow import Context, Workflow, implements

PATCH_NAME = "fix.patch"
RESULT_NAME = "result.json"


class FixIssue(Workflow[FixIssueOptions, FixIssuePlan, FixIssueResult]):
    name = "fix-issue"
    state: FixIssueState

    def __init__(self, context: Context, options: FixIssueOptions) -> None:
        super().__init__(context, options)
        self.started = time.monotonic()
        self.calls_before = 0
        # The run's token budget, inside the caller's (cost, wall time): one per run, so a
        # bench of many issues gives each its own.
        self.tokens = RunBudget(max_tokens=options.max_tokens or None)
        self.dispatcher.backend = BudgetedBackend(self.dispatcher.backend, self.tokens)

    # -- the parts of the kernel's run -----------------------------------------------------

    def claimed_input(self) -> Path:
        return self.options.issue  # the issue: one run fixes it at a time

    def plan(self) -> FixIssuePlan:
        self.started = time.monotonic()
        return self.read_issue()

    def new_result(self, plan: FixIssuePlan) -> FixIssueResult:
        result = FixIssueResult(str(self.options.issue), issue_id_of(self.options))
        result.tests = [test.shown for test in plan.tests]
        result.max_tokens = self.options.max_tokens
        return result

    def sandbox_for(self, plan: FixIssuePlan) -> SandboxChoice:
        return plan.sandbox  # the test commands' sandbox, and the scripted shell's too

    def new_state(self, plan: FixIssuePlan) -> FixIssueState:
        return FixIssueState(
            input_path=plan.issue_shown,
            input_digest=digest(plan.issue_bytes),
            base=plan.base,
            checks=self.checks(plan),
        )

    def run(self) -> FixIssueResult:
        """The kernel's run; then, once the run is over (also when it failed), the SHA-256 of
        every file it left (`record.py`)."""
        try:
            return super().run()
        finally:
            if self._run is not None:
                verify = self._run.dir.with_name(f"{self._run.id}{VERIFY_SUFFIX}")
                write_artifacts(self._run.dir, [verify])

    def checks(self, plan: FixIssuePlan) -> str:
        """What decides "resolved" besides the issue and the commit: the tests and selections."""
        options = self.options
        asked = [
            [t.shown for t in plan.tests],
            list(options.fail_to_pass),
            list(options.pass_to_pass),
        ]
        return digest(json.dumps(asked).encode())

    def nothing_to_do(self, plan: FixIssuePlan) -> str | None:
        """The very issue was resolved on this very commit, with the same tests, by a finished run
        whose patch is still there: running again would pay for the same patch. A benchmark
        task (hidden tests) always runs."""
        if self.options.hidden is not None or self.options.require_fail_to_pass:
            return None
        state_dir, issue = state_dir_of(plan.repo), digest(plan.issue_bytes)
        for run_id, earlier, info in finished_runs(state_dir, FixIssueState, issue):
            patch = state_dir / "runs" / run_id / PATCH_NAME
            details = info.get("details") or {}
            same = earlier.base == plan.base and earlier.checks == self.checks(plan)
            if same and details.get("status") == "resolved" and patch.is_file():
                self.result.patch_path = str(patch)
                self.result.patch_files = len(patch_paths(plan.repo, patch))
                return (
                    f"{plan.issue_shown} was resolved by run {run_id} on {plan.base[:12]} with "
                    f"these tests (patch: {patch}): nothing to do; change the issue, the tests "
                    "or the commit to fix it again"
                )
        return None

    def work(self, plan: FixIssuePlan) -> None:
        result, state, run = self.result, self.state, self.active_run
        result.result_path = str(run.dir / RESULT_NAME)
        result.trace_path = str(run.events_path)
        write_snapshot(
            run.dir,
            self.options,
            self.pack,
            self.context.backend,
            role=ROLE,
            models=self.context.models,
        )
        with self.git_session() as git:
            result.base = state.base = git.base
            # Kept unless it is resolved: also when something below raises.
            git.keep = self.options.keep_worktree
            result.kept_worktree = str(git.worktree) if git.keep else ""
            reports = run.dir / REPORTS
            reports.mkdir(exist_ok=True)
            with self.sandbox(git.worktree, run.id, reports) as sandbox:
                suite = Suite(
                    plan.tests,
                    sandbox,
                    git.worktree,
                    timeout_s=self.timeout_s,
                    reports=reports,
                    records=run.dir / TEST_RUNS,
                )
                tools = IssueTools(
                    git.worktree, suite, self.emit, plan.issue_id, secret_files=plan.secret_files
                )
                tools.parts = [self.diff_tool(git, tools)]
                with self.environment(suite, sandbox, reports) as environment:
                    if environment is not None:
                        tools.parts = [*tools.parts, environment]
                    self.tests_before(suite, state)
                    self.fix_until_the_tests_pass(plan, tools, suite, state)
            self.export_patch(git, tools)
            if result.patch_files:
                result.acceptance = self.verify_patch(plan, Path(result.patch_path))
            result.status, result.reason = decide(result)
            git.keep = git.keep and result.status is not IssueStatus.RESOLVED
            result.kept_worktree = result.kept_worktree if git.keep else ""
            if git.keep:
                self.warn(
                    f"the worktree of this unresolved run is kept: {git.worktree} (fix.patch "
                    "and result.json are in the run folder; fixloop recover removes it)"
                )
            result.wall_s = time.monotonic() - self.started
            self.write_result()
            state.done = True
            self.save_state()
        # The patch (in the run's folder) is the item's diff: `runs show` shows it beside it.
        data = {
            "attempts": len(result.attempts),
            **({"diff": PATCH_NAME} if result.patch_files else {}),
        }
        self.item(plan.issue_id, result.status.item_status, result.reason, data=data)

    def on_failure(self, exc: BaseException) -> None:
        result = self.result
        result.reason = f"stopped: {exc}"
        result.wall_s = time.monotonic() - self.started
        if result.result_path:
            write_result(Path(result.result_path), result)

    def run_details(self) -> dict[str, str]:
        kept = {"kept_worktree": self.result.kept_worktree} if self.result.kept_worktree else {}
        return {"status": str(self.result.status), "result": self.result.result_path, **kept}

    def diff_tool(self, git: GitSession, tools: IssueTools) -> DiffTool:
        def export(target: Path, paths: Iterable[str]) -> int:
            return git.export_patch(target, paths=sorted(paths))

        return DiffTool(tools, git.base, self.active_run.dir / DIFF_NAME, export)

    @contextmanager
    def environment(
        self, suite: Suite, sandbox: Sandbox, reports: Path
    ) -> Iterator[EnvironmentTool | None]:
        """Under docker, `build_environment` (the fixer's own image for its tests); its images
        are removed on the way out."""
        if sandbox.choice.kind != "docker":
            yield None
            return
        run = self.active_run
        image = sandbox.choice.image or ""
        tool = EnvironmentTool(suite, self.options.open_sandbox, run.id, run.dir, reports, image)
        try:
            yield tool
        finally:
            self.result.environment = tool.image
            tool.close()

    @property
    def timeout_s(self) -> float:
        return self.options.test_timeout_s

    @contextmanager
    def sandbox(self, worktree: Path, run_id: str, reports: Path) -> Iterator[Sandbox]:
        """The sandbox every test command of the run's worktree runs in (the run has said
        which when it started); the runners' reports go to the run's folder."""
        opened = self.options.open_sandbox(
            self.options.sandbox,
            worktree=worktree,
            image=self.options.image,
            run_id=run_id,
            writable=(reports,),
        )
        with opened as sandbox:
            self.result.sandbox = str(sandbox.choice)
            yield sandbox

    def fix_until_the_tests_pass(
        self, plan: FixIssuePlan, tools: IssueTools, suite: Suite, state: FixIssueState
    ) -> None:
        """Attempts, until one succeeds, the fixer finds nothing to do, or the budget is spent."""
        for number in range(1, self.options.max_attempts + 1):
            outcome = self.fix_attempt(plan, tools, number, list(state.attempts))
            if outcome.reason is StopReason.RUN_BUDGET:
                # Refused before it started: the fixer ran nothing, so neither do the tests.
                self.budget_refused(plan, outcome)
                return
            record = self.attempt_record(number, outcome, tools)
            self.check_attempt(record, suite)
            state.attempts.append(record)
            self.result.attempts = list(state.attempts)
            self.save_state()
            verdict = IssueItemStatus.PASSED if record.succeeded else IssueItemStatus.FAILED
            tests = "passed" if all_passed(self.result.tests_after) else "failing"
            said = record.fixer_status or record.reason
            self.item(plan.issue_id, verdict, f"attempt {number}: fixer {said}; tests {tests}")
            if record.succeeded:
                return
            if record.fixer_status == "no_task" and not tools.touched:
                return

    # -- the document's sections, in its order of work ------------------------------------

    @implements("read-issue")
    def read_issue(self) -> FixIssuePlan:
        return plan_fix_issue(self.options)

    @implements("tests-before")
    def tests_before(self, suite: Suite, state: FixIssueState) -> None:
        runs = suite.run()
        self.result.tests_before = self.result.tests_after = runs
        state.tests_before = [run.to_json() for run in runs]
        self.save_state()
        missing = [run.command for run in runs if run.status is RunStatus.NOT_FOUND]
        if missing:
            problem = f"{missing[0]!r}: its program is not found in the sandbox"
            raise FixloopError(Diagnostic("--test", 1, 1, "test-command", problem))

    def budget_refused(self, plan: FixIssuePlan, outcome: AgentOutcome) -> None:
        """Say which run budget refused the next attempt; it is no attempt."""
        stop = self.tokens.stopped_by or (
            self.context.budget.stopped_by if self.context.budget else None
        )
        kind = stop.kind if stop is not None else None
        self.result.stop_reason = str(
            StopReason.TOKEN_BUDGET if kind is BudgetKind.TOKENS else StopReason.RUN_BUDGET
        )
        self.result.stop_detail = stop.describe() if stop is not None else outcome.detail
        self.state.stop_reason = self.result.stop_reason
        self.save_state()
        self.item(plan.issue_id, IssueItemStatus.FAILED, self.result.stop_detail)

    @implements("fix-attempt")
    def fix_attempt(
        self, plan: FixIssuePlan, tools: IssueTools, number: int, earlier: list[AttemptRecord]
    ) -> AgentOutcome:
        self.item(plan.issue_id, IssueItemStatus.RUNNING, title=f"attempt {number}")
        self.calls_before = tools.calls
        return self.call(
            ROLE,
            fixer_inputs(plan, number, earlier),
            task_text(plan, number, self.options.max_attempts),
            tools.worktree,
            key=call_key(plan, number),
            toolbox=tools,
        )

    def attempt_record(
        self, number: int, outcome: AgentOutcome, tools: IssueTools
    ) -> AttemptRecord:
        record = AttemptRecord(
            number=number,
            outcome=str(outcome.status),
            turns=outcome.usage.turns,
            cost_usd=outcome.usage.cost_usd,
            input_tokens=outcome.usage.input_tokens,
            output_tokens=outcome.usage.output_tokens,
            tool_calls=tools.calls - self.calls_before,
            served_model=outcome.served_model,
        )
        if outcome.ok and isinstance(outcome.output, ImplResult):
            record.fixer_status = outcome.output.status
            record.notes = outcome.output.notes
            record.files_reported = [str(path) for path in outcome.output.filesModified]
        else:
            record.reason = f"{outcome.reason}: {outcome.detail}"
        return record

    @implements("check-attempt")
    def check_attempt(self, record: AttemptRecord, suite: Suite) -> None:
        record.revision = suite.revision()
        runs = suite.current()  # the fixer's own run at exactly this revision, or a fresh one
        record.tests = [run.to_json() for run in runs]
        record.succeeded = record.fixer_status == "done" and all_passed(runs)
        self.result.tests_after = runs

    @implements("export-patch")
    def export_patch(self, git: GitSession, tools: IssueTools) -> None:
        target = self.active_run.dir / PATCH_NAME
        self.result.patch_path = str(target)
        outside = sorted(set(changed_paths(git.worktree)) - tools.touched)
        if outside:
            self.result.changed_outside_tools = outside
            self.warn(f"changed outside the fixer's tools, left out of the patch: {outside}")
        if not tools.touched:
            target.write_bytes(b"")
            return
        self.result.patch_files = git.export_patch(target, paths=sorted(tools.touched))

    @implements("verify-patch")
    def verify_patch(self, plan: FixIssuePlan, patch: Path) -> Acceptance:
        hidden = self.options.hidden
        check = PatchCheck(
            repo=plan.repo,
            base=self.result.base,
            patch=patch,
            commands=plan.tests + (hidden.commands if hidden else ()),
            opener=self.options.open_sandbox,
            sandbox=self.options.sandbox,
            image=self.options.image,
            hidden_files=hidden.files if hidden else None,
            timeout_s=self.timeout_s,
            selection=TestSelection(
                fail_to_pass=tuple(self.options.fail_to_pass),
                pass_to_pass=tuple(self.options.pass_to_pass) or None,
                require_fail_to_pass=self.options.require_fail_to_pass,
            ),
        )
        return verify_patch(
            check,
            document=self.doc,
            protocol=self.protocol,
            run_id=self.active_run.id,
            events=self.events,
        )

    @implements("write-result")
    def write_result(self) -> None:
        write_result(Path(self.result.result_path), self.result)


def run_fix_issue(options: FixIssueOptions, context: Context) -> FixIssueResult:
    return FixIssue(context, options).run()


__all__ = ["FixIssue", "run_fix_issue"]
