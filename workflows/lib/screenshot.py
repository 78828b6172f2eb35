"""Ask the run's screenshot service for a PNG of a page: the client for a sandbox without fixloop.

    python3 screenshot.py URL --out FILE.png [--viewport WxH] [--timeout S]

Inside a design executor's sandbox (a docker image with python3 and nothing of fixloop) the task's
dev server is out of reach, so the picture is taken on the host by the service whose Unix socket
`FIXLOOP_SCREENSHOT_SOCKET` names; this saves what it sends back at FILE.png, which must be inside
the working tree holding the current folder. It needs only python3's standard library. The
protocol is the one of fixloop's `extras/browser/shot_service.py`. Exit codes: 0 saved; 1 the
service failed; 2 refused or bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
from pathlib import Path

VARIABLE = "FIXLOOP_SCREENSHOT_SOCKET"
REQUEST_LIMIT = 4096
PNG_LIMIT = 64 << 20
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fail(message: str, code: int) -> int:
    print(f"screenshot: {message}", file=sys.stderr)
    return code


def working_tree(start: Path) -> Path:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Save a PNG of a page of the task's dev server.")
    parser.add_argument("url")
    parser.add_argument("--out", required=True)
    parser.add_argument("--viewport", default="1280x800")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    service = os.environ.get(VARIABLE, "")
    if not service:
        return fail(f"{VARIABLE} is not set: no screenshot service in this sandbox", 2)
    size = re.fullmatch(r"\s*(\d{1,6})\s*[xX]\s*(\d{1,6})\s*", args.viewport)
    if size is None:
        return fail(f"--viewport {args.viewport!r}: expected WIDTHxHEIGHT", 2)
    root = working_tree(Path.cwd().resolve())
    target = (Path.cwd() / args.out).resolve()
    if not target.is_relative_to(root) or target == root:
        return fail(f"--out {args.out}: must be a file inside {root}", 2)
    request = json.dumps({"url": args.url, "viewport": [int(size[1]), int(size[2])]}).encode()
    if len(request) >= REQUEST_LIMIT:
        return fail(f"the URL is too long (a request is at most {REQUEST_LIMIT} bytes)", 2)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(args.timeout + 15)
            connection.connect(service)
            connection.sendall(request + b"\n")
            stream = connection.makefile("rb")
            header = json.loads(stream.readline(REQUEST_LIMIT).decode("utf-8"))
            if not isinstance(header, dict):
                raise ValueError("not a JSON object")
            if not header.get("ok"):
                return fail(f"refused: {header.get('error')}", 2)
            length = header.get("bytes")
            if not isinstance(length, int) or not 0 < length <= PNG_LIMIT:
                raise ValueError("no picture size")
            png = stream.read(length)
    except (OSError, ValueError) as exc:
        return fail(f"the screenshot service at {service} failed: {exc}", 1)
    if len(png) != length or not png.startswith(PNG_SIGNATURE):
        return fail("the screenshot service sent no whole PNG", 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(png)
    print(f"{args.out}: {header.get('width')}x{header.get('height')} screenshot of {args.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
