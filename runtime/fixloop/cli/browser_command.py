"""`fixloop browser screenshot|cleanup`: the headless browser an agent's shell can call.

Exit codes: 0 done; 1 the browser failed or timed out; 2 bad input (no browser installed, a bad
viewport, an unreachable URL, a bad number).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from fixloop.cli.envelope import emit
from fixloop.cli.pack_commands import Subparsers, add_json_option
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.extras.browser.chromium import (
    DEFAULT_VIEWPORT,
    Screenshot,
    cleanup,
    parse_viewport,
    png_size,
    screenshot,
)
from fixloop.extras.browser.shot_service import SOCKET_VARIABLE, inside, request_screenshot
from fixloop.sandboxes.launcher import working_tree_of

DEFAULT_MAX_AGE_S = 300.0
_EPILOG = (
    "The browser is the system's Chromium in headless mode (Debian: apt-get install -y "
    "chromium); nothing is downloaded. Each screenshot runs one browser with a fresh profile in "
    "its own process group, killed on timeout. `cleanup` stops only browsers fixloop started "
    "(recognised by their profile folder), never other browsers of yours. Inside a run's "
    f"sandbox, where {SOCKET_VARIABLE} names a screenshot service, the picture is taken by "
    "that service (of the task's dev server only) and saved inside the working tree."
)


def register(subparsers: Subparsers) -> None:
    browser = subparsers.add_parser(
        "browser",
        help="a headless browser for visual checks: screenshots, cleanup of stale browsers",
        description="Take screenshots with a headless browser; stop stale browsers.",
        epilog=_EPILOG,
    )
    actions = browser.add_subparsers(dest="browser_command", metavar="ACTION", required=True)
    shot = actions.add_parser(
        "screenshot",
        help="save a PNG of a page as the browser renders it",
        description="Save a PNG of URL (http, https or file) at the viewport size.",
    )
    shot.add_argument("url", metavar="URL", help="the page, e.g. http://127.0.0.1:5173/login")
    shot.add_argument("--out", type=Path, required=True, metavar="FILE.png", help="where to save")
    width, height = DEFAULT_VIEWPORT
    shot.add_argument(
        "--viewport",
        default=f"{width}x{height}",
        metavar="WxH",
        help=f"viewport in CSS pixels (default: {width}x{height})",
    )
    shot.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds before the browser is killed (default: 30)",
    )
    add_json_option(shot)
    shot.set_defaults(handler=run_screenshot)
    clean = actions.add_parser(
        "cleanup",
        help="stop stale browsers fixloop started and remove their profiles",
        description=(
            "Stop the headless browsers fixloop started at least S seconds ago (all of them "
            "with --max-age 0) and remove their profile folders."
        ),
    )
    clean.add_argument(
        "--max-age",
        type=float,
        default=DEFAULT_MAX_AGE_S,
        metavar="S",
        help=f"only browsers at least this many seconds old (default: {DEFAULT_MAX_AGE_S:g})",
    )
    add_json_option(clean)
    clean.set_defaults(handler=run_cleanup)


def _seconds(value: float, flag: str, *, zero_ok: bool) -> float:
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        bound = "0 or more" if zero_ok else "more than 0"
        raise FixloopError(Diagnostic(flag, 1, 1, "usage", f"{value:g}: must be {bound} seconds"))
    return value


def run_screenshot(args: argparse.Namespace) -> int:
    viewport = parse_viewport(args.viewport)
    timeout_s = _seconds(args.timeout, "--timeout", zero_ok=False)
    service = os.environ.get(SOCKET_VARIABLE, "")
    if service:
        shot = _asked(service, args.url, args.out, viewport, timeout_s)
    else:
        shot = screenshot(args.url, args.out, viewport, timeout_s)
    if args.json:
        taken = {"id": str(shot.path), "status": "saved", "url": args.url}
        size = {"width": shot.width, "height": shot.height, "seconds": round(shot.seconds, 3)}
        return emit("browser screenshot", 0, items=[taken], result=size)
    print(
        f"{shot.path}: {shot.width}x{shot.height} screenshot of {args.url} ({shot.seconds:.1f} s)"
    )
    return 0


def _asked(
    service: str, url: str, out: Path, viewport: tuple[int, int], timeout_s: float
) -> Screenshot:
    """The picture the run's screenshot service takes, saved inside the working tree."""
    started = time.monotonic()
    target = inside(out, working_tree_of(Path.cwd()))
    png = request_screenshot(service, url, viewport, timeout_s)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(png)
    width, height = png_size(target) or (0, 0)
    return Screenshot(out, width, height, round(time.monotonic() - started, 3))


def run_cleanup(args: argparse.Namespace) -> int:
    done = cleanup(_seconds(args.max_age, "--max-age", zero_ok=True))
    if args.json:
        items = [
            {"id": str(info.pid), "status": "stopped", "argv": list(info.argv[:1])}
            for info in done.stopped
        ]
        items += [{"id": str(folder), "status": "removed"} for folder in done.removed]
        return emit("browser cleanup", 0, items=items)
    for info in done.stopped:
        print(f"stopped browser process {info.pid} ({' '.join(info.argv[:1])})")
    for folder in done.removed:
        print(f"removed profile {folder}")
    print(
        f"{len(done.stopped)} browser process(es) stopped, "
        f"{len(done.removed)} profile folder(s) removed"
    )
    return 0
