"""The screenshot service: a sandboxed command gets a real PNG of its dev server, and nothing else.

Real Chromium, a real dev server, the real bwrap sandbox (no network but its own loopback) with
the service's socket bound into it; the command in it is fixloop's own `browser screenshot` or
the step library's python3-only client. The hostile requests come from inside the sandbox too.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.extras.browser.conftest import write_page
from tests.extras.browser.png import read_png

from fixloop.extras.browser.devserver import DevServer
from fixloop.extras.browser.shot_service import (
    REQUEST_LIMIT,
    SOCKET_VARIABLE,
    allowed_url,
    screenshot_service,
)
from fixloop.sandboxes import bubblewrap
from fixloop.sandboxes.bubblewrap import BubblewrapSandbox
from fixloop.sandboxes.protocol import SandboxResult

pytestmark = pytest.mark.slow
CLIENT = Path(__file__).parents[3] / "workflows" / "lib" / "screenshot.py"


@pytest.fixture(autouse=True)
def bwrap_works() -> None:
    problem = bubblewrap.unavailable()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bwrap is needed under CI=true: {problem}")
        pytest.skip(problem)


@pytest.fixture
def worktree(site: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(site)], check=True)
    return site


class _Counting(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012  (one list per test, reset by the fixture)

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b"<html><body style='background:#00ff00'>SECRET of another service</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def other_service() -> Iterator[tuple[int, list[str]]]:
    """Another service on the host's loopback that the page must not reach: its requests."""
    _Counting.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Counting.hits
    server.shutdown()
    server.server_close()


def in_sandbox(worktree: Path, socket_path: Path, argv: list[str]) -> SandboxResult:
    with BubblewrapSandbox(worktree, services={SOCKET_VARIABLE: socket_path}) as sandbox:
        return sandbox.run(argv, cwd=worktree, timeout_s=120)


def fixloop_shot(url: str, out: str = ".fixloop/shots/me.png") -> list[str]:
    command = [sys.executable, "-m", "fixloop", "browser", "screenshot", url, "--out", out]
    return [*command, "--viewport", "320x240"]


def client_shot(url: str, out: str = ".fixloop/shots/me.png") -> list[str]:
    return ["python3", str(CLIENT), url, "--out", out, "--viewport", "320x240"]


@pytest.mark.parametrize("command", [fixloop_shot, client_shot], ids=["fixloop", "python3"])
def test_a_sandboxed_command_gets_a_real_png_of_its_dev_server(
    chromium: str, worktree: Path, served: DevServer, command: object
) -> None:
    assert callable(command)
    url = served.url + "index.html"
    # The sandbox's own loopback has no dev server: asking directly is refused.
    direct = [sys.executable, "-c", f"import urllib.request; urllib.request.urlopen({url!r})"]
    with screenshot_service(served.url) as path:
        refused = in_sandbox(worktree, path, direct)
        assert refused.exit_code != 0 and "refused" in refused.stderr.lower(), refused
        write_page(worktree, colour="#ff0000", title="edited")  # the picture shows the edit
        done = in_sandbox(worktree, path, command(url))
    assert done.exit_code == 0, done.stderr
    picture = read_png(worktree / ".fixloop/shots/me.png")
    assert (picture.width, picture.height) == (320, 240)
    assert picture.pixel(160, 60) == (255, 0, 0)
    assert not path.exists() and not path.parent.exists()  # the service cleaned up its socket


@pytest.mark.parametrize("command", [fixloop_shot, client_shot], ids=["fixloop", "python3"])
def test_hostile_requests_from_the_sandbox_are_refused(
    *,
    chromium: str,
    worktree: Path,
    served: DevServer,
    other_service: tuple[int, list[str]],
    tmp_path: Path,
    command: object,
) -> None:
    assert callable(command)
    other_port, hits = other_service
    outside = tmp_path / "outside.png"
    hostile = {
        "another port": f"http://127.0.0.1:{other_port}/",
        "another host": f"http://localhost:{served.port}/index.html",
        "another scheme": f"https://127.0.0.1:{served.port}/index.html",
        "a file": f"file://{worktree}/index.html",
        "a user name": f"http://me@127.0.0.1:{served.port}/index.html",
    }
    with screenshot_service(served.url) as path:
        for why, url in hostile.items():
            done = in_sandbox(worktree, path, command(url))
            assert done.exit_code == 2, (why, done)
            assert "refused" in done.stderr, (why, done.stderr)
        escaping = in_sandbox(worktree, path, command(served.url, out=str(outside)))
        assert escaping.exit_code == 2 and "inside" in escaping.stderr, escaping
        long = in_sandbox(worktree, path, command(served.url + "x" * REQUEST_LIMIT))
        assert long.exit_code == 2 and "too long" in long.stderr, long
    assert hits == []
    assert not outside.exists()
    assert not (worktree / ".fixloop").exists()


