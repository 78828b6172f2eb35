"""The browser design tasks look through (`seams.CHROMIUM`), for real: the page is the agent's,
so its scripts, frames and images reach its own dev server and nothing else on the host."""

from __future__ import annotations

from pathlib import Path

from tests.extras.browser.png import read_png
from tests.extras.browser.test_shot_service import other_service

from fixloop.extras.browser.chromium import screenshot
from fixloop.extras.browser.devserver import DevServer
from fixloop.extras.browser.seams import CHROMIUM, only_its_origin

__all__ = ["other_service"]  # the fixture these tests use


def _hostile_page(site: Path, other: str) -> None:
    (site / "index.html").write_text(
        "<html><body style='margin:0;background:#ffffff'>"
        f"<iframe src='{other}/frame' style='width:300px;height:200px;border:0'></iframe>"
        f"<img src='{other}/img.png'><script>fetch('{other}/fetch')</script></body></html>"
    )


def test_the_runs_screenshots_reach_no_other_service_of_the_host(
    chromium: str,
    site: Path,
    served: DevServer,
    other_service: tuple[int, list[str]],
    tmp_path: Path,
) -> None:
    other_port, hits = other_service
    _hostile_page(site, f"http://127.0.0.1:{other_port}")
    # The control: a browser without the flags does reach the other service.
    screenshot(served.url + "index.html", tmp_path / "plain.png", (320, 240), 60)
    assert hits, "the hostile page reached nothing even without the flags: a broken test"
    hits.clear()
    shot = CHROMIUM.screenshot(served.url + "index.html", tmp_path / "run.png", (320, 240), 60)
    assert hits == []
    assert (0, 255, 0) not in read_png(shot).colours()  # the other service's page


def test_only_an_http_origin_with_a_port_is_let_through() -> None:
    flags = only_its_origin("http://127.0.0.1:5173/login")
    assert "--proxy-bypass-list=<-loopback>;127.0.0.1:5173" in flags
    for url in ("file:///etc/passwd", "http://127.0.0.1:bad/", "https://example.com/"):
        refused = only_its_origin(url)
        assert "--proxy-server=http://127.0.0.1:9" in refused
        assert "--proxy-bypass-list=<-loopback>" in refused  # loopback is not let through
