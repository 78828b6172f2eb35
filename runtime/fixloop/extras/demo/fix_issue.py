"""The demo's fix-issue case: an issue in, a graded patch out, the user's branch untouched.

A tiny `ledger` package whose `balance()` forgets refunds, and an issue that says so. The model
(scripted) finds the function, reads it, runs the tests (one fails), edits the line it read and
runs them again. Then fixloop grades the patch on its own: a fresh worktree of the base commit,
the patch applied, the base's tests, and a per-test verdict read from unittest's own report —
`test_refunds_count` must now pass (fail-to-pass) and `test_sales_add_up` must keep passing
(pass-to-pass). The patch is left in the run folder for the user to apply; nothing is committed.

The tests run directly (`--sandbox local`): they are the demo's own, and a machine without
bubblewrap or docker runs the demo too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from fixloop.agents.backend import Backend
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.workflows.fix_issue import FixIssueOptions, FixIssueResult, run_fix_issue
from fixloop.workflows.fix_issue.result import IssueStatus
from fixloop.workflows.kernel.workflow import Context

BUG = "amount for kind, amount in entries if kind == 'sale'"
FIX = "(amount if kind == 'sale' else -amount) for kind, amount in entries"
FILES = {
    "README.md": "# ledger\n\nThe fixloop demo's fix-issue example: a shop's till.\n",
    "ledger/__init__.py": '"""ledger: a shop\'s till."""\n',
    "ledger/till.py": (
        '"""What the till holds."""\n\n\n'
        "def balance(entries):\n"
        '    """Sales add to the balance, refunds take from it."""\n'
        f"    return sum({BUG})\n"
    ),
    "tests/__init__.py": "",
    "tests/test_till.py": (
        "import unittest\n\nfrom ledger.till import balance\n\n\n"
        "class TillTest(unittest.TestCase):\n"
        "    def test_sales_add_up(self):\n"
        "        self.assertEqual(balance([('sale', 5), ('sale', 7)]), 12)\n\n"
        "    def test_refunds_count(self):\n"
        "        self.assertEqual(balance([('sale', 10), ('refund', 3)]), 7)\n"
    ),
}
ISSUE = """\
# The till's balance ignores refunds

`ledger.till.balance([("sale", 10), ("refund", 3)])` says 10. A refund should take its amount
off the balance: the answer is 7.
"""
ISSUE_ID = "refunds"
TILL_TESTS = "tests.test_till.TillTest"
FAIL_TO_PASS = f"{TILL_TESTS}.test_refunds_count"  # must pass with the patch
PASS_TO_PASS = f"{TILL_TESTS}.test_sales_add_up"  # must keep passing
TEST_COMMAND = "python3 -m unittest"

FIX_ISSUE_SCRIPT: dict[str, Any] = {
    f"issue-fixer/{ISSUE_ID}/attempt-1": {
        "tools": [
            {"name": "search_code", "input": {"query": "def balance"}},
            {"name": "read_file", "input": {"path": "ledger/till.py"}},
            {"name": "run_tests", "input": {}},
            {
                "name": "edit_file",
                "input": {"path": "ledger/till.py", "version": "@last", "old": BUG, "new": FIX},
            },
            {"name": "run_tests", "input": {}},
        ],
        "output": {
            "id": ISSUE_ID,
            "status": "done",
            "filesModified": ["ledger/till.py"],
            "notes": "balance() summed sales only; refunds now count negative. Tests pass.",
        },
    }
}


def build_issue_example(repo: Path) -> Path:
    """The example repository, committed, and its issue (outside it); returns the issue."""
    repo.mkdir(parents=True)
    for name, text in FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    (repo / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    author = ["-c", "user.name=fixloop demo", "-c", "user.email=demo@fixloop.invalid"]
    for argv in (
        ["init", "--quiet", "--initial-branch=main"],
        ["add", "."],
        [*author, "commit", "--quiet", "-m", "ledger: the till"],
    ):
        subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True)
    issue = repo.parent / f"{ISSUE_ID}.md"
    issue.write_text(ISSUE, encoding="utf-8")
    return issue


def run_issue_demo(
    issue: Path, repo: Path, pack: Pack, backend: Backend, events: EventStream
) -> FixIssueResult:
    options = FixIssueOptions(
        issue=issue,
        repo=repo,
        tests=(TEST_COMMAND,),
        fail_to_pass=(FAIL_TO_PASS,),
        pass_to_pass=(PASS_TO_PASS,),
        sandbox="local",
        issue_id=ISSUE_ID,
    )
    return run_fix_issue(options, Context(pack, backend, events))


def check_issue(
    result: FixIssueResult, repo: Path, base: str, *, scripted: bool = True
) -> list[str]:
    """The case's promises, checked against the repository and the run's own record: the
    user's branch and tree as they were; and, when the script played the model, resolved,
    graded per test, a patch left. A real model's patch may fairly be rejected: then only a
    resolved issue must have been graded."""
    problems: list[str] = []
    grade = result.acceptance.grade if result.acceptance is not None else None
    if scripted and result.status is not IssueStatus.RESOLVED:
        problems.append(f"fix-issue did not resolve the issue ({result.reason})")
    if (scripted or result.status is IssueStatus.RESOLVED) and (grade is None or not grade.ok):
        problems.append("fix-issue's acceptance did not grade the patch per test")
    if scripted and (not result.patch_path or not Path(result.patch_path).is_file()):
        problems.append("fix-issue left no patch")
    head = _git(repo, "rev-parse", "HEAD")
    status = _git(repo, "status", "--porcelain")
    if head != base or status:
        problems.append("fix-issue changed the user's branch or tree")
    return problems


def issue_summary_lines(result: FixIssueResult) -> list[str]:
    grade = result.acceptance.grade if result.acceptance is not None else None
    graded = (
        f"{FAIL_TO_PASS.rsplit('.', 1)[-1]} now passes, {PASS_TO_PASS.rsplit('.', 1)[-1]} "
        "still passes"
        if grade is not None and grade.ok
        else "not accepted"
    )
    lines = [f"fix-issue     {result.status} after {len(result.attempts)} attempt(s): {graded}"]
    if result.patch_path and result.status is IssueStatus.RESOLVED:
        lines.append(
            f"                the patch: {result.patch_path} (git apply it; nothing was committed)"
        )
    elif result.patch_path:
        lines.append(f"                the rejected patch, to read: {result.patch_path}")
    return lines


def _git(repo: Path, *argv: str) -> str:
    done = subprocess.run(["git", *argv], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


__all__ = [
    "FIX_ISSUE_SCRIPT",
    "build_issue_example",
    "check_issue",
    "issue_summary_lines",
    "run_issue_demo",
]
