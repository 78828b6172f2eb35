"""fix-findings: a fixer's write to another file is refused; it then reports a fix anyway.

Seed 002 wants a fixer that needs other files to ask first. One that tries to edit them instead
is refused by the backend, and its report (a fix within its own file) hides what it wanted; the
loop must treat the refusal as the scope-expansion request it is: roll back what the call did,
ask, then approve (re-dispatch with the file, verify both), reject or defer. A write refused
outside the repository or into `.git` can never be granted: that attempt fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_findings import (
    BUGGY,
    FIXED,
    GUARD_ON_BUGGY,
    GUARDED,
    HELPER,
    HELPER_FIXED,
    Policies,
    UserWork,
    finding,
    git,
    keys,
    run,
    staged,
    verdict,
)

from fixloop.documents.pack import Pack


def ignores_denial(*refused: dict[str, Any]) -> dict[str, Any]:
    """Edits calc.py, has its other writes refused, then reports a calc.py fix as if fine."""
    return {
        "edits": [{"path": "calc.py", "content": FIXED}, *refused],
        "output": {"files_changed": ["calc.py"], "summary": "fixed: guard", "concerns": None},
    }


TRIES_HELPER = ignores_denial({"path": "helper.py", "content": HELPER_FIXED})


def test_approved_the_fixer_gets_the_file_it_tried_and_both_are_verified(
    pack: Pack, repo: Path
) -> None:
    work = UserWork.capture(repo)
    target = finding()
    both = {
        "edits": [GUARD_ON_BUGGY, {"path": "helper.py", "content": HELPER_FIXED}],
        "output": {"files_changed": ["calc.py", "helper.py"], "summary": "fixed", "concerns": None},
    }
    script = {
        "fixer/1/round-1": TRIES_HELPER,
        "fixer/1/round-1/expanded": both,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, prompter = run(
        pack, repo, [target], script, answers=["Approve expanded scope"]
    )
    [asked] = prompter.asked
    assert asked.options[0] == "Approve expanded scope"
    assert "also edit helper.py" in asked.text
    assert "tried to edit helper.py, outside this finding's files (calc.py)" in asked.text
    assert "It then reported: fixed: guard" in asked.text
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-1/expanded", "verifier/1/round-1"]
    assert backend.calls[1].writable == ("calc.py", "helper.py")
    verifier = backend.calls[2].system_prompt
    assert "+    return 0.0" in verifier and "if xs else helper()" in verifier
    assert (staged(repo), staged(repo, "helper.py")) == (GUARDED, HELPER_FIXED)
    record = session.state.records[0]
    assert record.approved_files == ["helper.py"]
    assert record.notes[0].startswith("R1: the fixer's writes were refused: helper.py")
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_rejected_the_fixer_is_sent_back_to_its_own_file(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    within = {
        "edits": [GUARD_ON_BUGGY],
        "output": {"files_changed": ["calc.py"], "summary": "fixed", "concerns": None},
    }
    script = {
        "fixer/1/round-1": TRIES_HELPER,
        "fixer/1/round-1/original-scope": within,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, _ = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="reject")
    )
    assert keys(backend) == [
        "fixer/1/round-1",
        "fixer/1/round-1/original-scope",
        "verifier/1/round-1",
    ]
    assert backend.calls[1].writable == ("calc.py",)
    assert "rejected expanding the scope" in backend.calls[1].task
    assert staged(repo) == GUARDED
    assert (repo / "helper.py").read_text(encoding="utf-8") == HELPER
    assert session.state.records[0].approved_files == []
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_rejected_and_trying_the_file_again_is_a_failed_attempt(pack: Pack, repo: Path) -> None:
    target = finding()
    script = {
        "fixer/1/round-1": TRIES_HELPER,
        "fixer/1/round-1/original-scope": TRIES_HELPER,
        "fixer/1/round-2": {
            "edits": [GUARD_ON_BUGGY],
            "output": {"files_changed": ["calc.py"], "summary": "fixed", "concerns": None},
        },
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    session, backend, _ = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="reject")
    )
    assert keys(backend)[2:] == ["fixer/1/round-2", "verifier/1/round-2"]
    first = session.state.records[0].rounds[0]
    assert first.verdict == "inconclusive" and first.files_changed == []
    assert "again tried to edit helper.py, outside its scope ['calc.py']" in first.summary
    assert staged(repo) == GUARDED  # round 2 found calc.py as it was: round 1 was undone
    assert session.state.output().resolved == [1]


@pytest.mark.parametrize("policy", ["defer", "ask"])
def test_deferred_nothing_the_call_did_is_left_behind(pack: Pack, repo: Path, policy: str) -> None:
    work = UserWork.capture(repo)
    target = finding()
    policies = Policies(on_scope_expansion="defer" if policy == "defer" else "ask")
    session, backend, _ = run(
        pack, repo, [target], {"fixer/1/round-1": TRIES_HELPER}, policies=policies
    )
    assert keys(backend) == ["fixer/1/round-1"]  # headless `ask` defers too
    [escalated] = session.state.output().escalated
    assert escalated.attempts[0].startswith(
        "R1: scope expansion deferred: The fixer tried to edit helper.py"
    )
    assert escalated.staged_summary == "nothing staged"
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY, "its calc.py edit undone"
    assert (repo / "helper.py").read_text(encoding="utf-8") == HELPER
    assert git(repo, "diff", "--name-only", "--", "calc.py", "helper.py") == ""
    work.assert_intact(repo)


def test_a_crash_after_a_refused_write_is_still_a_scope_request(pack: Pack, repo: Path) -> None:
    crashed = {"edits": [{"path": "helper.py", "content": HELPER_FIXED}], "fail": "crash"}
    session, _, _ = run(
        pack,
        repo,
        [finding()],
        {"fixer/1/round-1": crashed},
        policies=Policies(on_scope_expansion="defer"),
    )
    [escalated] = session.state.output().escalated
    assert "tried to edit helper.py" in escalated.attempts[0]
    assert "ended inconclusive (crash): scripted crash" in escalated.attempts[0]


def _outside(repo: Path) -> str:
    return str(repo.parent / "outside.txt")


@pytest.mark.parametrize(
    ("refused", "why"),
    [
        pytest.param(lambda _: ".git/config", "paths inside .git are refused", id="git"),
        pytest.param(lambda _: ".git/hooks/pre-commit", "inside .git", id="git-hook"),
        pytest.param(lambda _: "../outside.txt", "'..' could leave the repository", id="dotdot"),
        pytest.param(_outside, "outside the repository", id="absolute"),
    ],
)
def test_a_write_no_approval_could_grant_fails_the_attempt(
    pack: Pack, repo: Path, refused: Any, why: str
) -> None:
    work = UserWork.capture(repo)
    target = finding()
    config = (repo / ".git" / "config").read_bytes()
    path = refused(repo)
    script = {
        "fixer/1/round-1": ignores_denial({"path": path, "content": "[core]\n"}),
        "fixer/1/round-2": {
            "edits": [GUARD_ON_BUGGY],
            "output": {"files_changed": ["calc.py"], "summary": "fixed", "concerns": None},
        },
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    session, backend, prompter = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="approve")
    )
    assert prompter.asked == []
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-2", "verifier/1/round-2"]
    assert backend.calls[1].writable == ("calc.py",), "nothing was added to the scope"
    record = session.state.records[0]
    assert record.approved_files == []
    first = record.rounds[0]
    assert first.verdict == "inconclusive" and first.files_changed == []
    assert "no scope expansion can reach" in first.summary
    assert path in first.summary and why in first.summary
    assert (repo / ".git" / "config").read_bytes() == config
    assert not (repo.parent / "outside.txt").exists()
    assert staged(repo) == GUARDED  # round 1's calc.py edit was undone before round 2
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_a_scope_request_made_after_an_edit_leaves_no_edit_behind(pack: Pack, repo: Path) -> None:
    asks_late = {
        "edits": [{"path": "calc.py", "content": FIXED}],
        "output": {
            "needs_scope_expansion": True,
            "additional_files": ["helper.py"],
            "justification": "the guard belongs in helper()",
        },
    }
    session, _, _ = run(
        pack,
        repo,
        [finding()],
        {"fixer/1/round-1": asks_late},
        policies=Policies(on_scope_expansion="defer"),
    )
    [escalated] = session.state.output().escalated
    assert escalated.attempts == ["R1: scope expansion deferred: the guard belongs in helper()"]
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY
