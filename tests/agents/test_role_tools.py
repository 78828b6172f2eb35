"""A role's own tools run by fixloop (`role_tools.py`): each rule tested by a call that attacks it.

Real files in a real git repository; the calls are what a hostile model would ask for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixloop.agents.backend import AgentRequest
from fixloop.agents.role_tools import MAX_SCAN_ENTRIES, RoleTools
from fixloop.agents.shell_tool import BashPolicy
from fixloop.agents.toolbox import WRITING_TOOLS, ToolReply, ToolSpec
from fixloop.documents.tools import parse_tool
from fixloop.sandboxes import choose_sandbox
from fixloop.sandboxes.launcher import RunSandbox

FIXER_TOOLS = ("Read", "Edit", "Write", "Bash", "Grep", "Glob")
VERIFIER_TOOLS = ("Read", "Grep", "Glob", "Write", "Bash(git diff:*)", "Bash(git log:*)")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("x = 1\ny = 2\n")
    (root / "other.py").write_text("z = 3\n")
    (root / ".env").write_text("DB_PASSWORD=hunter2hunter2\n")
    (tmp_path / "outside.txt").write_text("not yours\n")
    return root


def tools(cwd: Path, names: tuple[str, ...] = FIXER_TOOLS, **changes: Any) -> RoleTools:
    request = AgentRequest(
        role="fixer",
        system_prompt="",
        task="",
        tools=names,
        model="opus",
        output_schema="FixerResult",
        cwd=cwd,
        **changes,
    )
    return RoleTools(request)


def answer(reply: ToolReply) -> dict[str, Any]:
    data = json.loads(reply.text)
    assert isinstance(data, dict)
    assert data["ok"] is not reply.is_error
    return data


def test_read_edit_write_in_the_assigned_file(repo: Path) -> None:
    own = tools(repo, writable=("app.py",))
    read = answer(own.call("Read", {"file_path": str(repo / "app.py")}))
    assert read["content"] == "     1\tx = 1\n     2\ty = 2\n"
    assert answer(own.call("Edit", {"file_path": "app.py", "old_string": "1", "new_string": "5"}))
    assert (repo / "app.py").read_text() == "x = 5\ny = 2\n"
    assert answer(own.call("Write", {"file_path": "app.py", "content": "done\n"}))["ok"]
    assert (repo / "app.py").read_text() == "done\n" and own.denied == []


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("other.py", "not among the files assigned"),
        ("../outside.txt", "outside the worktree"),
        ("/etc/hosts", "outside the worktree"),
        (".git/config", "git metadata"),
    ],
)
def test_a_write_outside_the_scope_is_refused_and_recorded(repo: Path, path: str, why: str) -> None:
    own = tools(repo, writable=("app.py",))
    before = {p: p.read_bytes() for p in repo.parent.rglob("*") if p.is_file()}
    refused = answer(own.call("Write", {"file_path": path, "content": "pwned\n"}))
    edit = {"file_path": path, "old_string": "x", "new_string": "pwned"}
    assert not answer(own.call("Edit", edit))["ok"]
    assert why in refused["message"]
    assert [d.tool for d in own.denied] == ["Write", "Edit"]
    assert {p: p.read_bytes() for p in repo.parent.rglob("*") if p.is_file()} == before


def test_a_symbolic_link_out_of_the_worktree_is_no_way_out(repo: Path) -> None:
    (repo / "link").symlink_to(repo.parent / "outside.txt")
    own = tools(repo)
    assert not answer(own.call("Write", {"file_path": "link", "content": "pwned"}))["ok"]
    assert not answer(own.call("Read", {"file_path": "link"}))["ok"]
    assert (repo.parent / "outside.txt").read_text() == "not yours\n"


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", ".env", ".git/config"])
def test_reads_stay_in_the_worktree_and_out_of_secret_files(repo: Path, path: str) -> None:
    own = tools(repo)
    refused = answer(own.call("Read", {"file_path": path}))
    assert refused["ok"] is False
    assert "hunter2" not in json.dumps(refused)


def test_grep_and_glob_skip_secret_files_and_git(repo: Path) -> None:
    own = tools(repo)
    found = answer(own.call("Grep", {"pattern": "hunter2|z = 3"}))
    assert found["matches"] == ["other.py:1:z = 3"]
    listed = answer(own.call("Glob", {"pattern": "**/*"}))["files"]
    assert sorted(listed) == ["app.py", "other.py"]
    assert answer(own.call("Glob", {"pattern": "*.py", "path": "../"}))["ok"] is False


def test_a_tool_the_role_was_not_given_is_not_offered_and_is_refused(repo: Path) -> None:
    reviewer = tools(repo, ("Read", "Grep", "Glob"), writable=())
    assert [spec.name for spec in reviewer.specs()] == ["Read", "Glob", "Grep"]
    edit = {"file_path": "app.py", "old_string": "x", "new_string": "pwned"}
    assert "not among this role's tools" in answer(reviewer.call("Edit", edit))["message"]
    assert not answer(reviewer.call("Bash", {"command": "touch pwned"}))["ok"]
    assert not (repo / "pwned").exists() and (repo / "app.py").read_text() == "x = 1\ny = 2\n"
    assert [(d.tool, d.path) for d in reviewer.denied] == [("Edit", "app.py")]


class Versioned:
    """A lent toolbox that, like fix-issue's, owns every change."""

    replaces = WRITING_TOOLS

    def specs(self) -> list[ToolSpec]:
        return []

    def call(self, name: str, arguments: Any) -> ToolReply:
        raise AssertionError("not called here")


