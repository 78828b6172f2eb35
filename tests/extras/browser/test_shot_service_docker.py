"""The screenshot service from inside a real docker sandbox: an image with python3 and nothing of
fixloop gets a real PNG of the task's dev server through the step library's client, and nothing
else (`network_mode=none`: the dev server itself is out of the container's reach).

The image is imported, not pulled (`tests/helpers/sandbox_image.py`); the browser is the real
headless Chromium on the host, where the service runs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.extras.browser.conftest import write_page
from tests.extras.browser.png import read_png
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import NEEDS_DOCKER

from fixloop.extras.browser.devserver import DevServer
from fixloop.extras.browser.shot_service import REQUEST_LIMIT, SOCKET_VARIABLE, screenshot_service
from fixloop.sandboxes.container import DockerSandbox
from fixloop.sandboxes.protocol import SandboxResult

__all__ = ["docker_client", "docker_image"]
CLIENT = Path(__file__).parents[3] / "workflows" / "lib" / "screenshot.py"


def in_container(image: str, worktree: Path, socket_path: Path, argv: list[str]) -> SandboxResult:
    with DockerSandbox(
        worktree,
        image=image,
        read_only=[CLIENT.parent],
        services={SOCKET_VARIABLE: socket_path},
    ) as sandbox:
        return sandbox.run(argv, cwd=worktree, timeout_s=120)


def shot(url: str, out: str = ".fixloop/shots/me.png") -> list[str]:
    return ["python3", str(CLIENT), url, "--out", out, "--viewport", "320x240"]


@NEEDS_DOCKER
def test_a_container_without_fixloop_gets_a_real_png_and_nothing_else(
    chromium: str, docker_image: str, site: Path, served: DevServer, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(site)], check=True)
    worktree = site.resolve()
    url = served.url + "index.html"
    direct = ["python3", "-c", f"import urllib.request; urllib.request.urlopen({url!r})"]
    no_fixloop = ["python3", "-c", "import fixloop"]
    outside = tmp_path / "outside.png"
    with screenshot_service(served.url) as path:
        assert in_container(docker_image, worktree, path, no_fixloop).exit_code != 0
        assert in_container(docker_image, worktree, path, direct).exit_code != 0
        write_page(worktree, colour="#ff0000", title="edited")  # the picture shows the edit
        done = in_container(docker_image, worktree, path, shot(url))
        hostile = {
            "another port": shot(f"http://127.0.0.1:{served.port + 1}/"),
            "another host": shot(f"http://localhost:{served.port}/index.html"),
            "a file": shot(f"file://{worktree}/index.html"),
            "an output outside": shot(url, out=str(outside)),
            "an output climbing out": shot(url, out="../../outside.png"),
            "an oversized request": shot(served.url + "x" * REQUEST_LIMIT),
        }
        refused = {
            why: in_container(docker_image, worktree, path, argv) for why, argv in hostile.items()
        }
    assert done.exit_code == 0, done.stderr
    picture = read_png(worktree / ".fixloop/shots/me.png")
    assert (picture.width, picture.height) == (320, 240)
    assert picture.pixel(160, 60) == (255, 0, 0)
    for why, result in refused.items():
        assert result.exit_code == 2, (why, result)
    assert "refused" in refused["another port"].stderr
    assert "inside" in refused["an output climbing out"].stderr
    assert "too long" in refused["an oversized request"].stderr
    assert not outside.exists() and not (tmp_path / "outside.png").exists()
    assert sorted(p.name for p in (worktree / ".fixloop/shots").iterdir()) == ["me.png"]
