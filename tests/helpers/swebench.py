"""SWE-bench instances of our own: a small git repository with a bug, and instance records
made from it as the published dataset has them (real `git diff` patches, the test ids
JSON-encoded or as lists)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

REPO = "acme/calc"
PYTEST = "python3 -m pytest -q -p no:randomly"
_ENV = {
    **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_OPS = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
_TEST_OPS = "from calc.ops import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
_TEST_OPS_MORE = (
    _TEST_OPS.replace("from calc.ops import mul", "from calc.ops import add, mul")
    + "\n\ndef test_add_small():\n    assert add(1, 1) == 2\n"
)
_TEST_ADD = "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env=_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _write(repo: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _diff(repo: Path, base: str, files: dict[str, str]) -> str:
    """`files` written over `base`, as `git diff` shows it; the repository left at `base`."""
    _write(repo, files)
    git(repo, "add", "--all")
    patch = git(repo, "diff", "--cached", "--binary", base)
    git(repo, "reset", "--quiet", "--hard", base)
    return patch


def make_repository(folder: Path) -> tuple[Path, str]:
    """`folder` as a repository whose `add` subtracts; its base commit. It holds a symbolic
    link inside it (docs/README.md) and an executable script, which a clone must keep."""
    folder.mkdir(parents=True)
    git(folder, "init", "--quiet", "--initial-branch=main")
    _write(
        folder,
        {
            "calc/__init__.py": "",
            "calc/ops.py": _OPS,
            "tests/test_ops.py": _TEST_OPS,
            "README.md": "# calc\n",
            "bin/check.sh": "#!/bin/sh\nexec python3 -m pytest -q\n",
        },
    )
    (folder / "bin" / "check.sh").chmod(0o755)
    (folder / "docs").mkdir()
    (folder / "docs" / "README.md").symlink_to("../README.md")
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "calc")
    return folder, git(folder, "rev-parse", "HEAD").strip()


def instances(repo: Path, base: str) -> list[dict[str, Any]]:
    """Four instances on `repo`: two valid (the dataset's JSON-encoded ids, and plain lists),
    one whose fail-to-pass test already passes at the base, one whose gold patch is wrong."""
    gold = _diff(repo, base, {"calc/ops.py": _OPS.replace("a - b", "a + b")})
    wrong = _diff(repo, base, {"calc/ops.py": _OPS.replace("a - b", "a * b")})
    tests = _diff(repo, base, {"tests/test_ops.py": _TEST_OPS_MORE, "tests/test_add.py": _TEST_ADD})
    f2p = ["tests/test_add.py::test_add", "tests/test_ops.py::test_add_small"]
    p2p = ["tests/test_ops.py::test_mul"]
    common = {"repo": REPO, "base_commit": base, "test_patch": tests, "version": "0.1"}
    issue = "add() subtracts\n\n`add(2, 3)` returns -1; it should return 5.\n"
    return [
        {
            **common,
            "instance_id": "acme__calc-1",
            "problem_statement": issue,
            "patch": gold,
            "FAIL_TO_PASS": json.dumps(f2p),
            "PASS_TO_PASS": json.dumps(p2p),
            "hints_text": "see ops.py",
            "created_at": "2026-01-01T00:00:00Z",
        },
        {
            **common,
            "instance_id": "acme__calc-2",
            "problem_statement": issue,
            "patch": gold,
            "FAIL_TO_PASS": f2p[:1],
            "PASS_TO_PASS": [],
        },
        {
            **common,
            "instance_id": "acme__calc-3",
            "problem_statement": issue,
            "patch": gold,
            "FAIL_TO_PASS": json.dumps([f2p[0], p2p[0]]),
            "PASS_TO_PASS": "[]",
        },
        {
            **common,
            "instance_id": "acme__calc-4",
            "problem_statement": issue,
            "patch": wrong,
            "FAIL_TO_PASS": json.dumps(f2p),
            "PASS_TO_PASS": json.dumps(p2p),
        },
    ]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path
