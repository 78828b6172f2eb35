"""The two section-wide limits a user of the original section loop relies on, both off by default:
stopping at the first escalation, and an attempt budget for the whole section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers.gitrepo import UserRepo
from tests.workflows.fix_engine.scenario import (
    make_section_repo,
    run,
    script,
    state_dir,
    subjects,
)
from tests.workflows.fix_engine.test_workflow import passing


@pytest.fixture
def section(tmp_path: Path) -> UserRepo:
    return make_section_repo(tmp_path / "repo")


def _first_item_fails() -> dict[str, Any]:
    """AC-1 wrong three times; check-2 would pass on its first attempt."""
    replies = passing()
    wrong = replies["executor/AC-1/attempt-1"]
    for n in (1, 2, 3):
        replies[f"executor/AC-1/attempt-{n}"] = wrong
        replies[f"verifier/AC-1/attempt-{n}"] = replies["verifier/AC-1/attempt-1"]
    return replies


def test_stop_on_escalation_leaves_the_items_after_the_failed_one_untried(
    section: UserRepo,
) -> None:
    tip = section.head()
    result, backend = run(section.path, _first_item_fails(), stop_on_escalation=True)
    assert [call.key for call in backend.calls] == [
        f"{role}/AC-1/attempt-{n}" for n in (1, 2, 3) for role in ("executor", "verifier")
    ]
    assert result.status == "escalated" and result.exit_code == 1
    assert subjects(section.path, tip) == []
    report = yaml.safe_load((state_dir(section.path) / "error_report.yaml").read_text("utf-8"))
    assert [f["check_id"] for f in report["error_report"]["final_failures"]] == ["AC-1"]
    assert report["error_report"]["not_tried"] == ["check-2"]
    assert section.branches() == ["main"]


def test_without_it_every_item_is_still_tried(section: UserRepo) -> None:
    result, backend = run(section.path, _first_item_fails())
    assert "executor/check-2/attempt-1" in [call.key for call in backend.calls]
    assert result.status == "escalated" and len(result.done) == 1


def test_a_section_attempt_budget_stops_the_run_and_counts_across_resumes(
    section: UserRepo,
) -> None:
    # AC-1 needs 2 attempts, check-2 fails 3 times: 5 in all; a budget of 3 stops after 3.
    result, backend = run(section.path, script(), section_attempts=3)
    assert [call.key for call in backend.calls][-2:] == [
        "executor/check-2/attempt-1",
        "verifier/check-2/attempt-1",
    ]
    assert result.status == "stopped" and result.exit_code != 0
    assert "the section's attempt budget (3) is spent" in result.stopped_by
    assert [item.id for item in result.done] == ["AC-1"]  # its commit is kept
    # Resumed with the same budget: nothing more may start, no model call.
    again, backend = run(section.path, script(), resume=True, section_attempts=3)
    assert backend.calls == []
    assert again.status == "stopped"
    # A larger one lets check-2 have its remaining attempts, and no more.
    last, backend = run(section.path, script(), resume=True, section_attempts=5)
    assert [call.key for call in backend.calls] == [
        f"{role}/check-2/attempt-{n}" for n in (2, 3) for role in ("executor", "verifier")
    ]
    assert last.status == "escalated"
