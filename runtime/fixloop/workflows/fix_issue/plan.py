"""Fix-issue's inputs, checked before anything is created: bad input changes nothing.

`plan_fix_issue` refuses, with one line naming the file and the problem (exit 2): an issue file
that does not exist, cannot be read or holds no text; a repository that is not one, or that has
staged, unstaged or untracked changes (the issue file itself excepted); a test command that is
empty, cannot be split into words, or whose program is not found; no test command at all where
none can be guessed; a sandbox that cannot be had here (`--sandbox docker` without a daemon, an
image that does not exist, bubblewrap that cannot start).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.config import find_config
from fixloop.gitrepo import changed_paths, head, toplevel
from fixloop.sandboxes import Sandbox, SandboxChoice, open_sandbox
from fixloop.secret_files import SecretFiles
from fixloop.workflows.fix_issue.suite import PresetTest
from fixloop.workflows.kernel.options import option, repo_option

MAX_ATTEMPTS = 3
MAX_TOKENS = 150_000  # the run's input and output tokens, all attempts together
DEFAULT_TEST_TIMEOUT_S = 600.0
PYTEST = ("python3", "-m", "pytest", "-q")
_PYTEST_MARKERS = ("pytest.ini", "conftest.py", "tests", "test")
_ID = re.compile(r"[^A-Za-z0-9._-]+")


class SandboxOpener(Protocol):
    """Opens the sandbox one worktree's commands run in: `fixloop.sandboxes.open_sandbox`, or a
    caller's wrapper of it (a test that records what ran). `writable`: the test runners' report
    folder, outside the worktree."""

    def __call__(
        self,
        kind: str,
        *,
        worktree: Path,
        image: str | None,
        run_id: str | None,
        writable: Sequence[Path] = (),
    ) -> Sandbox: ...


@dataclass(frozen=True)
class HiddenTests:
    """Acceptance tests the fixer never sees (the efficacy harness): files copied over the
    verification worktree, and commands run there besides the preset ones."""

    files: Path | None = None
    commands: tuple[PresetTest, ...] = ()


@dataclass(frozen=True)
class FixIssueOptions:
    issue: Path = option(type=Path, help="the issue, a Markdown or text file")
    repo: Path = repo_option()
    tests: Sequence[str | Sequence[str]] = option(  # a command line, or its words
        "--test",
        action="append",
        default=(),
        metavar="CMD",
        help="a test command, split into words like a shell would but never run by one "
        "(repeat for several; default: python3 -m pytest -q for a pytest project)",
    )
    fail_to_pass: Sequence[str] = option(
        "--fail-to-pass",
        action="append",
        default=(),
        metavar="TEST",
        help="a test that must pass with the patch (a pytest node id or a unittest id; repeat; "
        "default: every test that fails at the base)",
    )
    pass_to_pass: Sequence[str] = option(
        "--pass-to-pass",
        action="append",
        default=(),
        metavar="TEST",
        help="a test that must keep passing (repeat; default: every test that passes at the base)",
    )
    # `--sandbox`/`--image`: the shared arguments; this workflow checks them in its plan
    sandbox: str = "auto"
    image: str | None = None
    max_attempts: int = option(
        "--max-attempts",
        type=int,
        default=MAX_ATTEMPTS,
        metavar="N",
        help=f"fix attempts before giving up (default: {MAX_ATTEMPTS})",
    )
    max_tokens: int = option(
        "--max-tokens",
        type=int,
        default=MAX_TOKENS,
        metavar="N",
        help="run budget: once the fixer's calls have used this many input and output tokens, "
        f"no new attempt starts (default: {MAX_TOKENS:,}; 0: no token budget)",
    )
    keep_worktree: bool = option(
        "--keep-worktree",
        action="store_true",
        default=False,
        help="keep the run's worktree when the issue is not resolved (with fix.patch and "
        "result.json in the run folder); fixloop recover or runs prune removes it later",
    )
    # A preset command is a project's whole suite, not one test the model picked: 600 s, not
    # the 60 s a single test would get, or a real project's suite never finishes once.
    test_timeout_s: float = option(
        "--test-timeout",
        type=float,
        default=DEFAULT_TEST_TIMEOUT_S,
        metavar="SECONDS",
        help="stop a test command that runs longer; its run is a failed test run, never a "
        f"result about the code (default: {DEFAULT_TEST_TIMEOUT_S:.0f})",
    )
    hidden: HiddenTests | None = None
    require_fail_to_pass: bool = False  # a benchmark task: a fail-to-pass test must exist
    issue_id: str = ""  # names the role calls (`issue-fixer/ID/attempt-N`); default: file stem
    open_sandbox: SandboxOpener = open_sandbox


@dataclass(frozen=True)
class FixIssuePlan:
    issue_path: Path
    issue_shown: str
    issue_text: str
    issue_bytes: bytes
    issue_id: str
    repo: Path
    base: str  # HEAD when the run was planned; the run's worktree starts from it
    tests: tuple[PresetTest, ...]
    guessed_tests: bool
    sandbox: SandboxChoice  # what `--sandbox` stands for here, and why
    # The files the tools refuse, from the repository's settings as they were before the run.
    secret_files: SecretFiles = field(default_factory=SecretFiles)


def _refuse(where: str, rule: str, message: str) -> FixloopError:
    return FixloopError(Diagnostic(where, 1, 1, rule, message))


def _read_issue(path: Path) -> tuple[str, bytes]:
    shown = display_path(path)
    if not path.is_file():
        raise _refuse(shown, "issue", "no such issue file")
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        raise _refuse(shown, "issue", exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise _refuse(shown, "issue", "the issue file is not UTF-8 text") from None
    if not text.strip():
        raise _refuse(shown, "issue", "the issue file is empty")
    return text, data


def _words(raw: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(raw, str):
        try:
            words = shlex.split(raw)
        except ValueError as exc:
            raise _refuse("--test", "test-command", f"{raw!r}: {exc}") from None
    else:
        words = [str(word) for word in raw]
    if not words or not words[0]:
        raise _refuse("--test", "test-command", "a test command is empty")
    return tuple(words)


def _found(program: str, repo: Path) -> bool:
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else repo / program
        return path.is_file()
    return shutil.which(program) is not None


def _looks_like_pytest(repo: Path) -> bool:
    if any((repo / marker).exists() for marker in _PYTEST_MARKERS):
        return True
    for config in ("pyproject.toml", "setup.cfg", "tox.ini"):
        path = repo / config
        if path.is_file() and "pytest" in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return any(repo.glob("test_*.py"))


def preset_tests(
    raw: Sequence[str | Sequence[str]], repo: Path, *, check_found: bool
) -> tuple[tuple[PresetTest, ...], bool]:
    """The preset test commands, and whether they were guessed (no `--test` given)."""
    guessed = not raw
    if guessed:
        if not _looks_like_pytest(repo):
            raise _refuse(
                "--test",
                "test-command",
                "no test command: give one with --test CMD (e.g. --test 'make test')",
            )
        raw = [PYTEST]
    commands = tuple(PresetTest(_words(entry)) for entry in raw)
    if check_found:
        for command in commands:
            if not _found(command.argv[0], repo):
                raise _refuse(
                    "--test",
                    "test-command",
                    f"{command.argv[0]!r} (of {command.shown!r}) is not found",
                )
    return commands, guessed


def _check_clean(repo: Path, issue: Path) -> None:
    changes = changed_paths(repo)
    with suppress(ValueError):  # an issue file outside the repository is no change of it
        changes.pop(issue.resolve().relative_to(repo).as_posix(), None)
    if changes:
        first = sorted(changes)[0]
        more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
        raise _refuse(
            display_path(repo),
            "uncommitted-changes",
            f"the repository has uncommitted changes ({first}{more}); commit them or set them "
            "aside first: the patch is made against a commit, and your work is never touched",
        )


def _sandbox_to_be_had(options: FixIssueOptions, repo: Path) -> SandboxChoice:
    """The sandbox asked for, opened once on the repository without running anything: one
    that cannot be had (no Docker daemon, no such image, no bubblewrap) is bad input, found
    before anything is created."""
    with open_sandbox(options.sandbox, worktree=repo, image=options.image) as sandbox:
        return sandbox.choice


def issue_id_of(options: FixIssueOptions) -> str:
    raw = options.issue_id or options.issue.stem
    return _ID.sub("-", raw).strip("-.")[:60] or "issue"


def plan_fix_issue(options: FixIssueOptions) -> FixIssuePlan:
    """Everything the run needs, checked; a FixloopError (exit 2) for bad input.

    A test program is looked up here unless the commands run in a container, whose image has
    programs of its own (a missing one is then found by the first test run, still exit 2)."""
    issue = options.issue if options.issue.is_absolute() else Path.cwd() / options.issue
    text, data = _read_issue(issue)
    if options.max_attempts < 1:
        raise _refuse("--max-attempts", "usage", "at least one attempt is needed")
    if options.max_tokens < 0:
        raise _refuse("--max-tokens", "usage", "a token budget is a number >= 0")
    if not options.test_timeout_s > 0:  # NaN too
        raise _refuse("--test-timeout", "usage", "a test timeout is a number of seconds > 0")
    repo = toplevel(options.repo)
    base = head(repo)  # first: an unborn branch has nothing to compare the tree with
    _check_clean(repo, issue)
    choice = _sandbox_to_be_had(options, repo)
    check_found = choice.kind != "docker"
    tests, guessed = preset_tests(options.tests, repo, check_found=check_found)
    return FixIssuePlan(
        issue_path=issue,
        issue_shown=display_path(issue),
        issue_text=text,
        issue_bytes=data,
        issue_id=issue_id_of(options),
        repo=repo,
        base=base,
        tests=tests,
        guessed_tests=guessed,
        sandbox=choice,
        secret_files=find_config(repo).secret_files,
    )


def describe(plan: FixIssuePlan) -> dict[str, Any]:
    return {
        "issue": plan.issue_shown,
        "issue_id": plan.issue_id,
        "repo": str(plan.repo),
        "base": plan.base,
        "tests": [test.shown for test in plan.tests],
    }


__all__ = [
    "MAX_ATTEMPTS",
    "MAX_TOKENS",
    "FixIssueOptions",
    "FixIssuePlan",
    "HiddenTests",
    "SandboxOpener",
    "describe",
    "issue_id_of",
    "plan_fix_issue",
    "preset_tests",
]
