"""Resuming a batch (`fix-issue batch --resume`): which jobs an earlier run of the same batch
folder finished, so that only the others run again.

`OUT/batch.json` is written before the first job starts: the jobs file (resolved) and each job's
digest, what the job is (its repository, commit, issue text, tests, setup and image; not its
line number or `meta`). A folder without it, or made for another jobs file, is not resumed (one
line, exit 2): its jobs are not this file's to skip or to run again.

A job is complete when its folder holds the run's verdict and the job's row, and they agree:

- `result.json`, fix-issue's own result, copied there only once the run has ended: a status of
  `resolved`, `rejected` or `unresolved`, for this job's id, and not cut short by the batch's
  shared budget (`stop_reason: run_budget`: that run is owed its chance; a job's own
  `--max-tokens` stopping it is its verdict);
- `evidence.json`, the row, written last (`ended_at` set), with the same id and status;
- and the job's digest is the one `batch.json` recorded for it (its line has not changed since).

Anything else runs again, from a fresh clone, its folder removed first: an `error` row (a clone
that failed, a bug of ours), a job the budget never started (`not-run`, no folder), a run
killed partway (a clone and a run folder, no `result.json`), a job whose line changed.

One batch at a time works in OUT: it holds `OUT/batch.lock` (an flock, let go when its process
dies) from before it reads what an earlier run finished until its last row. A second batch,
fresh or resumed, is refused (one line, exit 2) instead of clearing the folders of jobs the
first is running or has just finished.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fixloop import locks
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.extras.batch.jobs import Job

MARKER = "batch.json"
LOCK = "batch.lock"  # held by the batch working in OUT
RESULT = "result.json"  # the run's verdict, as fix-issue wrote it in its run folder
EVIDENCE = "evidence.json"  # the job's row, written last
VERDICTS = ("resolved", "rejected", "unresolved")  # fix-issue's statuses: a run that ended
CUT_SHORT = "run_budget"  # the batch's shared budget stopped the run: not its verdict


def digest(job: Job) -> str:
    """What the job is, as a hash: a line moved, or its `meta` edited, is the same job."""
    what = {k: v for k, v in asdict(job).items() if k not in ("line", "file", "meta")}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


@contextmanager
def holding(out: Path) -> Iterator[None]:
    """OUT (made) for this batch alone while the block runs; exit 2 when another batch has it."""

    def refused() -> FixloopError:
        problem = "another batch is working in this folder: wait for it to end, or name another"
        return FixloopError(Diagnostic(display_path(out), 1, 1, "out", problem))

    with locks.hold(out / LOCK, wait_s=0, refused=refused):
        yield


def empty(out: Path) -> bool:
    """OUT holds nothing of a batch (no folder, an empty one, or only a lock let go)."""
    return not out.exists() or all(entry.name == LOCK for entry in out.iterdir())


def begin(out: Path, jobs_file: Path | None, jobs: tuple[Job, ...]) -> None:
    """Record the batch in OUT before any job starts (again, on a resume: the lines as now)."""
    marker = {
        "jobs_file": str(jobs_file.resolve()) if jobs_file is not None else "",
        "jobs": {job.id: digest(job) for job in jobs},
    }
    # Paths and hashes only (the issues' text is hashed, never kept): nothing here to mask.
    (out / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def earlier(out: Path, jobs_file: Path | None) -> dict[str, str]:
    """The job digests an earlier run of this batch recorded in OUT ({} for a new or empty
    folder); a FixloopError (exit 2) for a folder holding no batch, or another jobs file's."""
    if not out.exists() or (out.is_dir() and empty(out)):
        return {}
    marker = out / MARKER
    where = display_path(marker)
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        problem = f"holds no batch to resume (no readable {MARKER}): name a new one"
        raise FixloopError(Diagnostic(display_path(out), 1, 1, "out", problem)) from None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, dict) or not all(isinstance(v, str) for v in jobs.values()):
        raise FixloopError(Diagnostic(where, 1, 1, "out", "not a batch's record: name a new one"))
    then = data.get("jobs_file", "")
    now = str(jobs_file.resolve()) if jobs_file is not None else ""
    if then != now:
        problem = f"a batch of {then or 'other jobs'}, not of {now}: resume it with that file"
        raise FixloopError(Diagnostic(where, 1, 1, "out", problem))
    return dict(jobs)


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def recorded(out: Path, job: Job, then: dict[str, str]) -> dict[str, Any] | None:
    """The job's row as the earlier run kept it, when that run is complete (see above); None
    when the job is to run again."""
    if then.get(job.id) != digest(job):
        return None
    folder = out / job.id
    verdict, row = _json(folder / RESULT), _json(folder / EVIDENCE)
    if verdict is None or row is None:
        return None
    status = verdict.get("status")
    if status not in VERDICTS or verdict.get("issue_id") != job.id:
        return None
    if verdict.get("stop_reason") == CUT_SHORT:
        return None
    if row.get("id") != job.id or row.get("status") != status or not row.get("ended_at"):
        return None
    return row


def clear(out: Path, job: Job) -> None:
    """The folder of a job that runs again, gone: its clone is made afresh."""
    folder = out / job.id
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)


__all__ = ["LOCK", "MARKER", "begin", "clear", "digest", "earlier", "empty", "holding", "recorded"]
