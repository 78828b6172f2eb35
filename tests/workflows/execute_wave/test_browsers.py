"""The wave's browsers: stale ones stopped before and after each phase, and design executors in
batches of `maxParallelBrowsers` with the logic tasks in the first. The real dev server and the
real browser; only the model is scripted (and watched)."""

from __future__ import annotations

import os
import shutil
import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.scripted import ScriptedBackend
from fixloop.events import EventStream
from fixloop.extras.browser.seams import CHROMIUM
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave
from fixloop.workflows.kernel.browser import Browser, Shots
from fixloop.workflows.kernel.workflow import Context

SERVE = 'exec python3 -m http.server "$PORT" --bind "$HOST"'
PAGE = "<!doctype html><html><body style='margin:0'><h1>{}</h1></body></html>"
REFERENCE = bytes.fromhex(  # the smallest PNG there is (1x1, white)
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408"
    "d763f8ffff3f0005fe02fedccc59e70000000049454e44ae426082"
)


@pytest.fixture(scope="module", autouse=True)
def chromium() -> None:
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing under CI=true: .ci/run installs it")
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")


class Timeline:
    """One list of what happened, in order: each role call and each browser cleanup."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[str] = []

    def add(self, what: str) -> None:
        with self.lock:
            self.seen.append(what)


class CleanupsSeen:
    """The real browser, every cleanup written on the timeline."""

    def __init__(self, inner: Browser, timeline: Timeline) -> None:
        self.inner = inner
        self.timeline = timeline

    def serve(
        self,
        command: str,
        worktree: Path,
        folder: Path,
        run_id: str,
        timeout_s: float,
        *,
        sandbox: RunSandbox | None = None,
    ) -> AbstractContextManager[str]:
        return self.inner.serve(command, worktree, folder, run_id, timeout_s, sandbox=sandbox)

    def screenshot(
        self, url: str, target: Path, viewport: tuple[int, int], timeout_s: float
    ) -> Path:
        return self.inner.screenshot(url, target, viewport, timeout_s)

    def screenshot_service(
        self, url: str, timeout_s: float
    ) -> AbstractContextManager[tuple[str, Path]]:
        return self.inner.screenshot_service(url, timeout_s)

    def shooter(self, url: str, timeout_s: float) -> Shots:
        return self.inner.shooter(url, timeout_s)

    def cleanup(self, max_age_s: float) -> int:
        self.timeline.add(f"cleanup {max_age_s:g}")
        return self.inner.cleanup(max_age_s)


class Watched:
    """The scripted model; each call on the timeline. The first design executor holds until the
    logic executor has started (it must be in the same batch) and meanwhile looks whether the
    second design executor starts beside it (it must not: a batch of one browser)."""

    name = "scripted"

    def __init__(self, inner: ScriptedBackend, timeline: Timeline) -> None:
        self.inner = inner
        self.timeline = timeline
        self.logic_started = threading.Event()
        self.second_design_started = threading.Event()
        self.logic_beside_first: bool | None = None
        self.second_beside_first: bool | None = None

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        self.timeline.add(request.key)
        if request.key == "executor/3/implement":
            self.logic_started.set()
        if request.key == "executor/2/implement":
            self.second_design_started.set()
        if request.key == "executor/1/implement":
            self.logic_beside_first = self.logic_started.wait(60)
            # Were the batches ignored, the second design executor would start now.
            self.second_beside_first = self.second_design_started.wait(0.5)
        return self.inner.dispatch(request)


def design_site(wave: Wave) -> None:
    repo = wave.repo
    (repo.path / "site").mkdir()
    for name in ("one", "two"):
        (repo.path / f"site/{name}.html").write_text(PAGE.format("blank"))
    (repo.path / "ref.png").write_bytes(REFERENCE)
    repo.git("add", "site", "ref.png")
    repo.git("commit", "--quiet", "-m", "site", "--", "site", "ref.png")


def design_task(number: int, name: str) -> dict[str, Any]:
    return {
        "id": number,
        "name": name,
        "filesModified": [f"site/{name}.html"],
        "route": f"/site/{name}.html",
        "referenceImage": "ref.png",
    }


def test_design_executors_run_in_browser_batches_and_stale_browsers_are_stopped_between_phases(
    wave: Wave,
) -> None:
    design_site(wave)
    wave.write_tasks(
        {
            "tasks": [
                design_task(1, "one"),
                design_task(2, "two"),
                {"id": 3, "name": "logic", "filesModified": ["src/logic.py"]},
            ],
            "devServerCommand": SERVE,
            "maxParallelBrowsers": 1,
            "maxRetries": 0,
        }
    )
    script: dict[str, Any] = {
        "executor/1/implement": implement(1, {"site/one.html": PAGE.format("One")}),
        "executor/2/implement": implement(2, {"site/two.html": PAGE.format("Two")}),
        "executor/3/implement": implement(3, {"src/logic.py": "x = 1\n"}),
        "verifier/1/verify": score(1, scores("design", 9), kind="design"),
        "verifier/2/verify": score(2, scores("design", 9), kind="design"),
        "reviewer/3/verify": score(3, scores("logic", 9)),
    }
    timeline = Timeline()
    backend = Watched(ScriptedBackend(script), timeline)
    browser = CleanupsSeen(CHROMIUM, timeline)
    context = Context(wave.pack, backend, EventStream(wave.events.append), browser=browser)
    options = ExecuteWaveOptions(tasks=wave.tasks_path, repo=wave.repo.path, parallel=4)
    result = run_execute_wave(options, context)

    assert result.exit_code == 0, result.to_json()
    assert (backend.logic_beside_first, backend.second_beside_first) == (True, False)
    seen = timeline.seen
    executors = [i for i, what in enumerate(seen) if what.endswith("/implement")]
    verifies = [i for i, what in enumerate(seen) if what.endswith("/verify")]
    assert seen[: executors[0]] == ["cleanup 10"]  # before the executors start
    # after the executors, before the verification (at least once)
    assert "cleanup 0" in seen[executors[-1] : verifies[0]]
    assert seen[-2:] == ["cleanup 0", "cleanup 0"]  # after verifying; after the fix loop
    assert seen.index("executor/2/implement") > seen.index("executor/3/implement")
    assert wave.leftovers() == []
