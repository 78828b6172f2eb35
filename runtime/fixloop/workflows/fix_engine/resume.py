"""Resuming a fix-engine run that was killed part way, from the section's meta.yaml.

meta.yaml (written by the document's steps) says which items are done, with their commits, and
what each attempt found. What it cannot say is what the killed run's worktree held: that is gone
with it. So:

- the killed run's sentinel drives the git protocol's `cleanup` (as its own run would have): the
  user's branch fast-forwards to its item commits and its worktree, branch and sentinel go;
- an item meta.yaml records as `passed` whose commit is among those (the run died between the
  commit and `record-commit`) gets `record-commit` now; one whose commit was never made is done
  again (its changes went with the worktree): its passed attempt is made again, same number;
- every done item's commit must then be on the user's branch. When the killed run's branch could
  not fast-forward (the user committed meanwhile), it is kept and named, and the run stops until
  the user has merged it: a section is never completed on commits its branch lacks.

The killed run is found like any stopped run (`runs.state.stopped_runs`: same workflow, same
mini-PRD bytes, not finished). Its run folder only gets a note that it was recovered.
"""

from __future__ import annotations

import re

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.runs.run import mark_recovered
from fixloop.runs.state import stopped_runs
from fixloop.workflows.fix_engine.section import FixEngineState, ItemRecord, Section, read_item
from fixloop.workflows.kernel.workflow import AnyWorkflow


def resume_interrupted(flow: AnyWorkflow, section: Section) -> list[ItemRecord]:
    """The section's items, with the commits of killed runs on the user's branch and recorded."""
    run = flow.active_run
    items = {item.id: item for item in section.items}
    subject = re.compile(rf"^{re.escape(section.id)}: (?P<id>\S+) ")
    for dead, _ in stopped_runs(run.state_dir, FixEngineState, section.digest):
        sentinel = run.state_dir / "sentinels" / dead
        if dead == run.id or not sentinel.is_file():
            continue
        try:
            base = gitrepo.config_value(sentinel, "fixloop.base")
            branch = gitrepo.config_value(sentinel, "fixloop.tempbranch")
            commits = gitrepo.commits_between(run.repo, base, f"refs/heads/{branch}")
        except FixloopError:  # its branch is gone: its own cleanup had merged and deleted it
            commits = []
        step = flow.try_protocol_step("cleanup", run.repo, RUN_ID=dead)
        if not step.ok:
            flow.warn(f"could not clean up after the stopped run {dead}: {step.describe_failure()}")
            continue
        mark_recovered(run.state_dir / "runs" / dead, {"resumed_by": run.id, **step.outputs})
        kept = step.outputs.get("KEPT_BRANCH", "")
        if step.outputs.get("FAST_FORWARDED") != "yes" and gitrepo.branch_exists(run.repo, kept):
            flow.warn(f"stopped run {dead}: its commits are kept on {kept}")
            continue
        flow.note(f"stopped run {dead}: its {len(commits)} commit(s) are on your branch now")
        for commit in commits:
            match = subject.match(commit.subject)
            item = items.get(match["id"]) if match else None
            if item is not None and item.status == "passed":
                recorded = flow.step(
                    "record-commit",
                    section.repo,
                    STATE=str(section.state),
                    ITEM=item.id,
                    COMMIT=commit.sha,
                )
                items[item.id] = read_item(recorded)
    _require_on_branch(section, list(items.values()))
    return [_again_if_uncommitted(item) for item in items.values()]


def _require_on_branch(section: Section, items: list[ItemRecord]) -> None:
    missing = [
        f"{item.id} ({item.commit[:7]})"
        for item in items
        if item.status == "done"
        and item.commit
        and not gitrepo.is_ancestor(section.repo, item.commit)
    ]
    if missing:
        problem = (
            f"the commits of {', '.join(missing)} are not on your branch (a stopped run's branch "
            "was kept, see above): merge it, then resume again"
        )
        shown = display_path(section.meta)
        raise FixloopError(Diagnostic(shown, 1, 1, "resume", problem), exit_code=1)


def _again_if_uncommitted(item: ItemRecord) -> ItemRecord:
    """A passed item whose commit was never made is done again, from a clean worktree: its
    passed attempt is made again, under the same number (its record is then replaced)."""
    if item.status != "passed":
        return item
    earlier = [attempt for attempt in item.attempts if not attempt.passed]
    return item.model_copy(update={"status": "pending", "attempts": earlier})


__all__ = ["resume_interrupted"]
