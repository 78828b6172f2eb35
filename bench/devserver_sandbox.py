"""What a design task's dev server costs in the run's sandbox: start and requests, side by side.

Starts the same dev server (`python3 -m http.server` on a small site with one 8 MiB file) under
local (on the host, the baseline), bwrap and docker (`--image`; left out without one), each
`--starts` times, and measures, in this one run:

- the start: from `dev_server`'s entry until the port answers HTTP (median);
- 200 small requests in a row, a new connection each (the relay's per-connection cost);
- the 8 MiB file, 5 times (the relay's throughput),

and prints each figure with its ratio to local. No assertion: a measurement, run by hand:

    .venv/bin/python bench/devserver_sandbox.py [--image IMAGE] [--starts 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from fixloop.extras.browser.devserver import dev_server
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.sandboxes.protocol import SandboxChoice

SERVE = 'exec python3 -m http.server "$PORT" --bind "$HOST" 2>/dev/null'
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> int:
    with OPENER.open(url, timeout=30) as response:
        return len(response.read())


def measure(kind: str, image: str | None, site: Path, runs: Path, starts: int) -> dict[str, float]:
    sandbox = RunSandbox(SandboxChoice(kind, "bench", image=image), run_id="bench")
    times = []
    small = big = 0.0
    for attempt in range(starts):
        begun = time.perf_counter()
        with dev_server(SERVE, site, runs, sandbox=sandbox) as server:
            times.append(time.perf_counter() - begun)
            if attempt == 0:
                begun = time.perf_counter()
                for _ in range(200):
                    _get(server.url + "index.html")
                small = (time.perf_counter() - begun) / 200
                begun = time.perf_counter()
                for _ in range(5):
                    assert _get(server.url + "big.bin") == 8 << 20
                big = (time.perf_counter() - begun) / 5
    return {"start_s": statistics.median(times), "request_ms": small * 1000, "8mib_ms": big * 1000}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", help="a docker image with python3 and bash")
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args(argv)
    kinds = ["local", "bwrap"] + (["docker"] if args.image else [])
    with tempfile.TemporaryDirectory() as scratch:
        site = Path(scratch, "site")
        site.mkdir()
        (site / "index.html").write_text("<!doctype html><p>a page</p>\n")
        (site / "big.bin").write_bytes(b"x" * (8 << 20))
        found = {
            kind: measure(
                kind,
                args.image if kind == "docker" else None,
                site,
                Path(scratch, "runs"),
                args.starts,
            )
            for kind in kinds
        }
    base = found["local"]
    print(f"{'':8}" + "".join(f"{key:>22}" for key in base))
    for kind, figures in found.items():
        cells = "".join(
            f"{figures[key]:>13.3f} ({figures[key] / base[key]:>5.1f}x)" for key in base
        )
        print(f"{kind:8}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
