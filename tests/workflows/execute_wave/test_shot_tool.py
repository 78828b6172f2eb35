"""A design executor's `screenshot` tool: a real PNG of its own dev server, and nothing else.

Real Chromium through the browser seam (`CHROMIUM.shooter`), a real dev server serving a small
site in a git worktree; the calls are the ones a hostile model would make. Every refusal is a
tool error the model reads, never an exception, and nothing is written outside the worktree.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.extras.browser.conftest import SERVE_STATIC, write_page
from tests.extras.browser.png import read_png

from fixloop.agents.backend import AgentRequest
from fixloop.agents.openai_backend import SUBMIT, OpenAIBackend
from fixloop.agents.openai_config import OpenAITarget
from fixloop.agents.toolbox import qualified
from fixloop.extras.browser.chromium import BROWSER_NAMES
from fixloop.extras.browser.devserver import DevServer, dev_server
from fixloop.extras.browser.seams import CHROMIUM
from fixloop.extras.browser.shot_service import Shooter
from fixloop.extras.testing.chat_server import SCRIPTED_KEY, ChatServer, call
from fixloop.workflows.execute_wave.shot_tool import SPEC, ScreenshotTool

pytestmark = pytest.mark.slow
VIEWPORT = (320, 240)


@pytest.fixture(scope="module", autouse=True)
def chromium() -> None:
    if not any(shutil.which(name) for name in BROWSER_NAMES):
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing under CI=true: .ci/run installs it")
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    folder = tmp_path / "worktree"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    write_page(folder, colour="#ff0000", title="edited")
    return folder


@pytest.fixture
def served(worktree: Path, tmp_path: Path) -> Iterator[DevServer]:
    env = {"PYTHON": sys.executable}
    with dev_server(SERVE_STATIC, worktree, tmp_path / "run", env=env) as server:
        yield server


@pytest.fixture
def other_service() -> Iterator[tuple[int, list[str]]]:
    """Another service on the host's loopback the tool must not look at: the paths asked."""
    hits: list[str] = []

    class Counting(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            """Quiet."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


def tool_for(served: DevServer, worktree: Path) -> ScreenshotTool:
    return ScreenshotTool(CHROMIUM.shooter(served.url, 30.0), worktree, VIEWPORT)


def answer(text: str) -> dict[str, Any]:
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


def test_the_tool_saves_and_shows_a_png_of_the_edited_page(
    worktree: Path, served: DevServer
) -> None:
    tool = tool_for(served, worktree)
    assert tool.replaces == frozenset()  # the executor keeps its Edit, Write and Bash
    assert [spec.name for spec in tool.specs()] == [SPEC.name] == ["screenshot"]

    reply = tool.call("screenshot", {"url": served.url + "index.html", "name": "after-edit"})

    assert not reply.is_error, reply.text
    data = answer(reply.text)
    shot = worktree / ".fixloop/shots/after-edit.png"
    assert data["ok"] is True and data["path"] == ".fixloop/shots/after-edit.png"
    assert data["file"] == str(shot) and (data["width"], data["height"]) == VIEWPORT
    assert reply.image == shot.read_bytes()  # the picture shown is the one saved
    picture = read_png(shot)
    assert (picture.width, picture.height) == VIEWPORT
    assert picture.pixel(160, 60) == (255, 0, 0)  # the edit, as the dev server serves it
    wide = tool.call("screenshot", {"url": served.url, "name": "wide", "viewport": [400, 300]})
    assert not wide.is_error, wide.text
    assert (answer(wide.text)["width"], answer(wide.text)["height"]) == (400, 300)


def test_hostile_calls_are_tool_errors_and_write_nothing_outside_the_worktree(
    worktree: Path, served: DevServer, other_service: tuple[int, list[str]], tmp_path: Path
) -> None:
    other_port, hits = other_service
    page = served.url + "index.html"
    tool = tool_for(served, worktree)
    refused_urls = {
        "another port": f"http://127.0.0.1:{other_port}/",
        "another host": f"http://localhost:{served.port}/index.html",
        "another scheme": f"https://127.0.0.1:{served.port}/index.html",
        "a file": "file:///etc/passwd",
        "the worktree's file": f"file://{worktree}/index.html",
        "a user name": f"http://me@127.0.0.1:{served.port}/index.html",
        "no text": 42,
    }
    for why, url in refused_urls.items():
        reply = tool.call("screenshot", {"url": url, "name": "x"})
        assert reply.is_error and answer(reply.text)["error"] == "refused", (why, reply.text)
        assert reply.image is None
    for name in ("../escaped", "a/b", "..", "/tmp/x", "x.png", "", None):
        reply = tool.call("screenshot", {"url": page, "name": name})
        assert reply.is_error and answer(reply.text)["error"] == "bad_name", (name, reply.text)
    bad_size = tool.call("screenshot", {"url": page, "name": "x", "viewport": [1, 99999]})
    assert bad_size.is_error and answer(bad_size.text)["error"] == "refused"
    assert tool.call("run_tests", {}).is_error
    assert hits == []  # the other service was never asked
    assert not (worktree / ".fixloop").exists()  # nothing refused was written

    # The agent writes its worktree: a shots folder that is a link out of it is not followed,
    outside = tmp_path / "outside"
    outside.mkdir()
    (worktree / ".fixloop").mkdir()
    (worktree / ".fixloop/shots").symlink_to(outside, target_is_directory=True)
    linked = tool.call("screenshot", {"url": page, "name": "through-link"})
    assert linked.is_error and answer(linked.text)["error"] == "not_written", linked.text
    assert list(outside.iterdir()) == []
    # and a picture that is a hard link to a file elsewhere is replaced, not written through.
    (worktree / ".fixloop/shots").unlink()
    (worktree / ".fixloop/shots").mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's file\n")
    os.link(precious, worktree / ".fixloop/shots/hard.png")
    replaced = tool.call("screenshot", {"url": page, "name": "hard"})
    assert not replaced.is_error, replaced.text
    assert precious.read_text() == "the user's file\n"
    assert read_png(worktree / ".fixloop/shots/hard.png").width == VIEWPORT[0]


def test_a_call_takes_at_most_the_services_number_of_pictures(
    worktree: Path, served: DevServer
) -> None:
    tool = ScreenshotTool(Shooter(served.url, limit=1), worktree, VIEWPORT)
    assert not tool.call("screenshot", {"url": served.url, "name": "one"}).is_error
    second = tool.call("screenshot", {"url": served.url, "name": "two"})
    assert second.is_error and "no more screenshots" in answer(second.text)["message"]
    assert not (worktree / ".fixloop/shots/two.png").exists()


def test_the_openai_backend_offers_the_tool_beside_the_executors_own(
    worktree: Path, served: DevServer
) -> None:
    result = {"id": 1, "status": "done", "filesModified": [], "notes": "looked at it"}
    turns = [
        call("screenshot", {"url": served.url + "index.html", "name": "look"}),
        call("screenshot", {"url": "file:///etc/passwd", "name": "x"}),
        call(SUBMIT, result),
    ]
    executor = AgentRequest(
        role="executor",
        system_prompt="# Executor",
        task="look at the page",
        tools=("Read", "Edit", "Write", "Bash", qualified("screenshot")),
        model="opus",
        output_schema="ImplResult",
        cwd=worktree,
        key="executor/1/implement",
        toolbox=tool_for(served, worktree),
    )
    with ChatServer(turns) as server:
        target = OpenAITarget(
            provider="custom",
            base_url=server.base_url,
            model="scripted-model",
            key_variable="OPENAI_API_KEY",
        )
        backend = OpenAIBackend(target, environ={"OPENAI_API_KEY": SCRIPTED_KEY}, max_retries=1)
        outcome = backend.dispatch(executor)

    assert outcome.ok, outcome.detail
    assert {"Read", "Edit", "Write", "Bash", "screenshot"} <= set(server.requests[0].tool_names)
    looked, refused = (json.loads(text) for text in server.requests[-1].tool_results())
    assert looked["ok"] is True and looked["path"] == ".fixloop/shots/look.png", looked
    assert refused["ok"] is False and refused["error"] == "refused"
    assert read_png(worktree / ".fixloop/shots/look.png").pixel(160, 60) == (255, 0, 0)
