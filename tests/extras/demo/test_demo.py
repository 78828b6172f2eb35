"""`fixloop demo` as a user runs it: the real CLI in a fresh directory, checked from outside."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.gitrepo import git

from fixloop.documents.source import parse_document
from fixloop.extras.demo.example import HOSTILE_TITLE, REVIEW_PATH

pytestmark = pytest.mark.slow


def test_demo_commits_one_fix_per_fixed_finding_and_reports_match(tmp_path: Path) -> None:
    directory = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "demo", "--dir", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "SCRIPTED" in out and "No network, no API key" in out
    assert "tests         before: 3/8 passed    after: 7/8 passed" in out

    repo = directory / "shelf"
    report_rel = REVIEW_PATH.replace("REVIEW.md", "REVIEW-FIX.md")
    meta = parse_document((repo / report_rel).read_text(), repo / report_rel).metadata
    subjects = git(repo, "log", "--reverse", "--format=%s", "HEAD~5..HEAD~1").splitlines()
    fixes = [s for s in subjects if s.startswith("fix(01): ")]
    assert len(fixes) == meta["fixed"] == 3
    assert meta["skipped"] == 2 and meta["findings_in_scope"] == 5
    assert meta["status"] == "partial"
    assert f"fix(01): WR-02 {HOSTILE_TITLE}" in fixes  # the title is data, never shell
    assert subjects[-1] == "docs(01): add code review fix report"
    # fix-engine: RR-1 passed on its second attempt (one commit), RR-2 failed three (its report).
    assert (
        "fix-engine    1 item(s) done, 1 failed, 5 attempt(s), 1 commit(s); section escalated"
        in out
    )
    last = git(repo, "log", "-1", "--format=%s").strip()
    assert last.startswith("restock-report: RR-1 ")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["shelf/report.py"]
    report = repo / ".git" / "fixloop" / "sections" / "restock-report" / "error_report.yaml"
    assert "check_id: RR-2" in report.read_text()
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "6"

    # fix-findings staged (never committed) its resolved fix.
    assert "shelf/labels.py" in git(repo, "diff", "--staged", "--name-only").split()
    output = json.loads((directory / "fix-findings-output.json").read_text())
    assert output["resolved"] == [2]
    assert [e["id"] for e in output["escalated"]] == [1]
    assert [d["id"] for d in output["dropped"]] == [3]
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]


def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "demo", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().endswith("usage: --dir must be a new or empty directory")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
