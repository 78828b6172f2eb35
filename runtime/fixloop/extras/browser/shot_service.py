"""Screenshots taken for a sandboxed agent: a host-side service on a Unix socket.

A design executor's shell runs in the run's sandbox (bwrap, docker), which has no network but a
loopback of its own: the task's dev server, in a sandbox of its own and relayed to the host's
loopback (`devserver.py`), is out of its reach. So the screenshot is taken for it, on the host,
and only of that dev server:

    with screenshot_service("http://127.0.0.1:5173/", folder) as socket_path:
        # the sandbox binds socket_path at its own path and names it in FIXLOOP_SCREENSHOT_SOCKET
        ...

Inside the sandbox, `fixloop browser screenshot URL --out FILE` (or, where the image has no
fixloop, the step library's `screenshot.py`, which needs only python3) sees the variable and
asks the service instead of starting a browser. (Where the agent's shell cannot reach even a
socket, Claude Code's own sandbox, the workflow lends it a tool that calls a `Shooter`, the
service's checks and browser, in the runtime.) The protocol, one request per connection:

    client → one JSON line, at most REQUEST_LIMIT bytes: {"url": "...", "viewport": [W, H]}
    service → one JSON line: {"ok": true, "width": W, "height": H, "bytes": N}, then N bytes of
              PNG; or {"ok": false, "error": "one line"}

The agent is hostile, and so is the page it edits, so the service:
- takes only `http://` URLs whose host and port are the dev server's (no other host, port or
  scheme, no `file:`, no user name); the URL the browser opens is rebuilt from the checked
  parts, not passed through;
- runs the browser with every request but the dev server's sent to a proxy that is not there
  (a page that loads, frames or redirects to another origin gets nothing from it; WebRTC is
  kept off the network too);
- writes nothing outside its own temporary profile: the PNG goes back over the socket and the
  client writes it, inside the sandbox;
- reads at most REQUEST_LIMIT bytes for at most REQUEST_TIMEOUT_S, answers one request at a
  time, and at most `limit` of them; runs no text of the request as a command.
"""

from __future__ import annotations

import contextlib
import json
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.extras.browser.chromium import check_viewport, png_size, screenshot
from fixloop.workflows.kernel.browser import Picture

SOCKET_VARIABLE = "FIXLOOP_SCREENSHOT_SOCKET"
REQUEST_LIMIT = 4096
REQUEST_TIMEOUT_S = 5.0
DEFAULT_LIMIT = 40
PNG_LIMIT = 64 << 20
_SOCKET_NAME = "shot.sock"
_SHORT_TMP = Path("/tmp")  # noqa: S108  (a socket path may not exceed 107 bytes)
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


class Refused(ValueError):
    """A request the service does not serve, in one line for the client."""


def _origin(base: str) -> tuple[str, int]:
    parts = urlsplit(base)
    if parts.scheme != "http" or not parts.hostname or parts.port is None:
        raise ValueError(f"{base}: the dev server's URL must be http://HOST:PORT/")
    return parts.hostname, parts.port


def allowed_url(url: object, host: str, port: int) -> str:
    """The URL the browser opens for a request's `url`, rebuilt from its checked parts; Refused
    when it is not a page of the dev server at `host:port`."""
    if not isinstance(url, str) or not url:
        raise Refused("url: expected the page's URL as text")
    if any(ord(char) < 0x21 or ord(char) == 0x7F or char == "\\" for char in url):
        raise Refused("url: no spaces, control characters or backslashes")
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise Refused(f"{url}: only http:// pages of the task's dev server")
    try:
        asked_port = parts.port
    except ValueError:
        raise Refused(f"{url}: not a valid port") from None
    if parts.username is not None or parts.password is not None:
        raise Refused(f"{url}: no user name or password in the URL")
    if parts.hostname != host or asked_port != port:
        raise Refused(f"{url}: only the task's dev server, http://{host}:{port}/")
    path = quote(parts.path or "/", safe=_PATH_SAFE)
    if not path.startswith("/"):
        raise Refused(f"{url}: the path must start with /")
    query = f"?{quote(parts.query, safe=_PATH_SAFE + '?')}" if parts.query else ""
    return f"http://{host}:{port}{path}{query}"


def _viewport(value: object) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(side, int) and not isinstance(side, bool) for side in value)
    ):
        raise Refused("viewport: expected [WIDTH, HEIGHT]")
    size = (value[0], value[1])
    try:
        check_viewport(size)
    except FixloopError as exc:
        raise Refused(str(exc).splitlines()[0]) from None
    return size


def browser_flags(host: str, port: int) -> list[str]:
    """Every request but the dev server's goes to a proxy nothing listens on (port 9, discard),
    loopback included (`<-loopback>`); WebRTC may use no other route."""
    return [
        "--proxy-server=http://127.0.0.1:9",
        f"--proxy-bypass-list=<-loopback>;{host}:{port}",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]


def _read_request(connection: socket.socket) -> dict[str, Any]:
    # One deadline for the whole request, not per read: a client trickling a byte at a time
    # would otherwise hold the service (it answers one request at a time) for long.
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            connection.settimeout(remaining)
            chunk = connection.recv(REQUEST_LIMIT + 1 - len(data))
        except TimeoutError:
            raise Refused("the request did not arrive in time") from None
        if not chunk:
            break
        data += chunk
        if len(data) > REQUEST_LIMIT:
            raise Refused(f"the request is larger than {REQUEST_LIMIT} bytes")
    try:
        request = json.loads(data.split(b"\n", 1)[0].decode("utf-8"))
    except ValueError:
        raise Refused("the request is not one line of JSON") from None
    if not isinstance(request, dict):
        raise Refused("the request is not a JSON object")
    return request


