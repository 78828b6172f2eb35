"""Python-side git reads, all through gitpython, in one place.

Everything that *changes* git lives in a document step (`workflows/git-protocol.md` and each
workflow's own steps): the runtime only decides when a step runs. But the runtime also has to
*look*: where the repository's state folder is, what a fixer really changed, which commits a
killed run left, what the index holds for a file, which branches and worktrees exist. Those reads
are here, answered by gitpython's object model instead of parsing `-z` output by hand, except
`changed_paths`: asked after every agent turn, it is one `git status -z` where gitpython's
answer took three git processes.

gitpython is imported on first use: `fixloop --version` and `fixloop check` never pay for it.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fixloop import hostgit
from fixloop.diagnostics import Diagnostic, FixloopError, display_path

if TYPE_CHECKING:
    import git


def _guarded(repo: git.Repo, tree: Path) -> git.Repo:
    # Every git process gitpython starts for this handle gets fixloop's own settings: nothing
    # the repository's files name (fsmonitor, hooks, drivers) runs (see `fixloop.hostgit`).
    repo.git.update_environment(**hostgit.environment([tree], base={}))
    return repo


def _repo(path: Path) -> git.Repo:
    import git

    hostgit.pin_gitfile(path)
    try:
        return _guarded(git.Repo(path, search_parent_directories=True), path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise FixloopError(
            Diagnostic(str(path), 1, 1, "repository", "not inside a git repository")
        ) from None


def toplevel(path: Path) -> Path:
    """The working tree that holds `path` (a FixloopError outside one, or in a bare repository)."""
    tree = _repo(path).working_tree_dir
    if tree is None:
        raise FixloopError(
            Diagnostic(str(path), 1, 1, "repository", "a bare repository has no working tree")
        )
    return Path(tree).resolve()


def state_dir_of(path: Path) -> Path:
    """`<git common dir>/fixloop`: the state folder every worktree of the repository shares."""
    return _common_dir(path.resolve()) / "fixloop"


@functools.lru_cache(maxsize=64)
def _common_dir(path: Path) -> Path:
    return Path(_repo(path).common_dir).resolve()


def head(tree: Path) -> str:
    """The commit checked out in `tree` (a worktree or the repository); on a branch with no
    commit yet, FixloopError (exit 2) in the protocol preflight's words."""
    from git.refs.symbolic import SymbolicReference

    handle = git_repo(tree)
    try:
        # Read from HEAD and the refs it leads to, as git reads them: `handle.head.commit` would
        # also start an object reader (a git process) only to learn the commit's type.
        return SymbolicReference.dereference_recursive(handle, "HEAD")
    except ValueError:  # gitpython's word for a HEAD that names no commit
        problem = f"branch {handle.head.ref.name} has no commits yet"
        raise FixloopError(Diagnostic(display_path(tree), 1, 1, "repository", problem)) from None


def git_repo(tree: Path) -> git.Repo:
    """The gitpython handle of the worktree at `tree` (no parent search: `tree` is its root)."""
    import git

    hostgit.pin_gitfile(tree)
    try:
        return _guarded(git.Repo(tree), tree)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise FixloopError(
            Diagnostic(str(tree), 1, 1, "repository", "not a git working tree")
        ) from None


# A path in conflict: git status says how each side changed it (both modified, added by one, ...);
# gitpython's index diffs, which this reading replaced, said "MM" for every such path.
_UNMERGED = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})


