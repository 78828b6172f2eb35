"""What review-fix on the demo repository (`build_example`, `REVIEW_FIX_SCRIPT`) ends with,
whichever backend plays the script: the end-to-end tests of each backend hold it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.gitrepo import git


def assert_demo_review_fixed(repo: Path, base: str, items: list[dict[str, Any]]) -> None:
    """Three findings fixed and two skipped, a commit per fix and then the report on the user's
    branch, the tree clean, CR-02's broken edit rolled back."""
    statuses = {o["id"]: o["label"] for o in items}
    assert statuses["CR-01"] == "fixed"
    assert statuses["CR-02"].startswith("skipped: fix caused errors, rolled back")
    assert statuses["WR-01"] == "fixed: requires human verification"
    assert statuses["WR-02"] == "fixed"
    assert statuses["WR-03"].startswith("skipped: finding not reproducible")
    subjects = git(repo, "log", "--format=%s", f"{base}..HEAD").splitlines()
    assert subjects[0] == "docs(01): add code review fix report"
    assert sorted(s.split()[1] for s in subjects[1:]) == ["CR-01", "WR-01", "WR-02"]
    assert git(repo, "status", "--porcelain") == ""
    stock = (repo / "shelf" / "stock.py").read_text()
    assert "if not prices:\n        return 0.0" in stock
    assert "count < 0" not in stock, "CR-02's broken edit was rolled back"
