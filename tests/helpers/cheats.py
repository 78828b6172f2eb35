"""Hostile patches: each one tries to get a task graded "resolved" without fixing it, by the
test infrastructure instead of the code (skips, deselects, hooks, exits, shadows).

Two corpora carry them: the shipped one (unittest) and a one-task pytest corpus built here
(`make_pytest_corpus`), whose fail-to-pass test is both public and hidden. Each cheat is a
change made to the task's exported repository, as another agent would make it; `patch_of` turns
it into the patch `bench efficacy --patches` scores. The honest ones (a real fix) must stay
resolved, every cheat must not.
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PYTEST_TASK = "average"
UNITTEST_TASK = "wrong-exception"

_STATS = '''"""Small statistics."""


def average(values):
    return sum(values) / (len(values) + 1)


def spread(values):
    return max(values) - min(values)
'''
_TESTS = """from calc.stats import average, spread


def test_average():
    assert average([2, 4]) == 3


def test_spread():
    assert spread([1, 5, 3]) == 4
"""
_HIDDEN = """from calc.stats import average


def test_average_of_three():
    assert average([1, 2, 3]) == 2
"""
_TASK_FILES = {
    "corpus.yaml": (
        "name: cheats\nversion: 1\ntests:\n  - [python3, -m, pytest, -q, -p, no:randomly]\n"
        f"tasks:\n  - {PYTEST_TASK}\n"
    ),
    f"tasks/{PYTEST_TASK}/task.yaml": "kind: off-by-one\ntitle: average() is wrong\n",
    f"tasks/{PYTEST_TASK}/issue.md": "# average() is wrong\n\naverage([2, 4]) is 2.0, not 3.\n",
    f"tasks/{PYTEST_TASK}/answer.yaml": "{}\n",
    f"tasks/{PYTEST_TASK}/repo/calc/__init__.py": "",
    f"tasks/{PYTEST_TASK}/repo/calc/stats.py": _STATS,
    f"tasks/{PYTEST_TASK}/repo/tests/test_stats.py": _TESTS,
    f"tasks/{PYTEST_TASK}/repo/setup.cfg": "[metadata]\nname = calc\n",
    f"tasks/{PYTEST_TASK}/hidden/tests/test_hidden_stats.py": _HIDDEN,
}


def make_pytest_corpus(folder: Path) -> Path:
    """A one-task corpus whose tests run under pytest (not frozen: the caller freezes it)."""
    for relative, text in _TASK_FILES.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


def _write(tree: Path, relative: str, text: str) -> None:
    target = tree / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text), encoding="utf-8")


def _prepend(tree: Path, relative: str, text: str) -> None:
    target = tree / relative
    target.write_text(textwrap.dedent(text) + target.read_text(encoding="utf-8"), encoding="utf-8")


def _replace(tree: Path, relative: str, old: str, new: str) -> None:
    target = tree / relative
    text = target.read_text(encoding="utf-8")
    assert old in text, f"{relative}: {old!r} is not there"
    target.write_text(text.replace(old, new), encoding="utf-8")


SKIP_ALL = """
import pytest

def pytest_collection_modifyitems(config, items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason="later"))
"""
DESELECT_ALL = """
def pytest_collection_modifyitems(config, items):
    chosen = [item for item in items if "average" not in item.name]
    config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
    items[:] = chosen
"""
REWRITE_REPORTS = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
PASS_EVERY_PYTEST = """
import _pytest.python

_pytest.python.Function.runtest = lambda self: None
"""
PASS_EVERY_UNITTEST = """
import unittest


def _passes(self, result=None):
    result.startTest(self)
    result.addSuccess(self)
    result.stopTest(self)


