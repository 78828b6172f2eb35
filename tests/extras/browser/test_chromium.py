"""Screenshots with the real Chromium of pages served by a real dev server; timeouts; cleanup.

The pictures are read back pixel by pixel: the right size, not blank, and different when the
page changes. Nothing is mocked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.extras.browser.conftest import write_page
from tests.extras.browser.png import read_png

from fixloop.diagnostics import FixloopError
from fixloop.extras.browser.chromium import (
    FLAGS,
    PROFILE_MARKER,
    cleanup,
    fixloop_browsers,
    parse_viewport,
    png_size,
    profile_of,
    remove_profile,
    screenshot,
)
from fixloop.extras.browser.devserver import DevServer


def _browsers_in(root: Path) -> list[int]:
    return [b.pid for b in fixloop_browsers() if (profile_of(b) or Path("/")).parent == root]


def test_a_screenshot_is_the_page_at_the_viewport_size(
    chromium: str, served: DevServer, site: Path, tmp_path: Path, profiles: Path
) -> None:
    first = screenshot(served.url, tmp_path / "first.png", (640, 400), profile_root=profiles)
    assert (first.width, first.height) == (640, 400)
    image = read_png(first.path)
    assert (image.width, image.height) == (640, 400)
    assert len(image.colours()) > 1, "the screenshot is blank"
    assert image.pixel(10, 10) == (0x1F, 0x6F, 0xEB)  # the banner
    assert image.pixel(10, 300) == (0xFF, 0xFF, 0xFF)  # the page below it

    write_page(site, colour="#d73a49", title="Changed")
    second = screenshot(served.url, tmp_path / "second.png", (640, 400), profile_root=profiles)
    changed = read_png(second.path)
    assert changed.rows != image.rows, "the page changed but the screenshot did not"
    assert changed.pixel(10, 10) == (0xD7, 0x3A, 0x49)
    assert list(profiles.iterdir()) == []  # each call's profile is removed


def test_another_viewport_gives_another_size(
    chromium: str, served: DevServer, tmp_path: Path, profiles: Path
) -> None:
    shot = screenshot(
        served.url, tmp_path / "deep/dir/phone.png", (390, 844), profile_root=profiles
    )
    assert png_size(shot.path) == (390, 844)
    assert len(read_png(shot.path).colours()) > 1


def test_a_page_that_never_finishes_is_killed_at_the_timeout(
    chromium: str, slow_page: str, tmp_path: Path, profiles: Path
) -> None:
    started = time.monotonic()
    with pytest.raises(FixloopError) as raised:
        screenshot(slow_page, tmp_path / "never.png", (320, 240), 4.0, profile_root=profiles)
    assert raised.value.exit_code == 1
    assert "did not finish within 4 s; killed" in str(raised.value)
    assert time.monotonic() - started < 15
    assert _browsers_in(profiles) == []
    assert list(profiles.iterdir()) == []
    assert not (tmp_path / "never.png").exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:9/", "URL unreachable"),
        ("ftp://example.invalid/x", "not an http, https or file URL"),
        ("--screenshot=/etc/passwd", "not an http, https or file URL"),
        ("file:///no/such/page.html", "does not exist"),
        ("http://127.0.0.1:9/\nHost: x", "a URL cannot hold control characters"),
    ],
)
def test_unreachable_or_unsupported_urls_are_input_errors(
    chromium: str, url: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(FixloopError) as raised:
        screenshot(url, tmp_path / "x.png", timeout_s=5)
    assert raised.value.exit_code == 2
    assert message in str(raised.value)


def test_an_http_error_page_is_not_screenshotted(
    chromium: str, served: DevServer, tmp_path: Path
) -> None:
    with pytest.raises(FixloopError) as raised:
        screenshot(served.url + "missing.html", tmp_path / "x.png")
    assert raised.value.exit_code == 2
    assert "URL answered HTTP 404" in str(raised.value)


@pytest.mark.parametrize("text", ["1280", "1280x", "x800", "axb", "0x800", "1280x10001", "-5x5"])
def test_bad_viewports(text: str) -> None:
    with pytest.raises(FixloopError) as raised:
        parse_viewport(text)
    assert raised.value.exit_code == 2
    assert str(raised.value).startswith("--viewport:1:1: browser: ")


def test_viewports_parse() -> None:
    assert parse_viewport("1280x800") == (1280, 800)
    assert parse_viewport(" 390 X 844 ") == (390, 844)


def test_a_browser_that_is_not_installed_is_named(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as raised:
        screenshot("http://127.0.0.1:9/", tmp_path / "x.png", browser="no-such-chromium")
    assert raised.value.exit_code == 2
    assert "no-such-chromium is not installed" in str(raised.value)
    assert "apt-get install -y chromium" in str(raised.value)


def test_cleanup_stops_stale_fixloop_browsers_and_no_other(
    chromium: str, slow_page: str, tmp_path: Path, profiles: Path
) -> None:
    # The user's own browser: same binary, same page, a profile without fixloop's marker. It
    # serves a debugging port, so it runs until it is killed (a --screenshot browser may finish
    # on its own under load, which would look like cleanup had ended it).
    foreign = subprocess.Popen(
        [
            chromium,
            *FLAGS,
            "--no-sandbox",
            f"--user-data-dir={tmp_path / 'mine'}",
            "--remote-debugging-port=0",
            slow_page,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    errors: list[FixloopError] = []

    def take() -> None:
        try:
            screenshot(slow_page, tmp_path / "s.png", (320, 240), 120.0, profile_root=profiles)
        except FixloopError as exc:
            errors.append(exc)

    worker = threading.Thread(target=take)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while not _browsers_in(profiles) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _browsers_in(profiles), "the browser did not start"
        young = cleanup(3600, profiles)
        assert young.stopped == [] and young.removed == []
        assert _browsers_in(profiles)

        done = cleanup(0, profiles)
        assert done.stopped, "cleanup stopped nothing"
        assert all(PROFILE_MARKER in str(profile_of(p)) for p in done.stopped)
        worker.join(30)
        assert not worker.is_alive()
        assert len(errors) == 1 and errors[0].exit_code == 1  # the screenshot saw its browser die
        assert _browsers_in(profiles) == []
        assert list(profiles.iterdir()) == []
        assert foreign.poll() is None, "cleanup killed a browser fixloop did not start"
    finally:
        os.killpg(foreign.pid, signal.SIGKILL)
        foreign.wait()
        worker.join(30)


def test_cleanup_removes_stale_profile_folders_no_browser_uses(tmp_path: Path) -> None:
    stale = tmp_path / f"{PROFILE_MARKER}1-stale"
    fresh = tmp_path / f"{PROFILE_MARKER}1-fresh"
    other = tmp_path / "not-ours"
    for folder in (stale, fresh, other):
        folder.mkdir()
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    done = cleanup(600, tmp_path)
    assert done.removed == [stale]
    assert fresh.is_dir() and other.is_dir()


def test_a_runs_cleanup_spares_another_live_runs_browser_and_stops_an_orphan(
    chromium: str, slow_page: str, tmp_path: Path, profiles: Path
) -> None:
    """Two runs on one machine: one run's cleanup (even at age 0) leaves the browser of another
    live fixloop process alone, profile folder included; once that process is gone, its
    browser is an orphan and the same cleanup stops it."""
    code = (
        "import sys; from pathlib import Path; from fixloop.extras.browser.chromium import "
        "screenshot; screenshot(sys.argv[1], Path(sys.argv[2]), (320, 240), 120.0, "
        "profile_root=Path(sys.argv[3]))"
    )
    other_run = subprocess.Popen(
        [sys.executable, "-c", code, slow_page, str(tmp_path / "s.png"), str(profiles)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not _browsers_in(profiles) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _browsers_in(profiles), "the other run's browser did not start"
        spared = cleanup(0, profiles, spare_others=True)
        assert spared.stopped == [] and spared.removed == []
        assert _browsers_in(profiles) and len(list(profiles.iterdir())) == 1
        os.killpg(other_run.pid, signal.SIGKILL)  # its browser is in a group of its own: left
        other_run.wait()
        assert _browsers_in(profiles), "the browser went with its run; nothing to test"
        orphan = cleanup(0, profiles, spare_others=True)
        assert orphan.stopped, "the orphan was not stopped"
        assert _browsers_in(profiles) == [] and list(profiles.iterdir()) == []
    finally:
        if other_run.poll() is None:
            os.killpg(other_run.pid, signal.SIGKILL)
            other_run.wait()
        cleanup(0, profiles)


def _late_writer(folder: Path) -> subprocess.Popen[bytes]:
    """A process that keeps writing into `folder` for half a second more, as a killed browser's
    last crash report can (one rmtree pass then mostly leaves the folder behind); it never makes
    `folder` itself again."""
    code = (
        "import sys, time, pathlib; reports = pathlib.Path(sys.argv[1]) / 'Crash Reports'\n"
        "end = time.monotonic() + 0.5\n"
        "for n in range(10**9):\n"
        "    if time.monotonic() > end: break\n"
        "    try: reports.mkdir(exist_ok=True); (reports / str(n % 50)).write_text('x')\n"
        "    except FileNotFoundError: break\n"
        "    except OSError: pass\n"
    )
    folder.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", code, str(folder)])
    deadline = time.monotonic() + 10
    while len(list(folder.glob("*/*"))) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    return writer


def test_a_profile_written_into_while_it_is_removed_is_removed_again_until_it_is_gone(
    tmp_path: Path,
) -> None:
    for attempt in range(3):
        folder = tmp_path / f"{PROFILE_MARKER}1-{attempt}"
        writer = _late_writer(folder)
        try:
            assert remove_profile(folder) is True
            assert not folder.exists()
        finally:
            writer.kill()
            writer.wait()
