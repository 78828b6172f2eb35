"""A workflow's git session: the git-protocol document's steps, in order, with cleanup as finally.

    run = Run.start(repo, "review-fix")
    with git_session(run) as git:          # preflight, recover, setup-worktree, tag baseline
        ...edit files under git.worktree...
        git.commit(["src/a.py"], "fix(02): CR-01 …")   # exactly these paths, or None if unchanged
        git.rollback(["src/b.py"])                     # back to HEAD (or a tag), per file
        git.tag("before-wave-2")                       # a tag of this run
        git.checkpoint_at(commit, "last-fix")          # where an agent's own commit is undone to
        if git.head_moved():                           # an agent committed behind our back
            git.undo_agent_commit(changed, "revert(02): …")
        git.export_patch(run.dir / "fix.patch")
    git.outcome                                        # fast-forwarded? kept branch?
    run.finish("finished" if git.outcome.fast_forwarded else "kept-branch")

Every git command is in `workflows/git-protocol.md`; this module only sequences the steps and
turns a failed step into `StepFailed` (a FixloopError, exit code 1) carrying the step's result.
Cleanup runs on every path out of the `with` block, including exceptions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.pack import WorkflowDoc, default_pack_root, load_pack
from fixloop.runs.recovery import RecoveryReport, Sweeper, recover
from fixloop.runs.run import Run
from fixloop.steps.caller import Steps
from fixloop.steps.paths import write_paths_file
from fixloop.steps.result import StepFailed, StepResult, required_count, required_output

PROTOCOL = "git-protocol"


@dataclass(frozen=True)
class CleanupOutcome:
    fast_forwarded: bool
    branch: str
    kept_branch: str | None
    unmerged: str
    moved: bool = True  # whether the run committed anything its branch could move to

    def describe(self) -> str:
        if self.fast_forwarded and not self.moved:
            return f"{self.branch} unchanged (the run committed nothing); worktree removed"
        if self.fast_forwarded:
            return f"{self.branch} fast-forwarded; worktree and temp branch removed"
        return (
            f"could not fast-forward {self.branch}: kept {self.kept_branch} "
            f"({self.unmerged} commit(s)); merge it by hand"
        )


def load_protocol(pack_root: Path | None = None) -> WorkflowDoc:
    pack, _ = load_pack(pack_root or default_pack_root())
    return pack.workflow(PROTOCOL)


class GitSession:
    """One run's worktree. Create it with `git_session(run)`."""

    def __init__(
        self, protocol: WorkflowDoc, run: Run, setup: dict[str, str], timeout_s: float
    ) -> None:
        self.protocol = protocol
        self.run = run
        self.timeout_s = timeout_s
        self.branch = setup["BRANCH"]
        self.base = setup["BASE"]
        self.worktree = Path(setup["WORKTREE"])
        self.temp_branch = setup["TEMP_BRANCH"]
        self.outcome: CleanupOutcome | None = None
        self._lists = 0
        # The checkpoint (`undo-agent-commit` of git-protocol.md): the commit the worktree should
        # be at (the run's last own commit) and the run's tag at it ("" when tagging failed: a
        # commit an agent makes then cannot be undone, and saying so is all that is left).
        self.expected_head = self.base
        self.checkpoint = "baseline"
        # Set by a workflow that keeps a failed run's worktree to be looked at (fix-issue's
        # --keep-worktree): then no cleanup runs, and the worktree, its temp branch and the
        # sentinel stay for recovery (`fixloop recover`, or the next run's) to remove.
        self.keep = False

    def step(self, name: str, inputs: Mapping[str, str], *, cwd: Path | None = None) -> StepResult:
        """Run one protocol step; raise StepFailed unless it succeeded."""
        steps = Steps(self.protocol, self.run, self.timeout_s)
        return steps.must(name, cwd or self.worktree, **inputs)

    def paths_file(self, paths: Iterable[str]) -> Path:
        """Check `paths` (refusing any that escape the worktree) and write them for a step."""
        self._lists += 1
        target = self.run.dir / "paths" / f"{self._lists:04d}"
        return write_paths_file(target, self.worktree, paths)

    def tag(self, name: str) -> str:
        result = self.step(
            "tag", {"RUN_ID": self.run.id, "WORKTREE": str(self.worktree), "TAG": name}
        )
        return required_output(result, "COMMIT")

    def commit(self, paths: Iterable[str], message: str) -> str | None:
        """Commit exactly `paths` as they are in the worktree; None when none of them changed."""
        listed = self.paths_file(paths)
        inputs = {"WORKTREE": str(self.worktree), "PATHS_FILE": str(listed), "MESSAGE": message}
        result = self.step("commit-paths", inputs)
        if required_output(result, "COMMITTED", ("yes", "no")) == "no":
            return None
        return required_output(result, "COMMIT")

    def checkpoint_at(self, commit: str, tag: str) -> None:
        """The run's own work is at `commit` now: tag it `tag`, the point an undo returns to."""
        self.expected_head = commit
        try:
            self.tag(tag)
            self.checkpoint = tag
        except FixloopError:
            self.checkpoint = ""

    def head_moved(self) -> str | None:
        """The worktree's HEAD when something other than the run committed there, else None."""
        head = gitrepo.head(self.worktree)
        return head if head != self.expected_head else None

    def undo_agent_commit(self, changed: Iterable[str], message: str, tag: str) -> str:
        """Undo commits an agent made since the checkpoint, recording the undo as a new commit
        (history is never rewritten): every path they touched and every path in `changed` goes
        back to the checkpoint (`rollback-files`), then one `commit-paths` of those paths; the
        checkpoint moves to the undo (tagged `tag`). FixloopError when there is no checkpoint."""
        if not self.checkpoint:
            problem = "no checkpoint to return to: tagging the run's last commit failed"
            raise FixloopError(Diagnostic(str(self.worktree), 1, 1, "git", problem), exit_code=1)
        head = gitrepo.head(self.worktree)
        committed = gitrepo.paths_between(self.worktree, self.expected_head, head)
        paths = sorted({*committed, *changed})
        self.rollback(paths, self.checkpoint)
        commit = self.commit(paths, message) or gitrepo.head(self.worktree)
        self.checkpoint_at(commit, tag)
        return commit

    def rollback(self, paths: Iterable[str], to: str = "HEAD") -> None:
        """Put `paths` back as they are in `to` (HEAD, or a tag name of this run)."""
        listed = self.paths_file(paths)
        inputs = {
            "RUN_ID": self.run.id,
            "WORKTREE": str(self.worktree),
            "PATHS_FILE": str(listed),
            "TAG": to,
        }
        self.step("rollback-files", inputs)

    def export_patch(
        self, target: Path, *, base: str = "baseline", paths: Iterable[str] | None = None
    ) -> int:
        """Write base..worktree (committed and not) as a binary-safe patch; return file count."""
        inputs = {
            "RUN_ID": self.run.id,
            "WORKTREE": str(self.worktree),
            "PATCH_FILE": str(target),
            "TAG": base,
        }
        if paths is not None:
            inputs["PATHS_FILE"] = str(self.paths_file(paths))
        return required_count(self.step("export-patch", inputs), "FILES")

    def cleanup(self) -> CleanupOutcome:
        if self.outcome is None:
            try:
                moved = gitrepo.head(self.worktree) != self.base
            except FixloopError:  # the worktree is already gone: the cleanup step says what is left
                moved = True
            result = self.step("cleanup", {"RUN_ID": self.run.id}, cwd=self.run.repo)
            out = result.outputs
            self.outcome = CleanupOutcome(
                fast_forwarded=required_output(result, "FAST_FORWARDED", ("yes", "no")) == "yes",
                branch=out.get("BRANCH", self.branch),
                kept_branch=out.get("KEPT_BRANCH") or None,
                unmerged=out.get("UNMERGED", "0"),
                moved=moved,
            )
        return self.outcome


