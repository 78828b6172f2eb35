"""A design task for real: a static page served by a real dev server, looked at by the real browser.

The executor's dev server serves its worktree; the executor (the scripted model, here playing a
model that uses its Bash tool) runs the screenshot command its prompt gives it; the runtime
screenshots the implemented page, then the merged page for the verifier, and again after the fix
loop's attempt. The pictures are checked: their size, that they are not blank, and that they
change when the page does.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.extras.browser.png import Image, read_png
from tests.helpers.gitrepo import UserRepo
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import fix, implement, score, scores

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.scripted import ScriptedBackend
from fixloop.events import EventStream
from fixloop.extras.browser.seams import CHROMIUM, SWEEPERS
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave
from fixloop.workflows.kernel.workflow import Context

pytestmark = pytest.mark.slow

VIEWPORT = (320, 240)
PAGE = (
    "<!doctype html><html><body style='margin:0;background:#ffffff'>"
    "<div style='height:120px;background:{colour};color:#fff;font:24px sans-serif'>{title}</div>"
    "<p>a page</p></body></html>"
)
RED, BLUE = (220, 30, 30), (30, 60, 220)
SERVE = 'exec python3 -m http.server "$PORT" --bind "$HOST"'
# The smallest PNG there is (1x1, white): the design's reference picture.
REFERENCE = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408"
    "d763f8ffff3f0005fe02fedccc59e70000000049454e44ae426082"
)


@pytest.fixture(scope="module", autouse=True)
def chromium() -> None:
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing under CI=true: .ci/run installs it")
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")


def hex_colour(rgb: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{part:02x}" for part in rgb)


def page(colour: tuple[int, int, int], title: str) -> str:
    return PAGE.format(colour=hex_colour(colour), title=title)


class LooksAtItsPage:
    """The scripted model, as a model that edits its page and then runs the screenshot command
    its prompt names with its Bash tool (the picture is kept for the test)."""

    name = "scripted"

    def __init__(self, inner: ScriptedBackend, keep: Path) -> None:
        self.inner = inner
        self.keep = keep
        self.urls: list[str] = []

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        outcome = self.inner.dispatch(request)
        command = re.search(r"^screenshot_command: (.+)$", request.system_prompt, re.MULTILINE)
        url = re.search(r"^dev_server_url: (\S+)$", request.system_prompt, re.MULTILINE)
        if request.role == "executor" and command and url:
            self.urls.append(url.group(1))
            done = subprocess.run(
                ["bash", "-c", command.group(1).replace("NAME", "self-check")],
                cwd=request.cwd,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            shutil.copyfile(request.cwd / ".fixloop/shots/self-check.png", self.keep)
        return outcome


def banner(image: Image) -> tuple[int, ...]:
    return image.pixel(VIEWPORT[0] // 2, 60)


def looks_right(path: Path) -> Image:
    image = read_png(path)
    assert (image.width, image.height) == VIEWPORT, path
    assert len(image.colours()) > 2, f"{path} is blank"
    return image


def banner_site(wave: Wave, serve: str) -> UserRepo:
    """A blank page and its reference picture, committed; one design task (a blue banner) whose
    dev server is `serve`, with one fix attempt."""
    repo = wave.repo
    (repo.path / "site").mkdir()
    (repo.path / "site/index.html").write_text(page((255, 255, 255), "blank"))
    (repo.path / "ref").mkdir()
    (repo.path / "ref/design.png").write_bytes(REFERENCE)
    repo.git("add", "site/index.html", "ref/design.png")
    repo.git("commit", "--quiet", "-m", "site", "--", "site/index.html", "ref/design.png")
    wave.write_tasks(
        {
            "tasks": [
                {
                    "id": 1,
                    "name": "banner",
                    "filesModified": ["site/index.html"],
                    "route": "/site/index.html",
                    "referenceImage": "ref/design.png",
                    "acceptanceCriteria": ["a blue banner"],
                }
            ],
            "devServerCommand": serve,
            "maxRetries": 1,
        }
    )
    return repo


def test_a_design_task_is_served_screenshotted_and_scored_from_the_pictures(
    wave: Wave, tmp_path: Path
) -> None:
    repo = banner_site(wave, SERVE)
    script: dict[str, Any] = {
        "executor/1/implement": implement(1, {"site/index.html": page(RED, "Hello")}),
        "verifier/1/verify": score(1, scores("design", 5), kind="design", analysis="red, not blue"),
        "fixer/1/attempt-1": fix({"site/index.html": page(BLUE, "Hello")}),
        "verifier/1/attempt-1": score(1, scores("design", 9), kind="design"),
    }
    inner = ScriptedBackend(script)
    backend = LooksAtItsPage(inner, tmp_path / "self-check.png")
    context = Context(wave.pack, backend, EventStream(wave.events.append), browser=CHROMIUM)
    options = ExecuteWaveOptions(tasks=wave.tasks_path, repo=repo.path, viewport=VIEWPORT)
    result = run_execute_wave(options, context)

    assert inner.unplayed() == []
    (task,) = result.tasks
    assert (task.status, task.attempts, task.total) == ("committed", 1, 90)
    assert wave.file("site/index.html") == page(BLUE, "Hello")
    shots = Path(result.run_dir) / "shots"
    self_check = looks_right(tmp_path / "self-check.png")
    implemented = looks_right(shots / "task-1-implemented.png")
    verified = looks_right(shots / "task-1-verify.png")
    fixed = looks_right(shots / "task-1-attempt-1.png")
    assert banner(self_check) == banner(implemented) == banner(verified) == RED
    assert banner(fixed) == BLUE
    assert fixed.rows != verified.rows  # the page changed, and so did its picture
    verifier = next(c for c in inner.calls if c.key == "verifier/1/attempt-1")
    assert str(shots / "task-1-attempt-1.png") in verifier.system_prompt
    assert str(repo.path / "ref/design.png") in verifier.system_prompt
    # Every dev server was stopped: the executor's no longer answers.
    (url,) = backend.urls
    assert url.startswith("http://127.0.0.1:")
    with pytest.raises((urllib.error.URLError, OSError)):
        urllib.request.urlopen(url, timeout=2)
    assert wave.leftovers() == []


def test_a_killed_runs_dev_server_is_stopped_by_recovery(wave: Wave, tmp_path: Path) -> None:
    import json
    import sys

    from tests.workflows.execute_wave.test_crash_matrix import DRIVER, wait_until_dead

    from fixloop.extras.browser.devserver import RECORDS
    from fixloop.runs.git_session import load_protocol
    from fixloop.runs.recovery import recover

    repo = wave.repo
    (repo.path / "site").mkdir()
    (repo.path / "site/index.html").write_text(page((255, 255, 255), "blank"))
    (repo.path / "ref.png").write_bytes(REFERENCE)
    repo.git("add", "site/index.html", "ref.png")
    repo.git("commit", "--quiet", "-m", "site", "--", "site/index.html", "ref.png")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps(
            {
                "tasks": [
                    {
                        "id": 1,
                        "name": "banner",
                        "filesModified": ["site/index.html"],
                        "route": "/site/index.html",
                        "referenceImage": "ref.png",
                    }
                ],
                "devServerCommand": SERVE,
                "maxRetries": 1,
            }
        )
    )
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "executor/1/implement": implement(1, {"site/index.html": page(RED, "Hello")}),
                "verifier/1/verify": score(1, scores("design", 5), kind="design"),
            }
        )
    )
    env = {**os.environ, "FIXLOOP_CRASH_AT": "checkpoint-task#2:1"}  # in the fix loop
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(repo.path), str(tasks), str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -9, done.stderr
    wait_until_dead(repo.path)
    (record,) = (repo.path / ".git/fixloop/runs").glob(f"*/{RECORDS}/*.json")
    port = json.loads(record.read_text())["port"]
    # The killed run's server still listens (its requests fail: its log pipe's reader is dead).
    socket.create_connection(("127.0.0.1", port), timeout=5).close()

    report = recover(repo.path, load_protocol(), sweepers=SWEEPERS)
    assert len(report.swept) == 1 and "stopped its dev server" in report.swept[0]
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert not record.exists()
    assert repo.worktrees() == [str(repo.path)]


# A dev server that builds once: it copies the site when it starts and serves the copy.
SERVE_A_BUILD = (
    'build="$(mktemp -d)" && cp -R site "$build/" && '
    'exec python3 -m http.server "$PORT" --bind "$HOST" --directory "$build"'
)


def test_a_page_that_stays_the_same_while_its_files_change_is_called_stale(
    wave: Wave, tmp_path: Path
) -> None:
    repo = banner_site(wave, SERVE_A_BUILD)
    script: dict[str, Any] = {
        "executor/1/implement": implement(1, {"site/index.html": page(RED, "Hello")}),
        "verifier/1/verify": score(1, scores("design", 5), kind="design", analysis="red"),
        "fixer/1/attempt-1": fix({"site/index.html": page(BLUE, "Hello")}),
        "verifier/1/attempt-1": score(1, scores("design", 5), kind="design", analysis="red"),
    }
    inner = ScriptedBackend(script)
    context = Context(wave.pack, inner, EventStream(wave.events.append), browser=CHROMIUM)
    options = ExecuteWaveOptions(tasks=wave.tasks_path, repo=repo.path, viewport=VIEWPORT)
    result = run_execute_wave(options, context)

    shots = Path(result.run_dir) / "shots"
    assert banner(looks_right(shots / "task-1-attempt-1.png")) == RED  # the old build, served
    warnings = [e.message for e in wave.events if e.kind.value == "warning"]
    assert any("looks exactly as before although its files changed" in w for w in warnings)
    verifier = next(c for c in inner.calls if c.key == "verifier/1/attempt-1")
    assert "this picture is identical to the previous one" in verifier.system_prompt
    first = next(c for c in inner.calls if c.key == "verifier/1/verify")
    assert "identical" not in first.system_prompt


class LooksFromItsSandbox:
    """The scripted model, as a model whose Bash runs in the run's sandbox: after its edits it
    runs the screenshot command its prompt names there, then tries to look elsewhere (the other
    commands, each run in the same sandbox; what they print is kept)."""

    name = "scripted"

    def __init__(self, inner: ScriptedBackend, hostile: list[str]) -> None:
        self.inner = inner
        self.hostile = hostile
        self.results: list[Any] = []

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        outcome = self.inner.dispatch(request)
        command = re.search(r"^screenshot_command: (.+)$", request.system_prompt, re.MULTILINE)
        url = re.search(r"^dev_server_url: (\S+)$", request.system_prompt, re.MULTILINE)
        if request.role == "executor" and command and url:
            assert request.sandbox is not None
            hostile = [line.replace("URL", shlex.quote(url.group(1))) for line in self.hostile]
            for line in [command.group(1).replace("NAME", "self-check"), *hostile]:
                self.results.append(
                    request.sandbox.run(["bash", "-c", line], cwd=request.cwd, timeout_s=120)
                )
            shutil.copyfile(request.cwd / ".fixloop/shots/self-check.png", self.hostile_keep)
        return outcome

    hostile_keep: Path = Path()


def test_a_design_executor_in_bwrap_takes_its_screenshot_from_inside_its_sandbox(
    wave: Wave, tmp_path: Path
) -> None:
    from fixloop.sandboxes import bubblewrap
    from fixloop.sandboxes.protocol import SandboxChoice

    if (problem := bubblewrap.unavailable()) is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bwrap is needed under CI=true: {problem}")
        pytest.skip(problem)
    repo = banner_site(wave, SERVE)
    script: dict[str, Any] = {
        "executor/1/implement": implement(1, {"site/index.html": page(RED, "Hello")}),
        "verifier/1/verify": score(1, scores("design", 9), kind="design"),
    }
    inner = ScriptedBackend(script)
    with socket.socket() as probe:  # a port of the host that is not the task's dev server
        probe.bind(("127.0.0.1", 0))
        other = probe.getsockname()[1]
    outside = tmp_path / "escaped.png"
    python = shlex.quote(sys.executable)
    shot = f"{python} -m fixloop browser screenshot"
    hostile = [
        # The dev server, asked directly: the sandbox's loopback is its own.
        f"{python} -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1])' URL",
        f"{shot} http://127.0.0.1:{other}/ --out .fixloop/shots/x.png",
        f"{shot} file:///etc/passwd --out .fixloop/shots/x.png",
        f"{shot} URL --out {outside}",
    ]
    backend = LooksFromItsSandbox(inner, hostile)
    backend.hostile_keep = tmp_path / "self-check.png"
    context = Context(
        wave.pack,
        backend,
        EventStream(wave.events.append),
        browser=CHROMIUM,
        sandbox=SandboxChoice("bwrap", "the test's"),
    )
    options = ExecuteWaveOptions(tasks=wave.tasks_path, repo=repo.path, viewport=VIEWPORT)
    result = run_execute_wave(options, context)

    assert inner.unplayed() == []
    (task,) = result.tasks
    assert task.status == "committed", task
    own, direct, port, file, escape = backend.results
    assert own.exit_code == 0, own.stderr
    self_check = looks_right(tmp_path / "self-check.png")
    assert banner(self_check) == RED  # the executor's edit, as its own dev server serves it
    assert direct.exit_code != 0 and "Connection refused" in direct.stderr, direct
    for refused in (port, file):
        assert refused.exit_code == 2 and "refused" in refused.stderr, refused
    assert escape.exit_code == 2 and "inside" in escape.stderr, escape
    assert not outside.exists()
    assert wave.leftovers() == []
