"""What the browser extra hands the core: the browser design tasks look through, and recovery's
sweeper of dead runs' dev servers (`fixloop.workflows.kernel.browser`, `fixloop.runs.recovery`).

The command line wires these into every workflow's `Context`; a caller of the Python API passes
`Context(..., browser=CHROMIUM, sweepers=SWEEPERS)` for the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from fixloop.extras.browser.chromium import cleanup, screenshot
from fixloop.extras.browser.devserver import dev_server, sweep_dev_servers
from fixloop.extras.browser.shot_service import (
    SOCKET_VARIABLE,
    Shooter,
    browser_flags,
    screenshot_service,
)
from fixloop.runs.recovery import Sweeper
from fixloop.sandboxes.launcher import RunSandbox


class Chromium:
    """Debian's Chromium in headless mode, and the project's dev server, each in its own process
    group (a fresh profile per screenshot; the server recorded in the run folder, and run in
    the run's sandbox under bwrap and docker)."""

    @contextmanager
    def serve(
        self,
        command: str,
        worktree: Path,
        folder: Path,
        run_id: str,
        timeout_s: float,
        *,
        sandbox: RunSandbox | None = None,
    ) -> Iterator[str]:
        with dev_server(
            command, worktree, folder, run_id=run_id, timeout_s=timeout_s, sandbox=sandbox
        ) as server:
            yield server.url

    def screenshot(
        self, url: str, target: Path, viewport: tuple[int, int], timeout_s: float
    ) -> Path:
        target.parent.mkdir(parents=True, exist_ok=True)
        return screenshot(url, target, viewport, timeout_s, flags=only_its_origin(url)).path

    @contextmanager
    def screenshot_service(self, url: str, timeout_s: float) -> Iterator[tuple[str, Path]]:
        with screenshot_service(url, timeout_s=timeout_s) as socket_path:
            yield SOCKET_VARIABLE, socket_path

    def shooter(self, url: str, timeout_s: float) -> Shooter:
        return Shooter(url, timeout_s=timeout_s)

    def cleanup(self, max_age_s: float) -> int:
        # A run stops its own leftovers, never a concurrent run's live screenshot.
        return len(cleanup(max_age_s, spare_others=True).stopped)


def only_its_origin(url: str) -> list[str]:
    """The page is the agent's (its scripts run in this browser, on the host): like the
    screenshot service's, every request but its own dev server's goes to a proxy that is not
    there, so it reaches no other service of the host's loopback or network. A URL without an
    http origin of its own gets no exception at all."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None:
        # `<-loopback>` alone: loopback too goes to the proxy (Chromium's default bypasses it).
        return [
            "--proxy-bypass-list=<-loopback>" if flag.startswith("--proxy-bypass") else flag
            for flag in browser_flags("", 0)
        ]
    return browser_flags(parts.hostname, port)


CHROMIUM = Chromium()
SWEEPERS: tuple[Sweeper, ...] = (sweep_dev_servers,)

__all__ = ["CHROMIUM", "SWEEPERS", "Chromium"]
