"""Merge one task onto the run's worktree, in ascending id order, then remove its worktree.

What the task changed is what git sees changed in its worktree (`.fixloop/` left out), never the
executor's word. The executor is confined to the task's declared files (`filesModified` in the
plan) and the files it created (never a protected one: CI or git configuration, the pack's
documents, secret files; `kernel.scope_policy.not_granted`): any other change is put back in the
task's worktree first (git-protocol's `rollback-files`, per file), recorded on the task, named in
a warning and, should the task reach the fix loop, in its fixer's history. The paths left become
one commit made by the document's `checkpoint-task` in the task's worktree, in parallel right
after its executor (exactly those paths; the task's branch does not move, so a recovery never
has to keep it). Then, in series, `merge-task` merges that
commit with `--no-ff` in the run's worktree: a conflict aborts that merge and fails only that
task. Whatever happened, `remove-task` removes the task's worktree, branch and sentinel, last.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fixloop import gitrepo
from fixloop.steps.paths import check_path, write_paths_file
from fixloop.steps.result import required_output
from fixloop.workflows.execute_wave.work import TaskWork, task_files_only
from fixloop.workflows.kernel.scope_policy import not_granted

if TYPE_CHECKING:
    from fixloop.workflows.execute_wave.wave import WaveRun


def commit_task(flow: WaveRun, work: TaskWork) -> None:
    """The task's changes as one commit in its worktree (on its executor's thread, in parallel);
    sets `task_commit`, or `to_verify` when there is nothing to merge, or `failed`."""
    worktree = work.worktree
    if work.failed or work.impl is None or worktree is None:
        return
    changed = confine(flow, work, worktree)
    if work.failed:
        return
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


def confine(flow: WaveRun, work: TaskWork, worktree: Path) -> list[str]:
    """What the task changed, once every change outside its files is put back (and recorded);
    `failed` when one could not be put back."""
    status = gitrepo.changed_paths(worktree)
    changed = task_files_only(list(status))
    declared = [check_path(worktree, path) for path in work.task.files]
    strays = not_granted({path: status[path] for path in changed}, declared, created=True)
    if not strays:
        return changed
    listed = write_paths_file(flow.records.scratch(f"task-{work.id}.put-back"), worktree, strays)
    flow.steps_of(flow.protocol, work.steps).attempt(
        "rollback-files",
        worktree,
        RUN_ID=work.run_id,
        WORKTREE=str(worktree),
        PATHS_FILE=str(listed),
        TAG="HEAD",
    )
    left = sorted(set(strays) & set(gitrepo.changed_paths(worktree)))
    work.put_back = [path for path in strays if path not in left]
    flow.records.put_back(work.id, work.put_back)
    files = ", ".join(declared) or "none declared"
    if work.put_back:
        flow.warn(
            f"task {work.id}: changed {', '.join(work.put_back)} outside its files ({files} and "
            "files it created); put back",
            item=work.id,
        )
    if left:
        work.fail(f"changed {', '.join(left)} outside its files and it could not be put back")
    return [path for path in changed if path not in strays]


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


__all__ = ["commit_task", "confine", "merge_one", "remove_task"]
