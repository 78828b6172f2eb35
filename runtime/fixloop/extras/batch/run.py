"""A batch of fix-issue jobs through the efficacy bench's executor (`TaskPool.map`).

Each job is an ordinary fix-issue run in a folder of its own under the batch folder (`OUT/<id>/`):
its repository cloned there at the job's commit (`materialize.clone_at`: the user's repository is
read, never written), its issue beside the clone, and the run's folder in the clone's own
`.git/fixloop/runs/`, so `fixloop runs show latest --repo OUT/<id>/repo` shows it. Next to the
clone, the patch, result.json, the acceptance trace and evidence.json (each test's status at the
base, after the fix, at acceptance) are kept as `bench efficacy --out` keeps a task's.

A job's failure is that job's row (`error`), never the batch's; the run budget (cost, wall
time) covers the whole batch: once it is spent no job starts (`not-run`); the jobs running here
stop at their next model call, as fix-issue does (a job on a Ray cluster runs to its end, and
is charged as it comes back: `settle`).

Before any job is cloned, each job's sandbox is chosen as its run will choose it
(`check_sandboxes`): one that cannot be had here is the batch's one line and exit 2. With
`resume`, the jobs an earlier run of OUT finished keep their rows (`resume.py` says which).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from fixloop import records
from fixloop.agents.backend import Backend, Usage
from fixloop.agents.budget import RunBudget
from fixloop.agents.openai_config import OpenAIFlags
from fixloop.agents.registry import load_backend
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.extras.batch import resume
from fixloop.extras.batch.jobs import Job
from fixloop.extras.efficacy.evidence import keep, record
from fixloop.extras.efficacy.executor import LocalPool, TaskPool
from fixloop.extras.efficacy.materialize import CloneError, clone_at
from fixloop.extras.efficacy.outcome import RESOLVED, TaskOutcome
from fixloop.runs.run import now_iso
from fixloop.sandboxes import choose_sandbox, open_sandbox
from fixloop.workflows.fix_issue import FixIssueOptions, SandboxOpener, run_fix_issue
from fixloop.workflows.fix_issue.plan import MAX_ATTEMPTS, MAX_TOKENS, preset_tests
from fixloop.workflows.fix_issue.suite import summary
from fixloop.workflows.kernel.workflow import Context

KIND = "fix-issue"
REPO = "repo"  # OUT/<id>/repo: the job's clone, holding its run folder
ISSUE = "issue.md"


@dataclass(frozen=True)
class BatchOptions:
    jobs: tuple[Job, ...]
    out: Path  # the batch folder: OUT/<id>/ per job, the summary at its top
    backend: str = "scripted"
    script: Path | None = None  # scripted: one script, its keys naming each job's calls
    openai: OpenAIFlags = field(default_factory=OpenAIFlags)
    sandbox: str = "auto"
    image: str | None = None  # every job's docker image, unless the job names its own
    budget: RunBudget | None = None  # for the whole batch
    max_attempts: int = MAX_ATTEMPTS  # each job's, as fix-issue's --max-attempts
    max_tokens: int = MAX_TOKENS  # each job's token budget, as fix-issue's --max-tokens
    events: EventStream = field(default_factory=EventStream)
    models: Mapping[str, str] = field(default_factory=dict)
    workers: int = 1
    pool: TaskPool | None = None  # default: LocalPool(workers)
    open_sandbox: SandboxOpener = open_sandbox
    jobs_file: Path | None = None  # recorded in OUT/batch.json: what a resume must name again
    resume: bool = False  # skip the jobs an earlier run of this OUT finished (`resume.py`)


@dataclass
class JobOutcome(TaskOutcome):
    """A job's row: the bench's task outcome, with where the job came from and went."""

    line: int = 0  # its line in the jobs file
    repository: str = ""  # as the line names it
    commit: str = ""  # as the line names it (`base` is the commit it stood for)
    folder: str = ""  # OUT/<id>: the clone (repo/), the issue, the patch, the verdict


@dataclass
class BatchResult:
    jobs: str  # the jobs file, as the user named it
    out: Path
    backend: str
    outcomes: list[JobOutcome] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 when every job was resolved; 1 otherwise."""
        return 0 if all(o.status == RESOLVED for o in self.outcomes) else 1

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for outcome in self.outcomes:
            found[outcome.status] = found.get(outcome.status, 0) + 1
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "jobs_file": self.jobs,
            "out": str(self.out),
            "backend": self.backend,
            "totals": {
                "jobs": len(self.outcomes),
                **self.counts(),
                "cost_usd": round(sum(o.cost_usd for o in self.outcomes), 6),
                "wall_s": round(self.wall_s, 3),
            },
            "jobs": [outcome.to_json() for outcome in self.outcomes],
        }


def _say(events: EventStream, job: Job, status: str, message: str, place: tuple[int, int]) -> None:
    index, total = place
    events.emit(
        Event(
            EventKind.ITEM,
            message,
            workflow="batch",
            item=job.id,
            title=job.title,
            status=status,
            data={"index": index, "total": total},
        )
    )


