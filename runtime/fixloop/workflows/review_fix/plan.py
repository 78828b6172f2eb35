"""Review-fix's inputs and its plan: REVIEW.md read and checked before anything changes.

`plan_review_fix` is the whole of "bad input changes nothing": it resolves REVIEW.md inside the
repository, parses it (fences, File lines, severity prefixes), derives the padded phase, and checks
every path a finding names (no `..`, absolute path, `.git/`, or symbolic link out). Each problem is
a FixloopError naming the file, the line and the finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fixloop.agents.budget import RunBudget
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.reviews.model import FixScope, Review
from fixloop.reviews.parser import parse_review, read_review_text
from fixloop.reviews.phases import PHASES_DIR, is_phase_number, padded_phase, phase_directory
from fixloop.steps.paths import check_path
from fixloop.workflows.kernel.scope_policy import ScopePolicy

MAX_ITERATIONS = 3
_PADDED_PHASE = re.compile(r"^[0-9]+(\.[0-9]+)?")


@dataclass(frozen=True)
class ReviewFixOptions:
    review: Path  # REVIEW.md; relative paths are taken from the current directory
    repo: Path
    scope: FixScope = FixScope.CRITICAL_WARNING
    auto: bool = False
    max_iterations: int = MAX_ITERATIONS
    budget: RunBudget | None = None  # once spent, no new agent call starts
    dry_run: bool = False  # parse, plan and preflight; say what would be done; change nothing
    # Who answers a fixer's request for more files: a person (`ask`; nobody at a terminal:
    # deferred), or the policy. Never the review's text.
    on_scope_expansion: ScopePolicy = "ask"


def _review_in_phase_dir(folder: Path) -> Path:
    """A phase directory names its review: the one `*REVIEW.md` in it (never a fix report)."""
    found = sorted(
        path
        for path in folder.glob("*REVIEW.md")
        if path.is_file() and not path.name.endswith("REVIEW-FIX.md")
    )
    if len(found) != 1:
        names = ", ".join(path.name for path in found) or "none"
        problem = f"a phase directory must hold exactly one *REVIEW.md (found: {names})"
        raise FixloopError(Diagnostic(display_path(folder), 1, 1, "review-path", problem))
    return found[0]


def _review_location(options: ReviewFixOptions, repo: Path) -> tuple[Path, str]:
    """REVIEW.md's absolute path and its path inside the repository (refused when outside).

    The review may be named by its file, its phase directory, or (as the GSD commands take it) a
    phase number: `2`, `02` or `2.1` finds `.planning/phases/02-*/` in the repository."""
    given = options.review if options.review.is_absolute() else Path.cwd() / options.review
    if not given.exists() and not given.is_symlink():
        phase = str(options.review)
        found = phase_directory(repo, phase) if is_phase_number(phase) else None
        if found is None:
            problem = "no such file"
            if is_phase_number(phase):
                problem += f", and no phase directory {PHASES_DIR}/{padded_phase(phase)}-*"
            raise FixloopError(Diagnostic(display_path(given), 1, 1, "review-path", problem))
        given = found
    if given.is_dir():
        given = _review_in_phase_dir(given)
    shown = display_path(given)
    try:
        relative = given.resolve().relative_to(repo).as_posix()
    except ValueError:
        raise FixloopError(
            Diagnostic(
                shown, 1, 1, "review-path", f"REVIEW.md must be inside the repository {repo}"
            )
        ) from None
    try:
        check_path(repo, relative)
    except FixloopError as exc:
        message = exc.diagnostics[0].message
        raise FixloopError(Diagnostic(shown, 1, 1, "review-path", message)) from None
    return given, relative


def padded_phase_of(review: Review, shown: str, line: int) -> str:
    match = _PADDED_PHASE.match(review.phase)
    if match is None:
        raise FixloopError(
            Diagnostic(
                shown,
                line,
                1,
                "review-phase",
                f"phase {review.phase!r} does not start with a phase number like 02 or 3.1",
            )
        )
    return match.group(0)


def check_finding_paths(review: Review, repo: Path, shown: str) -> None:
    """Every path a finding names stays inside the repository (`check_path`: symlinks included)."""
    for finding in review.findings:
        for path in finding.files:
            try:
                check_path(repo, path)
            except FixloopError as exc:
                reason = exc.diagnostics[0].message
                raise FixloopError(
                    Diagnostic(
                        shown,
                        finding.heading_line,
                        1,
                        "review-path",
                        f"finding {finding.id}: {reason}",
                    )
                ) from None


def _phase_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("phase:"):
            return number
    return 1


@dataclass(frozen=True)
class ReviewFixPlan:
    """Everything checked before a run may change anything."""

    options: ReviewFixOptions
    repo: Path
    review: Review
    review_rel: str  # REVIEW.md inside the repository
    review_text: bytes  # REVIEW.md as read and parsed
    padded_phase: str

    @property
    def inputs(self) -> dict[str, str]:
        """The review-fix document's inputs, as its steps receive them."""
        return {
            "REVIEW_PATH": self.review_rel,
            "PADDED_PHASE": self.padded_phase,
            "FIX_SCOPE": str(self.options.scope),
            "AUTO": "true" if self.options.auto else "false",
        }


def plan_review_fix(options: ReviewFixOptions) -> ReviewFixPlan:
    """Read and check REVIEW.md completely; raise FixloopError (file:line, finding) on bad input."""
    repo = options.repo.resolve()
    if not repo.is_dir():
        raise FixloopError(Diagnostic(str(options.repo), 1, 1, "repository", "not a directory"))
    review_file, review_rel = _review_location(options, repo)
    shown = display_path(review_file)
    text = read_review_text(review_file)
    review_text = review_file.read_bytes()
    review = parse_review(text, review_file)
    padded_phase = padded_phase_of(review, shown, _phase_line(text))
    check_finding_paths(review, repo, shown)
    return ReviewFixPlan(options, repo, review, review_rel, review_text, padded_phase)
