"""REVIEW.md texts and scripted fixer replies for review-fix tests, over `make_user_repo` files.

The user repository's fixable files are `src/app.py` (`add` subtracts), `src/util.py`,
`tools/run.sh` and `old.txt`. A review is written untracked under `.planning/` (the user's own
untracked file) unless a test commits it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT
from tests.helpers import warm_python
from tests.helpers.crash_tally import crash_env
from tests.helpers.gitrepo import git

from fixloop.agents.backend import Backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack, load_pack
from fixloop.events import EventStream
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review_fix import ReviewFixOptions, ReviewFixResult, run_review_fix

REVIEW_REL = ".planning/02-REVIEW.md"
REPORT_REL = ".planning/02-REVIEW-FIX.md"
APP_FIXED = "def add(a, b):\n    return a + b\n"


def finding(fid: str, title: str, file: str, issue: str = "broken", fix: str = "repair") -> str:
    return f"### {fid}: {title}\n**File:** {file}\n**Issue:** {issue}\n**Fix:** {fix}\n\n"


def review_text(*findings: str, status: str = "issues_found", phase: str = "02") -> str:
    return (
        f'---\nphase: "{phase}"\nreviewed: "2026-01-01T00:00:00Z"\ndepth: standard\n'
        "files_reviewed: 2\nfiles_reviewed_list:\n  - src/app.py\n  - src/util.py\n"
        f"status: {status}\n---\n\n# Phase {phase}: Code Review\n\n" + "".join(findings)
    )


def write_review(repo: Path, text: str, rel: str = REVIEW_REL) -> Path:
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def fixed(path: str, old: str, new: str, summary: str = "fixed: done") -> dict[str, Any]:
    return {
        "edits": [{"path": path, "old": old, "new": new}],
        "output": {"files_changed": [path], "summary": summary, "concerns": None},
    }


APP_FIX = fixed("src/app.py", "a - b", "a + b", "fixed: add adds")
UTIL_FIX = fixed("src/util.py", "'util'", "'utility'", "fixed: clearer name")
UTIL_BROKEN = fixed("src/util.py", "return 'util'", "return ('util'", "fixed: tried")


def pack() -> Pack:
    loaded, _ = load_pack(REPO_ROOT)
    return loaded


def run(
    repo: Path, script: dict[str, Any], *, review: Path | None = None, **options: Any
) -> tuple[ReviewFixResult, ScriptedBackend]:
    backend = ScriptedBackend(script)
    target = review or repo / REVIEW_REL
    events = EventStream()
    context = Context(pack(), backend, events, budget=options.get("budget"))
    result = run_review_fix(ReviewFixOptions(review=target, repo=repo, **options), context)
    return result, backend


def run_with(options: ReviewFixOptions, backend: Backend) -> ReviewFixResult:
    """One review-fix run through its public entry point, as the command line makes it."""
    return run_review_fix(options, Context(pack(), backend, EventStream(), budget=options.budget))


def messages(repo: Path, since: str) -> list[str]:
    """Commit subjects after `since`, oldest first."""
    return git(repo, "log", "--reverse", "--format=%s", f"{since}..main").splitlines()


def files_of(repo: Path, commit: str) -> list[str]:
    listed = git(repo, "diff-tree", "--no-commit-id", "-r", "--name-only", commit)
    return sorted(listed.split())


def review_fix_cli(
    repo: Path, script: Path, crash_at: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`fixloop review-fix` on the repository's REVIEW.md as a user runs it (a process of its own),
    the scripted model playing `script`; `crash_at` kills it there (the crash switch)."""
    env = crash_env(crash_at)
    argv = ["-m", "fixloop", "review-fix", str(repo / REVIEW_REL)]
    argv += ["--repo", str(repo), "--script", str(script)]
    return warm_python.run(argv, env=env, timeout=120)
