"""A run on disk: its folder, its `events.jsonl` trace, its liveness lock.

Everything lives in the repository's own state folder, `$(git rev-parse --git-common-dir)/fixloop`,
which every worktree of the repository shares and which git never checks out:

    fixloop/runs/<run-id>/run.json      workflow, repository, pid, state, start/end times
    fixloop/runs/<run-id>/events.jsonl  one JSON object per line, appended (the run's events)
    fixloop/runs/<run-id>/state.json    the workflow's loop state (`runs.state`)
    fixloop/runs/<run-id>/lock          flock-held by the live runtime for the run's lifetime
    fixloop/runs/<run-id>/current-step  the step last started (where a crashed run died)

A run is *live* exactly while its lock is held. The kernel drops the lock when the process dies,
even by SIGKILL, so a run whose `run.json` still says `running` but whose lock is free crashed.

A run subscribes its trace to the workflow's `EventStream`: every event anyone emits while the run
is open (steps, role calls, item status changes) becomes one line of `events.jsonl`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from fixloop import locks
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.files import load_json, read_text
from fixloop.events import Event, EventKind, EventStream
from fixloop.gitrepo import state_dir_of
from fixloop.masking import dumps_masked

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    """Sortable by start time, and unique across processes and machines sharing a repository."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}-{secrets.token_hex(3)}"


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(dumps_masked(data, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)


def is_live(run_dir: Path) -> bool:
    """True while some process holds the run's lock (a run with no lock file is not live)."""
    return locks.is_held(run_dir / "lock")


@dataclass
class Run:
    """A live run. Use `Run.start(...)` (or as a context manager) and `finish(...)` when done."""

    id: str
    workflow: str
    repo: Path
    state_dir: Path
    events: EventStream = field(default_factory=EventStream, repr=False)
    _lock: int | None = field(default=None, repr=False)
    _trace: TextIO | None = field(default=None, repr=False)
    _unsubscribe: Callable[[], None] | None = field(default=None, repr=False)

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
    def start(
        cls,
        repo: Path,
        workflow: str,
        run_id: str | None = None,
        events: EventStream | None = None,
    ) -> Run:
        """Create the run's folder, take its lock, and trace every event of `events` from now."""
        repo = repo.resolve()
        run_id = run_id or new_run_id()
        if not _RUN_ID.match(run_id):
            raise FixloopError(
                Diagnostic("run-id", 1, 1, "usage", f"{run_id!r} does not match {RUN_ID_PATTERN}")
            )
        run = cls(run_id, workflow, repo, state_dir_of(repo), events or EventStream())
        make_run_folder(run.dir)
        run._lock = locks.open_held(run.dir / "lock")
        if run._lock is None:  # the folder is new: only a process racing for the same id
            raise FixloopError(Diagnostic("run-id", 1, 1, "usage", f"run {run_id} is taken"))
        info = {
            "id": run_id,
            "workflow": workflow,
            "repo": str(repo),
            "pid": os.getpid(),
            "state": "running",
            "started_at": now_iso(),
            "ended_at": None,
            "details": {},
        }
        _write_json_atomically(run.dir / "run.json", info)
        run._unsubscribe = run.events.subscribe(run._write_trace)
        run.emit(Event(EventKind.RUN_START, workflow=workflow))
        return run

    def entering(self, workflow: str, step: str) -> None:
        """Note the step about to run, so a crashed run can say where it died."""
        (self.dir / "current-step").write_text(f"{workflow}#{step}\n", encoding="utf-8")

    def emit(self, event: Event) -> None:
        """Hand `event` to every listener of the run's stream, the trace included."""
        self.events.emit(event)

    def _write_trace(self, event: Event) -> None:
        # One line per event, written whole and flushed: a kill loses at most the line in flight.
        # The stream serialises listeners, so lines from parallel threads never interleave.
        if event.kind is EventKind.AGENT_PROGRESS:
            return  # for a live display only: the call's `agent` event records what it used
        line = dumps_masked(
            {"time": now_iso(), "run": self.id, **event.to_json()},
            ensure_ascii=False,
            default=str,
        )
        if self._trace is None:
            self._trace = self.events_path.open("a", encoding="utf-8")
        self._trace.write(line + "\n")
        self._trace.flush()

    def annotate(self, **details: Any) -> None:
        """Add to the run's recorded details while it runs (say, how to continue it if it stops)."""
        path = self.dir / "run.json"
        info = json.loads(path.read_text(encoding="utf-8"))
        info["details"].update(details)
        _write_json_atomically(path, info)

    def finish(self, state: str, **details: Any) -> None:
        """Mark the run ended (`finished`, `failed`, `kept-branch`, …) and release its lock."""
        path = self.dir / "run.json"
        info = json.loads(path.read_text(encoding="utf-8"))
        info.update(state=state, ended_at=now_iso())
        info["details"].update(details)
        _write_json_atomically(path, info)
        self.emit(Event(EventKind.RUN_END, status=state, data=details))
        self.close()

    @contextlib.contextmanager
    def failing_closed(
        self,
        details: Callable[[], dict[str, Any]],
        on_failure: Callable[[BaseException], object] = lambda exc: None,
    ) -> Iterator[Run]:
        """The one failure bookkeeping of every run: an exception in the block calls
        `on_failure(exc)`, finishes the run `failed` (the exception's first line, `details()`)
        and goes on up. Ending the run well is the caller's `finish`, with its own state."""
        try:
            yield self
        except BaseException as exc:
            on_failure(exc)
            self.finish("failed", error=first_line(exc), **details())
            raise

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._trace is not None:
            self._trace.close()
            self._trace = None
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_run_folder(run_dir: Path) -> None:
    """Create a run's folder. A state folder that is a file, or a repository fixloop may not
    write to (read-only, a full disk), is one line naming the place, before anything changed."""
    try:
        run_dir.mkdir(parents=True, exist_ok=False)
        return
    except FileExistsError as exc:
        if run_dir.is_dir():  # the same run id twice: a bug, not the user's doing
            raise
        reason = exc.strerror or str(exc)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    for folder in (run_dir.parent.parent, run_dir.parent):  # fixloop/, then fixloop/runs/
        if os.path.lexists(folder) and not folder.is_dir():
            problem = "not a folder; fixloop keeps its runs in it: move it away"
            raise FixloopError(Diagnostic(str(folder), 1, 1, "state", problem))
    problem = f"cannot create a run folder: {reason}"
    raise FixloopError(Diagnostic(str(run_dir.parent), 1, 1, "state", problem))


def first_line(exc: BaseException) -> str:
    """What a run records of the exception that ended it."""
    text = str(exc)
    return text.splitlines()[0] if text.strip() else repr(exc)


def read_run(run_dir: Path) -> dict[str, Any]:
    """`run.json` plus `live`; a `running` run that is not live is reported as `crashed`."""
    info = _run_json(run_dir / "run.json")
    if info is None:
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
    info = _run_json(path)
    if info is None:
        return
    if info.get("state") == "running":
        info["state"] = "crashed"
    info["recovered_at"] = now_iso()
    info["recovery"] = details
    _write_json_atomically(path, info)


def _run_json(path: Path) -> dict[str, Any] | None:
    """A run's `run.json`, or None when it is not one fixloop wrote (not there, not a regular
    file, not UTF-8, not JSON, not an object): such a run is `unreadable`, never an error."""
    try:
        info = load_json(read_text(path))
    except (OSError, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    return info if isinstance(info, dict) else None
