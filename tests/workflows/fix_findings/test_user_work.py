"""The user's uncommitted work is never part of a fix.

fix-findings stages whole files (`git add -- FILE`), so a fix can only be staged alone in a file
whose working copy is the index's. A finding whose files hold unstaged edits of the user's, or an
untracked file of theirs, stops before its fixer runs, in one line naming the files: nothing is
staged, nothing changes, and the escalation reports nothing staged. The user's staged hunks alone
go through the pre-staged check as before (committed first, set aside, or, by a person's choice,
proceeded with).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_findings import (
    FIXED,
    GUARD_ON_BUGGY,
    Policies,
    UserWork,
    finding,
    fix,
    git,
    keys,
    run,
    run_with,
    verdict,
)

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventKind
from fixloop.workflows.fix_findings.options import PrestagedPolicy

STAGED_LINE = "# the user's staged line\n"
UNSTAGED_LINE = "    return 2  # the user's unstaged edit\n"


def _users_edits(repo: Path) -> tuple[bytes, str]:
    """A staged hunk and, on top of it, an unstaged edit in calc.py: (bytes, index entry)."""
    calc = repo / "calc.py"
    calc.write_text(STAGED_LINE + calc.read_text(), encoding="utf-8")
    git(repo, "add", "--", "calc.py")
    calc.write_text(calc.read_text().replace("    return 1\n", UNSTAGED_LINE), encoding="utf-8")
    return calc.read_bytes(), git(repo, "ls-files", "--stage", "--", "calc.py")


@pytest.mark.parametrize("on_prestaged", ["ask", "commit", "proceed"])
def test_unstaged_edits_in_the_findings_file_stop_it_before_the_fixer_runs(
    pack: Pack, repo: Path, on_prestaged: PrestagedPolicy
) -> None:
    work = UserWork.capture(repo)
    calc, entry = _users_edits(repo)
    target = finding()
    edit: dict[str, Any] = fix() | {"edits": [GUARD_ON_BUGGY]}
    script = {
        "fixer/1/round-1": edit,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    policies = Policies(on_prestaged=on_prestaged)
    session, backend, _ = run(pack, repo, [target], script, policies=policies)

    assert keys(backend) == []  # no fixer, no verifier: it stopped before
    record = session.state.records[0]
    assert record.bucket == "escalated"
    [escalated] = session.state.output().escalated
    assert escalated.staged_summary == "nothing staged"
    assert escalated.evidence is not None and "\n" not in escalated.evidence
    assert "calc.py" in escalated.evidence and "unstaged" in escalated.evidence
    # The user's staged hunk and unstaged edit are exactly as they were.
    assert (repo / "calc.py").read_bytes() == calc
    assert git(repo, "ls-files", "--stage", "--", "calc.py") == entry
    work.assert_intact(repo)


def test_an_untracked_file_of_the_users_in_scope_stops_the_finding(pack: Pack, repo: Path) -> None:
    (repo / "new.py").write_text("DRAFT = 'mine'\n", encoding="utf-8")
    target = finding(file="new.py", body="new.py:1 needs a docstring.")
    script = {
        "fixer/1/round-1": {
            "edits": [{"path": "new.py", "content": '"""Doc."""\nDRAFT = "mine"\n'}],
            "output": {"files_changed": ["new.py"], "summary": "doc", "concerns": None},
        }
    }
    session, backend, _ = run(pack, repo, [target], script)

    assert keys(backend) == []
    [escalated] = session.state.output().escalated
    assert escalated.evidence is not None and "new.py" in escalated.evidence
    assert (repo / "new.py").read_text() == "DRAFT = 'mine'\n"
    assert "new.py" in git(repo, "ls-files", "--others", "--exclude-standard")


def test_a_clean_file_is_fixed_staged_and_verified_on_the_fix_alone(pack: Pack, repo: Path) -> None:
    """The user's work elsewhere (a staged other.py, an unstaged notes.txt) never joins the
    fix: the verifier's artifact and the escalation's count are the fix's lines only."""
    work = UserWork.capture(repo)
    target = finding()
    script = {
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(target, "confirmed")},
        "fixer/1/round-2": fix(),
        "verifier/1/round-2": {"output": verdict(target, "confirmed")},
    }
    session, backend, _ = run(pack, repo, [target], script)

    verifier = next(call for call in backend.calls if call.key == "verifier/1/round-1")
    assert "if xs else 0.0" in verifier.system_prompt
    for theirs in ("VALUE = 2", "more, unstaged"):
        assert theirs not in verifier.system_prompt
    [escalated] = session.state.output().escalated
    assert escalated.staged_summary == "R2's changes to calc.py, +1/-1 lines"
    assert git(repo, "show", ":calc.py") == FIXED
    work.assert_intact(repo)


def test_the_stop_is_said_in_one_line_as_it_happens(pack: Pack, repo: Path) -> None:
    _users_edits(repo)
    findings = repo.parent / "findings.json"
    findings.write_text(json.dumps([finding()]), encoding="utf-8")
    events: list[Event] = []
    run_with(pack, ScriptedBackend({"fixer/1/round-1": fix()}), findings, repo, events=events)
    said = [e.message for e in events if e.kind is EventKind.WARNING and e.item == "1"]
    assert len(said) == 1 and "\n" not in said[0] and "calc.py" in said[0], said
