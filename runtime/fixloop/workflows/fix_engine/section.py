"""Fix-engine's inputs, and the section as its `load-section` step reads it from disk.

The section's files (mini-prd.md, checklist.md, meta.yaml) are read and written by the document's
steps only (`workflows/lib/fix_engine.py`); the runtime sees them through those steps' outputs,
checked here with pydantic, fail closed: an output that does not validate stops the run.

Bad input is decided before anything changes: the mini-PRD path must name a file inside the
repository (`fixloop.steps.paths`), and a `load-section` that exits 2 (a mini-PRD without
acceptance criteria, duplicate ids, a checklist or meta.yaml that does not parse) becomes the one
FixloopError line it reported, naming the file, the line and the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from fixloop import gitrepo
from fixloop.agents.budget import RunBudget
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.runs.state import RunState
from fixloop.steps.paths import check_path
from fixloop.steps.result import StepFailed, StepResult, required_output
from fixloop.workflows.fix_engine import files
from fixloop.workflows.kernel.options import option, positive, repo_option

MAX_ATTEMPTS = files.MAX_ATTEMPTS  # per checklist item (the section files say so)
BAD_INPUT = 2  # the exit code of a step that refused its input
Mode = Literal["start", "resume", "complete"]


@dataclass(frozen=True)
class FixEngineOptions:
    # the section's mini-prd.md (or its folder); relative to the current directory
    mini_prd: Path = option(
        type=Path,
        metavar="MINI-PRD.md",
        help="the section's mini-prd.md (or its folder), inside the repository",
    )
    repo: Path = repo_option()
    resume: bool = option(
        "--resume",
        action="store_true",
        default=False,
        help="continue the stopped run of this section",
    )
    stop_on_escalation: bool = option(
        "--stop-on-escalation",
        action="store_true",
        default=False,
        help="stop at the first item that fails its last attempt; the items after it are not "
        "tried (default: every item is tried)",
    )
    section_attempts: int | None = option(
        "--section-attempts",
        type=positive,
        default=None,
        metavar="N",
        help="at most N executor attempts for the whole section, counted across resumes; once "
        "spent the run stops (default: no section limit, 3 attempts per item)",
    )
    budget: RunBudget | None = None  # once spent, no new agent call starts


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")  # meta.yaml may carry more than the runtime reads


class AttemptRecord(_Record):
    attempt: int
    passed: bool
    verdict: str | None = None
    evidence: str = ""
    executor_status: str = ""
    executor_notes: str = ""
    files: list[str] = Field(default_factory=list)
    put_back: list[str] = Field(default_factory=list)  # changed outside the item, put back


class ItemRecord(_Record):
    """One checklist item as meta.yaml holds it, with its criterion from checklist.md."""

    id: str
    text: str
    status: Literal["pending", "passed", "done", "failed"]
    commit: str = ""
    attempts: list[AttemptRecord] = Field(default_factory=list)

    @property
    def failed_attempts(self) -> int:
        return sum(not attempt.passed for attempt in self.attempts)

    @property
    def next_attempt(self) -> int:
        return max((attempt.attempt for attempt in self.attempts), default=0) + 1

    @property
    def files(self) -> list[str]:
        """Every file an attempt of this item reported, first report first."""
        return list(dict.fromkeys(path for a in self.attempts for path in a.files))

    @property
    def last(self) -> AttemptRecord | None:
        return self.attempts[-1] if self.attempts else None


_ITEMS = TypeAdapter(list[ItemRecord])


class FixEngineState(RunState):
    """The run's own record: which section, so a later `--resume` finds a stopped run of it."""

    workflow: Literal["fix-engine"] = "fix-engine"
    section_id: str = ""
    state_dir: str = ""


@dataclass
class Section:
    """What `load-section` found: the section, its state folder, its items."""

    repo: Path
    mini_prd: str  # repository-relative
    digest: str  # sha256 of the mini-PRD's bytes (the run's input digest)
    id: str
    state: Path
    mode: Mode
    title: str
    items: list[ItemRecord] = field(default_factory=list)

    @property
    def meta(self) -> Path:
        return self.state / "meta.yaml"


def locate_mini_prd(options: FixEngineOptions) -> tuple[Path, str]:
    """The repository root and the mini-PRD's path inside it; a FixloopError (exit 2) otherwise."""
    if not options.repo.is_dir():
        raise FixloopError(Diagnostic(str(options.repo), 1, 1, "repository", "not a directory"))
    repo = gitrepo.toplevel(options.repo)
    given = options.mini_prd if options.mini_prd.is_absolute() else Path.cwd() / options.mini_prd
    if given.is_dir():
        given = given / "mini-prd.md"
    shown = display_path(given)
    try:
        relative = given.resolve().relative_to(repo).as_posix()
        check_path(repo, relative)
    except ValueError:
        problem = f"the mini-PRD must be inside the repository {repo}"
        raise FixloopError(Diagnostic(shown, 1, 1, "mini-prd", problem)) from None
    except FixloopError as exc:
        message = exc.diagnostics[0].message
        raise FixloopError(Diagnostic(shown, 1, 1, "mini-prd", message)) from None
    if not given.is_file():
        raise FixloopError(Diagnostic(shown, 1, 1, "mini-prd", "no such file"))
    return repo, relative


def refused_input(result: StepResult, repo: Path) -> FixloopError | None:
    """The one-line problem of a step that refused its input (exit 2 with PROBLEM), if it did;
    its path (the step's, from the repository root) as the user's current directory sees it."""
    problem = result.outputs.get("PROBLEM")
    if result.exit_code != BAD_INPUT or problem is None:
        return None
    try:
        fields = json.loads(problem)
        diagnostic = Diagnostic(
            display_path(repo / str(fields["path"])),
            int(fields["line"]),
            int(fields["col"]),
            str(fields["rule"]),
            str(fields["message"]),
        )
    except (ValueError, KeyError, TypeError):
        return None
    return FixloopError(diagnostic, exit_code=BAD_INPUT)


def read_items(result: StepResult, name: str) -> list[ItemRecord]:
    """A step's JSON list of items; anything else stops the run (fail closed)."""
    try:
        return _ITEMS.validate_json(required_output(result, name))
    except ValidationError as exc:
        raise StepFailed(result, f"reported unreadable {name}: {exc.errors()[0]['msg']}") from None


def read_item(result: StepResult) -> ItemRecord:
    try:
        return ItemRecord.model_validate_json(required_output(result, "ITEM"))
    except ValidationError as exc:
        raise StepFailed(result, f"reported an unreadable ITEM: {exc.errors()[0]['msg']}") from None


def section_from(result: StepResult, repo: Path, mini_prd: str, digest: str) -> Section:
    mode = required_output(result, "MODE", ("start", "resume", "complete"))
    return Section(
        repo=repo,
        mini_prd=mini_prd,
        digest=digest,
        id=required_output(result, "SECTION_ID"),
        state=Path(required_output(result, "STATE")),
        mode=mode,  # type: ignore[arg-type]  # one of Mode: required_output checked it
        title=result.outputs.get("TITLE", ""),
        items=read_items(result, "ITEMS"),
    )


__all__ = [
    "MAX_ATTEMPTS",
    "AttemptRecord",
    "FixEngineOptions",
    "FixEngineState",
    "ItemRecord",
    "Section",
    "locate_mini_prd",
    "read_item",
    "read_items",
    "refused_input",
    "section_from",
]
