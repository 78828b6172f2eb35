"""fix-findings test helpers: a repository with the user's work in progress, findings, scripts.

`make_repo` commits `calc.py` (mean() divides by zero), `other.py`, `helper.py` and `notes.txt`,
then leaves the user's own work: a staged hunk in `other.py`, an unstaged change in `notes.txt`
and an untracked `scratch.txt`. `UserWork` captures that work so a test proves it survived.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.agents.backend import Backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventStream
from fixloop.workflows.fix_findings import FixFindingsOptions, FixFindingsResult, run_fix_findings
from fixloop.workflows.fix_findings.workflow import PrestagedPolicy
from fixloop.workflows.kernel.choices import ScriptedPrompter
from fixloop.workflows.kernel.scope_policy import ScopePolicy
from fixloop.workflows.kernel.workflow import Context

SPARE = "\n\ndef spare():\n    return 1\n"
BUGGY = "def mean(xs):\n    return sum(xs) / len(xs)\n" + SPARE
FIXED = "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n" + SPARE
BETTER = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n" + SPARE
HELPER = "def helper():\n    return None\n"
HELPER_FIXED = "def helper():\n    return 0.0\n"
# Replaces text only the untouched file has: a re-dispatched call that still saw an earlier call's
# calc.py edit would not find it, and its edit would fail.
GUARD_ON_BUGGY = {"path": "calc.py", "old": "len(xs)\n", "new": "len(xs) if xs else helper()\n"}
GUARDED = BUGGY.replace("len(xs)\n", "len(xs) if xs else helper()\n")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@dataclass
class UserWork:
    """The user's uncommitted work, captured so a test can prove it survived untouched."""

    head: str
    staged_other: str
    index_other: str
    files: dict[str, bytes]

    @classmethod
    def capture(cls, repo: Path) -> UserWork:
        return cls(
            head=git(repo, "rev-parse", "HEAD"),
            staged_other=git(repo, "diff", "--staged", "--", "other.py"),
            index_other=git(repo, "ls-files", "--stage", "--", "other.py"),
            files={n: (repo / n).read_bytes() for n in ("other.py", "notes.txt", "scratch.txt")},
        )

    def assert_intact(self, repo: Path, *, head_moved: bool = False) -> None:
        if not head_moved:
            assert git(repo, "rev-parse", "HEAD") == self.head, "something was committed"
        assert git(repo, "ls-files", "--stage", "--", "other.py") == self.index_other
        if not head_moved:
            assert git(repo, "diff", "--staged", "--", "other.py") == self.staged_other
        for name, content in self.files.items():
            assert (repo / name).read_bytes() == content, f"{name} changed"
        assert "scratch.txt" in git(repo, "ls-files", "--others", "--exclude-standard")


def finding(number: int = 1, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": number,
        "severity": "P1",
        "title": "mean() divides by zero on an empty list",
        "body": "calc.py:2 divides by len(xs) without a guard.",
        "file": "calc.py",
        "line_start": 2,
        "line_end": 2,
        "confidence": 0.9,
        "criterion": "no crash on empty input",
        "verdict": "confirmed",
        "evidence": "Verifier: traced mean([]) to ZeroDivisionError.",
    }
    return base | changes


def verdict(of: dict[str, Any], name: str, severity: str | None = None) -> dict[str, Any]:
    judged = of | {"verdict": name, "evidence": f"verifier says {name}"}
    if severity is not None:
        judged["severity"] = severity
    return {"schema_version": "v1", "findings": [judged], "checks_run": ["calc.py read"]}


def fix(content: str = FIXED, files: tuple[str, ...] = ("calc.py",)) -> dict[str, Any]:
    return {
        "edits": [{"path": "calc.py", "content": content}],
        "output": {"files_changed": list(files), "summary": "fixed: guard", "concerns": None},
    }


@dataclass(frozen=True)
class Policies:
    """The two answers a headless run gives instead of asking (`--on-prestaged`, …)."""

    on_prestaged: PrestagedPolicy = "ask"
    on_scope_expansion: ScopePolicy = "ask"


def run_with(
    pack: Pack,
    backend: Backend,
    findings: Path,
    repo: Path,
    *,
    policies: Policies | None = None,
    prompter: ScriptedPrompter | None = None,
    resume: str | None = None,
    events: list[Event] | None = None,
) -> FixFindingsResult:
    """One fix-findings run through its public entry point, as the command line makes it."""
    chosen = policies or Policies()
    options = FixFindingsOptions(
        findings, repo, chosen.on_prestaged, chosen.on_scope_expansion, resume=resume
    )
    stream = EventStream(events.append) if events is not None else EventStream()
    context = Context(pack, backend, stream, prompter=prompter or ScriptedPrompter([]))
    return run_fix_findings(options, context)


def run(
    pack: Pack,
    repo: Path,
    findings: list[dict[str, Any]],
    script: dict[str, Any],
    *,
    policies: Policies | None = None,
    answers: list[str | None] | None = None,
) -> tuple[FixFindingsResult, ScriptedBackend, ScriptedPrompter]:
    path = repo.parent / "findings.json"
    path.write_text(json.dumps(findings), encoding="utf-8")
    backend = ScriptedBackend(script)
    prompter = ScriptedPrompter(answers or [])
    session = run_with(pack, backend, path, repo, policies=policies, prompter=prompter)
    return session, backend, prompter


def keys(backend: ScriptedBackend) -> list[str]:
    return [call.key for call in backend.calls]


def staged(repo: Path, name: str = "calc.py") -> str:
    return git(repo, "show", f":{name}")


def make_repo(tmp_path: Path) -> Path:
    """calc.py (buggy) and helper.py committed; the user's own work around them."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text(BUGGY, encoding="utf-8")
    (root / "other.py").write_text("VALUE = 1\n", encoding="utf-8")
    (root / "helper.py").write_text("def helper():\n    return None\n", encoding="utf-8")
    (root / "notes.txt").write_text("notes\n", encoding="utf-8")
    git(root, "add", "--", "calc.py", "other.py", "helper.py", "notes.txt")
    git(root, "commit", "-q", "-m", "initial")
    (root / "other.py").write_text("VALUE = 2\n", encoding="utf-8")
    git(root, "add", "--", "other.py")
    (root / "notes.txt").write_text("notes\nmore, unstaged\n", encoding="utf-8")
    (root / "scratch.txt").write_text("untracked\n", encoding="utf-8")
    return root