def _row(job: Job, out: Path, status: str = "unresolved", reason: str = "") -> JobOutcome:
    return JobOutcome(
        id=job.id,
        kind=KIND,
        title=job.title,
        status=status,
        reason=reason,
        line=job.line,
        repository=job.repository,
        commit=job.commit,
        folder=str(out / job.id),
    )


def _image(options: BatchOptions, job: Job) -> str | None:
    """The job's image, for docker (auto may choose it); `--sandbox local|bwrap` runs none."""
    if options.sandbox in ("local", "bwrap"):
        return options.image
    return job.image or options.image


def check_sandboxes(options: BatchOptions) -> None:
    """Each job's sandbox, chosen as its run will choose it, before any job is cloned: one that
    cannot be had here (`--sandbox docker` without an image, a daemon or the image; `--sandbox
    bwrap` where bubblewrap cannot start; `--image` beside `local`) is one line and exit 2 for
    the whole batch, as it is for one run, not an error row of every job. A job's own image the
    daemon lacks is shown at the job's line."""
    checked: set[str | None] = set()
    for job in options.jobs:
        image = _image(options, job)
        if image in checked:
            continue
        checked.add(image)
        try:
            choose_sandbox(options.sandbox, image=image)
        except FixloopError as exc:
            if image is None or image != job.image or image == options.image:
                raise
            problems = [
                records.replace(d, path=job.file, line=job.line, rule="image")
                for d in exc.diagnostics
            ]
            raise FixloopError(problems, exc.exit_code) from None


def _commands(job: Job, repo: Path) -> tuple[tuple[str, ...], ...]:
    """What the job's suite runs: its setup, then its tests (fix-issue's guess when it names
    none: with a setup, the guess is made here, on the clone, as fix-issue would)."""
    if not job.setup:
        return job.tests
    tests = job.tests or tuple(t.argv for t in preset_tests((), repo, check_found=False)[0])
    return job.setup + tests


def _fix(options: BatchOptions, pack: Pack, job: Job, backend: Backend) -> JobOutcome:
    folder = options.out / job.id
    repo = folder / REPO
    outcome = _row(job, options.out)
    try:
        outcome.base = clone_at(job.source, job.commit, repo)
    except CloneError as exc:
        outcome.status, outcome.reason = "error", str(exc)
        return outcome
    issue = folder / ISSUE  # beside the clone, never in it
    issue.write_text(job.issue, encoding="utf-8")
    fix = FixIssueOptions(
        issue=issue,
        repo=repo,
        tests=list(_commands(job, repo)),
        fail_to_pass=job.fail_to_pass,
        pass_to_pass=job.pass_to_pass,
        sandbox=options.sandbox,
        image=_image(options, job),
        max_attempts=options.max_attempts,
        max_tokens=options.max_tokens,
        issue_id=job.id,
        open_sandbox=options.open_sandbox,
    )
    context = Context(pack, backend, options.events, budget=options.budget, models=options.models)
    result = run_fix_issue(fix, context)
    acceptance = result.acceptance
    outcome.status, outcome.reason = str(result.status), result.reason
    outcome.run_id, outcome.sandbox = result.run_id, result.sandbox
    outcome.tests_before, outcome.tests_after = (
        summary(result.tests_before),
        summary(result.tests_after),
    )
    outcome.accepted = None if acceptance is None else acceptance.accepted
    outcome.attempts, outcome.turns = len(result.attempts), result.turns
    outcome.tool_calls, outcome.cost_usd = result.tool_calls, result.cost_usd
    patch = Path(result.patch_path) if result.patch_path else None
    record(outcome, acceptance, after_fix=result.tests_after, patch=patch)
    kept = [(Path(p), Path(p).name) for p in (result.result_path, result.patch_path) if p]
    if acceptance is not None and acceptance.folder is not None:
        kept.append((acceptance.folder / "events.jsonl", "acceptance-events.jsonl"))
    keep(options.out, outcome, kept)
    return outcome


def run_job(
    options: BatchOptions, pack: Pack, job: Job, backend: Backend, place: tuple[int, int]
) -> JobOutcome:
    """One job, timed; whatever goes wrong in it is its row, never the batch's."""
    started, started_at = time.monotonic(), now_iso()
    _say(options.events, job, "running", job.title, place)
    try:
        outcome = _fix(options, pack, job, backend)
    except FixloopError as exc:
        outcome = _row(job, options.out, "error", str(exc).splitlines()[0])
    except Exception as exc:  # one job's failure (even a bug of ours) stops no other
        problem = f"internal error: {type(exc).__name__}: {exc}".splitlines()[0]
        outcome = _row(job, options.out, "error", problem)
    outcome.wall_s = time.monotonic() - started
    outcome.started_at, outcome.ended_at = started_at, now_iso()
    keep(options.out, outcome, [])  # evidence.json again, with the times and any error
    _say(options.events, job, outcome.status, f"{outcome.status}: {outcome.reason}", place)
    return outcome


Placed = tuple[int, Job]  # a job and its place in the batch (1-based)


