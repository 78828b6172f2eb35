"""Starting or resuming one fix-findings run: intake, run folder, loop, and the run's record.

All input is checked before the repository is touched: the findings file (schema, ids, paths),
the repository, and for `--resume` the earlier run (it must have stopped, i.e. not be live, and
have read the same findings file). A resumed run is a new run (its own lock and trace) that
continues the earlier run's loop state; the earlier run folder is left as it was, for audit.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fixloop.agents.backend import Backend
from fixloop.agents.budget import RunBudget
from fixloop.agents.dispatch import Dispatcher
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.pack import Pack
from fixloop.steps.paths import check_path
from fixloop.steps.run import RUN_ID_PATTERN, Run, list_runs, read_run, state_dir_of
from fixloop.workflows import fix_findings_state as store
from fixloop.workflows.choices import Prompter
from fixloop.workflows.fix_findings import FixFindingsLoop, Policies
from fixloop.workflows.fix_findings_state import FindingRecord, LoopState
from fixloop.workflows.intake import in_scope, load_findings
from fixloop.workflows.staging import StepFailed

WORKFLOW = "fix-findings"
LATEST = "latest"


@dataclass(frozen=True)
class Session:
    state: LoopState
    run_id: str
    run_dir: Path


def repository_root(repo: Path) -> Path:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--show-toplevel"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise FixloopError(Diagnostic(str(repo), 1, 1, "repository", "not a git work tree"))
    return Path(done.stdout.strip()).resolve()


def new_state(findings_path: Path, repo: Path) -> LoopState:
    findings = load_findings(findings_path, repo)
    records = [
        FindingRecord(finding=f, scope=[check_path(repo, f.file)] if f.file else [])
        for f in findings
        if in_scope(f)
    ]
    return LoopState(
        findings_digest=store.digest(findings_path),
        repo=str(repo),
        records=records,
        ignored=[f.id for f in findings if not in_scope(f)],
    )


def _resumable(repo: Path, findings_path: Path, run_id: str) -> tuple[str, LoopState]:
    state_dir = state_dir_of(repo)
    wanted = store.digest(findings_path)
    if run_id == LATEST:
        stopped = [
            info["id"]
            for info in list_runs(state_dir)
            if info.get("workflow") == WORKFLOW and info.get("state") == "crashed"
            and (state_dir / "runs" / info["id"] / store.STATE_FILE).is_file()
            and store.load(state_dir / "runs" / info["id"]).findings_digest == wanted
        ]  # fmt: skip
        if not stopped:
            problem = "no stopped fix-findings run of this findings file to resume"
            raise FixloopError(Diagnostic(str(findings_path), 1, 1, "resume", problem))
        run_id = stopped[-1]
    if not re.match(RUN_ID_PATTERN, run_id):
        raise FixloopError(Diagnostic(run_id, 1, 1, "resume", "not a run id"))
    run_dir = state_dir / "runs" / run_id
    info = read_run(run_dir)
    if info.get("live"):
        raise FixloopError(Diagnostic(run_id, 1, 1, "resume", "that run is still running"))
    state = store.load(run_dir)
    if state.findings_digest != wanted:
        problem = f"run {run_id} read a different findings file; resume it with that file"
        raise FixloopError(Diagnostic(str(findings_path), 1, 1, "resume", problem))
    return run_id, state


def run_fix_findings(
    *,
    pack: Pack,
    backend: Backend,
    findings: Path,
    repo: Path,
    policies: Policies,
    prompter: Prompter,
    say: Callable[[str], None] = lambda _: None,
    resume: str | None = None,
    budget: RunBudget | None = None,
) -> Session:
    root = repository_root(repo)
    workflow = pack.workflow(WORKFLOW)
    if resume is None:
        state = new_state(findings, root)
    else:
        previous, state = _resumable(root, findings, resume)
        state.resumed_from = previous
        say(f"resuming run {previous}")
    run = Run.start(root, WORKFLOW)
    try:
        store.save(state, run.dir)
        dispatcher = Dispatcher(pack, backend, budget=budget, record=run.record)
        loop = FixFindingsLoop(
            workflow=workflow, dispatcher=dispatcher, repo=root, run=run, state=state,
            policies=policies, prompter=prompter, say=say,
        )  # fmt: skip
        loop.execute()
    except StepFailed as exc:
        run.close()
        step = workflow.markdown().step(exc.result.step)
        problem = f"{exc} (the run stopped; continue it with --resume {run.id})"
        raise FixloopError(
            Diagnostic(workflow.source.display, step.line if step else 1, 1, "step-failed", problem)
        ) from None
    except BaseException:
        # Left `running` without its lock, the run reads as crashed: `--resume` picks it up.
        run.close()
        raise
    output = state.output()
    run.finish(
        "finished", resolved=len(output.resolved), escalated=len(output.escalated),
        dropped=len(output.dropped), demoted=len(output.demoted),
    )  # fmt: skip
    return Session(state, run.id, run.dir)
