"""fix-findings end to end: real git repositories, the real document steps, a scripted model.

Every test starts from a repository holding the user's own work in progress: a staged hunk in
`other.py`, an unstaged change in `notes.txt` and an untracked `scratch.txt`. Whatever the loop
does, those must come out byte-identical and nothing may be committed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_findings import (
    BETTER,
    BUGGY,
    FIXED,
    Policies,
    UserWork,
    finding,
    fix,
    git,
    keys,
    run,
    run_with,
    staged,
    verdict,
)

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.runs.run import Run
from fixloop.runs.state import save_state
from fixloop.schemas.results import FixVerifyLoopOutput
from fixloop.workflows.fix_findings import snapshots
from fixloop.workflows.fix_findings.intake import load_state
from fixloop.workflows.fix_findings.state import RoundRecord

# -- seed 002's verdict → bucket table, every row -----------------------------------------------

R1_RESOLVED = ["fixer/1/round-1", "verifier/1/round-1"]
BOTH = [*R1_RESOLVED, "fixer/1/round-2", "verifier/1/round-2"]
CRASH: dict[str, Any] = {"fail": "crash"}
MALFORMED: dict[str, Any] = {"fail": "malformed", "raw": "The fix looks fine to me."}


@pytest.mark.parametrize(
    "row",
    [
        pytest.param((("rejected", None), None, "resolved", R1_RESOLVED), id="R1 rejected"),
        pytest.param((("demoted", "P2"), None, "demoted", R1_RESOLVED), id="R1 demoted P2"),
        pytest.param((("demoted", "P3"), None, "demoted", R1_RESOLVED), id="R1 demoted P3"),
        pytest.param((("confirmed", None), ("rejected", None), "resolved", BOTH), id="R2 rej"),
        pytest.param((("demoted", "P0"), ("rejected", None), "resolved", BOTH), id="R1 dem P0"),
        pytest.param((("confirmed", None), ("confirmed", None), "escalated", BOTH), id="R2 conf"),
        pytest.param((("confirmed", None), ("demoted", "P1"), "escalated", BOTH), id="R2 dem P1"),
        pytest.param((("confirmed", None), ("demoted", "P3"), "demoted", BOTH), id="R2 dem P3"),
        pytest.param(("crash", ("rejected", None), "resolved", BOTH), id="R1 inconclusive"),
        pytest.param((("confirmed", None), "malformed", "escalated", BOTH), id="R2 inconclusive"),
    ],
)
def test_every_row_of_the_verdict_table(pack: Pack, repo: Path, row: Any) -> None:
    round_1, round_2, bucket, calls = row
    work = UserWork.capture(repo)
    target = finding()

    def reply(spec: Any) -> dict[str, Any]:
        if spec == "crash":
            return CRASH
        if spec == "malformed":
            return MALFORMED
        return {"output": verdict(target, spec[0], spec[1])}

    script = {"fixer/1/round-1": fix(), "verifier/1/round-1": reply(round_1)}
    if round_2 is not None:
        script |= {"fixer/1/round-2": fix(BETTER), "verifier/1/round-2": reply(round_2)}
    session, backend, _ = run(pack, repo, [target], script)

    assert keys(backend) == calls
    assert backend.unplayed() == []
    output = session.state.output()
    assert session.state.records[0].bucket == bucket
    if bucket == "resolved":
        assert output.resolved == [1]
    elif bucket == "demoted":
        severity = (round_2 or round_1)[1]
        assert [(d.id, d.new_severity) for d in output.demoted] == [(1, severity)]
        assert output.demoted[0].evidence == "verifier says demoted"
    else:
        [escalated] = output.escalated
        assert escalated.id == 1
        assert len(escalated.attempts) == 2
        assert escalated.evidence == (
            None if round_2 == "malformed" else f"verifier says {round_2[0]}"
        )
        assert escalated.staged_summary == "R2's changes to calc.py, +2/-0 lines"
    # The fix is staged, never committed; the user's work is untouched.
    assert staged(repo) == (BETTER if round_2 is not None else FIXED)
    work.assert_intact(repo)


def test_round_two_gets_round_one_context_and_the_staged_diff_is_the_artifact(
    pack: Pack, repo: Path
) -> None:
    target = finding()
    script = {
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(target, "confirmed")},
        "fixer/1/round-2": fix(BETTER),
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    _, backend, _ = run(pack, repo, [target], script)
    fixer_r2 = backend.calls[2]
    assert "verifier says confirmed" in fixer_r2.system_prompt  # previous_attempts
    assert "never run `git stash`" in fixer_r2.task
    assert "git show HEAD:<path>" in fixer_r2.task
    assert "decide first whether the code or the test is wrong" in fixer_r2.task
    assert fixer_r2.writable == ("calc.py",)
    verifier_r1 = backend.calls[1]
    assert "is this finding resolved?" in verifier_r1.system_prompt
    assert "+    return sum(xs) / len(xs) if xs else 0.0" in verifier_r1.system_prompt
    assert "other.py" not in verifier_r1.system_prompt  # the diff is scoped to the fix's files
    assert verifier_r1.writable == ()


# -- intake and pre-gate ------------------------------------------------------------------------


def test_intake_ignores_everything_but_confirmed_p0_p1(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    findings = [
        finding(1, severity="P2"),
        finding(2, verdict="rejected"),
        finding(3, verdict=None),
        finding(4, severity="P3", verdict="demoted"),
    ]
    session, backend, _ = run(pack, repo, findings, {})
    assert backend.calls == []
    assert session.state.ignored == [1, 2, 3, 4]
    assert session.state.output() == FixVerifyLoopOutput()
    work.assert_intact(repo)
    assert git(repo, "diff", "--staged", "--", "calc.py") == ""


@pytest.mark.parametrize(
    ("evidence", "gated"),
    [
        (None, True),
        ("", True),
        ("Orchestrator-confirmed: no verifier pass", True),
        ("Verifier traced it", False),
    ],
)
def test_the_pre_gate_runs_only_without_independent_evidence(
    pack: Pack, repo: Path, evidence: str | None, gated: bool
) -> None:
    target = finding(evidence=evidence, confidence=0.3)
    script = {
        "verifier/1/pre-gate": {"output": verdict(target, "confirmed")},
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    _, backend, _ = run(pack, repo, [target], script)
    expected = (["verifier/1/pre-gate"] if gated else []) + R1_RESOLVED
    assert keys(backend) == expected
    if gated:
        assert "is this finding real?" in backend.calls[0].system_prompt
        assert "return sum(xs) / len(xs)" in backend.calls[0].system_prompt  # the file context


def test_pre_gate_rejected_drops_the_finding_without_fixing(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding(evidence=None)
    script = {"verifier/1/pre-gate": {"output": verdict(target, "rejected")}}
    session, backend, _ = run(pack, repo, [target], script)
    assert keys(backend) == ["verifier/1/pre-gate"]
    output = session.state.output()
    assert [(d.id, d.reason) for d in output.dropped] == [(1, "verifier says rejected")]
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY
    work.assert_intact(repo)


@pytest.mark.parametrize("pre_gate", ["confirmed", "demoted"])
def test_pre_gate_still_real_goes_to_round_one(pack: Pack, repo: Path, pre_gate: str) -> None:
    target = finding(evidence=None)
    script = {
        "verifier/1/pre-gate": {"output": verdict(target, pre_gate, "P3")},
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, _ = run(pack, repo, [target], script)
    assert keys(backend) == ["verifier/1/pre-gate", *R1_RESOLVED]
    assert session.state.output().resolved == [1]


def test_inconclusive_pre_gate_consumes_an_attempt(pack: Pack, repo: Path) -> None:
    target = finding(evidence="Orchestrator-confirmed")
    script = {
        "verifier/1/pre-gate": {"fail": "timeout"},
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(target, "confirmed")},
    }
    session, backend, _ = run(pack, repo, [target], script)
    # Round 1 ran (as the last round): no Round 2 after a failed pre-gate plus one failed round.
    assert keys(backend) == ["verifier/1/pre-gate", *R1_RESOLVED]
    [escalated] = session.state.output().escalated
    assert escalated.attempts[0].startswith("pre-gate: verifier inconclusive")
    assert escalated.attempts[1] == "R1: fixed: guard"
    assert escalated.staged_summary == "R1's changes to calc.py, +1/-1 lines"


def test_findings_are_processed_one_at_a_time_in_order(pack: Pack, repo: Path) -> None:
    first, second = finding(1), finding(2, title="second", line_start=5, line_end=5)
    script = {
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(first, "rejected")},
        "fixer/2/round-1": {
            "edits": [{"path": "calc.py", "old": "return 1", "new": "return 2"}],
            "output": {"files_changed": ["calc.py"], "summary": "fixed: spare", "concerns": None},
        },
        "verifier/2/round-1": {"output": verdict(second, "rejected")},
    }
    policies = Policies(on_prestaged="ask")
    session, backend, prompter = run(pack, repo, [first, second], script, policies=policies)
    assert keys(backend) == [*R1_RESOLVED, "fixer/2/round-1", "verifier/2/round-1"]
    assert session.state.output().resolved == [1, 2]
    # Finding 2's Round 1 finds finding 1's staged fix in calc.py: the run's own work, not the
    # user's, so the pre-staged check does not ask.
    assert prompter.asked == []
    assert staged(repo) == FIXED.replace("return 1", "return 2")


# -- the pre-staged hunk check (Round 1 only) --------------------------------------------------

USER_HUNK = BUGGY.replace("return 1", "return 1  # the user's own edit")


@pytest.fixture
def user_staged_calc(repo: Path) -> Path:
    """The user staged a hunk of their own in calc.py, far from the fix's line."""
    (repo / "calc.py").write_text(USER_HUNK, encoding="utf-8")
    git(repo, "add", "--", "calc.py")
    return repo


