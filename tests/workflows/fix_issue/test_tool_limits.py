"""The issue-fixer's tools keep their bounds (lines a read, entries listed and looked at, bytes
searched, snippet length, depth), refuse hard links, and run one call at a time."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from tests.helpers.fix_issue import UNITTEST, make_issue_repo

from fixloop.agents.toolbox import ToolReply, ToolSpec
from fixloop.sandboxes import open_sandbox
from fixloop.workflows.fix_issue.suite import PresetTest, Suite
from fixloop.workflows.fix_issue.tools import (
    MAX_LIST_ENTRIES,
    MAX_READ_LINES,
    MAX_SCAN_BYTES,
    MAX_SCAN_ENTRIES,
    MAX_SNIPPET_CHARS,
    Handler,
    IssueTools,
    reply,
)
from fixloop.workflows.fix_issue.versions import MAX_FILE_BYTES


def issue_tools(repo: Path, parts: Sequence[Any] = ()) -> IssueTools:
    suite = Suite(
        [PresetTest(tuple(UNITTEST))], open_sandbox("local", worktree=repo), repo, timeout_s=60
    )
    return IssueTools(repo, suite, item="ISSUE", parts=parts)


@pytest.fixture
def tools(tmp_path: Path) -> IssueTools:
    return issue_tools(make_issue_repo(tmp_path / "repo"))


def call(tools: IssueTools, name: str, **arguments: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(tools.call(name, arguments).text)
    return answer


def test_a_read_gives_at_most_400_lines_and_says_where_to_go_on(tools: IssueTools) -> None:
    (tools.worktree / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    first = call(tools, "read_file", path="long.txt")
    assert (first["start_line"], first["end_line"], first["truncated"]) == (1, 400, True)
    assert len(first["content"].splitlines()) == MAX_READ_LINES == 400
    asked = call(tools, "read_file", path="long.txt", start_line=401, end_line=1000)
    assert (asked["start_line"], asked["end_line"], asked["total_lines"]) == (401, 800, 1000)
    assert asked["content"].splitlines()[0] == "   401\tline 401"


def test_a_listing_gives_at_most_2000_files(tools: IssueTools) -> None:
    many = tools.worktree / "many"
    many.mkdir()
    for number in range(MAX_LIST_ENTRIES + 10):
        (many / f"f{number:04d}.txt").touch()
    listed = call(tools, "list_files", path="many")
    assert len(listed["files"]) == MAX_LIST_ENTRIES == 2000 and listed["truncated"] is True
    assert "unscanned" not in listed  # cut by the list's bound, not by the walk's
    few = call(tools, "list_files", path="calc")
    assert few["truncated"] is False


def test_a_walk_looks_at_20000_files_at_most_and_says_how_many_it_left(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    vendor = repo / "vendor"
    vendor.mkdir()
    for number in range(MAX_SCAN_ENTRIES + 5):
        (vendor / f"f{number:05d}.txt").touch()
    (vendor / "zz-needle.txt").write_text("needle\n")  # sorted last: past the bound
    tools = issue_tools(repo)
    listed = call(tools, "list_files", path="vendor")
    assert listed["unscanned"] == 6 and listed["truncated"] is True
    assert "stopped after 20000 files; 6 more" in listed["message"]
    found = call(tools, "search_code", query="needle", glob="*.txt")
    assert found["matches"] == [] and found["unscanned"] == 6 and found["truncated"] is True
    narrower = call(tools, "search_code", query="needle", glob="zz-*")
    assert narrower["matches"] == [{"path": "vendor/zz-needle.txt", "line": 1, "text": "needle"}]
    assert "unscanned" not in narrower and narrower["truncated"] is False
    assert MAX_SCAN_ENTRIES == 20_000


def test_a_search_reads_20_mib_at_most_names_what_it_skipped_and_cuts_snippets(
    tools: IssueTools,
) -> None:
    big = tools.worktree / "big"
    big.mkdir()
    block = ("x" * 1023 + "\n").encode()
    count = MAX_SCAN_BYTES // MAX_FILE_BYTES + 1
    for number in range(count):  # each just under the file limit, together past the scan limit
        (big / f"b{number:02d}.txt").write_bytes(block * (MAX_FILE_BYTES // len(block)))
    (tools.worktree / "a-wide.txt").write_text("needle " + "y" * 1000 + "\n")  # read first
    (big / "zz.txt").write_text("needle\n")  # past the limit: skipped, and named
    found = call(tools, "search_code", query="needle", glob="*.txt")
    skipped = found["skipped"]
    assert skipped[-2:] == ["big/b20.txt", "big/zz.txt"] and count == 21
    searched = ["a-wide.txt", *sorted(f"big/{f.name}" for f in big.iterdir())]
    read = [p for p in searched if p not in skipped]
    assert sum((tools.worktree / p).stat().st_size for p in read) <= MAX_SCAN_BYTES
    [match] = found["matches"]
    assert match["path"] == "a-wide.txt" and len(match["text"]) == MAX_SNIPPET_CHARS == 400
    assert MAX_SCAN_BYTES == 20 * MAX_FILE_BYTES == 20 * 1024 * 1024


def test_list_files_goes_max_depth_folders_down(tools: IssueTools) -> None:
    for path in ("top.txt", "a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "a/b/c/d/four.txt"):
        (tools.worktree / path).parent.mkdir(parents=True, exist_ok=True)
        (tools.worktree / path).write_text("x\n")
    top = call(tools, "list_files", path=".", max_depth=0)
    assert "top.txt" in top["files"] and not any("/" in path for path in top["files"])
    assert "a/b/c/three.txt" in call(tools, "list_files")["files"]  # 3 by default
    assert "a/b/c/d/four.txt" not in call(tools, "list_files")["files"]
    assert call(tools, "list_files", path="a", max_depth=1)["files"] == ["a/b/two.txt", "a/one.txt"]
    for depth in (-1, 21):
        assert call(tools, "list_files", max_depth=depth)["error"] == "bad_arguments"
    assert "a/b/c/d/four.txt" in call(tools, "list_files", max_depth=20)["files"]


def test_a_hard_link_a_test_run_made_to_a_file_outside_is_neither_read_nor_written(
    tools: IssueTools,
) -> None:
    """The attack: the model's only shell is the tests it runs. A test it writes links a file
    outside the worktree under a name inside it; then the file tools are asked to use that name."""
    outside = tools.worktree.parent / "outside.txt"
    outside.write_text("not yours\n")
    linker = (
        "import os\nimport unittest\n\n\nclass Link(unittest.TestCase):\n"
        f"    def test_link(self):\n        os.link({str(outside)!r}, 'calc/data.txt')\n"
    )
    assert call(tools, "create_file", path="tests/test_link.py", content=linker)["ok"]
    call(tools, "run_tests")
    assert (tools.worktree / "calc/data.txt").stat().st_nlink == 2
    read = call(tools, "read_file", path="calc/data.txt")
    edit = call(tools, "edit_file", path="calc/data.txt", version="x", old="not", new="pwned")
    create = call(tools, "create_file", path="calc/data.txt", content="pwned\n")
    for refused in (read, edit):
        assert refused["error"] == "hard_link" and "hard link" in refused["message"], refused
    assert create["ok"] is False
    found = call(tools, "search_code", query="yours")
    assert found["matches"] == [] and found["hard_links"] == ["calc/data.txt"]
    assert outside.read_text() == "not yours\n"
    assert tools.touched == {"tests/test_link.py"}


class _Name(BaseModel):
    name: str


class Gate:
    """A tool part whose first call holds until released, to see whether a second call can run
    beside it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.first_inside = threading.Event()
        self.release = threading.Event()
        self.second_inside = threading.Event()

    def specs(self) -> Sequence[ToolSpec]:
        return [ToolSpec("hold", "", _Name.model_json_schema())]

    def handlers(self) -> Mapping[str, Handler]:
        return {"hold": (_Name, self.hold)}

    def hold(self, args: _Name) -> ToolReply:
        self.order.append(f"{args.name} in")
        if args.name == "first":
            self.first_inside.set()
            self.release.wait(30)
        else:
            self.second_inside.set()
        self.order.append(f"{args.name} out")
        return reply(True)


def test_calls_sent_at_once_run_one_at_a_time(tmp_path: Path) -> None:
    gate = Gate()
    tools = issue_tools(make_issue_repo(tmp_path / "repo"), parts=[gate])
    first = threading.Thread(target=tools.call, args=("hold", {"name": "first"}))
    second = threading.Thread(target=tools.call, args=("hold", {"name": "second"}))
    first.start()
    assert gate.first_inside.wait(30)
    second.start()
    # While the first call runs, the second waits for it (without the toolbox's lock it would be
    # inside at once, and this wait would return True).
    entered_beside = gate.second_inside.wait(0.5)
    gate.release.set()
    first.join(30)
    second.join(30)
    assert entered_beside is False
    assert gate.order == ["first in", "first out", "second in", "second out"]
    assert tools.calls == 2
