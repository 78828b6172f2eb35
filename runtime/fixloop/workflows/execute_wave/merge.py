"""Merge one task onto the run's worktree, in ascending id order, then remove its worktree.

What the task changed is what git sees changed in its worktree (`.fixloop/` left out), never the
executor's word. Those paths become one commit made by the document's `checkpoint-task` in the
task's worktree, in parallel right after its executor (exactly those paths; the task's branch
does not move, so a recovery never has to keep it). Then, in series, `merge-task` merges that
commit with `--no-ff` in the run's worktree: a conflict aborts that merge and fails only that
task. Whatever happened, `remove-task` removes the task's worktree, branch and sentinel, last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fixloop import gitrepo
from fixloop.steps.paths import write_paths_file
from fixloop.steps.result import required_output
from fixloop.workflows.execute_wave.work import TaskWork, task_files_only

if TYPE_CHECKING:
    from fixloop.workflows.execute_wave.wave import WaveRun


def commit_task(flow: WaveRun, work: TaskWork) -> None:
    """The task's changes as one commit in its worktree (on its executor's thread, in parallel);
    sets `task_commit`, or `to_verify` when there is nothing to merge, or `failed`."""
    worktree = work.worktree
    if work.failed or work.impl is None or worktree is None:
        return
    changed = task_files_only(list(gitrepo.changed_paths(worktree)))
    if not changed:
        work.to_verify = True  # no_task, or done with nothing to merge: verification decides
        return
    if work.impl.status == "no_task":
        work.fail(f"executor reported no_task but changed {', '.join(changed)}")
        return
    work.base = gitrepo.head(worktree)
    listed = write_paths_file(flow.records.scratch(f"task-{work.id}.paths"), worktree, changed)
    snapshot = flow.steps_of(flow.doc, work.steps).attempt(
        "checkpoint-task",
        worktree,
        RUN_ID=work.run_id,
        WORKTREE=str(worktree),
        TASK_ID=work.id,
        PATHS_FILE=str(listed),
        MESSAGE=f"task {work.id}: {work.task.name}",
    )
    if not snapshot.ok:
        work.fail(f"could not commit the task's work: {snapshot.describe_failure()}")
        return
    work.task_commit = required_output(snapshot, "CHECKPOINT")


def merge_one(flow: WaveRun, work: TaskWork) -> None:
    """Merge the task's commit (ascending id, serially); sets `merged`, `files` or `failed`."""
    if work.failed or not work.task_commit:
        return
    # A failing merge step leaves the run's worktree in doubt: StepFailed stops the run.
    merged = flow.steps_of(flow.doc, work.steps).must(
        "merge-task",
        flow.git.worktree,
        WORKTREE=str(flow.git.worktree),
        TASK_ID=work.id,
        TASK_COMMIT=work.task_commit,
    )
    if required_output(merged, "MERGED", ("yes", "no")) != "yes":
        work.fail(f"merge conflict: {merged.outputs.get('MERGE_ERROR', '')}".rstrip(": "))
        return
    work.merged = work.to_verify = True
    work.merge_commit = gitrepo.head(flow.git.worktree)
    work.files = gitrepo.paths_between(flow.git.worktree, work.base, work.task_commit)


def remove_task(flow: WaveRun, work: TaskWork) -> None:
    """Remove the task's worktree, branch and sentinel (whatever happened), then its sub-run."""
    if work.sub_run is None:
        return
    steps = flow.steps_of(flow.doc, work.steps)
    removed = steps.attempt("remove-task", flow.git.worktree, TASK_RUN_ID=work.run_id)
    if not removed.ok:
        flow.warn(f"task {work.id}: {removed.describe_failure()}", item=work.id)
        return  # its lock is released with the run; `fixloop recover` finishes the job
    work.sub_run.finish("finished")
    work.sub_run = None
    work.worktree = None


__all__ = ["commit_task", "merge_one", "remove_task"]
