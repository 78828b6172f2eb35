"""A hostile fixer plants git configuration in the user's repository (fix-findings works in the
user's tree): fsmonitor, pager, filter and textconv drivers in `.git/config`, hooks, attributes
naming the drivers. None of it ever runs on the host — under bwrap and docker the `.git` folder
is read-only to the fixer's shell; under local (no isolation) the fixer can write it, and
fixloop's own git still runs none of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.fix_findings import finding, fix, git, verdict
from tests.helpers.hostile_git import HOOKS, plant_commands, ran
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import kinds

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.sandboxes import choose_sandbox
from fixloop.workflows.fix_findings import FixFindingsOptions, run_fix_findings
from fixloop.workflows.kernel.choices import ScriptedPrompter
from fixloop.workflows.kernel.workflow import Context

__all__ = ["docker_client", "docker_image"]


@pytest.mark.parametrize("kind", kinds("local", "bwrap", "docker"))
def test_planted_git_configuration_never_runs_on_the_host(
    pack: Pack, repo: Path, tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    target = finding()
    reply = fix() | {"bash": plant_commands(marks)}
    script = {
        "fixer/1/round-1": reply,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([target]), encoding="utf-8")
    image = request.getfixturevalue("docker_image") if kind == "docker" else None
    context = Context(
        pack,
        ScriptedBackend(script),
        EventStream(),
        prompter=ScriptedPrompter([]),
        sandbox=choose_sandbox(kind, image=image),
    )
    options = FixFindingsOptions(findings, repo, "proceed", "reject")
    session = run_fix_findings(options, context)
    assert ran(marks) == []
    # The attributes file is a change outside the finding's scope: put back, and said so.
    assert any(".gitattributes unasked" in note for note in session.state.records[0].notes)
    assert git(repo, "-c", "core.fsmonitor=false", "symbolic-ref", "HEAD") == "refs/heads/main\n"
    # Only local lets the shell write .git, and then the turn's writes are put back after it.
    assert "planted" not in (repo / ".git" / "config").read_text()
    assert not any((repo / ".git" / "hooks" / name).exists() for name in HOOKS)