def resolved_in_round_1(target: dict[str, Any]) -> dict[str, Any]:
    edit = {"path": "calc.py", "old": "return sum(xs) / len(xs)\n", "new": "return 0.0\n"}
    return {
        "fixer/1/round-1": {
            "edits": [edit],
            "output": {"files_changed": ["calc.py"], "summary": "fixed: guard", "concerns": None},
        },
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }


def test_prestaged_commit_first_commits_only_the_users_hunks(
    pack: Pack, user_staged_calc: Path
) -> None:
    repo = user_staged_calc
    work = UserWork.capture(repo)
    target = finding()
    answer = "Commit pre-existing first"
    session, _, prompter = run(pack, repo, [target], resolved_in_round_1(target), answers=[answer])
    [asked] = prompter.asked
    assert asked.options[0] == answer  # the recommendation comes first
    assert asked.text == "1 hunk in calc.py totaling 2 lines, no overlap with fix's edits"
    # One new commit on top of the old HEAD, holding exactly the user's staged calc.py.
    assert git(repo, "rev-parse", "HEAD~1").strip() == work.head.strip()
    assert git(repo, "show", "HEAD:calc.py") == USER_HUNK
    assert git(repo, "diff", "--name-only", "HEAD~1", "HEAD").split() == ["calc.py"]
    # The fix is staged on top of it, not committed; the user's other staged hunk is still staged.
    assert staged(repo) == USER_HUNK.replace("return sum(xs) / len(xs)\n", "return 0.0\n")
    assert git(repo, "diff", "--staged", "--", "other.py") == work.staged_other
    work.assert_intact(repo, head_moved=True)
    assert session.state.output().resolved == [1]


