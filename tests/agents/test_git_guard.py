"""After every agent turn, git's instruction files are as they were — or the turn is inconclusive.

Defence in depth for the local sandbox (no isolation): bwrap and docker keep `.git` read-only,
under local an agent's shell can write it. A turn that changed the repository's `config`, a hook,
`info/attributes`, or a linked worktree's own git folder (`config.worktree`, `commondir`,
`gitdir`) has those files put back exactly and its outcome made inconclusive, naming them; a
warning says so. The scripted model's shell plays the agent.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.agents.test_dispatch import REPORT, fixer_inputs, pack

from fixloop.agents.backend import AgentOutcome, StopReason
from fixloop.agents.dispatch import Dispatcher
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventKind, EventStream

__all__ = ["pack"]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "stats.py").write_text("x = 1\n")
    _git(root, "add", "stats.py")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return root


def _snapshot(git_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(git_dir)): p.read_bytes()
        for p in sorted(git_dir.rglob("*"))
        if p.is_file() and p.parts[-2] != "objects" and "objects" not in p.parts
    }


def _call(pack: Pack, cwd: Path, bash: list[str]) -> tuple[AgentOutcome, list[Event]]:
    backend = ScriptedBackend({"fixer/7/round-1": {"output": REPORT, "bash": bash}})
    seen: list[Event] = []
    dispatcher = Dispatcher(pack, backend, EventStream(seen.append))
    outcome = dispatcher.call("fixer", fixer_inputs(cwd), "t", cwd, key="fixer/7/round-1")
    return outcome, seen


def test_a_turn_that_writes_the_repositorys_git_files_is_inconclusive_and_put_back(
    pack: Pack, repo: Path
) -> None:
    git_dir = repo / ".git"
    before = _snapshot(git_dir)
    outcome, seen = _call(
        pack,
        repo,
        [
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
            "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
            "chmod +x .git/hooks/pre-commit",
            "mkdir -p .git/info && printf '* filter=evil\\n' > .git/info/attributes",
            "printf 'y = 2\\n' > stats.py",  # its ordinary edit stays
        ],
    )
    assert not outcome.ok
    assert outcome.reason is StopReason.GIT_FILES
    detail = outcome.detail
    for name in (".git/config", ".git/hooks/pre-commit", ".git/info/attributes"):
        assert name in detail
    assert _snapshot(git_dir) == before
    assert not (git_dir / "hooks" / "pre-commit").exists()
    assert (repo / "stats.py").read_text() == "y = 2\n"
    warnings = [e.message for e in seen if e.kind is EventKind.WARNING]
    assert len(warnings) == 1 and ".git/config" in warnings[0] and "put back" in warnings[0]


def test_a_turn_that_writes_a_worktrees_git_folder_is_inconclusive_and_put_back(
    pack: Pack, repo: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    _git(repo, "worktree", "add", "-q", "-b", "run", str(tree))
    admin = repo / ".git" / "worktrees" / "tree"
    before, config = _snapshot(admin), (repo / ".git" / "config").read_bytes()
    outcome, _ = _call(
        pack,
        tree,
        [
            'admin="$(sed -n "s/^gitdir: //p" .git)"',
            'admin="$(sed -n "s/^gitdir: //p" .git)"; '
            "printf '[core]\\n\\tpager = touch /tmp/pwned\\n' > \"$admin/config.worktree\"; "
            'printf "/tmp/elsewhere\\n" > "$admin/commondir"',
        ],
    )
    assert outcome.reason is StopReason.GIT_FILES
    assert "config.worktree" in outcome.detail and "commondir" in outcome.detail
    assert _snapshot(admin) == before
    assert (repo / ".git" / "config").read_bytes() == config


def test_a_turn_that_leaves_git_alone_is_not_touched(pack: Pack, repo: Path) -> None:
    outcome, seen = _call(pack, repo, ["printf 'y = 2\\n' > stats.py", "git status --short"])
    assert outcome.ok
    assert [e.kind for e in seen if e.kind is not EventKind.AGENT_PROGRESS] == [EventKind.AGENT]
