"""The issue-fixer's tools: version-checked, unique, exact edits; paths kept in; preset tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import STATS, UNITTEST, make_issue_repo

from fixloop.agents.toolbox import WRITING_TOOLS
from fixloop.events import Event, EventKind
from fixloop.sandboxes import open_sandbox
from fixloop.workflows.fix_issue.suite import PresetTest, Suite
from fixloop.workflows.fix_issue.tools import IssueTools
from fixloop.workflows.fix_issue.versions import MAX_FILE_BYTES, file_version


@pytest.fixture
def tools(tmp_path: Path) -> IssueTools:
    repo = make_issue_repo(tmp_path / "repo")
    suite = Suite(
        [PresetTest(tuple(UNITTEST))], open_sandbox("local", worktree=repo), repo, timeout_s=60
    )
    return IssueTools(repo, suite, item="ISSUE")


def call(tools: IssueTools, name: str, **arguments: Any) -> dict[str, Any]:
    reply = tools.call(name, arguments)
    answer: dict[str, Any] = json.loads(reply.text)
    assert reply.is_error is (not answer["ok"])
    return answer


def read(tools: IssueTools, path: str = "calc/stats.py") -> str:
    answer = call(tools, "read_file", path=path)
    assert answer["ok"], answer
    return str(answer["version"])


def test_a_read_returns_numbered_lines_and_the_content_version(tools: IssueTools) -> None:
    answer = call(tools, "read_file", path="calc/stats.py", start_line=4, end_line=6)
    assert answer["version"] == file_version(STATS.encode())
    assert answer["total_lines"] == 10
    assert answer["content"].splitlines()[0] == "     4\tdef average(values):"
    assert (answer["start_line"], answer["end_line"], answer["truncated"]) == (4, 6, True)


def test_an_edit_based_on_the_version_read_replaces_exactly_once(tools: IssueTools) -> None:
    version = read(tools)
    answer = call(
        tools,
        "edit_file",
        path="calc/stats.py",
        version=version,
        old="(len(values) + 1)",
        new="len(values)",
    )
    assert answer["ok"], answer
    text = (tools.worktree / "calc/stats.py").read_text()
    assert "return sum(values) / len(values)\n" in text
    assert answer["version"] == file_version(text.encode()) and answer["line"] == 6
    assert tools.touched == {"calc/stats.py"}


def test_a_stale_edit_is_refused_and_nothing_is_overwritten(tools: IssueTools) -> None:
    version = read(tools)
    target = tools.worktree / "calc/stats.py"
    target.write_text(STATS.replace("spread", "width"))  # changed since the read
    answer = call(
        tools,
        "edit_file",
        path="calc/stats.py",
        version=version,
        old="+ 1",
        new="",
    )
    assert answer["error"] == "stale_version"
    assert "Read it again" in answer["message"] and "version" not in answer
    assert target.read_text() == STATS.replace("spread", "width")
    assert tools.touched == set()


def test_the_version_of_the_last_edit_is_the_base_of_the_next(tools: IssueTools) -> None:
    version = read(tools)
    first = call(tools, "edit_file", path="calc/stats.py", version=version, old="+ 1", new="+ 0")
    again = call(tools, "edit_file", path="calc/stats.py", version=version, old="+ 0", new="")
    assert again["error"] == "stale_version"
    chained = call(
        tools, "edit_file", path="calc/stats.py", version=first["version"], old=" + 0", new=""
    )
    assert chained["ok"], chained


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ("len(values) - 1", "len(values)", "no_match"),
        ("values", "items", "ambiguous_match"),
        ("+ 1", "+ 1", "no_change"),
    ],
)
def test_edits_that_are_not_one_exact_change_are_refused(
    tools: IssueTools, old: str, new: str, code: str
) -> None:
    version = read(tools)
    answer = call(tools, "edit_file", path="calc/stats.py", version=version, old=old, new=new)
    assert answer["error"] == code
    assert (tools.worktree / "calc/stats.py").read_text() == STATS


def test_an_edit_that_grows_the_file_past_the_limit_is_refused(tools: IssueTools) -> None:
    version = read(tools)
    huge = "x" * MAX_FILE_BYTES
    answer = call(tools, "edit_file", path="calc/stats.py", version=version, old="+ 1", new=huge)
    assert answer["error"] == "too_large"
    assert (tools.worktree / "calc/stats.py").read_text() == STATS


@pytest.mark.parametrize(
    "path", ["../outside.py", "/etc/passwd", ".git/config", "link/x.py", "calc/../../x.py"]
)
def test_paths_outside_the_worktree_are_refused(tools: IssueTools, path: str) -> None:
    outside = tools.worktree.parent / "elsewhere"
    outside.mkdir()
    (tools.worktree / "link").symlink_to(outside)
    for name, arguments in [
        ("read_file", {"path": path}),
        ("create_file", {"path": path, "content": "x"}),
        ("edit_file", {"path": path, "version": "0", "old": "a", "new": "b"}),
    ]:
        answer = call(tools, name, **arguments)
        assert answer["error"] == "unsafe_path", (name, path, answer)
    assert list(outside.iterdir()) == []


def test_create_makes_a_new_file_and_refuses_an_existing_one(tools: IssueTools) -> None:
    made = call(tools, "create_file", path="tests/test_more.py", content="import unittest\n")
    assert made["ok"] and made["version"] == file_version(b"import unittest\n")
    again = call(tools, "create_file", path="calc/stats.py", content="")
    assert again["error"] == "exists"
    assert tools.touched == {"tests/test_more.py"}


def test_an_edit_keeps_crlf_line_ends_and_the_file_mode(tools: IssueTools) -> None:
    target = tools.worktree / "run.sh"
    target.write_bytes(b"#!/bin/sh\r\necho one\r\necho two\r\n")
    target.chmod(0o755)
    version = read(tools, "run.sh")
    answer = call(
        tools,
        "edit_file",
        path="run.sh",
        version=version,
        old="echo one\necho two",
        new="echo 1\necho 2",
    )
    assert answer["ok"], answer
    assert target.read_bytes() == b"#!/bin/sh\r\necho 1\r\necho 2\r\n"
    assert os.access(target, os.X_OK)


def test_binary_and_missing_files_are_refused(tools: IssueTools) -> None:
    (tools.worktree / "blob.bin").write_bytes(b"\xff\xfe\x00")
    assert call(tools, "read_file", path="blob.bin")["error"] == "not_text"
    assert call(tools, "read_file", path="nope.py")["error"] == "not_found"
    edit = call(tools, "edit_file", path="nope.py", version="0", old="a", new="b")
    assert edit["error"] == "not_found"


def test_bad_arguments_and_unknown_tools_are_answered_not_raised(tools: IssueTools) -> None:
    assert call(tools, "read_file", path="calc/stats.py", extra=1)["error"] == "bad_arguments"
    assert call(tools, "edit_file", path="calc/stats.py")["error"] == "bad_arguments"
    assert call(tools, "rm", path="calc/stats.py")["error"] == "unknown_tool"
    assert call(tools, "run_tests", target="9")["error"] == "bad_target"


def test_search_and_list_see_what_git_sees(tools: IssueTools) -> None:
    (tools.worktree / "calc/__pycache__").mkdir()
    (tools.worktree / "calc/__pycache__/stats.pyc").write_bytes(b"def average")
    found = call(tools, "search_code", query="def average", glob="*.py")
    match = {"path": "calc/stats.py", "line": 4, "text": "def average(values):"}
    assert found["matches"] == [match]
    listed = call(tools, "list_files", path="calc")
    assert listed["files"] == ["calc/__init__.py", "calc/stats.py"]


def test_run_tests_says_which_revision_each_result_holds_for(tools: IssueTools) -> None:
    before = call(tools, "run_tests")
    assert before["passed"] is False and before["results"][0]["status"] == "failed"
    version = read(tools)
    call(tools, "edit_file", path="calc/stats.py", version=version, old=" + 1", new="")
    after = call(tools, "run_tests", target="1")
    assert after["passed"] is True and after["revision"] != before["revision"]
    assert tools.suite.results_at(before["revision"])[0].status == "failed"  # type: ignore[index]


def test_every_call_is_one_tool_event_without_the_file_contents(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    events: list[Event] = []
    suite = Suite(
        [PresetTest(tuple(UNITTEST))], open_sandbox("local", worktree=repo), repo, timeout_s=60
    )
    tools = IssueTools(repo, suite, events.append, "ISSUE")
    version = read(tools)
    call(tools, "edit_file", path="calc/stats.py", version=version, old="stale", new="x")
    assert [(e.kind, e.message) for e in events] == [
        (EventKind.TOOL, "read_file ok"),
        (EventKind.TOOL, "edit_file no_match"),
    ]
    assert "sum(values)" not in json.dumps([e.to_json() for e in events])
    assert tools.replaces == WRITING_TOOLS and tools.calls == 2
