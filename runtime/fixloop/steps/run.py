"""Run bookkeeping on disk: a run's folder, its `events.jsonl` trace, its liveness lock.

Everything lives in the repository's own state folder, `$(git rev-parse --git-common-dir)/fixloop`,
which every worktree of the repository shares and which git never checks out:

    fixloop/runs/<run-id>/run.json      workflow, repository, pid, state, start/end times
    fixloop/runs/<run-id>/events.jsonl  one JSON object per line, appended (one per step)
    fixloop/runs/<run-id>/lock          flock-held by the live runtime for the run's lifetime
    fixloop/runs/<run-id>/current-step  the step last started (where a crashed run died)

A run is *live* exactly while its lock is held. The kernel drops the lock when the process dies,
even by SIGKILL, so a run whose `run.json` still says `running` but whose lock is free crashed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.masking import dumps_masked

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    """Sortable by start time, and unique across processes and machines sharing a repository."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}-{secrets.token_hex(3)}"


def state_dir_of(repo: Path) -> Path:
    """`<git common dir>/fixloop` for the repository (or any of its worktrees) at `repo`."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=repo, capture_output=True, text=True, check=False,
        )  # fmt: skip
    except OSError as exc:
        raise FixloopError(Diagnostic(str(repo), 1, 1, "repository", str(exc))) from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "not a git repo"
        raise FixloopError(Diagnostic(str(repo), 1, 1, "repository", message))
    return Path(done.stdout.strip()) / "fixloop"


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(dumps_masked(data, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)


def is_live(run_dir: Path) -> bool:
    """True while some process holds the run's lock (a run with no lock file is not live)."""
    try:
        fd = os.open(run_dir / "lock", os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@dataclass
class Run:
    """A live run. Use `Run.start(...)` (or as a context manager) and `finish(...)` when done."""

    id: str
    workflow: str
    repo: Path
    state_dir: Path
    _lock: int | None = field(default=None, repr=False)
    _events: TextIO | None = field(default=None, repr=False)
    # Steps of one run may execute in parallel threads (parallel executors); lines stay whole.
    _writing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def dir(self) -> Path:
        return self.state_dir / "runs" / self.id

    @property
    def lock_fd(self) -> int | None:
        """The descriptor holding the run's lock while the run is open."""
        return self._lock

    @property
    def events_path(self) -> Path:
        return self.dir / "events.jsonl"

    @classmethod
    def start(cls, repo: Path, workflow: str, run_id: str | None = None) -> Run:
        repo = repo.resolve()
        run_id = run_id or new_run_id()
        if not _RUN_ID.match(run_id):
            raise FixloopError(
                Diagnostic("run-id", 1, 1, "usage", f"{run_id!r} does not match {RUN_ID_PATTERN}")
            )
        run = cls(run_id, workflow, repo, state_dir_of(repo))
        run.dir.mkdir(parents=True, exist_ok=False)
        run._lock = os.open(run.dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(run._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        info = {
            "id": run_id, "workflow": workflow, "repo": str(repo), "pid": os.getpid(),
            "state": "running", "started_at": now_iso(), "ended_at": None, "details": {},
        }  # fmt: skip
        _write_json_atomically(run.dir / "run.json", info)
        run.record({"event": "run-start", "workflow": workflow})
        return run

    def entering(self, workflow: str, step: str) -> None:
        """Note the step about to run, so a crashed run can say where it died."""
        (self.dir / "current-step").write_text(f"{workflow}#{step}\n", encoding="utf-8")

    def record(self, event: dict[str, Any]) -> None:
        """Append one event; each line is written whole and flushed, so a kill loses at most it."""
        line = dumps_masked({"time": now_iso(), "run": self.id, **event}, ensure_ascii=False)
        with self._writing:
            if self._events is None:
                self._events = self.events_path.open("a", encoding="utf-8")
            self._events.write(line + "\n")
            self._events.flush()

    def finish(self, state: str, **details: Any) -> None:
        """Mark the run ended (`finished`, `failed`, `kept-branch`, …) and release its lock."""
        path = self.dir / "run.json"
        info = json.loads(path.read_text(encoding="utf-8"))
        info.update(state=state, ended_at=now_iso())
        info["details"].update(details)
        _write_json_atomically(path, info)
        self.record({"event": "run-end", "state": state, **details})
        self.close()

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_run(run_dir: Path) -> dict[str, Any]:
    """`run.json` plus `live`; a `running` run that is not live is reported as `crashed`."""
    try:
        info: dict[str, Any] = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        info = {"id": run_dir.name, "workflow": None, "state": "unreadable"}
    info["live"] = is_live(run_dir)
    if info.get("state") == "running" and not info["live"]:
        info["state"] = "crashed"
    with contextlib.suppress(OSError):
        info["last_step"] = (run_dir / "current-step").read_text(encoding="utf-8").strip()
    return info


def list_runs(state_dir: Path) -> list[dict[str, Any]]:
    runs = state_dir / "runs"
    if not runs.is_dir():
        return []
    return [read_run(path) for path in sorted(runs.iterdir()) if path.is_dir()]


def mark_recovered(run_dir: Path, details: dict[str, Any]) -> None:
    """Note in a dead run's `run.json` (when it has one) that recovery cleaned up after it."""
    path = run_dir / "run.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    if info.get("state") == "running":
        info["state"] = "crashed"
    info["recovered_at"] = now_iso()
    info["recovery"] = details
    _write_json_atomically(path, info)