def _send(connection: socket.socket, header: dict[str, Any], body: bytes = b"") -> None:
    with contextlib.suppress(OSError):  # a client that went away gets nothing
        connection.settimeout(REQUEST_TIMEOUT_S * 6)
        connection.sendall(json.dumps(header).encode("utf-8") + b"\n" + body)


class Shooter:
    """The screenshots one agent may take of the dev server at `base`: only its pages, in the
    confined browser, at most `limit` of them. The service answers its socket's requests with
    one; a workflow lends one to an agent as a tool of its own (`Browser.shooter`)."""

    def __init__(self, base: str, limit: int = DEFAULT_LIMIT, timeout_s: float = 30.0) -> None:
        self.host, self.port = _origin(base)
        self.limit = limit
        self.timeout_s = timeout_s
        self.served = 0
        self.lock = threading.Lock()  # one picture at a time, counted once

    def take(self, url: object, viewport: object = (1280, 800)) -> Picture:
        """The PNG of `url` at `viewport` ([WIDTH, HEIGHT]); Refused (a ValueError, one line)
        when the request is not served, FixloopError when the browser or the page fails."""
        with self.lock:
            if self.served >= self.limit:
                raise Refused(f"no more screenshots: this task may take {self.limit}")
            page = allowed_url(url, self.host, self.port)
            size = _viewport(list(viewport) if isinstance(viewport, tuple) else viewport)
            self.served += 1
            with tempfile.TemporaryDirectory(prefix="fixloop-shot-") as scratch:
                target = Path(scratch, "page.png")
                flags = browser_flags(self.host, self.port)
                screenshot(page, target, size, self.timeout_s, flags=flags)
                png, (width, height) = target.read_bytes(), png_size(target) or (0, 0)
        if len(png) > PNG_LIMIT:
            raise Refused("the picture is larger than the service sends")
        return Picture(png, width, height)


class _Service:
    def __init__(self, listener: socket.socket, shooter: Shooter) -> None:
        self.listener = listener
        self.shooter = shooter
        self.stopping = threading.Event()

    def loop(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return  # the listener was closed: the service ends
            with connection:
                self.answer(connection)

    def answer(self, connection: socket.socket) -> None:
        try:
            request = _read_request(connection)
            picture = self.shooter.take(request.get("url"), request.get("viewport", [1280, 800]))
        except Refused as exc:
            _send(connection, {"ok": False, "error": str(exc)})
            return
        except FixloopError as exc:
            _send(connection, {"ok": False, "error": str(exc).splitlines()[0]})
            return
        header = {"width": picture.width, "height": picture.height, "bytes": len(picture.png)}
        _send(connection, {"ok": True, **header}, picture.png)


@contextlib.contextmanager
def screenshot_service(
    base: str, *, limit: int = DEFAULT_LIMIT, timeout_s: float = 30.0
) -> Iterator[Path]:
    """Serve screenshots of the dev server at `base` on a fresh Unix socket for the `with`
    block; yields the socket's path (in a folder of its own, only its owner may enter)."""
    folder = Path(tempfile.mkdtemp(prefix="fxs-", dir=_SHORT_TMP if _SHORT_TMP.is_dir() else None))
    path = folder / _SOCKET_NAME
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        listener.listen(4)
        service = _Service(listener, Shooter(base, limit, timeout_s))
        thread = threading.Thread(target=service.loop, name="screenshot-service", daemon=True)
        thread.start()
        try:
            yield path
        finally:
            service.stopping.set()
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            thread.join(timeout_s + 10)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()


def _client_error(message: str, exit_code: int = 1) -> FixloopError:
    return FixloopError(Diagnostic(SOCKET_VARIABLE, 1, 1, "browser", message), exit_code)


def request_screenshot(
    socket_path: str, url: str, viewport: tuple[int, int], timeout_s: float
) -> bytes:
    """The PNG the service at `socket_path` took of `url`; FixloopError (exit 2 when refused,
    1 when the service fails) otherwise."""
    request = json.dumps({"url": url, "viewport": list(viewport)}).encode("utf-8") + b"\n"
    if len(request) > REQUEST_LIMIT:
        raise _client_error(f"the URL is too long (a request is at most {REQUEST_LIMIT} bytes)", 2)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout_s + 15)
            connection.connect(socket_path)
            connection.sendall(request)
            stream = connection.makefile("rb")
            header = json.loads(stream.readline(REQUEST_LIMIT).decode("utf-8"))
            if not isinstance(header, dict):
                raise ValueError("not a JSON object")
            if not header.get("ok"):
                raise _client_error(f"refused: {header.get('error')}", 2)
            size = header.get("bytes")
            if not isinstance(size, int) or not 0 < size <= PNG_LIMIT:
                raise ValueError("no picture size")
            png: bytes = stream.read(size)
    except (OSError, ValueError) as exc:
        raise _client_error(f"the screenshot service at {socket_path} failed: {exc}") from None
    if len(png) != size or not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise _client_error("the screenshot service sent no whole PNG")
    return png


def inside(out: Path, root: Path) -> Path:
    """`out` resolved; FixloopError (exit 2) when it is not inside `root`, symbolic links
    followed (a screenshot is written only where the sandbox's command may write)."""
    resolved = (Path.cwd() / out).resolve()
    if not resolved.is_relative_to(root.resolve()) or resolved == root.resolve():
        raise FixloopError(
            Diagnostic(str(out), 1, 1, "browser", f"--out must be a file inside {root}"), 2
        )
    return resolved


__all__ = [
    "REQUEST_LIMIT",
    "SOCKET_VARIABLE",
    "Refused",
    "Shooter",
    "allowed_url",
    "browser_flags",
    "inside",
    "request_screenshot",
    "screenshot_service",
]
