"""`fixloop runs show ID --html FILE`: one self-contained page per run, rendered by a real headless
Chromium (its DOM read back, a screenshot taken), nothing fetched, every value escaped."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, UTIL_BROKEN, finding, review_text, run, write_review
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores
from tests.workflows.execute_wave.test_design import (
    RED,
    REFERENCE,
    SERVE,
    VIEWPORT,
    banner_site,
    page,
)

from fixloop.agents.scripted import ScriptedBackend
from fixloop.cli.main import main
from fixloop.documents.pack import default_pack_root, load_pack
from fixloop.events import EventStream
from fixloop.extras.browser.chromium import find_chromium, png_size, screenshot
from fixloop.extras.browser.seams import CHROMIUM
from fixloop.extras.report.html import render_html
from fixloop.runs.show import ItemView, RunView
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave
from fixloop.workflows.kernel.workflow import Context

pytestmark = pytest.mark.needs("chromium")

HOSTILE = '<script>document.title="pwned"</script><img src="http://127.0.0.1:9/x.png">'
# The smallest valid PNG: one transparent pixel.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


class _Dom(HTMLParser):
    """What the browser's DOM holds, as far as the tests ask."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def all(self, tag: str, **where: str) -> list[dict[str, str]]:
        return [
            a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in where.items())
        ]


def dom_of(page: Path) -> _Dom:
    """The DOM after the real browser parsed and laid out the page (`--dump-dom`)."""
    argv = [find_chromium(), "--headless", "--disable-gpu", "--dump-dom", page.as_uri()]
    if os.geteuid() == 0:
        argv.insert(1, "--no-sandbox")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Dom()
    dom.feed(done.stdout)
    return dom


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """The folder over HTTP on loopback, so fixloop's own screenshot command can take it."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_review_fix_run_is_one_page_the_browser_renders(
    user_repo: UserRepo, tmp_path: Path, served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_review(
        user_repo.path,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", HOSTILE, "src/util.py"),
        ),
    )
    result, _ = run(
        user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX, "fixer/CR-02/iteration-1": UTIL_BROKEN}
    )
    page = tmp_path / "report.html"
    argv = ["runs", "show", result.run_id, "--repo", str(user_repo.path), "--html", str(page)]
    assert main(argv) == 0
    assert f"report: {page}" in capsys.readouterr().err
    dom = dom_of(page)
    fetched = [a for _, a in dom.tags if any(v.startswith(("http:", "https:")) for v in a.values())]
    assert fetched == [], "nothing on the page points outside it"
    rows = dom.all("tr", **{"class": "item"})
    assert [(r["data-item"], r["data-status"]) for r in rows] == [
        ("CR-01", "fixed"),
        ("CR-02", "skipped"),
    ]
    assert dom.all("script") == [], "the hostile title stayed text"
    assert dom.all("img") == [], "nothing fetched: no picture of the title's became an element"
    assert len(dom.all("span", **{"class": "add"})) >= 1  # CR-01's diff, coloured
    assert dom.all("meta", **{"http-equiv": "Content-Security-Policy"})
    shot = screenshot(f"{served}/report.html", tmp_path / "report.png", (1000, 1400))
    assert (shot.width, shot.height) == (1000, 1400)
    assert png_size(tmp_path / "report.png") == (1000, 1400)


def test_design_tasks_show_their_screenshots_beside_their_reference(tmp_path: Path) -> None:
    repo = tmp_path / "site"
    (repo / "design").mkdir(parents=True)
    (repo / "design" / "home.png").write_bytes(PIXEL)
    (repo / "tasks.json").write_text(
        json.dumps(
            {
                "tasks": [
                    {"id": 1, "name": "home", "referenceImage": "design/home.png"},
                    {"id": 2, "name": "leak", "referenceImage": "../../etc/hostname"},
                ]
            }
        )
    )
    run_dir = tmp_path / "run"
    (run_dir / "shots").mkdir(parents=True)
    (run_dir / "shots" / "task-1-implemented.png").write_bytes(PIXEL)
    (run_dir / "shots" / "task-1-verify-1.png").write_bytes(PIXEL)
    (run_dir / "run.json").write_text(
        json.dumps({"id": "r", "repo": str(repo), "state": "finished"})
    )
    (run_dir / "state.json").write_text(json.dumps({"input_path": "tasks.json"}))
    view = RunView("r", "execute-wave", "finished", "", "", 1.0)
    view.items = [ItemView("1", "home", "committed"), ItemView("2", "leak", "committed")]
    page = tmp_path / "report.html"
    page.write_text(render_html(view, run_dir), encoding="utf-8")
    dom = dom_of(page)
    pictures = dom.all("img")
    assert [p["alt"] for p in pictures] == [
        "1 reference",
        "1 screenshot: implemented",
        "1 screenshot: verify-1",
    ]
    assert all(p["src"].startswith("data:image/png;base64,") for p in pictures)


def test_a_real_design_waves_pictures_are_paired_with_its_reference(
    user_repo: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A design wave run for real (its dev server, Chromium's screenshots, the verifier's score):
    the report shows the reference and each picture the run took, byte for byte."""
    wave = Wave(user_repo, load_pack(default_pack_root())[0])
    repo = banner_site(wave, SERVE)
    script: dict[str, Any] = {
        "executor/1/implement": implement(1, {"site/index.html": page(RED, "Hello")}),
        "verifier/1/verify": score(1, scores("design", 9), kind="design"),
    }
    context = Context(wave.pack, ScriptedBackend(script), EventStream(), browser=CHROMIUM)
    options = ExecuteWaveOptions(tasks=wave.tasks_path, repo=repo.path, viewport=VIEWPORT)
    result = run_execute_wave(options, context)
    assert [t.status for t in result.tasks] == ["committed"]
    shots = sorted((Path(result.run_dir) / "shots").glob("task-1-*.png"))
    assert [s.name for s in shots] == ["task-1-implemented.png", "task-1-verify.png"]

    report = tmp_path / "report.html"
    argv = ["runs", "show", result.run_id, "--repo", str(repo.path), "--html", str(report)]
    assert main(argv) == 0, capsys.readouterr().err
    pictures = dom_of(report).all("img")
    assert [p["alt"] for p in pictures] == [
        "1 reference",
        "1 screenshot: implemented",
        "1 screenshot: verify",
    ]
    prefix = "data:image/png;base64,"
    shown = [base64.b64decode(p["src"].removeprefix(prefix)) for p in pictures]
    assert shown == [REFERENCE, *(s.read_bytes() for s in shots)]
