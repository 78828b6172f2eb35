"""The review's inputs, checked before anything runs: the repository, the files, the phase, where
the review goes. Every problem is one FixloopError line (exit 2) and nothing is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.reviews.phases import PHASES_DIR, is_phase_number, padded_phase, phase_directory
from fixloop.steps.paths import check_path
from fixloop.workflows.kernel.options import option, repo_option

ReviewFormat = Literal["review-md", "findings-json"]
OUTPUT_NAMES: dict[str, str] = {"review-md": "REVIEW.md", "findings-json": "FINDINGS.json"}

EPILOG = """\
where the review goes:
  With a phase (`fixloop review 02`, or --phase 02) the file goes into the phase's folder,
  .planning/phases/02-*/: 02-REVIEW.md (review-md) or 02-FINDINGS.json (findings-json). Without
  a phase, --output names it. An existing file is replaced only with --overwrite.

which files:
  The PATHS given (a folder stands for the files git tracks in it); else, with a phase, the
  files its commits touched (`type(02-01): …` subjects); else the files changed in the working
  tree or the index.

then:
  fixloop review-fix .planning/phases/02-auth/02-REVIEW.md
  fixloop fix-findings .planning/phases/02-auth/02-FINDINGS.json   (each finding pre-gated)
"""


@dataclass(frozen=True)
class ReviewOptions:
    epilog: ClassVar[str] = EPILOG  # `fixloop review --help` ends with it

    paths: tuple[str, ...] = option(
        nargs="*",
        default=(),
        metavar="PATH",
        help="files or folders to review; a phase number first (2, 02, 2.1) names the phase",
    )
    repo: Path = repo_option()
    format: ReviewFormat = option(
        "--format",
        choices=("review-md", "findings-json"),
        default="review-md",
        help="review-md: a GSD-format REVIEW.md (review-fix); findings-json: a ReviewOutput "
        "JSON (fix-findings); default: review-md",
    )
    phase: str | None = option(
        "--phase", default=None, metavar="N", help="the phase, when PATHS do not start with it"
    )
    output: Path | None = option(  # default: in the phase's folder
        "--output", type=Path, default=None, metavar="FILE", help="where to write the review"
    )
    overwrite: bool = option(
        "--overwrite", action="store_true", default=False, help="replace an existing file"
    )
    depth: str = option(
        "--depth",
        choices=("quick", "standard", "deep"),
        default="standard",
        help="how closely to read (default: standard)",
    )
    criteria: str = option("--criteria", default="", help="criteria the code must satisfy")


@dataclass(frozen=True)
class ReviewPlan:
    options: ReviewOptions
    repo: Path
    paths: tuple[str, ...]  # what was given, a leading phase number taken off
    phase: str  # padded ("02"), or "" when none
    phase_dir: Path | None
    output: Path
    files: list[str] = field(default_factory=list)  # chosen by `choose-files`


def plan_review(options: ReviewOptions) -> ReviewPlan:
    repo = gitrepo.toplevel(options.repo)
    paths, phase = list(options.paths), options.phase
    if phase is None and paths and is_phase_number(paths[0]) and not _exists(paths[0], repo):
        phase = paths.pop(0)
    if phase is not None and not is_phase_number(phase):
        raise _refuse("--phase", f"{phase!r} is not a phase number like 2, 02 or 2.1")
    padded = padded_phase(phase) if phase is not None else ""
    folder = phase_directory(repo, phase) if phase is not None else None
    if phase is not None and folder is None:
        problem = (
            f"no phase directory {PHASES_DIR}/{padded}-* in {repo}; make one (`mkdir -p "
            f"{PHASES_DIR}/{padded}-NAME`), or review files without a phase: `fixloop review "
            "PATHS --format findings-json --output FILE`"
        )
        raise _refuse(phase, problem)
    output = _output(options, repo, padded, folder)
    return ReviewPlan(options, repo, tuple(paths), padded, folder, output)


def _output(options: ReviewOptions, repo: Path, padded: str, folder: Path | None) -> Path:
    if options.format == "review-md" and not padded:
        raise _refuse(
            "--format",
            "a REVIEW.md needs a phase (review-fix names its commits after it): give a phase "
            f"number (`fixloop review 02`, with a folder {PHASES_DIR}/02-NAME) or --phase; or "
            "write a findings JSON instead: --format findings-json --output FILE",
        )
    if options.output is not None:
        target = options.output if options.output.is_absolute() else Path.cwd() / options.output
    elif folder is not None:
        target = folder / f"{padded}-{OUTPUT_NAMES[options.format]}"
    else:
        raise _refuse("--output", "without a phase, name the file to write with --output")
    shown = display_path(target)
    if options.format == "review-md":  # review-fix takes a REVIEW.md inside the repository only
        try:
            check_path(repo, target.resolve().relative_to(repo).as_posix())
        except (ValueError, FixloopError):
            raise _refuse(shown, f"a REVIEW.md must be inside the repository {repo}") from None
    if (target.exists() or target.is_symlink()) and not options.overwrite:
        raise _refuse(shown, "exists; --overwrite replaces it")
    if not target.parent.is_dir():
        raise _refuse(shown, "its folder does not exist")
    return target


def choose_files(plan: ReviewPlan, phase_files: list[str]) -> list[str]:
    """The files to review: the paths given (folders by their tracked files), else the phase's,
    else the ones changed in the working tree or the index. Deleted files are left out."""
    repo = plan.repo
    if plan.paths:
        chosen: list[str] = []
        for raw in plan.paths:
            given = _given(raw, repo)
            try:
                relative = given.resolve().relative_to(repo).as_posix()
            except ValueError:
                raise _refuse(raw, f"outside the repository {repo}") from None
            clean = check_path(repo, relative) if relative != "." else "."
            if (repo / clean).is_dir():
                chosen += _tracked_under(repo, clean)
            elif (repo / clean).is_file():
                chosen.append(clean)
            else:
                raise _refuse(raw, "no such file or folder")
    elif plan.phase:
        chosen = phase_files
    else:
        changes = gitrepo.changed_paths(repo)
        chosen = sorted(path for path, code in changes.items() if "D" not in code)
    files = list(dict.fromkeys(path for path in chosen if (repo / path).is_file()))
    if not files:
        where = f"phase {plan.phase}'s commits" if plan.phase and not plan.paths else "them"
        raise _refuse(str(plan.repo), f"nothing to review: no existing file in {where}")
    return files


def _tracked_under(repo: Path, folder: str) -> list[str]:
    listing = gitrepo.git_repo(repo).git.ls_files("-z", "--", folder)
    return [path for path in listing.split("\0") if path]


def _given(raw: str, repo: Path) -> Path:
    """A PATH as given: relative to the current folder when that is inside the repository
    (`fixloop review src/a.py` run there), else to the repository (`--repo ../x src/a.py`)."""
    if Path(raw).is_absolute():
        return Path(raw)
    here = Path.cwd().resolve()
    return (here if here.is_relative_to(repo) else repo) / raw


def _exists(raw: str, repo: Path) -> bool:
    return _given(raw, repo).exists()


def _refuse(where: str, problem: str) -> FixloopError:
    return FixloopError(Diagnostic(where, 1, 1, "review", problem))


__all__ = ["OUTPUT_NAMES", "ReviewFormat", "ReviewOptions", "ReviewPlan", "choose_files"]
