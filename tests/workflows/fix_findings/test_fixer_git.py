"""A fixer's own git in the user's tree (fix-findings works there; under local nothing stops
it): a branch switch, a commit on another branch, a stash, a reset. Each is undone — the user's
repository is back on its branch at its commit, with its staged and unstaged work, no stash
entry is left — and the note names what the fixer did."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fix_findings import FIXED, UserWork, finding, fix, git, run, verdict

from fixloop.documents.pack import Pack

ATTACKS = {
    "switch-and-commit": (["git checkout -q -b fixer-branch && git commit -q -am wip"], "switched"),
    "stash": (["git stash -q"], "stashed"),
    # the branch moved to a commit that does not descend from where it was
    "reset": (["git reset -q --soft \"$(git commit-tree 'HEAD^{tree}' -m other)\""], "reset main"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_fixers_git_is_undone_and_named(pack: Pack, repo: Path, attack: str) -> None:
    commands, named = ATTACKS[attack]
    work = UserWork.capture(repo)
    target = finding()
    sneaky = fix() | {"bash": commands}
    script = {
        "fixer/1/round-1": sneaky,
        "fixer/1/round-2": fix(FIXED),
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    session, _, _ = run(pack, repo, [target], script)
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main\n"
    assert git(repo, "stash", "list") == ""
    work.assert_intact(repo)
    [record] = session.state.records
    assert any(named in note for note in record.notes), record.notes
    assert session.state.output().resolved == [1]