def test_prestaged_stash_sets_the_users_hunks_aside_without_losing_them(
    pack: Pack, user_staged_calc: Path
) -> None:
    repo = user_staged_calc
    work = UserWork.capture(repo)
    target = finding()
    policies = Policies(on_prestaged="set-aside")
    session, _, prompter = run(pack, repo, [target], resolved_in_round_1(target), policies=policies)
    assert prompter.asked == []
    fixed_only = BUGGY.replace("return sum(xs) / len(xs)\n", "return 0.0\n")
    assert staged(repo) == fixed_only
    assert (repo / "calc.py").read_text(encoding="utf-8") == fixed_only
    # The user's version is kept twice: a private ref and a patch.
    ref = f"refs/fixloop/prestaged/{session.run_id}/1"
    assert git(repo, "show", f"{ref}:calc.py") == USER_HUNK
    patch = session.run_dir / "prestaged-1.patch"
    assert "+    return 1  # the user's own edit" in patch.read_text(encoding="utf-8")
    assert any(ref in note for note in session.state.records[0].notes)
    work.assert_intact(repo)
    # And it comes back: the patch applies on top of the staged fix.
    git(repo, "apply", "--index", str(patch))
    assert staged(repo) == USER_HUNK.replace("return sum(xs) / len(xs)\n", "return 0.0\n")


