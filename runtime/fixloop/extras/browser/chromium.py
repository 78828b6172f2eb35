"""Screenshots with the system's Chromium in headless mode, and cleanup of stale browsers.

Each `screenshot` call starts one browser with a fresh profile folder whose name carries the
marker `fixloop-browser-` (under the run's folder or the temp folder). Every process of that
browser names the folder on its command line (`--user-data-dir=…`; the crash handler, which
leaves the browser's session, finds its database through `XDG_CONFIG_HOME` inside the folder), so
`cleanup` can find fixloop's browsers from any later process and never touches another browser
of the user. The browser runs in a process group of its own and is killed on timeout; whatever
is left of it is killed when the call ends, and the profile folder is removed.

Nothing is downloaded at run time: the browser is Debian's `chromium` package (or another
Chromium or Chrome on PATH).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.masking import mask_text
from fixloop.process_table import ProcessInfo, processes, stop
from fixloop.processes import run as run_in_group

PROFILE_MARKER = "fixloop-browser-"
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = "install it with `apt-get install -y chromium`"
DEFAULT_VIEWPORT = (1280, 800)
VIEWPORT_LIMITS = (16, 10_000)
# Headless, quiet, and nothing fetched in the background (no network beyond the page itself).
FLAGS = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--disable-crash-reporter",
)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_VIEWPORT = re.compile(r"^\s*(\d{1,6})\s*[xX×]\s*(\d{1,6})\s*$")
_NOISE = re.compile(r"dbus|Fontconfig|bus\.cc|object_proxy|^\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Screenshot:
    path: Path
    width: int
    height: int
    seconds: float


@dataclass
class Cleanup:
    stopped: list[ProcessInfo] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)


def _error(where: str, message: str, exit_code: int = 2) -> FixloopError:
    return FixloopError(Diagnostic(where, 1, 1, "browser", message), exit_code)


def parse_viewport(text: str) -> tuple[int, int]:
    """`1280x800` → (1280, 800); anything else is a one-line usage error."""
    match = _VIEWPORT.match(text)
    if match is None:
        raise _error("--viewport", f"{text!r} is not WIDTHxHEIGHT, e.g. 1280x800")
    width, height = int(match.group(1)), int(match.group(2))
    check_viewport((width, height), where="--viewport")
    return width, height


def check_viewport(viewport: tuple[int, int], where: str = "viewport") -> None:
    low, high = VIEWPORT_LIMITS
    if not all(low <= side <= high for side in viewport):
        shown = f"{viewport[0]}x{viewport[1]}"
        raise _error(where, f"{shown}: width and height must be between {low} and {high} pixels")


def find_chromium(explicit: str | None = None) -> str:
    """The browser binary: `explicit`, else the first of BROWSER_NAMES found on PATH."""
    for name in (explicit,) if explicit else BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    wanted = explicit or "chromium"
    raise _error(wanted, f"{wanted} is not installed (not found on PATH); {INSTALL_HINT}")


def check_reachable(url: str, timeout_s: float) -> None:
    """One request to `url`: it must answer (HTTP status below 400), or name an existing file."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        # A newline in a URL would split the request line; name the URL as one line.
        raise _error(repr(url), "a URL cannot hold control characters (a newline, a tab)")
    parts = urlsplit(url)
    if parts.scheme == "file":
        if not Path(parts.path).exists():
            raise _error(url, f"URL unreachable: {parts.path} does not exist")
        return
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _error(url, "not an http, https or file URL")
    request = urllib.request.Request(url, headers={"User-Agent": "fixloop-browser"})  # noqa: S310
    handlers: list[urllib.request.BaseHandler] = []
    if parts.hostname in ("localhost", "127.0.0.1", "::1"):
        handlers.append(urllib.request.ProxyHandler({}))  # a dev server is never behind a proxy
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=timeout_s) as response:
            response.read(1)
    except urllib.error.HTTPError as exc:
        raise _error(url, f"URL answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _error(url, f"URL unreachable: {reason}") from None


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None when the file is not a PNG."""
    try:
        with path.open("rb") as stream:
            head = stream.read(24)
    except OSError:
        return None
    if len(head) < 24 or not head.startswith(_PNG_SIGNATURE) or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def profile_of(info: ProcessInfo) -> Path | None:
    """The fixloop profile folder a browser process names on its command line, if any."""
    for arg in info.argv[1:]:
        at = arg.find("/" + PROFILE_MARKER)
        if at < 0:
            continue
        start = arg.rfind("=", 0, at) + 1
        end = arg.find("/", at + 1)
        return Path(arg[start : end if end >= 0 else None])
    return None


def _another_live_owner(profile: Path | None) -> bool:
    """Whether `profile` (`PROFILE_MARKER<pid>-…`, see `screenshot`) was made by a process other
    than this one that is still alive."""
    if profile is None:
        return False
    owner = profile.name.removeprefix(PROFILE_MARKER).split("-", 1)[0]
    if not owner.isdigit() or int(owner) == os.getpid():
        return False
    try:
        os.kill(int(owner), 0)
    except PermissionError:
        return True  # alive, another user's: not ours to stop anyway
    except (OSError, OverflowError):
        return False
    return True


def fixloop_browsers() -> list[ProcessInfo]:
    """This user's browser processes that fixloop started (marked profile folder), live ones."""
    return [
        info
        for info in processes()
        if info.argv and "chrom" in Path(info.argv[0]).name.lower() and profile_of(info)
    ]


def _browser_argv(
    binary: str,
    profile: Path,
    shot: Path,
    url: str,
    size: tuple[int, int],
    *,
    flags: Sequence[str] = (),
) -> list[str]:
    sandbox = (
        ["--no-sandbox"] if os.geteuid() == 0 else []
    )  # Chromium refuses to run as root without it
    return [
        binary,
        *FLAGS,
        *sandbox,
        *flags,
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
        f"--screenshot={shot}",
        url,
    ]


def _tail(output: str, lines: int = 5) -> str:
    useful = [line for line in output.splitlines() if not _NOISE.search(line)]
    return mask_text(" | ".join(useful[-lines:])) or "no output"


def screenshot(
    url: str,
    out: Path,
    viewport: tuple[int, int] = DEFAULT_VIEWPORT,
    timeout_s: float = 30.0,
    *,
    profile_root: Path | None = None,
    browser: str | None = None,
    flags: Sequence[str] = (),
) -> Screenshot:
    """A PNG of `url` at `viewport` (CSS pixels at scale 1) written to `out`.

    Errors are FixloopErrors: exit 2 for what the caller can fix (no browser, a bad viewport, an
    unreachable URL), exit 1 when the browser fails or runs past `timeout_s` (it is then killed).
    `flags`: more of the browser's options (the screenshot service's network limits).
    """
    started = time.monotonic()
    check_viewport(viewport)
    binary = find_chromium(browser)
    check_reachable(url, timeout_s)
    if profile_root is not None:
        profile_root.mkdir(parents=True, exist_ok=True)
    profile = Path(tempfile.mkdtemp(prefix=f"{PROFILE_MARKER}{os.getpid()}-", dir=profile_root))
    try:
        shot = profile / "screenshot.png"
        output = _run_browser(
            _browser_argv(binary, profile, shot, url, viewport, flags=flags),
            profile,
            started,
            timeout_s,
        )
        size = png_size(shot)
        if size is None:
            raise _error(url, f"the browser wrote no screenshot: {_tail(output)}", exit_code=1)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(shot, out)
    finally:
        remove_profile(profile)
    return Screenshot(out, size[0], size[1], round(time.monotonic() - started, 3))


# The browser's own words (dbus noise, a crash message): enough for the tail of an error.
OUTPUT_CAP_BYTES = 64 * 1024
_SHORT_TMP = Path("/tmp")  # noqa: S108 (a folder of our own is made in it, mkdtemp)


def _run_browser(argv: Sequence[str], profile: Path, started: float, timeout_s: float) -> str:
    # Chromium puts a UNIX socket (SingletonSocket) in TMPDIR, and such a path may not be longer
    # than 107 bytes: a deep TMPDIR (a CI job's, a test's) makes it abort. Give it a short one.
    scratch = Path(tempfile.mkdtemp(prefix="fxb-", dir=_SHORT_TMP if _SHORT_TMP.is_dir() else None))
    env = {
        **os.environ,
        "TMPDIR": str(scratch),
        "XDG_CONFIG_HOME": str(profile / "config"),
        "XDG_CACHE_HOME": str(profile / "cache"),
    }
    try:
        return _browse(argv, env, profile, started, timeout_s)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _browse(
    argv: Sequence[str], env: dict[str, str], profile: Path, started: float, timeout_s: float
) -> str:
    remaining = max(0.1, timeout_s - (time.monotonic() - started))
    try:
        done = run_in_group(
            argv, env=env, timeout_s=remaining, cap=OUTPUT_CAP_BYTES, merge_stderr=True
        )
    except OSError as exc:
        raise _error(argv[0], f"cannot start the browser: {exc.strerror or exc}") from None
    finally:
        # What is left of this browser (helpers outside its group included) goes with it.
        stop(lambda: [p for p in fixloop_browsers() if profile_of(p) == profile], 0.0, gentle=False)
    if done.timed_out:
        raise _error(argv[-1], f"the browser did not finish within {timeout_s:g} s; killed", 1)
    if done.returncode != 0:
        raise _error(
            argv[-1], f"the browser failed (exit {done.returncode}): {_tail(done.stdout)}", 1
        )
    return done.stdout


def cleanup(
    max_age_s: float, profile_root: Path | None = None, *, spare_others: bool = False
) -> Cleanup:
    """Kill fixloop's browsers started at least `max_age_s` seconds ago; remove stale profiles.

    A browser counts as fixloop's only by its marked profile folder; every process using the
    profile of a stale browser is killed with it. With `profile_root`, only browsers whose profile
    lives there are considered. Marked profile folders in `profile_root` (default: the temp
    folder) that no live browser uses and that are older than `max_age_s` are removed.

    `spare_others`: leave the browsers and profiles of another live fixloop process alone (a
    concurrent run, which stops its own browsers when each screenshot ends): only this
    process's and those whose process is gone count. A run's own cleanup uses it; a user's
    `fixloop browser cleanup` does not.
    """
    root = profile_root or Path(tempfile.gettempdir())

    def candidates() -> list[ProcessInfo]:
        found = [
            info
            for info in fixloop_browsers()
            if not (spare_others and _another_live_owner(profile_of(info)))
        ]
        if profile_root is None:
            return found
        return [info for info in found if (profile_of(info) or Path()).parent == profile_root]

    stale = {
        profile
        for info in candidates()
        if info.age_s() >= max_age_s and (profile := profile_of(info)) is not None
    }
    result = Cleanup()
    result.stopped = stop(
        lambda: [p for p in candidates() if profile_of(p) in stale], 0.0, gentle=False
    )
    in_use = {profile_of(info) for info in fixloop_browsers()}
    now = time.time()
    for folder in sorted(set(root.glob(f"{PROFILE_MARKER}*")) | stale):
        try:
            old_enough = now - folder.stat().st_mtime >= max_age_s
        except OSError:
            continue
        if spare_others and _another_live_owner(folder):
            continue  # made by a live run for a browser about to start
        removable = folder.is_dir() and folder not in in_use and (old_enough or folder in stale)
        if removable and remove_profile(folder):
            result.removed.append(folder)
    return result


PROFILE_REMOVAL_S = 3.0


def remove_profile(folder: Path, within_s: float = PROFILE_REMOVAL_S) -> bool:
    """Remove a profile folder; whether it is gone.

    A killed browser's last writes (a crash report, a cache file) can land while the folder is
    being removed, so one pass may leave a folder behind: remove again until it is gone or
    `within_s` has passed. Links inside are removed, never followed.
    """
    deadline = time.monotonic() + within_s
    while True:
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.lexists(folder):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
