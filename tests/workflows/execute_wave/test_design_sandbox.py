"""A design task's dev servers under each sandbox, attacked: the executor rewrites the file the
user's `devServerCommand` runs, so the run's servers run agent code.

The user's command is `exec python3 serve.py`; the scripted executor, as a hostile model would,
rewrites `serve.py` (one of its task's files) into a server that also writes a marker to a host
path outside every worktree. The verification's server runs it on the merged tree. Under bwrap
and docker it runs in the run's sandbox: the marker never reaches the host, and the run's
pictures (through the relay to the host's browser) still show the page. Under local nothing
confines it, and the marker lands: the control, and what docs/browser.md says of local.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.extras.browser.png import read_png
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import kinds
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores
from tests.workflows.execute_wave.test_design import REFERENCE, VIEWPORT, chromium, page

from fixloop.sandboxes import SandboxChoice, choose_sandbox

__all__ = ["chromium", "docker_client", "docker_image"]  # the fixtures these tests use
pytestmark = pytest.mark.slow

RED = (220, 30, 30)
SERVE = "exec python3 serve.py"
BENIGN = """\
import functools, http.server, os
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=os.getcwd())
address = (os.environ["HOST"], int(os.environ["PORT"]))
http.server.ThreadingHTTPServer(address, handler).serve_forever()
"""
HOSTILE = (
    """\
import pathlib
try:
    pathlib.Path({marker!r}).write_text("agent code ran on the host\\n")
except OSError:
    pass
"""
    + BENIGN
)


def _choice(kind: str, request: pytest.FixtureRequest) -> SandboxChoice:
    if kind == "docker":
        return choose_sandbox("docker", image=request.getfixturevalue("docker_image"))
    return choose_sandbox(kind)


@pytest.mark.parametrize("kind", kinds("local", "bwrap", "docker"))
def test_agent_code_in_the_dev_server_runs_only_in_the_sandbox(
    wave: Wave, kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    repo = wave.repo
    (repo.path / "site").mkdir()
    (repo.path / "site/index.html").write_text(page((255, 255, 255), "blank"))
    (repo.path / "serve.py").write_text(BENIGN)
    (repo.path / "ref.png").write_bytes(REFERENCE)
    files = ["site/index.html", "serve.py", "ref.png"]
    repo.git("add", *files)
    repo.git("commit", "--quiet", "-m", "site", "--", *files)
    wave.write_tasks(
        {
            "tasks": [
                {
                    "id": 1,
                    "name": "banner",
                    "filesModified": ["site/index.html", "serve.py"],
                    "route": "/site/index.html",
                    "referenceImage": "ref.png",
                }
            ],
            "devServerCommand": SERVE,
            "maxRetries": 0,
        }
    )
    marker = tmp_path / "escaped.txt"
    edits = {"site/index.html": page(RED, "Hello"), "serve.py": HOSTILE.format(marker=str(marker))}
    script: dict[str, Any] = {
        "executor/1/implement": implement(1, edits),
        "verifier/1/verify": score(1, scores("design", 9), kind="design"),
    }
    result = wave.run(script, sandbox=_choice(kind, request), viewport=VIEWPORT)

    (task,) = result.tasks
    assert task.status == "committed", task.reason
    assert wave.file("serve.py") == HOSTILE.format(marker=str(marker))  # it did run it
    verified = read_png(Path(result.run_dir) / "shots" / "task-1-verify.png")
    assert (verified.width, verified.height) == VIEWPORT
    assert verified.pixel(VIEWPORT[0] // 2, 60)[:3] == RED  # the merged page, as served
    if kind == "local":
        assert marker.read_text() == "agent code ran on the host\n"  # local confines nothing
    else:
        assert not marker.exists(), f"under {kind} agent code ran on the host"
    assert wave.leftovers() == []
