"""Dev servers in the run's sandbox, for real (bwrap, docker): what the agent wrote into the tree
the server runs from runs there, never on the host, and the host's browser still sees the page
through the relay. Under local the same server runs on the host: the control.

The hostile part is `serve.py`, the agent's file in the worktree that the user's benign
`devServerCommand` (`exec python3 serve.py`) runs: it writes a marker to a host path outside the
worktree, then serves the page.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.extras.browser.conftest import SERVERS, answers, http_get
from tests.extras.browser.png import read_png
from tests.helpers.sandbox_image import container_exists, docker_client, docker_image
from tests.sandboxes.support import kinds, wait_until

from fixloop.diagnostics import FixloopError
from fixloop.extras.browser.chromium import screenshot
from fixloop.extras.browser.devserver import (
    MARKER_VARIABLE,
    RECORDS,
    dev_server,
    stop_leftovers,
)
from fixloop.process_table import marked_by_environment, processes
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.sandboxes.protocol import SandboxChoice

__all__ = ["docker_client", "docker_image"]  # the fixtures the docker cases ask for

CONFINING = kinds("bwrap", "docker")
SERVE = "exec python3 serve.py"  # the user's command; serve.py is the agent's
SERVE_PY = """\
import functools, http.server, os, pathlib
try:
    pathlib.Path({marker!r}).write_text("the dev server ran on the host\\n")
except OSError:
    pass
