"""The demo's fix-engine case: its promises, checked from the repository, catch a broken run."""

from __future__ import annotations

from pathlib import Path

from fixloop.documents.pack import default_pack_root, load_pack
from fixloop.events import EventStream
from fixloop.extras.demo.example import build_example
from fixloop.extras.demo.fix_engine import MINI_PRD, run_case, self_check, summary_lines
from fixloop.workflows.fix_engine import FixEngineResult
from fixloop.workflows.fix_engine.section import AttemptRecord, ItemRecord


def test_the_case_passes_one_item_on_its_second_attempt_and_fails_the_other(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    pack, _ = load_pack(default_pack_root())
    result = run_case(repo, pack, None, EventStream())
    assert self_check(result, repo) == []
    assert (repo / MINI_PRD).is_file(), "the mini-PRD stays the user's untracked draft"
    assert summary_lines(result)[0] == (
        "fix-engine    1 item(s) done, 1 failed, 5 attempt(s), 1 commit(s); section escalated"
    )


def test_self_check_names_each_broken_promise(tmp_path: Path) -> None:
    once = [AttemptRecord(attempt=1, passed=True, verdict="rejected", evidence="ok")]
    result = FixEngineResult(
        "prd.md", items=[ItemRecord(id="RR-1", text="t", status="done", attempts=once)]
    )
    failed = ItemRecord(id="RR-2", text="t", status="failed", attempts=once)
    result.items.append(failed)
    result.status, result.complete = "escalated", "COMPLETE"
    assert self_check(result, tmp_path, scripted=False) == [
        "fix-engine's error report does not name RR-2",
        "fix-engine: COMPLETE COMPLETE, escalated",
    ]
    assert self_check(result, tmp_path)[2:] == [
        "fix-engine's items ended {'RR-1': ('done', 1), 'RR-2': ('failed', 1)}",
        "fix-engine: RR-1's file is not on the branch, or RR-2's is",
    ]
    assert self_check(None, tmp_path) == ["fix-engine did not run"]