@contextmanager
def git_session(
    run: Run,
    *,
    protocol: WorkflowDoc | None = None,
    timeout_s: float = 300.0,
    recovered: list[RecoveryReport] | None = None,
    preflighted: bool = False,
    sweepers: Sequence[Sweeper] = (),
) -> Iterator[GitSession]:
    """Preflight, recover dead runs, set up this run's worktree, tag `baseline`; clean up on
    every exit.

    `recovered`, when given, receives the recovery report so the caller can show it.
    `preflighted`: the caller ran the protocol's preflight before the run started (a workflow's
    run always does), so it is not run twice. `sweepers` clean up what dead runs left outside
    git (`recovery.recover`).
    """
    protocol = protocol or load_protocol()
    steps = Steps(protocol, run, timeout_s)
    if not preflighted:
        steps.must("preflight", run.repo)
    report = recover(run.repo, protocol, run=run, timeout_s=timeout_s, sweepers=sweepers)
    if recovered is not None:
        recovered.append(report)
    setup = steps.attempt("setup-worktree", run.repo, RUN_ID=run.id)
    if not setup.ok:
        # Setup may have died after `git worktree add`; undo whatever it left, keeping no commit.
        steps.attempt("recover-run", run.repo, RUN_ID=run.id)
        raise StepFailed(setup)
    session = GitSession(protocol, run, setup.outputs, timeout_s)
    try:
        session.tag("baseline")
        yield session
    finally:
        if not session.keep:
            session.cleanup()