def test_prestaged_proceed_stages_them_with_the_fix(pack: Pack, user_staged_calc: Path) -> None:
    repo = user_staged_calc
    work = UserWork.capture(repo)
    target = finding()
    answers: list[str | None] = ["Proceed (treat as part of this fix)"]
    _, backend, _ = run(pack, repo, [target], resolved_in_round_1(target), answers=answers)
    both = USER_HUNK.replace("return sum(xs) / len(xs)\n", "return 0.0\n")
    assert staged(repo) == both
    assert "+    return 1  # the user's own edit" in backend.calls[1].system_prompt
    work.assert_intact(repo)


def test_prestaged_ask_without_a_terminal_touches_nothing(
    pack: Pack, user_staged_calc: Path
) -> None:
    repo = user_staged_calc
    work = UserWork.capture(repo)
    index_before = git(repo, "ls-files", "--stage", "--", "calc.py")
    target = finding()
    session, backend, _ = run(pack, repo, [target], resolved_in_round_1(target), answers=[None])
    assert keys(backend) == ["fixer/1/round-1"]  # never verified: nothing was staged
    assert git(repo, "ls-files", "--stage", "--", "calc.py") == index_before
    [escalated] = session.state.output().escalated
    assert escalated.staged_summary == "nothing staged: the fix is left unstaged"
    assert "need your decision" in escalated.attempts[0]
    work.assert_intact(repo)


