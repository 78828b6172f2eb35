"""fix-findings: a fixer changes another file by a shell command, which no write refusal sees.

Seed 002: a fixer must not edit files outside its finding without the user's approval. The
backend refuses file-tool writes, but `sed -i`, `>` or `git add` in a shell reach past that. The
loop fingerprints the tree around every fixer call, puts every changed path outside the call's
files back exactly (bytes and index entry), and treats those paths as the scope-expansion request
the fixer should have made. What cannot be put back exactly fails the attempt, and is left alone.
The scripted model's `bash:` commands are real `bash -c` runs in the repository.
"""

from __future__ import annotations

import json
import subprocess
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
    run_with,
    staged,
    verdict,
)

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.workflows.fix_findings.tree_guard import KEEP_FILE_LIMIT

WITHIN = {
    "edits": [GUARD_ON_BUGGY],
    "output": {"files_changed": ["calc.py"], "summary": "fixed", "concerns": None},
}


def sneaks(*commands: str) -> dict[str, Any]:
    """Fixes calc.py with its edit tool, runs `commands` in a shell, reports only calc.py."""
    return {
        "edits": [{"path": "calc.py", "content": FIXED}],
        "bash": list(commands),
        "output": {"files_changed": ["calc.py"], "summary": "fixed: guard", "concerns": None},
    }


SED_HELPER = "sed -i 's/return None/return 0.0/' helper.py"


def state_of(repo: Path, *names: str) -> dict[str, Any]:
    """Bytes, index entry and mode of each file: what "put back exactly" must reproduce."""
    return {
        name: (
            (repo / name).read_bytes() if (repo / name).exists() else None,
            (repo / name).stat().st_mode if (repo / name).exists() else None,
            git(repo, "ls-files", "--stage", "--", name),
        )
        for name in names
    }


def test_approved_the_fixer_gets_the_file_it_changed_unasked(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    both = {
        "edits": [GUARD_ON_BUGGY, {"path": "helper.py", "old": "None", "new": "0.0"}],
        "output": {"files_changed": ["calc.py", "helper.py"], "summary": "fixed", "concerns": None},
    }
    script = {
        "fixer/1/round-1": sneaks(SED_HELPER),
        "fixer/1/round-1/expanded": both,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, prompter = run(
        pack, repo, [target], script, answers=["Approve expanded scope"]
    )
    [asked] = prompter.asked
    assert "also edit helper.py" in asked.text
    assert "changed helper.py without asking, outside this finding's files (calc.py)" in asked.text
    assert "It then reported: fixed: guard" in asked.text
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-1/expanded", "verifier/1/round-1"]
    # The re-dispatched call's `old: None` edit only works on helper.py as it was: put back.
    assert backend.calls[1].writable == ("calc.py", "helper.py")
    assert (staged(repo), staged(repo, "helper.py")) == (GUARDED, HELPER_FIXED)
    record = session.state.records[0]
    assert record.approved_files == ["helper.py"]
    [note] = [n for n in record.notes if "unasked" in n]
    assert note.startswith("R1: the fixer changed helper.py unasked; put back (as the fixer left")
    displaced = Path(note.rsplit(": ", 1)[1].rstrip(")")) / "helper.py"
    assert displaced.read_text(encoding="utf-8") == HELPER_FIXED
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_rejected_the_file_is_byte_identical_and_the_fixer_is_sent_back(
    pack: Pack, repo: Path
) -> None:
    work = UserWork.capture(repo)
    before = state_of(repo, "helper.py")
    target = finding()
    script = {
        "fixer/1/round-1": sneaks(SED_HELPER),
        "fixer/1/round-1/original-scope": WITHIN,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, backend, _ = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="reject")
    )
    assert keys(backend)[1] == "fixer/1/round-1/original-scope"
    assert backend.calls[1].writable == ("calc.py",)
    assert state_of(repo, "helper.py") == before
    assert git(repo, "status", "--porcelain", "--", "helper.py") == ""
    assert staged(repo) == GUARDED
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_rejected_and_changing_it_again_is_a_failed_attempt(pack: Pack, repo: Path) -> None:
    target = finding()
    script = {
        "fixer/1/round-1": sneaks(SED_HELPER),
        "fixer/1/round-1/original-scope": sneaks(SED_HELPER),
        "fixer/1/round-2": WITHIN,
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    session, _, _ = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="reject")
    )
    first = session.state.records[0].rounds[0]
    assert first.verdict == "inconclusive" and first.files_changed == []
    assert "again tried to edit helper.py" in first.summary
    assert (repo / "helper.py").read_text(encoding="utf-8") == HELPER
    assert staged(repo) == GUARDED
    assert session.state.output().resolved == [1]