def changed_paths(tree: Path) -> dict[str, str]:
    """Every path that differs from HEAD in `tree`, tracked or not: path → git's 2-letter status.

    Staged (HEAD → index), unstaged (index → working tree) and untracked paths, renames split
    into their two paths, as `git status --porcelain --no-renames` lists them, with a type change
    (`T`) and an unmerged path's letters said as a modification (`M`): one `git status` process,
    where three git reads (and a handle's object reader) once answered it."""
    hostgit.pin_gitfile(tree)
    argv = ["git", "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all"]
    try:
        done = subprocess.run(
            argv,
            cwd=tree,
            env=hostgit.environment([tree]),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        problem = f"not a git working tree ({exc.strerror or exc})"
        raise FixloopError(Diagnostic(str(tree), 1, 1, "repository", problem)) from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["git status failed"]
        raise FixloopError(Diagnostic(str(tree), 1, 1, "repository", said[-1]))
    found: dict[str, str] = {}
    for record in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if len(record) < 4 or found.get(record[3:]) == "??":
            continue
        letters, path = record[:2], record[3:]
        if letters == "??":
            found[path] = "??"
        elif letters in _UNMERGED:
            found[path] = "MM"
        else:
            found[path] = "".join("M" if letter == "T" else letter for letter in letters)
    return found


def _diff_paths(diff: git.Diff) -> list[tuple[str, str]]:
    if diff.new_file:
        return [(str(diff.b_path), "A")]
    if diff.deleted_file:
        return [(str(diff.a_path), "D")]
    if diff.renamed_file:
        return [(str(diff.a_path), "D"), (str(diff.b_path), "A")]
    return [(str(diff.b_path or diff.a_path), "M")]


def paths_between(tree: Path, start: str, end: str) -> list[str]:
    """The paths two commits differ in (renames as their two paths), sorted."""
    repo = git_repo(tree)
    paths: set[str] = set()
    for diff in repo.commit(start).diff(end):
        paths.update(path for path, _ in _diff_paths(diff))
    return sorted(paths)


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    subject: str
    paths: tuple[str, ...]


def commits_between(tree: Path, base: str, tip: str) -> list[CommitInfo]:
    """The commits in `base..tip`, oldest first, with their subjects and the paths they changed
    (a FixloopError when either end does not exist, say a branch already deleted)."""
    import git

    repo = git_repo(tree)
    found = []
    try:
        listed = list(repo.iter_commits(f"{base}..{tip}"))
    except (git.GitCommandError, git.BadName, ValueError) as exc:
        problem = f"cannot list {base}..{tip}: {str(exc).strip().splitlines()[-1]}"
        raise FixloopError(Diagnostic(str(tree), 1, 1, "repository", problem)) from None
    for commit in reversed(listed):
        message = commit.message if isinstance(commit.message, str) else commit.message.decode()
        parent = commit.parents[0] if commit.parents else None
        diffs = parent.diff(commit) if parent is not None else commit.diff(None)
        paths = sorted({path for diff in diffs for path, _ in _diff_paths(diff)})
        found.append(CommitInfo(commit.hexsha, message.split("\n", 1)[0], tuple(paths)))
    return found


def commit_diff(tree: Path, commit: str) -> str:
    """The patch `commit` introduced (against its first parent), as `git show` prints it."""
    return str(
        git_repo(tree).git.show(commit, format="", patch=True, no_color=True, no_ext_diff=True)
    )


def index_entries(tree: Path, paths: Iterable[str]) -> dict[str, str]:
    """path → "mode blob" of each path's stage-0 index entry (paths not in the index are absent)."""
    entries = git_repo(tree).index.entries
    found: dict[str, str] = {}
    for path in paths:
        entry = entries.get((path, 0))
        if entry is not None:
            found[path] = f"{entry.mode:06o} {entry.hexsha}"
    return found


def refs(tree: Path, prefix: str) -> list[str]:
    """Full names of the refs under `prefix` (e.g. `refs/heads/fixloop/run/`)."""
    repo = _repo(tree)
    return sorted(ref.path for ref in repo.refs if ref.path.startswith(prefix))


def ref_value(tree: Path, ref: str) -> str:
    """The commit `ref` points at ("" when there is no such ref)."""
    import git

    try:
        return str(_repo(tree).git.rev_parse("-q", "--verify", f"{ref}^{{commit}}"))
    except git.GitCommandError:
        return ""


def branch_exists(tree: Path, branch: str) -> bool:
    return f"refs/heads/{branch}" in refs(tree, "refs/heads/")


def worktrees(tree: Path) -> list[Path]:
    """The working trees registered with the repository (its own first)."""
    listing = _repo(tree).git.worktree("list", "--porcelain", "-z")
    prefix = "worktree "
    return [Path(item[len(prefix) :]) for item in listing.split("\0") if item.startswith(prefix)]


def config_value(path: Path, name: str) -> str:
    """`section.key` of a file in `git config` format (a run's sentinel, for one)."""
    import configparser

    import git

    section, _, key = name.rpartition(".")
    try:
        return str(git.GitConfigParser(str(path), read_only=True).get_value(section, key))
    except (OSError, configparser.Error, ValueError) as exc:
        raise FixloopError(
            Diagnostic(str(path), 1, 1, "repository", f"cannot read {name}: {exc}")
        ) from None


def is_ancestor(tree: Path, commit: str, tip: str = "HEAD") -> bool:
    """True when `commit` exists and `tip` contains it (False for an unknown commit)."""
    import git

    repo = _repo(tree)
    try:
        return bool(repo.is_ancestor(repo.commit(commit), repo.commit(tip)))
    except (git.GitCommandError, git.BadName, ValueError):
        return False


def visible_files(tree: Path) -> list[str]:
    """The files of `tree` as git sees them: tracked ones (on disk or not) and untracked ones
    not ignored, sorted (`git ls-files --cached --others --exclude-standard`)."""
    listing = git_repo(tree).git.ls_files("--cached", "--others", "--exclude-standard", "-z")
    return sorted({path for path in listing.split("\0") if path})


def files_at(tree: Path, commit: str) -> list[str]:
    """Every file path of `commit`'s tree."""
    listing = git_repo(tree).git.ls_tree("-r", "-z", "--name-only", commit)
    return [path for path in listing.split("\0") if path]


def patch_paths(tree: Path, patch: Path) -> list[str]:
    """The paths a patch file touches, old and new (`git apply --numstat`: nothing applied)."""
    listing = git_repo(tree).git.apply("--numstat", "-z", "--", str(patch))
    paths: list[str] = []
    for record in listing.split("\0"):
        # "added<TAB>deleted<TAB>path"; a rename leaves the path empty and names both after it
        name = record.split("\t", 2)[-1] if record.count("\t") >= 2 else record
        if name and name not in paths:
            paths.append(name)
    return paths


def unmerged_count(tree: Path, tip: str, base: str) -> int:
    """How many commits `tip` holds that `base` does not."""
    return sum(1 for _ in _repo(tree).iter_commits(f"{base}..{tip}"))


__all__ = [
    "CommitInfo",
    "branch_exists",
    "changed_paths",
    "commit_diff",
    "commits_between",
    "config_value",
    "files_at",
    "git_repo",
    "head",
    "index_entries",
    "is_ancestor",
    "patch_paths",
    "paths_between",
    "ref_value",
    "refs",
    "state_dir_of",
    "toplevel",
    "unmerged_count",
    "visible_files",
    "worktrees",
]
