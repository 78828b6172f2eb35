"""fix-findings fixes in the user's own tree, so its fixer's shell runs in the run's sandbox
there: a hostile fixer connecting to a host Unix socket server (at the runtime folder, where the
Docker daemon's and the system bus's live) gets through only unconfined."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.fix_findings import finding, fix, git, make_repo, verdict
from tests.helpers.host_service import counting_host_service
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import PROBE, kinds

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.sandboxes import choose_sandbox
from fixloop.workflows.fix_findings import FixFindingsOptions, run_fix_findings
from fixloop.workflows.kernel.choices import ScriptedPrompter
from fixloop.workflows.kernel.workflow import Context

__all__ = ["docker_client", "docker_image"]


@pytest.fixture
def host_service() -> Iterator[tuple[Path, list[str]]]:
    with counting_host_service("fix-findings") as served:
        yield served


@pytest.mark.parametrize("kind", kinds("local", "bwrap", "docker"))
def test_the_fixers_shell_cannot_reach_a_host_service(
    tmp_path: Path,
    pack: Pack,
    request: pytest.FixtureRequest,
    kind: str,
    host_service: tuple[Path, list[str]],
) -> None:
    socket_path, connections = host_service
    repo = make_repo(tmp_path)
    (repo / "tools").mkdir()
    (repo / "tools/probe.py").write_text(PROBE.read_text())
    git(repo, "add", "--", "tools/probe.py")
    git(repo, "commit", "-q", "-m", "probe", "--", "tools/probe.py")
    target = finding(1)
    fixer = {**fix(), "bash": [f"python3 tools/probe.py unix {socket_path}"]}
    script = {
        "fixer/1/round-1": fixer,
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([target]))
    image = request.getfixturevalue("docker_image") if kind == "docker" else None
    context = Context(
        pack,
        ScriptedBackend(script),
        EventStream(),
        prompter=ScriptedPrompter([]),
        sandbox=choose_sandbox(kind, image=image),
    )
    result = run_fix_findings(FixFindingsOptions(findings, repo, "set-aside", "reject"), context)
    assert result.state.output().resolved == [1]
    assert len(connections) == (1 if kind == "local" else 0), connections
