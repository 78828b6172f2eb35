"""Design tasks: their dev servers, their screenshots, stale browsers, and Figma's MCP tools.

The browser and the dev servers are the run's `Context.browser` (`fixloop.workflows.kernel.
browser`), which the command line wires to `fixloop.extras.browser`: Debian's Chromium in headless
mode and a project's `devServerCommand` run in a worktree on a free port, each in its own process
group, the server recorded in a run folder so that `fixloop recover` can stop the servers of a run
that died. The worktree is the agent's work, so under bwrap and docker its server runs in the
run's sandbox (relayed to the host's loopback for the browser), never on the host. This module
only says where and when; without a browser a design task fails closed.

Figma: a design task with a `figmaUrl` is compared with the Figma design through a Figma MCP
server's tools, when the user has one: an `mcpServers` entry whose name holds "figma", in the
repository's `.mcp.json` (Claude Code's project scope) or in the file `--mcp-config` names. Its
tools are then handed to the executor and the verifier of design tasks. Without one, the task's
`referenceImage` stands in.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.agents.toolbox import Toolbox, qualified
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.workflows.kernel.browser import Browser, Shots

DEFAULT_VIEWPORT = (1280, 800)
SCREENSHOT_CLIENT = "screenshot.py"  # in the step library: python3 only, for docker images
FIGMA = "figma"
FIGMA_TOOLS = ("get_design_context", "get_screenshot")


@dataclass(frozen=True)
class FigmaTools:
    """A configured Figma MCP server: the config file and the tool names it gives a role."""

    config: Path
    server: str

    @property
    def tools(self) -> tuple[str, ...]:
        """Two of the server's tools: the design's structure and its picture."""
        return tuple(f"mcp__{self.server}__{tool}" for tool in FIGMA_TOOLS)


def lent_tools(figma: FigmaTools | None, toolbox: Toolbox | None) -> dict[str, Any]:
    """A design call's tools beyond its role's, as `Dispatcher.call`'s keyword arguments: the
    Figma server's (and its config), and every tool of the `toolbox` the run lends it."""
    lent = tuple(qualified(spec.name) for spec in toolbox.specs()) if toolbox else ()
    return {
        "extra_tools": (*(figma.tools if figma else ()), *lent),
        "mcp_config": str(figma.config) if figma else None,
        "toolbox": toolbox,
    }


def find_figma(repo: Path, explicit: Path | None) -> FigmaTools | None:
    """The Figma MCP server of `explicit` (an MCP config file) or of the repository's .mcp.json."""
    candidates = [explicit] if explicit is not None else [repo / ".mcp.json"]
    for path in candidates:
        if not path.is_file():
            if explicit is not None:
                raise _bad(path, "no such MCP config file")
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _bad(path, f"not a readable MCP config: {exc}") from None
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            raise _bad(path, 'expected {"mcpServers": {...}}')
        for name in sorted(servers):
            if FIGMA in name.lower():
                return FigmaTools(path.resolve(), name)
    return None


def _bad(path: Path, message: str) -> FixloopError:
    return FixloopError(Diagnostic(display_path(path), 1, 1, "mcp-config", message))


def page_url(base: str, route: str) -> str:
    """The dev server's URL with the task's route (`/login`) appended."""
    return base.rstrip("/") + "/" + route.lstrip("/")


def screenshot_command(url: str, viewport: tuple[int, int], client: Path | None = None) -> str:
    """What a design executor's Bash runs to look at its page (NAME is the executor's).
    `client`: the step library's python3-only client, for a sandbox without fixloop (docker);
    else fixloop's own command, which asks the run's screenshot service when its variable is
    set (bwrap) and takes the picture itself when not (local)."""
    size = f"{viewport[0]}x{viewport[1]}"
    program = (
        f"python3 {shlex.quote(str(client))}"
        if client is not None
        else f"{shlex.quote(sys.executable)} -m fixloop browser screenshot"
    )
    return f"{program} {shlex.quote(url)} --out .fixloop/shots/NAME.png --viewport {size}"


@contextmanager
def screenshot_service(
    browser: Browser | None, url: str, timeout_s: float
) -> Iterator[tuple[tuple[str, str], ...]]:
    """The screenshot service of the dev server at `url` for the `with` block, as the
    services a role call's sandbox is handed (variable, socket path)."""
    with _needed(browser).screenshot_service(url, timeout_s) as (variable, path):
        yield ((variable, str(path)),)


def shooter(browser: Browser | None, url: str, timeout_s: float) -> Shots:
    """The screenshots of the dev server at `url` the run takes for an agent's tool."""
    return _needed(browser).shooter(url, timeout_s)


def _needed(browser: Browser | None) -> Browser:
    if browser is None:
        raise FixloopError(
            Diagnostic("design", 1, 1, "browser", "design tasks need a browser; none was given")
        )
    return browser


@contextmanager
def served(
    browser: Browser | None,
    command: str,
    worktree: Path,
    folder: Path,
    *,
    run_id: str,
    timeout_s: float,
    sandbox: RunSandbox | None,
) -> Iterator[str]:
    """`devServerCommand` serving `worktree` for the `with` block, in the run's `sandbox` when
    that confines (the agent wrote the tree it runs); yields its base URL."""
    with _needed(browser).serve(
        command, worktree, folder, run_id, timeout_s, sandbox=sandbox
    ) as url:
        yield url


@contextmanager
def served_if(
    needed: bool,
    browser: Browser | None,
    *,
    command: str,
    worktree: Path,
    folder: Path,
    run_id: str,
    timeout_s: float,
    sandbox: RunSandbox | None,
    warn: Callable[[str], None],
) -> Iterator[str]:
    """`served` when `needed`; yields "" when not, or when the server would not start (the
    design tasks then fail their screenshots, closed)."""
    with ExitStack() as stack:
        url = ""
        if needed:
            try:
                url = stack.enter_context(
                    served(
                        browser,
                        command,
                        worktree,
                        folder,
                        run_id=run_id,
                        timeout_s=timeout_s,
                        sandbox=sandbox,
                    )
                )
            except FixloopError as exc:
                warn(f"the dev server did not start: {exc}")
        yield url


def shoot(
    browser: Browser | None, url: str, target: Path, viewport: tuple[int, int], timeout_s: float
) -> Path:
    """A PNG of `url` as the browser renders it; FixloopError when the browser or page fails."""
    return _needed(browser).screenshot(url, target, viewport, timeout_s)


def stop_stale_browsers(browser: Browser | None, max_age_s: float) -> int:
    """Stop the headless browsers fixloop started at least `max_age_s` ago; how many."""
    return browser.cleanup(max_age_s) if browser is not None else 0


__all__ = [
    "DEFAULT_VIEWPORT",
    "FigmaTools",
    "find_figma",
    "lent_tools",
    "page_url",
    "screenshot_command",
    "screenshot_service",
    "served",
    "shoot",
    "shooter",
    "stop_stale_browsers",
]
