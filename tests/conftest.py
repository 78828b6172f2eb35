"""Shared test configuration.

Golden files: tests compare rendered text with files under a `goldens/` folder next to the test.
Regenerate them after an intended change with

    .venv/bin/python -m pytest --update-goldens

then review the diff with `git diff tests/` before committing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import crash_tally
from tests.helpers.gitrepo import UserRepo, make_user_repo
from tests.helpers.tools import in_ci, missing

REPO_ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite golden files with the current output instead of comparing",
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Tally the crash matrices' kill points; under pytest-xdist the reports of every worker
    arrive here, in the main process."""
    if report.when == "call":
        crash_tally.tally(report.user_properties)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in crash_tally.summary():
        terminalreporter.write_line(line)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.needs(tool, …)`: skip without the tool here, fail without it in CI."""
    for mark in item.iter_markers("needs"):
        absent = missing(tuple(mark.args))
        if absent:
            reason = f"needs {', '.join(absent)} (not available here)"
            if in_ci():
                pytest.fail(f"{reason}; CI must install it (.ci/run)", pytrace=False)
            pytest.skip(reason)


class Golden:
    """Compare text with a golden file, or rewrite it under --update-goldens."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, path: Path, actual: str) -> None:
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        assert path.is_file(), f"golden file {path} is missing; run pytest --update-goldens"
        expected = path.read_text(encoding="utf-8")
        assert actual == expected, f"output differs from {path}; run pytest --update-goldens"


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(bool(request.config.getoption("--update-goldens")))


@pytest.fixture(autouse=True)
def _isolated_user_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep tests away from the developer's own git and Claude configuration."""
    home = tmp_path_factory.mktemp("home")
    patch = pytest.MonkeyPatch()
    patch.setenv("HOME", str(home))
    patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    patch.setenv("GIT_AUTHOR_NAME", "fixloop tests")
    patch.setenv("GIT_AUTHOR_EMAIL", "tests@fixloop.invalid")
    patch.setenv("GIT_COMMITTER_NAME", "fixloop tests")
    patch.setenv("GIT_COMMITTER_EMAIL", "tests@fixloop.invalid")
    patch.delenv("CLAUDECODE", raising=False)
    yield
    patch.undo()


@pytest.fixture
def user_repo(tmp_path: Path) -> UserRepo:
    """A git repository on `main` with a staged hunk, an unstaged change and an untracked file.

    See `tests/helpers/gitrepo.py`; `user_repo.user_work()` snapshots that work byte for byte.
    """
    return make_user_repo(tmp_path / "repo")
