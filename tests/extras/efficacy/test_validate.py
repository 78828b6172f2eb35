"""`validate` on vendored tasks of our own: setup commands run in the sandbox before the tests
every time they run, a failing setup fails the task, a task's image reaches its sandbox."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.extras.efficacy.conftest import CORPUS

from fixloop.documents.pack import Pack
from fixloop.extras.efficacy import BenchOptions, freeze, run_bench
from fixloop.extras.efficacy.validate import summary, validate_corpus
from fixloop.sandboxes import Sandbox, open_sandbox

_FLAGS = """from pathlib import Path


def enabled():
    return Path("build/flag").read_text() == "on"


def answer():
    return 41
"""
_TESTS = """from app.flags import answer, enabled


def test_enabled():
    assert enabled()
"""
_HIDDEN = """from app.flags import answer


def test_answer():
    assert answer() == 42
"""
_GOLD = """diff --git a/app/flags.py b/app/flags.py
--- a/app/flags.py
+++ b/app/flags.py
@@ -8,2 +8,2 @@ def enabled():
 def answer():
-    return 41
+    return 42
"""
# Writes an ignored file the tests read: without it, test_enabled cannot pass.
_SETUP = (
    "[python3, -c, \"import pathlib; pathlib.Path('build').mkdir(); "
    "pathlib.Path('build/flag').write_text('on')\"]"
)


def _corpus(folder: Path, setup: str) -> Path:
    files = {
        "corpus.yaml": "name: setup\ntests:\n  - [python3, -m, pytest, -q, -p, no:randomly]\n"
        "tasks: [flags]\n",
        "tasks/flags/task.yaml": f"kind: setup\ntitle: answer() is off by one\n{setup}"
        "fail_to_pass: ['tests/test_answer.py::test_answer']\n"
        "pass_to_pass: ['tests/test_flags.py::test_enabled']\n",
        "tasks/flags/issue.md": "answer() says 41\n",
        "tasks/flags/gold.patch": _GOLD,
        "tasks/flags/repo/.gitignore": "build/\n",
        "tasks/flags/repo/app/__init__.py": "",
        "tasks/flags/repo/app/flags.py": _FLAGS,
        "tasks/flags/repo/tests/test_flags.py": _TESTS,
        "tasks/flags/hidden/tests/test_answer.py": _HIDDEN,
    }
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    freeze(folder)
    return folder


@pytest.mark.parametrize(
    ("setup", "valid", "reason"),
    [
        (f"setup:\n  - {_SETUP}\n", True, "fail-to-pass 1 fail at the base"),
        (
            "",
            False,
            "pass-to-pass does not pass at the base: tests/test_flags.py::test_enabled failed",
        ),
        ("setup: [[python3, -c, 'raise SystemExit(3)']]\n", False, "raise SystemExit(3)'"),
    ],
    ids=["with setup", "without setup", "failing setup"],
)
def test_setup_runs_before_the_tests_each_time(
    tmp_path: Path, pack: Pack, setup: str, valid: bool, reason: str
) -> None:
    corpus = _corpus(tmp_path / "corpus", setup)
    [found] = validate_corpus(BenchOptions(corpus=corpus, sandbox="local"), pack)
    assert found.valid is valid, found.reason
    assert reason in found.reason
    assert summary([found]) == (
        "1 of 1 tasks valid" if valid else "0 of 1 tasks valid; invalid: flags"
    )


def test_a_tasks_image_reaches_its_sandbox(tmp_path: Path, pack: Pack) -> None:
    corpus = _corpus(
        tmp_path / "corpus", f"image: 'registry.invalid/calc:1'\nsetup:\n  - {_SETUP}\n"
    )
    seen: list[tuple[str, str | None]] = []

    def opener(
        kind: str,
        *,
        worktree: Path,
        image: str | None,
        run_id: str | None,
        writable: Sequence[Path] = (),
    ) -> contextlib.AbstractContextManager[Sandbox]:
        seen.append((kind, image))
        return open_sandbox("local", worktree=worktree, run_id=run_id, writable=writable)

    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "flags.patch").write_text(_GOLD)
    options: dict[str, Any] = {"corpus": corpus, "patches": patches, "open_sandbox": opener}
    [outcome] = run_bench(BenchOptions(**options), pack).outcomes
    assert outcome.status == "resolved", outcome.reason
    assert seen == [("auto", "registry.invalid/calc:1")]
    seen.clear()
    run_bench(BenchOptions(**options, sandbox="local"), pack)
    assert seen == [("local", None)]  # the image is docker's; local runs none


@pytest.mark.slow
def test_the_shipped_corpus_is_valid(pack: Pack) -> None:
    found = validate_corpus(BenchOptions(corpus=CORPUS, sandbox="local"), pack)
    assert [(task.id, task.reason) for task in found if not task.valid] == []
    assert summary(found) == f"{len(found)} of {len(found)} tasks valid" and len(found) >= 8
