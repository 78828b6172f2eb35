"""The browser a workflow looks through: a seam, so that the core imports no browser.

Design tasks serve a worktree with the project's dev server and screenshot its pages. The real
browser (`fixloop.extras.browser`: Debian's Chromium, dev servers in their own process groups) is
an extra; the command line hands it in as `Context.browser`. Without one, a design task fails
closed: it has no screenshot to be verified by.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fixloop.sandboxes.launcher import RunSandbox


@dataclass(frozen=True)
class Picture:
    """A screenshot: the PNG's bytes and its size, read from its header where it was taken."""

    png: bytes
    width: int
    height: int


class Shots(Protocol):
    """The screenshots one agent may have taken of its dev server, in the runtime."""

    def take(self, url: object, viewport: object = ...) -> Picture:
        """The PNG of `url` (a page of that dev server only) at `viewport` ([WIDTH, HEIGHT]);
        ValueError (one line) when the request is refused, FixloopError when the browser or
        the page fails."""
        ...


class Browser(Protocol):
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
        """`command` serving `worktree` for the `with` block, recorded in `folder` so recovery
        can stop it; yields its base URL (on the host's loopback). Under a `sandbox` that
        confines (bwrap, docker) the command runs in it, never on the host. FixloopError when
        it does not start."""
        ...

    def screenshot(
        self, url: str, target: Path, viewport: tuple[int, int], timeout_s: float
    ) -> Path:
        """A PNG of `url` at `target`; FixloopError when the browser or the page fails."""
        ...

    def screenshot_service(
        self, url: str, timeout_s: float
    ) -> AbstractContextManager[tuple[str, Path]]:
        """A service, for the `with` block, that takes screenshots of the dev server at `url`
        (and of nothing else) for a sandboxed agent; yields the variable that names its Unix
        socket to the agent's commands, and the socket's path (bound into the sandbox)."""
        ...

    def shooter(self, url: str, timeout_s: float) -> Shots:
        """The screenshot service's checks and browser without its socket, for a tool the
        workflow lends an agent whose shell reaches neither the dev server nor a socket."""
        ...

    def cleanup(self, max_age_s: float) -> int:
        """Stop the headless browsers fixloop started at least `max_age_s` ago; how many."""
        ...


__all__ = ["Browser", "Picture", "Shots"]
