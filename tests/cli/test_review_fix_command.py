"""`fixloop review-fix` through the real CLI: output, exit codes, one-line errors, budgets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


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
    result = json.loads(done.stdout)
    assert (result["fixed"], result["skipped"], result["report_status"]) == (1, 0, "all_fixed")
    assert result["findings"][0]["commit"]
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
    done = fixloop("review-fix", REVIEW_REL, cwd=user_repo.path)
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
        "review-fix", REVIEW_REL, "--script", script, "--max-cost-usd", "0.5", "--json",
        cwd=user_repo.path,
    )  # fmt: skip
    result = json.loads(done.stdout)
    statuses = [(item["status"], item["reason"]) for item in result["findings"]]
    assert statuses[0] == ("fixed", "")  # the call that overspent had already started
    assert statuses[1][0] == "skipped"
    assert statuses[1][1].startswith("fixer result inconclusive (run_budget")
    assert (user_repo.path / "src/util.py").read_text() == "def name():\n    return 'util'\n"
