"""Continuing a stopped execute-wave run of the same plan (`--resume [RUN_ID]`).

A run saves its state after every change (`state.ExecuteWaveState`): each finished wave, the
tasks in it, and `waves_commit`, its temporary branch's commit after its last finished wave. A
run that was killed (or stopped by a failed step) left those waves committed on its temporary
branch, which recovery keeps because the user's branch lacks them.

Resuming it: the document's `resume-run` step fast-forwards the user's branch to that commit
(only a fast-forward, only in the user's own tree while the branch is checked out there); the
finished waves are carried over (their records, tasks.json statuses and wave results) and not
run again; the tasks of the wave it was in the middle of go back to `pending` and run again. The
stopped run's folder is left as it was; the new run says which run it continued.

Without `--resume`, a stopped run whose committed waves are not on the user's branch is named in
a warning: tasks.json may call tasks done whose commits are only on that run's branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.runs.run import list_runs
from fixloop.runs.state import LATEST, STATE_FILE, load_state, stopped_runs
from fixloop.workflows.execute_wave.state import ExecuteWaveState, write_wave_result

if TYPE_CHECKING:
    from fixloop.workflows.execute_wave.wave import WaveRun

_FINAL = {"committed": "done", "rolled-back": "failed", "failed": "failed", "skipped": "skipped"}


def _resumed_already(state_dir: Path) -> set[str]:
    """Ids of runs some other run of execute-wave has resumed."""
    found: set[str] = set()
    for info in list_runs(state_dir):
        run_dir = state_dir / "runs" / str(info.get("id", ""))
        if info.get("workflow") != "execute-wave" or not (run_dir / STATE_FILE).is_file():
            continue
        try:
            earlier = load_state(run_dir, ExecuteWaveState)
        except FixloopError:
            continue
        if earlier.resumed_from:
            found.add(earlier.resumed_from)
    return found


def _on_branch(flow: WaveRun, commit: str) -> bool:
    try:
        return gitrepo.unmerged_count(flow.wave_plan.repo, commit, "HEAD") == 0
    except Exception:  # gitpython: an unknown or pruned commit is simply not on the branch
        return False


def stopped_of_plan(
    state_dir: Path, digest: str, this_run: str = ""
) -> list[tuple[str, ExecuteWaveState]]:
    """The stopped runs of the plan with `digest` that no run has resumed yet, oldest first."""
    done = _resumed_already(state_dir)
    return [
        (run_id, state)
        for run_id, state in stopped_runs(state_dir, ExecuteWaveState, digest)
        if run_id != this_run and run_id not in done
    ]


def chosen_run(
    stopped: list[tuple[str, ExecuteWaveState]], wanted: str
) -> tuple[str, ExecuteWaveState]:
    """The run `--resume wanted` names among `stopped`; FixloopError (exit 2) when none.

    Asked before the run starts too (`ExecuteWave.plan`), so nothing to resume leaves no run
    folder behind."""
    chosen = stopped[-1:] if wanted == LATEST else [p for p in stopped if p[0] == wanted]
    if not chosen:
        names = ", ".join(run_id for run_id, _ in stopped) or "none"
        problem = f"no stopped run of this plan to resume as {wanted!r} (stopped runs: {names})"
        raise FixloopError(Diagnostic("--resume", 1, 1, "resume", problem))
    return chosen[0]


def resume_or_warn(flow: WaveRun) -> None:
    run = flow.active_run
    stopped = stopped_of_plan(run.state_dir, flow.wave_plan.tasks.digest, run.id)
    wanted = flow.options.resume
    if wanted is None:
        for run_id, state in stopped:
            if state.waves_commit and not _on_branch(flow, state.waves_commit):
                flow.warn(
                    f"run {run_id} stopped after committing waves your branch does not have "
                    "yet; --resume continues it"
                )
        return
    run_id, earlier = chosen_run(stopped, wanted)
    if earlier.waves_commit and not _on_branch(flow, earlier.waves_commit):
        flow.step("resume-run", flow.wave_plan.repo, WAVES_COMMIT=earlier.waves_commit)
    carry_over(flow, run_id, earlier)


def carry_over(flow: WaveRun, run_id: str, earlier: ExecuteWaveState) -> None:
    """The stopped run's finished waves become this run's; its unfinished wave runs again."""
    state = flow.state
    state.resumed_from = flow.result.resumed_from = run_id
    finished = {record.wave for record in earlier.waves if record.finished}
    changes: dict[str, dict[str, object]] = {}
    for task_id, record in earlier.tasks.items():
        if record.wave in finished:
            state.tasks[task_id] = record
            changes[task_id] = {"status": _FINAL.get(record.status, "failed")}
        else:
            changes[task_id] = {"status": "pending", "lastError": None}
    state.waves = [record for record in earlier.waves if record.finished]
    state.waves_commit = earlier.waves_commit
    flow.tasks_file.update_many(changes)
    flow.records.save()
    for wave in state.waves:  # the wave results, as that run wrote them (or would have)
        write_wave_result(flow.active_run.dir, wave, flow.wave_plan.tasks.raw_ids)
    waves = ", ".join(str(w) for w in sorted(finished)) or "none"
    flow.note(f"resuming run {run_id}: waves finished there: {waves}")


__all__ = ["carry_over", "chosen_run", "resume_or_warn", "stopped_of_plan"]