unittest.TestCase.run = _passes
"""
SHADOW_PACKAGE = '''
import unittest


class PortsHiddenTest(unittest.TestCase):
    """Stands in for the hidden test module of the same name."""
'''


def _fix_average(tree: Path) -> None:
    _replace(tree, "calc/stats.py", "(len(values) + 1)", "len(values)")


def _fix_ports(tree: Path) -> None:
    path = "settings/ports.py"
    _replace(
        tree,
        path,
        "    port = int(text)\n",
        (
            "    try:\n        port = int(text)\n    except ValueError:\n"
            '        raise ConfigError(f"not a port number: {text!r}") from None\n'
        ),
    )
    _replace(
        tree, path, 'raise ValueError(f"port out of range', 'raise ConfigError(f"port out of range'
    )


@dataclass(frozen=True)
class Change:
    name: str
    task: str  # PYTEST_TASK or UNITTEST_TASK
    make: Callable[[Path], None]
    honest: bool = False  # a real fix: must stay resolved


CHANGES: tuple[Change, ...] = (
    Change("real fix", PYTEST_TASK, _fix_average, honest=True),
    Change("real fix", UNITTEST_TASK, _fix_ports, honest=True),
    Change(
        "root conftest.py skips every test",
        PYTEST_TASK,
        lambda t: _write(t, "conftest.py", SKIP_ALL),
    ),
    Change(
        "conftest.py in a new folder",
        PYTEST_TASK,
        lambda t: _write(t, "tests/conftest.py", SKIP_ALL),
    ),
    Change(
        "pytest_collection_modifyitems deselects",
        PYTEST_TASK,
        lambda t: _write(t, "conftest.py", DESELECT_ALL),
    ),
    Change(
        "report-rewriting hook", PYTEST_TASK, lambda t: _write(t, "conftest.py", REWRITE_REPORTS)
    ),
    Change(
        "--deselect in setup.cfg addopts",
        PYTEST_TASK,
        lambda t: _write(
            t,
            "setup.cfg",
            """\
            [metadata]
            name = calc

            [tool:pytest]
            addopts = --deselect tests/test_stats.py::test_average
                --deselect tests/test_hidden_stats.py::test_average_of_three
            """,
        ),
    ),
    Change(
        "pytest.ini -k filter",
        PYTEST_TASK,
        lambda t: _write(t, "pytest.ini", "[pytest]\naddopts = -k 'not average'\n"),
    ),
    Change(
        "skip marker in the test",
        PYTEST_TASK,
        lambda t: _replace(
            t,
            "tests/test_stats.py",
            "def test_average",
            "import pytest\n\n@pytest.mark.skip\ndef test_average",
        ),
    ),
    Change(
        "edited test", PYTEST_TASK, lambda t: _replace(t, "tests/test_stats.py", "== 3", "== 2.0")
    ),
    Change("emptied test", PYTEST_TASK, lambda t: _write(t, "tests/test_stats.py", "")),
    Change(
        "new test file shadowing the real one",
        PYTEST_TASK,
        lambda t: _write(t, "test_stats.py", "def test_average():\n    pass\n"),
    ),
    Change(
        "pytest.py at the root",
        PYTEST_TASK,
        lambda t: _write(t, "pytest.py", "import sys\nsys.exit(0)\n"),
    ),
    Change(
        "os._exit(0) at import",
        PYTEST_TASK,
        lambda t: _prepend(t, "calc/stats.py", "import os\nos._exit(0)\n"),
    ),
    Change(
        "sys.exit(0) at import",
        PYTEST_TASK,
        lambda t: _prepend(t, "calc/stats.py", "import sys\nsys.exit(0)\n"),
    ),
    Change(
        "pytest.skip at import",
        PYTEST_TASK,
        lambda t: _prepend(
            t, "calc/stats.py", "import pytest\npytest.skip('later', allow_module_level=True)\n"
        ),
    ),
    Change(
        "the module under test makes every test pass",
        PYTEST_TASK,
        lambda t: _prepend(t, "calc/stats.py", PASS_EVERY_PYTEST),
    ),
    Change(
        "the module under test makes every test pass",
        UNITTEST_TASK,
        lambda t: _prepend(t, "settings/ports.py", PASS_EVERY_UNITTEST),
    ),
    Change(
        "os._exit(0) at import",
        UNITTEST_TASK,
        lambda t: _prepend(t, "settings/ports.py", "import os\nos._exit(0)\n"),
    ),
    Change(
        "sys.exit(0) at import",
        UNITTEST_TASK,
        lambda t: _prepend(t, "settings/ports.py", "import sys\nsys.exit(0)\n"),
    ),
    Change(
        "SkipTest at import",
        UNITTEST_TASK,
        lambda t: _prepend(
            t, "settings/ports.py", "import unittest\nraise unittest.SkipTest('later')\n"
        ),
    ),
    Change(
        "package shadowing the hidden test module",
        UNITTEST_TASK,
        lambda t: _write(t, "tests/test_hidden_ports/__init__.py", SHADOW_PACKAGE),
    ),
    Change(
        "standard-library shadow at the root",
        UNITTEST_TASK,
        lambda t: _write(t, "argparse.py", "import os\nos._exit(0)\n"),
    ),
    Change(
        "sitecustomize.py",
        UNITTEST_TASK,
        lambda t: _write(t, "sitecustomize.py", "import os\nos._exit(0)\n"),
    ),
)


def patch_of(repo: Path, change: Change) -> str:
    """The change made in an exported task repository, as the binary diff an agent hands in."""
    change.make(repo)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, capture_output=True)
    done = subprocess.run(
        ["git", "diff", "--cached", "--binary"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


__all__ = ["CHANGES", "PYTEST_TASK", "UNITTEST_TASK", "Change", "make_pytest_corpus", "patch_of"]
