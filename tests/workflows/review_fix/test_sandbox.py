"""review-fix's syntax checks, and the scripted model's shell, run in the run's sandbox: the
checks still tell a new syntax error from one that was there before (the HEAD copies they read
live in the run's folder, which the sandbox shows read-only), and a shell command of the model
cannot write outside the worktree under bwrap."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.host_service import counting_host_service
from tests.helpers.reviews import (
    APP_FIX,
    REVIEW_REL,
    UTIL_BROKEN,
    finding,
    fixed,
    pack,
    review_text,
    write_review,
)
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import PROBE, kinds

from fixloop.agents.scripted import ScriptedBackend
from fixloop.events import Event, EventKind, EventStream
from fixloop.gitrepo import state_dir_of
from fixloop.sandboxes import SandboxChoice, choose_sandbox
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review_fix import ReviewFixOptions, ReviewFixResult, run_review_fix

__all__ = ["docker_client", "docker_image"]


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host path outside the run's worktree, visible (read-only) under bwrap."""
    path = Path("/var/tmp") / f"fixloop-review-fix-{os.getpid()}"
    yield path
    path.unlink(missing_ok=True)


def _choice(request: pytest.FixtureRequest, kind: str) -> SandboxChoice:
    image = request.getfixturevalue("docker_image") if kind == "docker" else None
    return choose_sandbox(kind, image=image)


def _run(
    repo: Path, script: dict[str, Any], sandbox: SandboxChoice
) -> tuple[ReviewFixResult, list[Event]]:
    events: list[Event] = []
    context = Context(pack(), ScriptedBackend(script), EventStream(events.append), sandbox=sandbox)
    options = ReviewFixOptions(review=repo / REVIEW_REL, repo=repo)
    return run_review_fix(options, context), events


def _commit_file(user: UserRepo, rel: str, text: str) -> None:
    (user.path / rel).write_text(text)
    user.git("add", "--", rel)
    user.git("commit", "--quiet", "-m", f"add {rel}", "--", rel)


@pytest.mark.parametrize("kind", kinds("local", "bwrap", "docker"))
def test_syntax_checks_in_the_sandbox_tell_new_errors_from_old_ones(
    user_repo: UserRepo, request: pytest.FixtureRequest, kind: str
) -> None:
    _commit_file(user_repo, "src/broken.py", "def f(:\n    pass\nVALUE = 1\n")
    write_review(
        user_repo.path,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", "util name", "src/util.py"),
            finding("WR-01", "value", "src/broken.py:3"),
        ),
    )
    script = {
        "fixer/CR-01/iteration-1": APP_FIX,
        "fixer/CR-02/iteration-1": UTIL_BROKEN,
        "fixer/WR-01/iteration-1": fixed("src/broken.py", "VALUE = 1", "VALUE = 2"),
    }
    choice = _choice(request, kind)
    result, events = _run(user_repo.path, script, choice)
    fixed_one, broken, old_error = result.outcomes
    assert (fixed_one.label, old_error.label) == ("fixed", "fixed")
    assert broken.label.startswith("skipped") and "src/util.py: line 2" in broken.detail
    assert "already present before the fix: src/broken.py" in old_error.detail
    assert str(choice) in [e.message for e in events if e.kind is EventKind.NOTE]
    config = state_dir_of(user_repo.path) / "runs" / result.run_id / "sandbox" / "config.json"
    assert json.loads(config.read_text())["kind"] == kind


@pytest.mark.parametrize("kind", kinds("bwrap", "local"))
def test_the_model_shell_cannot_write_outside_the_worktree_under_bwrap(
    user_repo: UserRepo, request: pytest.FixtureRequest, kind: str, outside: Path
) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    reply = dict(APP_FIX, bash=[f"touch {outside}"])
    result, _ = _run(user_repo.path, {"fixer/CR-01/iteration-1": reply}, _choice(request, kind))
    assert [o.label for o in result.outcomes] == ["fixed"]
    assert outside.exists() is (kind == "local")  # local confines nothing, and says so


@pytest.fixture
def host_service() -> Iterator[tuple[str, list[str]]]:
    with counting_host_service("review-fix") as (path, connections):
        yield str(path), connections


@pytest.mark.parametrize("kind", kinds("local", "bwrap", "docker"))
def test_the_model_shell_cannot_reach_a_host_service(
    user_repo: UserRepo,
    request: pytest.FixtureRequest,
    kind: str,
    host_service: tuple[str, list[str]],
) -> None:
    """A hostile fixer's shell connects to a host socket (and an abstract one): only the local
    sandbox, which confines nothing, lets it through."""
    path, connections = host_service
    _commit_file(user_repo, "tools/probe.py", PROBE.read_text())
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    # /var/run/…: the path a client of the Docker daemon uses.
    reached = path.replace("/run/", "/var/run/", 1) if path.startswith("/run/") else path
    reply = dict(APP_FIX, bash=[f"python3 tools/probe.py unix {reached}"])
    result, _ = _run(user_repo.path, {"fixer/CR-01/iteration-1": reply}, _choice(request, kind))
    assert [o.label for o in result.outcomes] == ["fixed"]
    assert len(connections) == (1 if kind == "local" else 0), connections
