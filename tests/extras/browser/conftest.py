"""Fixtures of the browser tests: the real Chromium, real servers, a small static site.

Without Chromium these tests skip with the reason, except under `CI=true` where they fail: CI
installs it (`.ci/run`), so a missing browser there is a broken machine, not a reason to pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixloop.extras.browser.chromium import BROWSER_NAMES, fixloop_browsers, profile_of
from fixloop.extras.browser.devserver import DevServer, dev_server, free_port

SERVERS = Path(__file__).parent / "servers"
PAGE = """<!doctype html>
<html><head><style>
  body {{ margin: 0; background: #ffffff; font: 24px sans-serif; }}
  .banner {{ height: 120px; background: {colour}; color: #ffffff; padding: 20px; }}
</style></head>
<body><div class="banner">{title}</div><p>A small page for the visual self-check.</p></body></html>
"""
SERVE_STATIC = 'exec "$PYTHON" -m http.server "$PORT" --bind "$HOST"'


@pytest.fixture(scope="session")
def chromium() -> str:
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI") == "true":
        pytest.fail(
            "Chromium is missing under CI=true: .ci/run installs it (apt-get install chromium)"
        )
    pytest.skip("Chromium is not installed (apt-get install -y chromium): browser tests skipped")


def http_get(url: str) -> bytes:
    """The body at `url`, asked directly (never through a proxy the environment names)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as response:
        body: bytes = response.read()
        return body


def answers(url: str) -> bool:
    try:
        http_get(url)
    except OSError:
        return False
    return True


def write_page(site: Path, colour: str = "#1f6feb", title: str = "Hello") -> None:
    (site / "index.html").write_text(PAGE.format(colour=colour, title=title), encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    write_page(folder)
    return folder


@pytest.fixture
def served(site: Path, tmp_path: Path) -> Iterator[DevServer]:
    """The site served by a real dev server (python -m http.server) in its own process group."""
    with dev_server(SERVE_STATIC, site, tmp_path / "run", env={"PYTHON": sys.executable}) as server:
        yield server


@pytest.fixture
def slow_page() -> Iterator[str]:
    """The URL of a page whose load never finishes (see servers/slow_page.py)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "slow_page.py"), str(port)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    yield f"http://127.0.0.1:{port}/"
    process.kill()
    process.wait()


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    """Where this test's browsers keep their profiles (so that parallel tests stay apart)."""
    return tmp_path / "profiles"


@pytest.fixture(autouse=True)
def _no_browser_left_behind(tmp_path: Path) -> Iterator[None]:
    yield
    ours = [b for b in fixloop_browsers() if tmp_path in (profile_of(b) or Path("/")).parents]
    assert ours == [], "a test left a fixloop browser running"