@dataclass
class BatchJob:
    """One job as a pool runs it; it pickles for a pool that sends it to other processes,
    without the batch's event stream and budget, which stay here (`admit`, `settle`), and
    without the backend, which each process loads again from the options."""

    options: BatchOptions
    pack: Pack
    backend: Backend | None = None

    @property
    def total(self) -> int:
        return len(self.options.jobs)

    def __call__(self, placed: Placed) -> JobOutcome:
        index, job = placed
        if self.backend is None:
            self.backend = backend_of(self.options)
        return run_job(self.options, self.pack, job, self.backend, (index, self.total))

    def admit(self, placed: Placed) -> JobOutcome | None:
        """Asked as the job would start: once the batch's budget is spent, none starts."""
        index, job = placed
        spent = self.options.budget.exhausted() if self.options.budget else None
        if spent is None:
            return None
        outcome = _row(job, self.options.out, "not-run", spent.describe())
        _say(
            self.options.events,
            job,
            outcome.status,
            f"not-run: {outcome.reason}",
            (index, self.total),
        )
        return outcome

    def settle(self, placed: Placed, outcome: JobOutcome) -> None:
        """A job that ran in another process: its cost charged to the batch's budget, its end
        said on the batch's event stream."""
        index, job = placed
        if self.options.budget is not None:
            self.options.budget.charge(Usage(cost_usd=outcome.cost_usd))
        message = f"{outcome.status}: {outcome.reason}"
        _say(self.options.events, job, outcome.status, message, (index, self.total))

    def __getstate__(self) -> dict[str, object]:
        away = replace(self.options, events=EventStream(), budget=None, pool=None)
        return {"options": away, "pack": self.pack, "backend": None}


def backend_of(options: BatchOptions) -> Backend:
    """Who plays the issue-fixer in every job: one backend (a script's keys name each job's
    calls, `issue-fixer/<id>/attempt-N`)."""
    return load_backend(
        options.backend, script=options.script, openai=options.openai, where="fix-issue batch"
    )


def _kept(options: BatchOptions) -> dict[str, JobOutcome]:
    """With `resume`, the rows of the jobs an earlier run of OUT finished, by id."""
    if not options.resume:
        return {}
    then = resume.earlier(options.out, options.jobs_file)  # another batch's OUT: exit 2
    names = {f.name for f in fields(JobOutcome)}
    kept: dict[str, JobOutcome] = {}
    for job in options.jobs:
        row = resume.recorded(options.out, job, then)
        if row is not None:
            kept[job.id] = JobOutcome(**{k: v for k, v in row.items() if k in names})
    return kept


def run_batch(options: BatchOptions, pack: Pack, backend: Backend | None = None) -> BatchResult:
    """Every job through the pool, rows in the jobs file's order whatever finished first; with
    `resume`, a job an earlier run finished keeps its row and does not run again."""
    kept = _kept(options)
    check_sandboxes(replace(options, jobs=_to_run(options, kept)))  # exit 2, no clone
    options.out.mkdir(parents=True, exist_ok=True)
    with resume.holding(options.out):  # another batch in OUT: exit 2, nothing touched
        if (now := _kept(options)) != kept:  # the batch that had OUT till now finished more
            kept = now
            check_sandboxes(replace(options, jobs=_to_run(options, kept)))
        return _run(options, pack, backend, kept)


def _to_run(options: BatchOptions, kept: Mapping[str, JobOutcome]) -> tuple[Job, ...]:
    return tuple(job for job in options.jobs if job.id not in kept)


def _run(
    options: BatchOptions,
    pack: Pack,
    backend: Backend | None,
    kept: dict[str, JobOutcome],
) -> BatchResult:
    placed = [(n, job) for n, job in enumerate(options.jobs, 1) if job.id not in kept]
    for _, job in placed if options.resume else ():
        resume.clear(options.out, job)  # a folder left by an unfinished run: cloned afresh
    # Only then the jobs as their lines stand now: no folder left holds an older line's verdict.
    resume.begin(options.out, options.jobs_file, options.jobs)
    total = len(options.jobs)
    for index, job in enumerate(options.jobs, 1):
        if job.id in kept:
            row = kept[job.id]
            message = f"{row.status}: recorded by an earlier run of this batch"
            _say(options.events, job, row.status, message, (index, total))
    result = BatchResult(jobs="", out=options.out, backend=options.backend)
    pool = options.pool or LocalPool(options.workers)
    job_of = BatchJob(options, pack, backend)
    started = time.monotonic()
    outcomes = pool.map(job_of, placed, job_of.admit, job_of.settle) if placed else []
    ran = {outcome.id: outcome for outcome in outcomes}
    result.outcomes = [kept.get(job.id) or ran[job.id] for job in options.jobs]
    result.wall_s = time.monotonic() - started
    return result


__all__ = [
    "BatchJob",
    "BatchOptions",
    "BatchResult",
    "JobOutcome",
    "backend_of",
    "check_sandboxes",
    "run_batch",
    "run_job",
]