def raw(path: Path, data: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        connection.connect(str(path))
        with contextlib.suppress(BrokenPipeError):  # it may stop reading at its limit
            connection.sendall(data)
        answer = connection.makefile("rb").readline()
    reply: dict[str, object] = json.loads(answer)
    return reply


def test_the_service_bounds_what_it_reads_and_how_often_it_serves(
    chromium: str, served: DevServer
) -> None:
    page = json.dumps({"url": served.url, "viewport": [64, 64]}).encode() + b"\n"
    with screenshot_service(served.url, limit=1) as path:
        oversized = raw(path, b'{"url": "' + b"a" * (REQUEST_LIMIT * 4) + b'"}\n')
        too_large = f"the request is larger than {REQUEST_LIMIT} bytes"
        assert oversized == {"ok": False, "error": too_large}
        assert raw(path, b"rm -rf /\n")["error"] == "the request is not one line of JSON"
        huge = json.dumps({"url": served.url, "viewport": [99999, 10]}).encode() + b"\n"
        assert "between" in str(raw(path, huge)["error"])
        first = raw(path, page)
        assert first["ok"] is True and first["width"] == 64
        assert "no more screenshots" in str(raw(path, page)["error"])


def test_a_page_that_loads_another_origin_gets_nothing_from_it(
    chromium: str, worktree: Path, served: DevServer, other_service: tuple[int, list[str]]
) -> None:
    other_port, hits = other_service
    other = f"http://127.0.0.1:{other_port}"
    (worktree / "index.html").write_text(
        "<html><body style='margin:0;background:#ffffff'>"
        f"<iframe src='{other}/frame' style='width:300px;height:200px;border:0'></iframe>"
        f"<img src='{other}/img.png'><script>fetch('{other}/fetch')</script></body></html>"
    )
    (worktree / "go.html").write_text(f"<meta http-equiv='refresh' content='0;url={other}/go'>")
    with screenshot_service(served.url) as path:
        done = in_sandbox(worktree, path, fixloop_shot(served.url + "index.html"))
        assert done.exit_code == 0, done.stderr
        assert (0, 255, 0) not in read_png(worktree / ".fixloop/shots/me.png").colours()
        # A redirect elsewhere ends at the dead proxy: the picture is the page before it, or
        # none at all (the browser got to the failed load first, or waited on it past its
        # timeout, as it may on a loaded machine), never the other page.
        redirected = in_sandbox(worktree, path, fixloop_shot(served.url + "go.html", "go.png"))
        if redirected.exit_code == 0:
            assert (0, 255, 0) not in read_png(worktree / "go.png").colours()
        else:
            why = ("no screenshot", "did not finish within")
            assert any(reason in redirected.stderr for reason in why), redirected
            assert not (worktree / "go.png").exists()
    assert hits == []


def test_only_the_dev_servers_pages_are_rebuilt_into_the_url_the_browser_opens() -> None:
    from fixloop.extras.browser.shot_service import Refused

    for url in ("http://127.0.0.1:5/a b", "http://127.0.0.1:5/\\evil", "http://127.0.0.1:x/"):
        with pytest.raises(Refused):
            allowed_url(url, "127.0.0.1", 5)
    assert allowed_url("http://127.0.0.1:5/a/../b?x=<1>#top", "127.0.0.1", 5) == (
        "http://127.0.0.1:5/a/../b?x=%3C1%3E"
    )


def test_a_request_trickled_a_byte_at_a_time_is_cut_off_at_one_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The read is bounded as a whole, not each wait: a whole request sent a byte every 0.05 s
    (each wait far inside the limit, the whole well past it) is refused, and the service then
    answers the next client."""
    from fixloop.extras.browser import shot_service

    monkeypatch.setattr(shot_service, "REQUEST_TIMEOUT_S", 0.5)
    request = b'{"url": "http://127.0.0.1:9/x", "viewport": [1, 1]}\n'
    with screenshot_service("http://127.0.0.1:9/") as path:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as slow:
            slow.settimeout(30)
            slow.connect(str(path))
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                for byte in request:
                    slow.sendall(bytes([byte]))
                    time.sleep(0.05)
            answer = json.loads(slow.makefile("rb").readline())
        assert answer == {"ok": False, "error": "the request did not arrive in time"}
        other = raw(path, b'{"url": "file:///etc/passwd"}\n')
        assert other["ok"] is False and "only http://" in str(other["error"])
