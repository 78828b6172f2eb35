"""`fixloop review-fix` through the real CLI: output, exit codes, one-line errors, budgets."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import cli
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import (
    APP_FIX,
    REVIEW_REL,
    UTIL_FIX,
    finding,
    review_text,
    write_review,
)


def fixloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli.fixloop(*args, cwd=cwd, timeout=120)


def _script(tmp_path: Path, data: dict[str, object]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_json_result_and_exit_code_zero_when_everything_is_fixed(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": APP_FIX})
    done = fixloop("review-fix", REVIEW_REL, "--script", script, "--json", cwd=user_repo.path)
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert (envelope["ok"], envelope["command"], envelope["exit_code"]) == (True, "review-fix", 0)
    assert envelope["counts"] == {"fixed": 1}
    result = envelope["result"]
    assert (result["fixed"], result["skipped"], result["report_status"]) == (1, 0, "all_fixed")
    assert envelope["items"][0]["commit"] and envelope["items"][0]["id"] == "CR-01"
    assert envelope["run_id"] == result["run_id"]
    assert result["totals"]["calls"] == 1
    assert "review-fix [1/1] CR-01: add subtracts ..." in done.stderr  # progress on stderr


def test_skipped_findings_exit_one_with_a_summary(user_repo: UserRepo, tmp_path: Path) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": {"fail": "timeout"}})
    done = fixloop("review-fix", REVIEW_REL, "--script", script, cwd=user_repo.path)
    assert done.returncode == 1
    assert "CR-01: skipped: fixer result inconclusive (timeout)" in done.stdout


def test_bad_review_is_one_line_exit_two(user_repo: UserRepo, tmp_path: Path) -> None:
    write_review(user_repo.path, review_text("### CR-01: t\n**Issue:** none\n"))
    script = _script(tmp_path, {})
    done = fixloop("review-fix", REVIEW_REL, "--script", script, cwd=user_repo.path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        ".planning/02-REVIEW.md:14:1: review-file: finding CR-01 has no **File:** line"
    ]
    assert "Traceback" not in done.stderr


def test_scripted_backend_needs_a_script(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "t", "src/app.py")))
    done = fixloop("review-fix", REVIEW_REL, "--backend", "scripted", cwd=user_repo.path)
    assert done.returncode == 2
    assert "needs --script FILE" in done.stderr


def test_a_spent_budget_starts_no_new_fix(user_repo: UserRepo, tmp_path: Path) -> None:
    write_review(
        user_repo.path,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", "util", "src/util.py"),
        ),
    )
    costly = {**APP_FIX, "cost_usd": 1.0}
    script = _script(
        tmp_path, {"fixer/CR-01/iteration-1": costly, "fixer/CR-02/iteration-1": UTIL_FIX}
    )
    done = fixloop(
        "review-fix",
        REVIEW_REL,
        "--script",
        script,
        "--max-cost-usd",
        "0.5",
        "--json",
        cwd=user_repo.path,
    )
    result = json.loads(done.stdout)
    statuses = [(item["status"], item["reason"]) for item in result["items"]]
    assert statuses[0] == ("fixed", "")  # the call that overspent had already started
    assert statuses[1][0] == "skipped"
    assert statuses[1][1].startswith("fixer result inconclusive (run_budget")
    assert (user_repo.path / "src/util.py").read_text() == "def name():\n    return 'util'\n"


def _bytes(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def test_a_dry_run_says_what_would_be_done_and_changes_nothing(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    write_review(
        user_repo.path,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("IN-01", "style", "src/util.py"),
        ),
    )
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": APP_FIX})
    before = _bytes(user_repo.path)
    done = fixloop("review-fix", REVIEW_REL, "--script", script, "--dry-run", cwd=user_repo.path)
    assert done.returncode == 0, done.stderr
    assert _bytes(user_repo.path) == before  # the tree and .git, byte for byte
    assert not (user_repo.path / ".git" / "fixloop").exists()
    assert done.stdout.splitlines() == [
        "review-fix --dry-run: nothing was changed",
        ".planning/02-REVIEW.md: 2 finding(s); 1 in scope (critical_warning), 1 out of scope",
        "would work in a worktree on a temporary branch from main",
        "[1/1] CR-01 (critical): would dispatch the fixer on src/app.py, verify, then commit or "
        "roll back",
        "would commit .planning/02-REVIEW-FIX.md once, then fast-forward main",
    ]
    as_json = fixloop(
        "review-fix", REVIEW_REL, "--script", script, "--dry-run", "--json", cwd=user_repo.path
    )
    data = json.loads(as_json.stdout)
    assert data["ok"] and data["counts"] == {"pending": 1} and data["result"]["dry_run"]
    assert _bytes(user_repo.path) == before