pathlib.Path("env.txt").write_text("\\n".join(sorted(os.environ)) + "\\n")
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=os.getcwd())
server = http.server.ThreadingHTTPServer((os.environ["HOST"], int(os.environ["PORT"])), handler)
server.serve_forever()
"""
BANNER = (0x1F, 0x6F, 0xEB)  # write_page's default colour


def _sandbox(kind: str, request: pytest.FixtureRequest) -> RunSandbox:
    image = request.getfixturevalue("docker_image") if kind == "docker" else None
    choice = SandboxChoice(kind, "the test's", image=image)
    return RunSandbox(choice, run_id=f"test-{uuid.uuid4().hex[:12]}")


def _left_by_this_process() -> list[str]:
    """Processes and containers of dev servers this process started that are still there."""
    import docker

    mine = f"{MARKER_VARIABLE}={os.getpid()}-".encode()
    found = []
    for info in processes():
        with contextlib.suppress(OSError):
            environ = Path(f"/proc/{info.pid}/environ").read_bytes().split(b"\0")
            if any(entry.startswith(mine) for entry in environ):
                found.append(f"process {info.pid}")
    client = docker.from_env()
    try:
        ours = {"name": f"fixloop-dev-server-{os.getpid()}-"}
        named = client.containers.list(all=True, filters=ours)
        found += [f"container {c.name}" for c in named]
    finally:
        client.close()
    return found


def _hostile_site(site: Path, marker: Path) -> None:
    (site / "serve.py").write_text(SERVE_PY.format(marker=str(marker)), encoding="utf-8")


@pytest.mark.parametrize("kind", CONFINING)
def test_what_the_agent_wrote_runs_in_the_sandbox_and_the_browser_still_sees_the_page(
    kind: str,
    chromium: str,
    site: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    marker = tmp_path / "escaped.txt"
    _hostile_site(site, marker)
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setenv("FIXLOOP_HOST_ONLY", "a value of the host's environment")
    folder = tmp_path / "run"
    with dev_server(SERVE, site, folder, run_id="r1", sandbox=_sandbox(kind, request)) as server:
        assert server.url == f"http://127.0.0.1:{server.port}/"
        assert server.sandbox == kind
        assert b"A small page" in http_get(server.url + "index.html")  # through the relay
        shot = screenshot(server.url + "index.html", tmp_path / "page.png", (320, 240), 60)
        assert read_png(shot.path).pixel(160, 60)[:3] == BANNER  # the real browser sees it
        names = (site / "env.txt").read_text().split()
        assert {"PORT", "HOST", "BROWSER", MARKER_VARIABLE} <= set(names)
        assert "FIXLOOP_HOST_ONLY" not in names  # the host's environment stays out
        (record,) = (folder / RECORDS).glob("*.json")
        relay = Path(server.relay)
        assert relay.is_dir() and str(relay) in record.read_text()
        if kind == "docker":
            assert server.container and container_exists(server.container)
    assert not marker.exists(), "agent code ran on the host"
    assert not answers(server.url)
    assert not relay.exists()
    assert list((folder / RECORDS).iterdir()) == []
    assert marked_by_environment(f"{MARKER_VARIABLE}={server.marker}") == []
    if kind == "docker":
        assert not container_exists(server.container)


def test_under_local_the_same_server_runs_on_the_host(site: Path, tmp_path: Path) -> None:
    """The control: no sandbox confines it (docs/browser.md), so the marker lands."""
    marker = tmp_path / "escaped.txt"
    _hostile_site(site, marker)
    local = RunSandbox(SandboxChoice("local", "the test's"))
    with dev_server(SERVE, site, tmp_path / "run", sandbox=local) as server:
        assert b"A small page" in http_get(server.url + "index.html")
        assert (server.sandbox, server.relay) == ("local", "")
    assert marker.read_text() == "the dev server ran on the host\n"


@pytest.mark.parametrize("kind", CONFINING)
def test_a_confined_server_that_exits_says_why_with_its_secrets_masked(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    token = "sk-ant-" + "a1B2" * 8
    command = f"echo 'port in use, key {token}' >&2; exit 3"
    folder = tmp_path / "run"
    with (
        pytest.raises(FixloopError) as raised,
        dev_server(command, tmp_path, folder, sandbox=_sandbox(kind, request)),
    ):
        pytest.fail("unreachable")
    message = str(raised.value)
    assert "exited (3) before answering: port in use, key «masked:anthropic-key»" in message
    assert token not in message
    assert list((folder / RECORDS).iterdir()) == []


@pytest.mark.parametrize("kind", CONFINING)
def test_a_confined_server_that_never_answers_is_stopped(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "run"
    with (
        pytest.raises(FixloopError) as raised,
        dev_server(
            "echo starting; exec sleep 600",
            tmp_path,
            folder,
            timeout_s=3,
            grace_s=1,
            sandbox=_sandbox(kind, request),
        ),
    ):
        pytest.fail("unreachable")
    message = str(raised.value)
    assert "did not answer HTTP on 127.0.0.1:" in message and "starting" in message
    assert list((folder / RECORDS).iterdir()) == []
    assert _left_by_this_process() == []


@pytest.mark.parametrize("kind", CONFINING)
def test_a_killed_starters_confined_server_is_gone_or_stopped_by_stop_leftovers(
    kind: str, site: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "run"
    sandbox = _sandbox(kind, request)
    quiet = 'exec python3 -m http.server "$PORT" --bind "$HOST" 2>/dev/null'
    argv = [sys.executable, str(SERVERS / "hold_dev_server.py"), str(folder), str(site), quiet]
    argv += [kind, *([sandbox.choice.image] if sandbox.choice.image else [])]
    holder = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        url = holder.stdout.readline().strip()
        assert answers(url)
        assert stop_leftovers(folder) == []  # its run is live: left alone
        (record,) = (folder / RECORDS).glob("*.json")
        held: dict[str, Any] = json.loads(record.read_text())
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        # The host's relay died with its process; under bwrap the sandbox did too (the kernel
        # kills it with its parent), a container is left until recovery removes it.
        assert wait_until(lambda: not answers(url))
        marked = f"{MARKER_VARIABLE}={held['marker']}"
        if kind == "bwrap":
            assert wait_until(lambda: marked_by_environment(marked) == [])
        else:
            assert container_exists(held["container"])
        (stopped,) = stop_leftovers(folder)
        assert (stopped.url, stopped.sandbox) == (url, kind)
        assert marked_by_environment(marked) == []
        assert not Path(held["relay"]).exists()
        if kind == "docker":
            assert not container_exists(held["container"])
        assert list((folder / RECORDS).iterdir()) == []
    finally:
        holder.kill()
        holder.wait()
        stop_leftovers(folder, grace_s=0)
