"""Fix-issue test helpers: a buggy repository with an issue, scripts for the scripted model, and
the real sandboxes wrapped so that a test sees every command they ran."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.helpers.gitrepo import git

from fixloop.agents.backend import AgentOutcome, AgentRequest, Backend
from fixloop.agents.toolbox import Toolbox, ToolReply, ToolSpec
from fixloop.sandboxes import Sandbox, SandboxChoice, SandboxResult, open_sandbox
from fixloop.sandboxes.background import Background

STATS = '''"""Small statistics."""


def average(values):
    """The mean of a non-empty list of numbers."""
    return sum(values) / (len(values) + 1)


def spread(values):
    return max(values) - min(values)
'''
FIXED_LINE = "    return sum(values) / len(values)\n"
TEST_STATS = """import unittest

from calc.stats import average, spread


class StatsTest(unittest.TestCase):
    def test_average(self):
        self.assertEqual(average([2, 4]), 3)

    def test_spread(self):
        self.assertEqual(spread([1, 5, 3]), 4)
"""
ISSUE = """# average() is wrong

`calc.stats.average([2, 4])` returns 2.0; the mean of 2 and 4 is 3.
"""
UNITTEST = ["python3", "-m", "unittest"]
FIXED_OUTPUT = {
    "id": "ISSUE",
    "status": "done",
    "filesModified": ["calc/stats.py"],
    "notes": "average() divided by len + 1; now by len. All tests pass.",
}


def make_issue_repo(path: Path) -> Path:
    """A clean repository on `main`: `calc/stats.py` with an off-by-one, and unittest tests."""
    files = {
        "calc/__init__.py": "",
        "calc/stats.py": STATS,
        "tests/__init__.py": "",
        "tests/test_stats.py": TEST_STATS,
        ".gitignore": "__pycache__/\n",
    }
    for relative, content in files.items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "calc")
    return path


def write_issue(folder: Path, text: str = ISSUE, name: str = "ISSUE.md") -> Path:
    issue = folder / name
    issue.write_text(text, encoding="utf-8")
    return issue


def fixing_tools(
    old: str = "(len(values) + 1)", new: str = "len(values)", path: str = "calc/stats.py"
) -> list[dict[str, Any]]:
    """The tool calls of a fixer that locates, reproduces, edits with the version it read, and
    tests again."""
    return [
        {"name": "search_code", "input": {"query": "def average"}},
        {"name": "read_file", "input": {"path": path}},
        {"name": "run_tests", "input": {}},
        {"name": "edit_file", "input": {"path": path, "version": "@last", "old": old, "new": new}},
        {"name": "run_tests", "input": {}},
    ]


def fixing_script(issue_id: str = "ISSUE") -> dict[str, Any]:
    return {
        f"issue-fixer/{issue_id}/attempt-1": {
            "tools": fixing_tools(),
            "output": {**FIXED_OUTPUT, "id": issue_id},
        }
    }


class Recording:
    """A real sandbox (`fixloop.sandboxes`) that remembers the commands it ran."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.commands: list[list[str]] = []

    @property
    def choice(self) -> SandboxChoice:
        return self.inner.choice

    @property
    def worktree(self) -> Path:
        return self.inner.worktree

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = 300.0,
    ) -> SandboxResult:
        self.commands.append(list(argv))
        return self.inner.run(argv, cwd=cwd, env=env, timeout_s=timeout_s)

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        name: str = "",
    ) -> Background:
        self.commands.append(list(argv))
        return self.inner.start(argv, cwd=cwd, env=env, name=name)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Recording:
        self.inner.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.inner.__exit__(exc_type, exc, traceback)


@dataclass
class Recorder:
    """Opens real sandboxes and keeps them, so a test can see what ran where."""

    opened: list[Recording]

    def __call__(
        self,
        kind: str,
        *,
        worktree: Path,
        image: str | None,
        run_id: str | None,
        writable: Sequence[Path] = (),
    ) -> Recording:
        sandbox = Recording(
            open_sandbox(kind, worktree=worktree, image=image, run_id=run_id, writable=writable)
        )
        self.opened.append(sandbox)
        return sandbox


def recorder() -> Recorder:
    return Recorder([])


class Listening:
    """A backend that plays another and keeps every lent tool's answer, as the model read it."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.answers: list[tuple[str, dict[str, Any]]] = []

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        if request.toolbox is None:
            return self.inner.dispatch(request)
        lent: Toolbox = request.toolbox
        heard = self.answers

        class Heard:
            replaces = lent.replaces

            def specs(self) -> Sequence[ToolSpec]:
                return lent.specs()

            def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
                reply = lent.call(name, arguments)
                heard.append((name, json.loads(reply.text)))
                return reply

        return self.inner.dispatch(dataclasses.replace(request, toolbox=Heard()))

    def of(self, tool: str) -> list[dict[str, Any]]:
        return [answer for name, answer in self.answers if name == tool]
