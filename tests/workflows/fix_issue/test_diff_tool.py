"""`git_diff`: the patch so far, against the base, from the files the tools changed; its path is
in the run's folder, and the model cannot choose the base or the files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    Listening,
    fixing_tools,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.gitrepo import git

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.fix_issue.diff_tool import PREVIEW_CHARS
from fixloop.workflows.kernel.workflow import Context

KEY = "issue-fixer/ISSUE/attempt-1"


def test_git_diff_shows_the_patch_the_run_would_hand_back(tmp_path: Path, pack: Pack) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    tools = [
        {"name": "git_diff", "input": {}},  # nothing changed yet
        *fixing_tools(),
        {"name": "git_diff", "input": {"base": "HEAD~5", "paths": ["/etc/passwd"]}},  # refused
        {"name": "git_diff", "input": {}},
        {"name": "run_tests", "input": {}},
    ]
    script = {KEY: {"tools": tools, "bash": [], "output": FIXED_OUTPUT}}
    backend = Listening(ScriptedBackend(script))
    options = FixIssueOptions(
        issue=write_issue(tmp_path), repo=repo, tests=[UNITTEST], open_sandbox=recorder()
    )
    result = run_fix_issue(options, Context(pack, backend))
    assert result.status is IssueStatus.RESOLVED, result.reason
    empty, refused, shown = backend.of("git_diff")
    assert (empty["ok"], empty["files"], empty["preview"], empty["base_commit"]) == (
        True,
        0,
        "",
        base,
    )
    assert refused["error"] == "bad_arguments"
    assert shown["files"] == 1 and shown["base_commit"] == base and not shown["truncated"]
    assert "-    return sum(values) / (len(values) + 1)" in shown["preview"]
    patch = Path(shown["patch_path"])
    assert patch.parent == Path(result.result_path).parent  # the run's folder, not the worktree
    assert patch.read_bytes() == Path(result.patch_path).read_bytes()
    # Showing the diff changed no revision: the last run_tests is the one check-attempt reused.
    before, after = backend.of("run_tests")[-2:]
    assert before["revision"] == after["revision"] == result.attempts[0].revision
    events = [json.loads(line) for line in Path(result.trace_path).read_text().splitlines()]
    diffs = [e for e in events if e["event"] == "tool" and e.get("tool") == "git_diff"]
    assert [e.get("files") for e in diffs] == [0, None, 1]
    assert all("preview" not in e for e in diffs)  # the trace summarises; it copies no code


def test_a_long_patch_is_previewed_in_20000_characters_and_kept_whole(
    tmp_path: Path, pack: Pack
) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    content = "".join(f"line {number}\n" for number in range(5000))  # about 50,000 characters
    tools = [
        {"name": "create_file", "input": {"path": "calc/table.txt", "content": content}},
        {"name": "git_diff", "input": {}},
    ]
    failed = {"id": "ISSUE", "status": "failed", "notes": "only a table"}
    script = {KEY: {"tools": tools, "output": failed}}
    backend = Listening(ScriptedBackend(script))
    options = FixIssueOptions(
        issue=write_issue(tmp_path), repo=repo, tests=[UNITTEST], max_attempts=1
    )
    run_fix_issue(options, Context(pack, backend))
    [shown] = backend.of("git_diff")
    assert shown["truncated"] is True and len(shown["preview"]) == PREVIEW_CHARS == 20_000
    whole = Path(shown["patch_path"]).read_text()
    assert len(whole) > 50_000 and whole.startswith(shown["preview"])
    assert shown["bytes"] == len(whole.encode())