def test_overlapping_hunks_recommend_stash_and_the_check_only_asks_once(
    pack: Pack, repo: Path
) -> None:
    (repo / "calc.py").write_text(BUGGY.replace("len(xs)", "max(len(xs), 1)"), encoding="utf-8")
    git(repo, "add", "--", "calc.py")
    target = finding()
    script = {
        "fixer/1/round-1": {
            "edits": [{"path": "calc.py", "old": "max(len(xs), 1)", "new": "(len(xs) or 1)"}],
            "output": {"files_changed": ["calc.py"], "summary": "fixed: r1", "concerns": None},
        },
        "verifier/1/round-1": {"output": verdict(target, "confirmed")},
        "fixer/1/round-2": fix(BETTER),
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    answers: list[str | None] = ["Proceed (treat as part of this fix)"]
    session, _, prompter = run(pack, repo, [target], script, answers=answers)
    [asked] = prompter.asked  # Round 1 only: Round 2's staged content is Round 1's
    assert asked.options[0] == "Set pre-existing aside"
    assert "overlapping the fix's edits" in asked.text
    assert session.state.output().resolved == [1]
    assert staged(repo) == BETTER


def test_set_aside_works_when_the_users_hunks_overlap_the_fix(pack: Pack, repo: Path) -> None:
    # Exactly when setting them aside is recommended: the fix rewrote the user's staged line.
    mine = BUGGY.replace("len(xs)", "max(len(xs), 1)")
    (repo / "calc.py").write_text(mine, encoding="utf-8")
    git(repo, "add", "--", "calc.py")
    work = UserWork.capture(repo)
    target = finding()
    script = {
        "fixer/1/round-1": [
            {  # made on top of the user's staged line
                "edits": [{"path": "calc.py", "old": "max(len(xs), 1)", "new": "(len(xs) or 1)"}],
                "output": {"files_changed": ["calc.py"], "summary": "on theirs", "concerns": None},
            },
            fix(FIXED),  # made again on the file without the user's lines
        ],
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, prompter = run(
        pack, repo, [target], script, policies=Policies(on_prestaged="stash")
    )
    assert prompter.asked == []
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-1", "verifier/1/round-1"]
    assert session.state.output().resolved == [1]
    assert staged(repo) == FIXED  # the fix alone, made against the file without the user's lines
    ref = f"refs/fixloop/prestaged/{session.run_id}/1"
    assert git(repo, "show", f"{ref}:calc.py") == mine  # the user's version, kept
    patch = session.run_dir / "prestaged-1.patch"
    assert "+    return sum(xs) / max(len(xs), 1)" in patch.read_text(encoding="utf-8")
    work.assert_intact(repo)


def test_a_set_aside_that_cannot_happen_leaves_no_ref_or_patch(pack: Pack, repo: Path) -> None:
    # The user's unstaged edit rewrote their own staged line: nothing can be taken out cleanly.
    (repo / "calc.py").write_text(BUGGY.replace("len(xs)", "max(len(xs), 1)"), encoding="utf-8")
    git(repo, "add", "--", "calc.py")
    (repo / "calc.py").write_text(BUGGY.replace("len(xs)", "max(len(xs), 2)"), encoding="utf-8")
    target = finding()
    script = {
        "fixer/1/round-1": {
            "edits": [{"path": "calc.py", "old": "max(len(xs), 2)", "new": "(len(xs) or 1)"}],
            "output": {"files_changed": ["calc.py"], "summary": "fixed", "concerns": None},
        },
    }
    index_before = git(repo, "ls-files", "--stage", "--", "calc.py")
    session, _, _ = run(pack, repo, [target], script, policies=Policies(on_prestaged="stash"))
    assert [e.id for e in session.state.output().escalated] == [1]
    assert git(repo, "ls-files", "--stage", "--", "calc.py") == index_before
    assert git(repo, "for-each-ref", "refs/fixloop/") == ""
    assert not (session.run_dir / "prestaged-1.patch").exists()


# -- scope expansion ---------------------------------------------------------------------------

SCOPE_REQUEST = {
    "output": {
        "needs_scope_expansion": True,
        "additional_files": ["helper.py"],
        "justification": "mean() should call helper() for the empty case",
    }
}
WIDE_FIX = {
    "edits": [
        {"path": "calc.py", "content": FIXED},
        {"path": "helper.py", "content": "def helper():\n    return 0.0\n"},
    ],
    "output": {
        "files_changed": ["calc.py", "helper.py"],
        "summary": "fixed: both",
        "concerns": None,
    },
}


def test_scope_expansion_approved_redispatches_and_verifies_the_new_files(
    pack: Pack, repo: Path
) -> None:
    work = UserWork.capture(repo)
    target = finding()
    script = {
        "fixer/1/round-1": SCOPE_REQUEST,
        "fixer/1/round-1/expanded": WIDE_FIX,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    answers: list[str | None] = ["Approve expanded scope"]
    session, backend, prompter = run(pack, repo, [target], script, answers=answers)
    [asked] = prompter.asked
    assert asked.options == (
        "Approve expanded scope",
        "Reject — fix within original scope only",
        "Defer this finding",
    )
    assert "helper.py" in asked.text and "helper() for the empty case" in asked.text
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-1/expanded", "verifier/1/round-1"]
    assert backend.calls[0].writable == ("calc.py",)
    assert backend.calls[1].writable == ("calc.py", "helper.py")
    assert "+    return 0.0" in backend.calls[2].system_prompt  # helper.py's diff is verified
    assert staged(repo, "helper.py") == "def helper():\n    return 0.0\n"
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_scope_expansion_rejected_keeps_the_original_scope(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    script = {
        "fixer/1/round-1": SCOPE_REQUEST,
        "fixer/1/round-1/original-scope": WIDE_FIX,  # it tries helper.py anyway
        "fixer/1/round-2": fix(),
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    policies = Policies(on_scope_expansion="reject")
    session, backend, _ = run(pack, repo, [target], script, policies=policies)
    second = backend.calls[1]
    assert second.writable == ("calc.py",)
    assert "rejected expanding the scope" in second.task
    # Its helper.py edit was refused; it then claimed helper.py: a failed attempt, nothing staged,
    # and its calc.py edit undone.
    assert (repo / "helper.py").read_text(encoding="utf-8") == "def helper():\n    return None\n"
    record = session.state.records[0]
    assert "outside its scope" in record.rounds[0].summary
    assert record.notes[0] == (
        "R1: the fixer's writes were refused: helper.py (not among the files this call may write)"
    )
    assert keys(backend)[2:] == ["fixer/1/round-2", "verifier/1/round-2"]
    assert session.state.output().resolved == [1]
    assert git(repo, "diff", "--staged", "--name-only", "--", "helper.py") == ""
    work.assert_intact(repo)


def test_scope_expansion_deferred_escalates_with_nothing_staged(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    session, backend, _ = run(pack, repo, [target], {"fixer/1/round-1": SCOPE_REQUEST})
    assert keys(backend) == ["fixer/1/round-1"]  # headless `ask`: nobody to ask, so defer
    [escalated] = session.state.output().escalated
    assert escalated.staged_summary == "nothing staged"
    assert "scope expansion deferred" in escalated.attempts[0]
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY
    work.assert_intact(repo)


# -- fixer failures ----------------------------------------------------------------------------


def test_a_crashed_fixer_leaves_no_half_edit_and_counts_as_an_attempt(
    pack: Pack, repo: Path
) -> None:
    work = UserWork.capture(repo)
    target = finding()
    script = {
        "fixer/1/round-1": {"edits": [{"path": "calc.py", "content": "half"}], "fail": "crash"},
        "fixer/1/round-2": {"fail": "malformed"},
    }
    session, backend, _ = run(pack, repo, [target], script)
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-2"]
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY
    [escalated] = session.state.output().escalated
    assert escalated.evidence is None
    assert [a.split(":")[0] for a in escalated.attempts] == ["R1", "R2"]
    assert "fixer inconclusive (crash)" in escalated.attempts[0]
    work.assert_intact(repo)


def test_paths_are_compared_in_their_clean_form(pack: Pack, repo: Path) -> None:
    target = finding(file="./calc.py")
    script = {
        "fixer/1/round-1": fix(files=("./calc.py",)),
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, _ = run(pack, repo, [target], script)
    assert backend.calls[0].writable == ("calc.py",)
    assert session.state.records[0].rounds[0].files_changed == ["calc.py"]
    assert session.state.output().resolved == [1]
    assert staged(repo) == FIXED


# -- escalation --------------------------------------------------------------------------------


def escalating_script(target: dict[str, Any]) -> dict[str, Any]:
    return {
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": {"output": verdict(target, "confirmed")},
        "fixer/1/round-2": fix(BETTER),
        "verifier/1/round-2": {"output": verdict(target, "confirmed")},
    }


def test_escalation_asks_with_defer_recommended_and_headless_defers(pack: Pack, repo: Path) -> None:
    target = finding()
    session, _, prompter = run(pack, repo, [target], escalating_script(target))
    [asked] = prompter.asked
    assert asked.options == (
        "Defer this finding",
        "Manual fix",
        "Try a different approach",
        "Discard R2 changes and revert",
    )
    assert session.state.records[0].notes == ["deferred: left as it is"]
    assert staged(repo) == BETTER


def test_discard_r2_restores_round_one_per_file(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    answers: list[str | None] = ["Discard R2 changes and revert"]
    session, _, _ = run(pack, repo, [target], escalating_script(target), answers=answers)
    assert staged(repo) == FIXED
    assert (repo / "calc.py").read_text(encoding="utf-8") == FIXED
    [escalated] = session.state.output().escalated
    assert escalated.staged_summary == "R1's changes to calc.py, +1/-1 lines"
    assert "R2's changes to calc.py discarded" in session.state.records[0].notes[0]
    work.assert_intact(repo)


def test_a_run_killed_during_a_fixer_call_is_undone_before_the_call_is_made_again(
    pack: Pack, repo: Path
) -> None:
    work = UserWork.capture(repo)
    target = finding()
    findings = repo.parent / "findings.json"
    findings.write_text(json.dumps([target]), encoding="utf-8")
    # What a kill in the middle of Round 1's fixer call leaves: the state says a call was in
    # flight (with the snapshot taken before it) and calc.py is half edited.
    state = load_state(findings, repo, None)
    killed = Run.start(repo, "fix-findings")
    folder = killed.dir / "snapshots" / "finding-1" / "round-1"
    in_flight = RoundRecord(number=1, phase="fixed", summary="", snapshot_dir=str(folder))
    in_flight.snapshot = snapshots.take(repo, ["calc.py"], folder)
    state.records[0].pre_gate = "skipped"
    state.records[0].in_flight = in_flight
    save_state(killed.dir, state)
    killed.close()  # the lock is released, run.json still says running: it crashed
    (repo / "calc.py").write_text("def mean(xs):\n    retu", encoding="utf-8")

    backend = ScriptedBackend(resolved_in_round_1(target))
    session = run_with(pack, backend, findings, repo, resume="latest")
    assert keys(backend) == R1_RESOLVED  # its `old` text matched: the half edit was undone first
    assert session.state.resumed_from == killed.id
    assert session.state.output().resolved == [1]
    assert staged(repo) == BUGGY.replace("return sum(xs) / len(xs)\n", "return 0.0\n")
    work.assert_intact(repo)
