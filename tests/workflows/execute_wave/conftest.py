"""Fixtures of the execute-wave tests: a user's repository with work in progress, tasks.json in
it (untracked, as a plan usually is), and one call that runs a wave with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo, make_user_repo

from fixloop.agents.backend import AgentOutcome, AgentRequest, Backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.events import Event, EventStream
from fixloop.extras.browser.seams import CHROMIUM
from fixloop.sandboxes import SandboxChoice
from fixloop.workflows.execute_wave import ExecuteWaveOptions, ExecuteWaveResult, run_execute_wave
from fixloop.workflows.kernel.workflow import Context

TASKS_REL = "plan/tasks.json"


@pytest.fixture(scope="session")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


@dataclass
class _Watched:
    inner: ScriptedBackend
    watch: Callable[[AgentRequest], None]
    name: str = "scripted"

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        self.watch(request)
        return self.inner.dispatch(request)


@dataclass
class Wave:
    repo: UserRepo
    pack: Pack
    events: list[Event] = field(default_factory=list)
    backend: ScriptedBackend | None = None

    @property
    def tasks_path(self) -> Path:
        return self.repo.path / TASKS_REL

    def write_tasks(self, tasks: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> Path:
        self.tasks_path.parent.mkdir(parents=True, exist_ok=True)
        self.tasks_path.write_text(json.dumps(tasks, indent=2), encoding="utf-8")
        return self.tasks_path

    def tasks(self) -> dict[str, dict[str, Any]]:
        data = json.loads(self.tasks_path.read_text(encoding="utf-8"))
        listed = data if isinstance(data, list) else data["tasks"]
        return {str(task["id"]): task for task in listed}

    def run(
        self,
        script: Mapping[str, Any],
        sandbox: SandboxChoice | None = None,
        watch: Callable[[AgentRequest], None] | None = None,
        **options: Any,
    ) -> ExecuteWaveResult:
        """Run a wave; `watch` sees each role call's request before the model plays it."""
        self.backend = ScriptedBackend(script)
        backend: Backend = self.backend if watch is None else _Watched(self.backend, watch)
        events = EventStream(self.events.append)
        context = Context(self.pack, backend, events, sandbox=sandbox, browser=CHROMIUM)
        chosen = ExecuteWaveOptions(tasks=self.tasks_path, repo=self.repo.path, **options)
        return run_execute_wave(chosen, context)

    def statuses(self) -> dict[str, str]:
        return {task_id: task.get("status", "pending") for task_id, task in self.tasks().items()}

    def file(self, path: str, ref: str = "main") -> str | None:
        """`path` as committed on `ref`, or None when `ref` has no such file."""
        if not _exists(self.repo, ref, path):
            return None
        return self.repo.git("show", f"{ref}:{path}")

    def leftovers(self) -> list[str]:
        """Worktrees, branches, tags and sentinels a run must not leave behind."""
        found = [f"worktree {w}" for w in self.repo.worktrees()[1:]]
        found += [f"branch {b}" for b in self.repo.branches() if b != "main"]
        found += [f"tag {t}" for t in self.repo.git("tag", "--list").split()]
        sentinels = self.repo.path / ".git" / "fixloop" / "sentinels"
        if sentinels.is_dir():
            found += [f"sentinel {p.name}" for p in sentinels.iterdir()]
        return found


def _exists(repo: UserRepo, ref: str, path: str) -> bool:
    done = repo.git("ls-tree", "--name-only", ref, "--", path, check=False)
    return done.strip() == path


@pytest.fixture
def wave(tmp_path: Path, pack: Pack) -> Wave:
    return Wave(make_user_repo(tmp_path / "repo"), pack)
