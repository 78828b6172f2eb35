"""The safe-path rule is one rule: its bash helper and its Python function decide every case of
`safe_path_cases.yaml` the same way, with the same reason."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import REPO_ROOT

from fixloop.diagnostics import FixloopError
from fixloop.steps.paths import check_path

LIBRARY = REPO_ROOT / "workflows" / "lib"
CASES_FILE = Path(__file__).with_name("safe_path_cases.yaml")


@dataclass(frozen=True)
class Case:
    path: str
    expect: str
    reason: str
    clean: str
    links: dict[str, str]


def _cases() -> list[Case]:
    raw: list[dict[str, Any]] = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))["cases"]
    cases = []
    for row in raw:
        assert row["expect"] in ("accept", "refuse"), row
        assert ("reason" in row) == (row["expect"] == "refuse"), row
        cases.append(
            Case(
                row["path"],
                row["expect"],
                row.get("reason", ""),
                row.get("clean", ""),
                dict(row.get("links") or {}),
            )
        )
    return cases


CASES = _cases()


def _id(case: Case) -> str:
    links = ",".join(f"{name}->{target}" for name, target in case.links.items())
    return repr(case.path) + (f"[{links}]" if links else "")


@pytest.fixture
def make_root(tmp_path: Path) -> Any:
    def make(case: Case) -> Path:
        root = tmp_path / "repo"
        (root / "src").mkdir(parents=True)
        (root / ".git").mkdir()
        (root / ".git" / "config").write_text("[core]\n")
        (root / "a.txt").write_text("a\n")
        (root / "src" / "a.py").write_text("a = 1\n")
        (tmp_path / "outside").mkdir()
        (tmp_path / "outside" / "x.txt").write_text("x\n")
        for name, target in case.links.items():
            (root / name).symlink_to(target.replace("{root}", str(root)))
        return root

    return make


def test_the_table_covers_what_the_rule_promises() -> None:
    refused = " ".join(case.reason for case in CASES)
    for promise in ("'..'", "absolute", ".git", "NUL", "newline", "symbolic link"):
        assert promise in refused, promise
    assert {case.expect for case in CASES} == {"accept", "refuse"}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_python_decides_every_case(make_root: Any, case: Case) -> None:
    root = make_root(case)
    if case.expect == "accept":
        assert check_path(root, case.path) == case.clean
        return
    with pytest.raises(FixloopError) as caught:
        check_path(root, case.path)
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.rule == "unsafe-path"
    assert diagnostic.message.startswith(f"{case.path!r}: ")
    assert case.reason in diagnostic.message


def _bash(root: Path, path: str) -> subprocess.CompletedProcess[str]:
    script = '. "$FIXLOOP_LIB/fixloop.sh"\nfixloop_refuse_unsafe_path "$1"\n'
    env = {"PATH": os.environ["PATH"], "FIXLOOP_LIB": str(LIBRARY), "WORKTREE": str(root)}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-euo", "pipefail", "-c", script, "rule", path],
        env=env,
        cwd=root.parent,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_bash_decides_every_case(make_root: Any, case: Case) -> None:
    root = make_root(case)
    if "\0" in case.path:
        # No argument or environment variable can carry a NUL byte: bash never sees such a path.
        with pytest.raises(ValueError, match="null byte"):
            _bash(root, case.path)
        return
    done = _bash(root, case.path)
    if case.expect == "accept":
        assert (done.returncode, done.stderr) == (0, "")
        return
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines() if "\n" not in case.path else [done.stderr]
    assert line.startswith(f"fixloop: refusing a path: '{case.path}': ")
    assert case.reason in line
