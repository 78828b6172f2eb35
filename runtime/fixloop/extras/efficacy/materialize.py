"""A task's repository, made real: cloned at its commit, or its vendored snapshot committed.

- **Cloned** (`repository:` in task.yaml): `git clone --no-checkout --no-hardlinks` of the url or
  the local path, then branch `main` at the commit. Git keeps symbolic links and executable bits
  as the commit has them; the base is the upstream commit itself, so a patch made against it
  (another agent's, SWE-bench's) applies here. No hard links: the tests run in the clone, and a
  mirror's objects are not theirs to reach. Hooks and submodules are not run or fetched.
- **Vendored** (`repo/`): copied with its symbolic links kept as links, then committed with a
  fixed author, committer and date, so the same snapshot gives the same commit id on every
  machine.

Either way a symbolic link that leads out of the repository is refused (the path rule of
`steps.paths`): it would put a host file into the base, and into what the tests read. The hidden
tests of a `test.patch` are made here too: the patch applied to the base in a temporary index of
the clone, its files written out to a folder of their own (`hidden_from_patch`), copied over the
clean checkout at acceptance like a `hidden/` folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.extras.efficacy.corpus import Task
from fixloop.steps.paths import unsafe_reason

AUTHOR = ("fixloop efficacy", "efficacy@fixloop.invalid")
DATE = "2026-01-01T00:00:00+00:00"
CLONE_TIMEOUT_S = 1800.0


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_DATE": DATE,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",  # a private url fails, it does not wait for a password
        **(extra or {}),
    }


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
        cwd=repo,
        env=_environment(env),
        capture_output=True,
        text=True,
        timeout=CLONE_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"git {args[0]} failed"])[-1]
        raise subprocess.CalledProcessError(done.returncode, ["git", *args], done.stdout, last)
    return done.stdout


def _task_error(task: Task, message: str, name: str = "task.yaml") -> FixloopError:
    return FixloopError(
        Diagnostic(display_path(task.folder / name), 1, 1, "corpus", f"task {task.id}: {message}")
    )


def links_out(root: Path) -> list[str]:
    """The symbolic links under `root` (its `.git` aside) that lead out of it, with why."""
    found: list[str] = []
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [name for name in dirs if not (top == str(root) and name == ".git")]
        for name in (*files, *dirs):
            path = Path(top) / name
            if not path.is_symlink():
                continue
            relative = path.relative_to(root).as_posix()
            reason = unsafe_reason(root, relative)
            if reason is not None:
                found.append(f"{relative} -> {path.readlink()}: {reason}")
    return sorted(found)


def _refuse_links_out(task: Task, root: Path, what: str) -> None:
    found = links_out(root)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise _task_error(task, f"{what} holds {found[0]}{more}")


class CloneError(Exception):
    """Why a repository could not be cloned at a revision, in one line."""


def clone_at(source: str, revision: str, target: Path) -> str:
    """`source` (anything `git clone` takes: a url or a local path) cloned at `target`, branch
    `main` at `revision` (a commit id, or a branch or tag of the source); returns the commit.

    Nothing of the source is touched or shared: no hard links, no hooks, no submodules, no
    `ext::` transport, and the clone keeps no remote. A symbolic link leading out of the
    checkout is refused (`CloneError`), like a failed clone or a revision the source lacks."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _git(
            target.parent,
            "-c",
            "protocol.ext.allow=never",
            "clone",
            "--quiet",
            "--no-checkout",
            "--no-hardlinks",
            "--",
            source,
            str(target),
        )
    except subprocess.CalledProcessError as exc:
        raise CloneError(f"cannot clone {source}: {exc.stderr}") from None
    except subprocess.TimeoutExpired:
        raise CloneError(f"cloning {source} took too long") from None
    commit = _commit_of(target, revision)
    if commit is None:
        raise CloneError(f"{source} has no commit {revision}")
    _git(target, "checkout", "--quiet", "-B", "main", commit)
    _git(target, "remote", "remove", "origin")  # the agent's repository names no server
    found = links_out(target)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise CloneError(f"commit {commit[:12]} holds {found[0]}{more}")
    return commit


def _commit_of(clone: Path, revision: str) -> str | None:
    """The commit `revision` names in a fresh clone: itself, or a branch of its source (the
    clone has only the default one locally; the others are `origin/NAME`)."""
    for name in (revision, f"refs/remotes/origin/{revision}"):
        try:
            found = _git(
                clone, "rev-parse", "--verify", "--quiet", "--end-of-options", name + "^{commit}"
            )
        except subprocess.CalledProcessError:
            continue
        return found.strip()
    return None


def _clone(task: Task, target: Path) -> str:
    repository = task.spec.repository
    assert repository is not None
    try:
        return clone_at(task.source(), repository.commit, target)
    except CloneError as exc:
        raise _task_error(task, str(exc)) from None


def _vendored(task: Task, target: Path) -> str:
    shutil.copytree(
        task.repo, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    _refuse_links_out(task, target, "repo/")
    _git(target, "init", "--quiet", "--initial-branch=main")
    _git(target, "add", "--all")
    _git(target, "commit", "--quiet", "--no-verify", "-m", f"{task.id}: {task.spec.title}")
    return _git(target, "rev-parse", "HEAD").strip()


def materialize(task: Task, target: Path) -> str:
    """Build `task`'s repository at `target` (on branch main); return its base commit."""
    if task.spec.repository is None:
        return _vendored(task, target)
    return _clone(task, target)


def hidden_from_patch(task: Task, repo: Path, base: str, target: Path) -> Path:
    """The files `task`'s test.patch adds or changes, as they are with it applied to `base`,
    written under `target` (nothing of `repo`'s worktree or index touched)."""
    patch = task.test_patch
    assert patch is not None
    index = target.parent / f"{target.name}.index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        _git(repo, "read-tree", base, env=env)
        _git(repo, "apply", "--cached", "--binary", "--", str(patch.resolve()), env=env)
        changed = _git(
            repo, "diff", "--cached", "--name-status", "--no-renames", "-z", base, env=env
        ).split("\0")
    except subprocess.CalledProcessError as exc:
        raise _task_error(task, f"test.patch does not apply: {exc.stderr}", "test.patch") from None
    pairs = list(zip(changed[0::2], changed[1::2], strict=False))
    deleted = [path for status, path in pairs if status == "D"]
    if deleted:
        problem = f"test.patch deletes {deleted[0]}; hidden tests can add or change files only"
        raise _task_error(task, problem, "test.patch")
    target.mkdir(parents=True, exist_ok=True)
    paths = [path for status, path in pairs if path]
    if paths:
        prefix = str(target.resolve()) + "/"
        _git(repo, "checkout-index", f"--prefix={prefix}", "--", *paths, env=env)
    index.unlink(missing_ok=True)
    _refuse_links_out(task, target, "test.patch")
    return target


__all__ = ["CloneError", "clone_at", "hidden_from_patch", "links_out", "materialize"]