def test_the_tools_a_lent_toolbox_replaces_are_refused(repo: Path) -> None:
    own = tools(repo, toolbox=Versioned())
    assert [spec.name for spec in own.specs()] == ["Read", "Glob", "Grep"]
    assert not answer(own.call("Bash", {"command": "touch pwned"}))["ok"]
    assert not answer(own.call("Write", {"file_path": "app.py", "content": "pwned"}))["ok"]
    assert not (repo / "pwned").exists() and (repo / "app.py").read_text() == "x = 1\ny = 2\n"


@pytest.mark.parametrize(
    "command",
    [
        "git diff; touch pwned",
        "git diff && touch pwned",
        "git diff $(touch pwned)",
        "git diff `touch pwned`",
        "git diff > pwned",
        "git diff --output=pwned",
        "touch pwned",
        "git status",
        "git diff\ntouch pwned",
    ],
)
def test_a_pattern_limited_bash_runs_only_those_programs(repo: Path, command: str) -> None:
    verifier = tools(repo, VERIFIER_TOOLS, writable=())
    refused = answer(verifier.call("Bash", {"command": command}))
    assert refused["ok"] is False and "git diff" in refused["message"]
    assert not (repo / "pwned").exists()


def test_a_pattern_limited_bash_runs_its_program_without_a_shell(repo: Path) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "-C", str(repo), "add", "app.py"], check=True)
    subprocess.run(["git", "-C", str(repo), *identity, "commit", "-qm", "a"], check=True)
    (repo / "app.py").write_text("x = 2\n")
    verifier = tools(repo, VERIFIER_TOOLS, writable=())
    ran = answer(verifier.call("Bash", {"command": "git diff -- 'app.py'"}))
    assert ran["exit_code"] == 0 and "+x = 2" in ran["output"]
    assert BashPolicy.of([e for e in map(parse_tool, VERIFIER_TOOLS) if e]) == BashPolicy(
        prefixes=((("git", "diff"), True), (("git", "log"), True))
    )


def test_bash_without_a_sandbox_does_not_see_the_key(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-that-must-stay-home-000")
    own = tools(repo)
    ran = answer(own.call("Bash", {"command": "env; echo done"}))
    assert "done" in ran["output"] and "sk-test-key" not in ran["output"]
    assert "PATH=" in ran["output"] and os.environ["OPENAI_API_KEY"].startswith("sk-test")


@pytest.mark.needs("bwrap")
def test_bash_runs_in_the_run_s_sandbox(repo: Path) -> None:
    """The attack: a shell command writing outside the worktree. Under bwrap it cannot."""
    sandbox = RunSandbox(choose_sandbox("bwrap"), run_id="r", python=sys.executable)
    outside = Path("/var/tmp") / f"fixloop-role-tools-{os.getpid()}"
    own = tools(repo, sandbox=sandbox)
    ran = answer(own.call("Bash", {"command": f"touch inside; touch {outside} || echo refused"}))
    assert "refused" in ran["output"] and "Read-only file system" in ran["output"]
    assert (repo / "inside").is_file() and not outside.exists()


def test_a_hard_link_the_shell_made_to_a_file_outside_is_neither_read_nor_written(
    repo: Path,
) -> None:
    """The attack: the model's own shell links a file outside the worktree under a name inside
    it, then reads and writes that name with the file tools."""
    outside = repo.parent / "outside.txt"
    own = tools(repo)
    made = answer(own.call("Bash", {"command": f"ln {outside} linked.txt && echo made"}))
    assert "made" in made["output"] and (repo / "linked.txt").stat().st_nlink == 2
    wrote = answer(own.call("Write", {"file_path": "linked.txt", "content": "pwned\n"}))
    edit = {"file_path": "linked.txt", "old_string": "not", "new_string": "pwned"}
    edited = answer(own.call("Edit", edit))
    read = answer(own.call("Read", {"file_path": "linked.txt"}))
    for refused in (wrote, edited, read):
        assert refused["ok"] is False and "hard link" in refused["message"], refused
    assert [(d.tool, d.path) for d in own.denied] == [
        ("Write", "linked.txt"),
        ("Edit", "linked.txt"),
    ]
    grep = answer(own.call("Grep", {"pattern": "yours"}))
    assert grep["matches"] == [] and grep["hard_links"] == ["linked.txt"]
    assert outside.read_text() == "not yours\n"


def test_a_walk_stops_at_its_entry_limit_and_says_how_much_it_left(repo: Path) -> None:
    many = repo / "vendor"
    many.mkdir()
    for number in range(MAX_SCAN_ENTRIES + 50):
        (many / f"f{number:05d}.txt").touch()
    (many / "deeper").mkdir()
    (many / "deeper" / "needle.txt").write_text("needle\n")
    own = tools(repo)
    listed = answer(own.call("Glob", {"pattern": "**/*.txt"}))
    assert listed["truncated"] is True and listed["unvisited"] > 0
    assert "stopped after 20000 entries" in listed["message"]
    found = answer(own.call("Grep", {"pattern": "needle"}))
    assert found["matches"] == [] and found["truncated"] is True and found["unvisited"] > 0
    narrower = answer(own.call("Grep", {"pattern": "needle", "path": "vendor/deeper"}))
    assert narrower["matches"] == ["vendor/deeper/needle.txt:1:needle"]
    assert narrower["truncated"] is False and "unvisited" not in narrower
    assert MAX_SCAN_ENTRIES == 20_000
