"""`fixloop browser screenshot|cleanup` via the real CLI: output, exit codes, one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import Golden
from tests.extras.browser.png import read_png

from fixloop.cli.main import build_parser
from fixloop.extras.browser.devserver import DevServer

GOLDENS = Path(__file__).parent / "goldens"


def fixloop(
    *args: str, tmp_path: Path, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    # TMPDIR: the browsers' profiles go under this test's folder, apart from other tests.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["browser", "--help"], "browser-help.txt"),
        (["browser", "screenshot", "--help"], "browser-screenshot-help.txt"),
        (["browser", "cleanup", "--help"], "browser-cleanup-help.txt"),
    ],
)
def test_help_goldens(
    argv: list[str],
    name: str,
    golden: Golden,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps to the terminal width
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    golden.check(GOLDENS / name, capsys.readouterr().out)


def test_screenshot_writes_the_png_and_says_so(
    chromium: str, served: DevServer, tmp_path: Path
) -> None:
    out = tmp_path / "shots" / "home.png"
    done = fixloop(
        "browser",
        "screenshot",
        served.url,
        "--out",
        str(out),
        "--viewport",
        "500x300",
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{out}: 500x300 screenshot of {served.url} (")
    image = read_png(out)
    assert (image.width, image.height) == (500, 300)
    assert len(image.colours()) > 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["http://127.0.0.1:9/"], "http://127.0.0.1:9/:1:1: browser: URL unreachable: "),
        (["http://127.0.0.1:9/", "--viewport", "big"], "--viewport:1:1: browser: 'big' is not "),
        (["http://127.0.0.1:9/", "--viewport", "1x1"], "--viewport:1:1: browser: 1x1: width and "),
        (["http://127.0.0.1:9/", "--timeout", "0"], "--timeout:1:1: usage: 0: must be more than 0"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(
    chromium: str, args: list[str], expected: str, tmp_path: Path
) -> None:
    done = fixloop(
        "browser", "screenshot", *args, "--out", str(tmp_path / "x.png"), tmp_path=tmp_path
    )
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(expected), done.stderr
    assert not (tmp_path / "x.png").exists()


def test_no_browser_installed_is_one_line_and_exit_two(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = fixloop(
        "browser",
        "screenshot",
        "http://127.0.0.1:9/",
        "--out",
        str(tmp_path / "x.png"),
        tmp_path=tmp_path,
        path=str(empty),
    )
    assert done.returncode == 2
    assert done.stderr == (
        "chromium:1:1: browser: chromium is not installed (not found on PATH); "
        "install it with `apt-get install -y chromium`\n"
    )


def test_cleanup_reports_what_it_did(tmp_path: Path) -> None:
    stale = tmp_path / "fixloop-browser-1-left"
    stale.mkdir()
    two_days_ago = time.time() - 2 * 86400
    os.utime(stale, (two_days_ago, two_days_ago))
    # A day: old enough for the folder, while browsers other tests run now are left alone.
    done = fixloop("browser", "cleanup", "--max-age", "86400", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"removed profile {stale}" in done.stdout
    assert done.stdout.rstrip().endswith("profile folder(s) removed")
    assert not stale.exists()
    negative = fixloop("browser", "cleanup", "--max-age", "-1", tmp_path=tmp_path)
    assert negative.returncode == 2
    assert negative.stderr == "--max-age:1:1: usage: -1: must be 0 or more seconds\n"
