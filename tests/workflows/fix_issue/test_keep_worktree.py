"""--keep-worktree: an unresolved run's worktree stays to be looked at (with fix.patch and
result.json in the run folder); a resolved run's goes as always; `fixloop recover` removes a kept
one later, and `runs prune` then removes its folder. Without the flag nothing is kept."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import cli
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    fixing_script,
    fixing_tools,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.gitrepo import git

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.runs.prune import prune_runs
from fixloop.workflows.fix_issue import (
    FixIssueOptions,
    FixIssueResult,
    IssueStatus,
    run_fix_issue,
)
from fixloop.workflows.kernel.workflow import Context

HALF_FIX = fixing_tools(new="(len(values) + 2)")  # edits, but the test still fails
GAVE_UP = {"tools": HALF_FIX, "output": {**FIXED_OUTPUT, "status": "failed", "notes": "?"}}


def run(
    tmp_path: Path, pack: Pack, script: dict[str, object], keep: bool
) -> tuple[Path, FixIssueResult]:
    repo = make_issue_repo(tmp_path / "repo")
    options = FixIssueOptions(
        issue=write_issue(tmp_path),
        repo=repo,
        tests=[UNITTEST],
        open_sandbox=recorder(),
        max_attempts=1,
        keep_worktree=keep,
    )
    return repo, run_fix_issue(options, Context(pack, ScriptedBackend(script)))


def worktrees(repo: Path) -> list[str]:
    listed = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.split(" ", 1)[1] for line in listed if line.startswith("worktree ")][1:]


def test_an_unresolved_run_keeps_its_worktree_until_recover(tmp_path: Path, pack: Pack) -> None:
    repo, result = run(tmp_path, pack, {"issue-fixer/ISSUE/attempt-1": GAVE_UP}, keep=True)
    assert result.status is IssueStatus.UNRESOLVED
    kept = Path(result.kept_worktree)
    assert worktrees(repo) == [str(kept)]
    assert "(len(values) + 2)" in (kept / "calc/stats.py").read_text()  # the fixer's edit
    run_dir = Path(result.result_path).parent
    assert (run_dir / "fix.patch").read_text() and (run_dir / "result.json").is_file()
    assert json.loads((run_dir / "result.json").read_text())["kept_worktree"] == str(kept)
    assert json.loads((run_dir / "run.json").read_text())["details"]["kept_worktree"] == str(kept)
    assert any("is kept" in warning for warning in result.warnings)
    assert git(repo, "status", "--porcelain") == ""  # the user's tree: untouched
    # prune leaves it for recover; recover removes it; then prune removes the folder.
    assert [d.run_id for d in prune_runs(repo, keep=0).removed] == [f"{run_dir.name}-verify"]
    done = cli.fixloop("recover", "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert worktrees(repo) == [] and not kept.exists()
    assert git(repo, "branch", "--list", "fixloop/*") == ""
    assert run_dir.name in [d.run_id for d in prune_runs(repo, keep=0).removed]


def test_a_resolved_run_keeps_nothing(tmp_path: Path, pack: Pack) -> None:
    repo, result = run(tmp_path, pack, fixing_script(), keep=True)
    assert result.status is IssueStatus.RESOLVED
    assert result.kept_worktree == "" and worktrees(repo) == []


def test_without_the_flag_an_unresolved_run_keeps_nothing(tmp_path: Path, pack: Pack) -> None:
    repo, result = run(tmp_path, pack, {"issue-fixer/ISSUE/attempt-1": GAVE_UP}, keep=False)
    assert result.status is IssueStatus.UNRESOLVED
    assert result.kept_worktree == "" and worktrees(repo) == []
