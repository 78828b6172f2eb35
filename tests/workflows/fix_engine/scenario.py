"""A fix-engine scenario on a real repository: the mini-PRD, and the script the model plays.

The repository is `tests/helpers/gitrepo.make_user_repo`'s (a user's staged hunk, unstaged change
and untracked file, all to stay byte-identical) with the section's mini-PRD written next to it,
untracked, as a person would have it. The section has two items:

- `AC-1` (add() adds): the executor's first attempt subtracts still, the verifier says so
  (`confirmed`); the second attempt fixes it (`rejected`: resolved). One commit.
- `check-2` (a greeting module): three attempts, each leaving `src/greet.py` wrong; the third
  failure rolls the new file back and the error report names the item.

`script(...)` builds the scripted model's replies by call key (`executor/ID/attempt-N`,
`verifier/ID/attempt-N`); tests replace entries to play other answers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import warm_python
from tests.helpers.crash_tally import crash_env
from tests.helpers.gitrepo import UserRepo, git, make_user_repo

from fixloop.agents.budget import RunBudget
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.events import Event, EventStream
from fixloop.sandboxes import SandboxChoice
from fixloop.workflows.fix_engine import FixEngine, FixEngineOptions, FixEngineResult
from fixloop.workflows.kernel.workflow import Context

MINI_PRD = "sections/calc/mini-prd.md"
PRD = """\
# Calculator

A tiny calculator module.

## Acceptance Criteria

- AC-1: `add(a, b)` returns the sum of a and b
- `src/greet.py` defines `hello()` returning "hello"
  (exactly that text)

## Out of scope

- subtraction
"""
ADD_WRONG = "def add(a, b):\n    return a - b  # still wrong\n"
ADD_RIGHT = "def add(a, b):\n    return a + b\n"


def make_section_repo(path: Path) -> UserRepo:
    repo = make_user_repo(path)
    prd = repo.path / MINI_PRD
    prd.parent.mkdir(parents=True)
    prd.write_text(PRD, encoding="utf-8")
    return repo


def implemented(item: str, files: list[str], notes: str, **extra: Any) -> dict[str, Any]:
    return {
        "output": {"id": item, "status": "done", "filesModified": files, "notes": notes},
        **extra,
    }


def verdict(item: str, verdict: str, evidence: str) -> dict[str, Any]:
    return {
        "output": {
            "schema_version": "v1",
            "findings": [
                {
                    "id": item,
                    "severity": "P1",
                    "title": item,
                    "body": item,
                    "file": None,
                    "confidence": 1.0,
                    "criterion": item,
                    "verdict": verdict,
                    "evidence": evidence,
                }
            ],
            "checks_run": [f"{item}: {verdict}"],
        }
    }


def script() -> dict[str, Any]:
    greet = "src/greet.py"
    return {
        "executor/AC-1/attempt-1": implemented(
            "AC-1",
            ["src/app.py"],
            "touched add()",
            edits=[{"path": "src/app.py", "content": ADD_WRONG}],
        ),
        "verifier/AC-1/attempt-1": verdict("AC-1", "confirmed", "add(2, 1) is 1 (src/app.py:2)"),
        "executor/AC-1/attempt-2": implemented(
            "AC-1",
            ["src/app.py"],
            "add() adds now",
            edits=[{"path": "src/app.py", "content": ADD_RIGHT}],
        ),
        "verifier/AC-1/attempt-2": verdict("AC-1", "rejected", "add(2, 1) is 3 (src/app.py:2)"),
        **{
            f"executor/check-2/attempt-{n}": implemented(
                "check-2",
                [greet],
                f"try {n}",
                edits=[{"path": greet, "content": f"def hello():\n    return 'hi {n}'\n"}],
            )
            for n in (1, 2, 3)
        },
        **{
            f"verifier/check-2/attempt-{n}": verdict(
                "check-2", "confirmed", f"hello() returns 'hi {n}' (src/greet.py:2)"
            )
            for n in (1, 2, 3)
        },
    }


def state_dir(repo: Path, section: str = "calc") -> Path:
    return repo / ".git" / "fixloop" / "sections" / section


def run(
    repo: Path,
    replies: dict[str, Any],
    *,
    resume: bool = False,
    budget: RunBudget | None = None,
    events: list[Event] | None = None,
    mini_prd: str = MINI_PRD,
    sandbox: SandboxChoice | None = None,
    **more_options: Any,
) -> tuple[FixEngineResult, ScriptedBackend]:
    """One fix-engine run in `repo` with the scripted model playing `replies`."""
    backend = ScriptedBackend(replies)
    listener = EventStream(events.append) if events is not None else EventStream()
    context = Context(shipped_pack(), backend, listener, budget=budget, sandbox=sandbox)
    options = FixEngineOptions(repo / mini_prd, repo, resume=resume, budget=budget, **more_options)
    return FixEngine(context, options).run(), backend


def shipped_pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


def subjects(repo: Path, since: str) -> list[str]:
    return git(repo, "log", "--reverse", "--format=%s", f"{since}..main").splitlines()


def fix_engine_cli(
    repo: Path, replies: Path, *extra: str, crash: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`fixloop fix-engine MINI_PRD --json` in `repo` as a process of its own, the scripted model
    playing `replies`; `crash` kills it there (the crash switch)."""
    env = crash_env(crash)
    argv = ["-m", "fixloop", "fix-engine", MINI_PRD, "--repo", str(repo)]
    argv += ["--backend", "scripted", "--script", str(replies), "--json", *extra]
    return warm_python.run(argv, cwd=repo, env=env, timeout=300)