@pytest.mark.parametrize("policy", ["defer", "ask"])
def test_deferred_nothing_the_call_did_is_left_behind(pack: Pack, repo: Path, policy: str) -> None:
    work = UserWork.capture(repo)
    before = state_of(repo, "helper.py")
    policies = Policies(on_scope_expansion="defer" if policy == "defer" else "ask")
    session, backend, _ = run(
        pack, repo, [finding()], {"fixer/1/round-1": sneaks(SED_HELPER)}, policies=policies
    )
    assert keys(backend) == ["fixer/1/round-1"]
    [escalated] = session.state.output().escalated
    assert escalated.attempts[0].startswith(
        "R1: scope expansion deferred: The fixer changed helper.py without asking"
    )
    assert escalated.staged_summary == "nothing staged"
    assert (repo / "calc.py").read_text(encoding="utf-8") == BUGGY
    assert state_of(repo, "helper.py") == before
    work.assert_intact(repo)


DEFER = Policies(on_scope_expansion="defer")


@pytest.mark.parametrize(
    ("commands", "asked_for"),
    [
        pytest.param(["printf 'clobbered\\n' > notes.txt"], ["notes.txt"], id="unstaged-change"),
        pytest.param(["printf 'gone\\n' > scratch.txt"], ["scratch.txt"], id="untracked-file"),
        pytest.param(["sed -i 's/2/3/' other.py"], ["other.py"], id="staged-file-worktree"),
        pytest.param(["git reset -q -- other.py"], ["other.py"], id="unstages-user-hunk"),
        pytest.param(
            ["printf 'VALUE = 9\\n' > other.py", "git add other.py"],
            ["other.py"],
            id="restages-user-file",
        ),
        pytest.param(["git add scratch.txt"], ["scratch.txt"], id="stages-untracked"),
        pytest.param(["rm scratch.txt notes.txt"], ["notes.txt", "scratch.txt"], id="deletes"),
        pytest.param(["git rm -q --cached helper.py"], ["helper.py"], id="untracks"),
        pytest.param(["rm helper.py"], ["helper.py"], id="deletes-tracked"),
        pytest.param(["chmod +x helper.py scratch.txt"], ["helper.py", "scratch.txt"], id="mode"),
        pytest.param(
            ["printf 'x\\n' >> helper.py", "git add helper.py"],
            ["helper.py"],
            id="stages-another-file",
        ),
        pytest.param(
            ["ln -sf calc.py link.py", "ln -sf other.py scratch.txt"],
            ["link.py", "scratch.txt"],
            id="symlinks",
        ),
    ],
)
def test_every_change_is_put_back_exactly_and_asked_for(
    pack: Pack, repo: Path, commands: list[str], asked_for: list[str]
) -> None:
    work = UserWork.capture(repo)
    names = ["helper.py", "other.py", "notes.txt", "scratch.txt", "link.py"]
    before = state_of(repo, *names)
    status = git(repo, "status", "--porcelain=v2", "--untracked-files=all")
    session, _, _ = run(
        pack, repo, [finding()], {"fixer/1/round-1": sneaks(*commands)}, policies=DEFER
    )
    [escalated] = session.state.output().escalated
    assert escalated.attempts[0].startswith(
        f"R1: scope expansion deferred: The fixer changed {', '.join(asked_for)} without asking"
    )
    assert state_of(repo, *names) == before
    assert not (repo / "link.py").is_symlink()
    assert git(repo, "status", "--porcelain=v2", "--untracked-files=all") == status
    work.assert_intact(repo)


def test_a_created_file_is_removed_and_asked_for(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    status = git(repo, "status", "--porcelain=v2", "--untracked-files=all")
    script = {"fixer/1/round-1": sneaks("mkdir -p gen && printf 'x = 1\\n' > gen/new.py")}
    session, _, _ = run(pack, repo, [finding()], script, policies=DEFER)
    [escalated] = session.state.output().escalated
    assert "The fixer changed gen/new.py without asking" in escalated.attempts[0]
    assert not (repo / "gen" / "new.py").exists()
    assert git(repo, "status", "--porcelain=v2", "--untracked-files=all") == status
    work.assert_intact(repo)


def test_an_ignored_file_a_gitignore_change_uncovered_is_not_deleted(
    pack: Pack, repo: Path
) -> None:
    (repo / ".gitignore").write_text("*.log\n", encoding="utf-8")
    git(repo, "add", "--", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore logs", "--", ".gitignore")
    (repo / "build.log").write_text("the user's log\n", encoding="utf-8")
    work = UserWork.capture(repo)
    script = {"fixer/1/round-1": sneaks(": > .gitignore")}
    session, _, _ = run(pack, repo, [finding()], script, policies=DEFER)
    [escalated] = session.state.output().escalated
    assert "The fixer changed .gitignore without asking" in escalated.attempts[0]
    assert "build.log" not in escalated.attempts[0]
    assert (repo / ".gitignore").read_text(encoding="utf-8") == "*.log\n"
    assert (repo / "build.log").read_text(encoding="utf-8") == "the user's log\n"
    work.assert_intact(repo)


def test_in_scope_shell_edits_are_the_fix(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    by_shell = {
        "bash": ["sed -i 's|/ len(xs)$|/ len(xs) if xs else 0.0|' calc.py"],
        "output": {"files_changed": ["calc.py"], "summary": "fixed", "concerns": None},
    }
    script = {
        "fixer/1/round-1": by_shell,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, _, prompter = run(pack, repo, [target], script)
    assert prompter.asked == []
    assert staged(repo) == FIXED
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


def test_a_moved_head_fails_the_attempt_and_is_undone(pack: Pack, repo: Path) -> None:
    target = finding()
    commit = "git update-ref HEAD $(git commit-tree 'HEAD^{tree}' -p HEAD -m sneaky)"
    script = {
        "fixer/1/round-1": sneaks(commit),
        "fixer/1/round-2": WITHIN,
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    head = git(repo, "rev-parse", "HEAD").strip()
    session, _, prompter = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="approve")
    )
    assert prompter.asked == []
    first = session.state.records[0].rounds[0]
    assert first.verdict == "inconclusive" and first.files_changed == []
    assert "no scope expansion can reach" in first.summary
    assert f"main is back at {head[:12]}" in first.summary
    assert git(repo, "rev-parse", "HEAD").strip() == head, "the fixer's commit is undone"
    assert staged(repo) == GUARDED  # round 1's calc.py edit was undone before round 2
    assert session.state.output().resolved == [1]


def test_a_file_too_large_to_keep_fails_the_attempt_and_is_left(pack: Pack, repo: Path) -> None:
    big = repo / "big.bin"
    big.write_bytes(b"\0" * (KEEP_FILE_LIMIT + 1))
    work = UserWork.capture(repo)
    target = finding()
    script = {
        "fixer/1/round-1": sneaks("printf 'tail' >> big.bin", SED_HELPER),
        "fixer/1/round-2": WITHIN,
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    session, _, prompter = run(
        pack, repo, [target], script, policies=Policies(on_scope_expansion="approve")
    )
    assert prompter.asked == []
    first = session.state.records[0].rounds[0]
    assert first.verdict == "inconclusive"
    assert "big.bin: its earlier content was not kept (over 16 MiB" in first.summary
    assert big.stat().st_size == KEEP_FILE_LIMIT + 5, "left as the fixer left it, not deleted"
    assert (repo / "helper.py").read_text(encoding="utf-8") == HELPER, "the rest is put back"
    assert session.state.output().resolved == [1]
    work.assert_intact(repo)


@pytest.mark.parametrize("name", ["with space.txt", '"quoted.txt', "-dash.txt", "ünï.txt"])
def test_odd_names_are_data(pack: Pack, repo: Path, name: str) -> None:
    (repo / name).write_bytes(b"the user's\r\nbytes\x00\xff")
    work = UserWork.capture(repo)
    clobber = f"printf 'x' > ./*'{name[1:]}'"  # the shell's glob finds the odd first character
    session, _, _ = run(
        pack, repo, [finding()], {"fixer/1/round-1": sneaks(clobber)}, policies=DEFER
    )
    [escalated] = session.state.output().escalated
    assert f"The fixer changed {name} without asking" in escalated.attempts[0]
    assert (repo / name).read_bytes() == b"the user's\r\nbytes\x00\xff"
    work.assert_intact(repo)


class KilledMidCall:
    """A model whose shell edits other files, then the run is killed (Ctrl-C) mid-call."""

    name = "killed"

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        edits = f"printf 'clobbered\\n' > notes.txt && {SED_HELPER} && : > new.txt"
        subprocess.run(["bash", "-c", edits], cwd=request.cwd, check=True)
        raise KeyboardInterrupt


def test_a_run_killed_mid_call_has_its_stray_changes_put_back_on_resume(
    pack: Pack, repo: Path
) -> None:
    work = UserWork.capture(repo)
    status = git(repo, "status", "--porcelain=v2", "--untracked-files=all")
    target = finding()
    findings = repo.parent / "findings.json"
    findings.write_text(json.dumps([target]), encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        run_with(pack, KilledMidCall(), findings, repo)
    assert (repo / "notes.txt").read_bytes() == b"clobbered\n"
    script = {
        "fixer/1/round-1": WITHIN,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session = run_with(pack, ScriptedBackend(script), findings, repo, resume="latest")
    notes = session.state.records[0].notes
    for name in ("helper.py", "new.txt", "notes.txt"):
        prefix = f"an interrupted fixer call: the fixer changed {name} unasked; put back"
        assert any(note.startswith(prefix) for note in notes)
    # What was there is kept in the resumed run's folder; the killed run's is left as it was.
    displaced = session.run_dir / "resumed" / "finding-1" / "displaced"
    assert (displaced / "notes.txt").read_bytes() == b"clobbered\n"
    assert session.state.output().resolved == [1]
    assert staged(repo) == GUARDED
    git(repo, "reset", "-q", "--", "calc.py")  # the test's own repository: drop the fix
    (repo / "calc.py").write_text(BUGGY, encoding="utf-8")
    assert git(repo, "status", "--porcelain=v2", "--untracked-files=all") == status
    work.assert_intact(repo)
