"""The environment every git command fixloop runs on the host gets: nothing an agent wrote runs.

An agent edits files in a tree git also reads its configuration from. Under the local sandbox it
can write `.git/config`, `.git/hooks/`, `.git/info/attributes` or a worktree's `.git` file; under
bwrap and docker those are read-only (see `fixloop.sandboxes.protected`), but a run must not
depend on that alone. So fixloop's own git (the document steps' bash, gitpython's reads,
recovery, cleanup) runs with settings given on its command line — `GIT_CONFIG_COUNT`/`KEY`/
`VALUE`, which outrank every configuration file:

- settings that run a program whatever the repository says: no fsmonitor, no hooks (neither
  `.git/hooks` nor a `core.hooksPath`), `cat` as pager, `true` as editor, no credential helper,
  no transport at all (fixloop never fetches or pushes, so ssh commands and proxies never run),
  no automatic gc or maintenance;
- internal refs never prompt: `tag.gpgSign=false` (the run's tags are lightweight bookmarks);
- program-bearing settings found in the repository's own files (`local` and `worktree` scope,
  includes too): filter, diff and merge drivers, textconv, external diff, signing programs. Each
  gets the value the user's own configuration (system, global) gives the same key, or none —
  so a driver installed globally (git-lfs) keeps working, and one written into `.git/config`
  never runs: git then refuses the file (a required filter, an external diff) instead.

What survives: everything else the user configured — `user.name`/`user.email`, signing
(`commit.gpgSign`, `user.signingKey`, `gpg.format`, with the program the user's global
configuration names), line endings, global attributes.

A worktree's `.git` file is a pointer an agent could aim at a git folder of its own; before git
reads a run's worktree, `pin_gitfile` puts the pointer back to the folder the repository itself
registered for it (the back-pointer in `<common dir>/worktrees/*/gitdir`).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Always given, whatever the repository holds.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("tag.gpgSign", "false"),
    ("tag.forceSignAnnotated", "false"),
)

# Keys whose value is a program, when the repository's own files set them.
_PROGRAM_KEYS = re.compile(
    r"^(?:filter\..+\.(?:clean|smudge|process)"
    r"|diff\..+\.(?:command|textconv)|diff\.external"
    r"|merge\..+\.driver"
    r"|gpg\.program|gpg\.[a-z0-9]+\.program|gpg\.ssh\.defaultkeycommand"
    r"|core\.fsmonitor|core\.hookspath|core\.pager|pager\..+|core\.editor|sequence\.editor"
    r"|core\.sshcommand|core\.gitproxy|core\.askpass|credential\..*helper"
    r"|core\.attributesfile)$"
)
_REPOSITORY_SCOPES = frozenset({"local", "worktree"})
_PROTECTED_SCOPES = frozenset({"system", "global"})

ENVIRONMENT: dict[str, str] = {
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_OPTIONAL_LOCKS": "0",
}
# Inherited variables that would point git somewhere else or run a program.
DROPPED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
)
_COUNTED = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


def _dropped(key: str) -> bool:
    # GIT_CONFIG_GLOBAL / _SYSTEM / _NOSYSTEM are the user's choice of files and stay.
    return key in DROPPED or key == "GIT_CONFIG_COUNT" or key.startswith(_COUNTED)


def _listing(tree: Path) -> list[tuple[str, str, str]]:
    """(scope, key, value) of every setting git reads in `tree`, in the order git reads them."""
    env = {key: value for key, value in os.environ.items() if not _dropped(key)}
    key = (tree, tuple(sorted(env.items())))
    cached = _LISTINGS.get(key)
    if cached is not None and cached.reusable and _read(cached.inputs) == cached.contents:
        return cached.listing
    # What git is about to read is read first: should it change after this, the comparison
    # fails next time, so a listing is never kept with contents older than its own.
    inputs = _inputs(tree, env, cached.origins if cached else ())
    contents = _read(inputs)
    try:
        done = subprocess.run(
            ["git", "config", "--list", "--show-scope", "--show-origin", "-z"],
            cwd=tree,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError:
        return []
    found, origins = [], []
    # scope NUL origin NUL key NL value NUL … (a key given without "=" has no newline and no value)
    words = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    for scope, origin, record in zip(words[0::3], words[1::3], words[2::3], strict=False):
        name, _, value = record.partition("\n")
        if name:
            found.append((scope, name.lower(), value))
            origins.append(origin)
    files = tuple(dict.fromkeys(tree / origin.removeprefix("file:") for origin in origins))
    # Reused only where git read nothing but files among the inputs: no include (whether one
    # applies, `onbranch:`, and what its target holds are not among them), nothing but files.
    reusable = (
        done.returncode == 0
        and bool(inputs)
        and all(origin.startswith("file:") for origin in origins)
        and set(files) <= {path for path, _ in inputs}
        and not any(name.startswith(("include.", "includeif.")) for _, name, _ in found)
    )
    if len(_LISTINGS) >= _LISTINGS_LIMIT:  # a long batch makes trees by the thousand
        _LISTINGS.clear()
    _LISTINGS[key] = _Listing(inputs, contents, found, files, reusable)
    return found


@dataclass(frozen=True)
class _Listing:
    """A tree's listing, with the files it was read from and their bytes just before."""

    inputs: tuple[tuple[Path, str], ...]
    contents: tuple[bytes | bool | None, ...]
    listing: list[tuple[str, str, str]]
    origins: tuple[Path, ...]  # the files the settings came from
    reusable: bool


# This process's listings by tree and environment: `git config --list` is a process for every
# tree of every step (dozens a task); what decides its answer is a few small reads.
_LISTINGS: dict[tuple[Path, tuple[tuple[str, str], ...]], _Listing] = {}
_LISTINGS_LIMIT = 256


# How an input is read (`_read`): whether it is a folder; a file's bytes; a HEAD's.
FOLDER, FILE, HEAD = "folder", "file", "head"
_HEAD_GIT_TAKES = re.compile(rb"(?:ref: refs/[^\n]+|[0-9a-f]{40}|[0-9a-f]{64})\n?")
_A_HEAD = b"<a ref or a commit id>"


def _inputs(
    tree: Path, env: dict[str, str], origins: Iterable[Path]
) -> tuple[tuple[Path, str], ...]:
    """What decides `git config --list` in `tree` when no file includes another, each a path
    and how it is read: as a folder (whether it is one), a file (its bytes) or a HEAD: the
    git folder and common dir the tree's `.git` leads to, whether git takes that folder for a
    repository (HEAD, objects, refs), the repository's config and worktree config, the user's
    and the system's files, and `origins` (where settings came from last time: a system file
    under another prefix). Empty when git would look for the repository above `tree` (no
    `.git`, or a link): the listing is then never reused."""
    dotgit = tree / ".git"
    if dotgit.is_symlink() or not (dotgit.is_dir() or dotgit.is_file()):
        return ()
    gitdir = dotgit
    if not dotgit.is_dir():
        try:
            pointer = dotgit.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ()
        if not pointer.startswith("gitdir: "):
            return ()
        gitdir = tree / pointer.removeprefix("gitdir: ").strip()
    try:
        shared = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        shared = ""
    except (OSError, UnicodeDecodeError):
        return ()
    common = gitdir / shared if shared else gitdir
    home = Path(env.get("HOME", "~"))
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    user = (
        [Path(env["GIT_CONFIG_GLOBAL"])]
        if "GIT_CONFIG_GLOBAL" in env
        else [
            xdg / "git" / "config",
            home / ".gitconfig",
        ]
    )
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        user.append(Path(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")))
    folders = [dotgit, common / "objects", common / "refs"]
    files = [dotgit, gitdir / "commondir", common / "config"]
    # As git names the common config (an origin), `..` taken away.
    files += [Path(os.path.normpath(common / "config")), gitdir / "config.worktree"]
    found = [(path, FOLDER) for path in folders] + [(gitdir / "HEAD", HEAD)]
    found += [(path, FILE) for path in (*files, *user, *origins)]
    return tuple(dict.fromkeys(found))


def _read(inputs: Iterable[tuple[Path, str]]) -> tuple[bytes | bool | None, ...]:
    """Each input's state: a folder's, whether it is one; a file's, its bytes (None: none); a
    HEAD's, its bytes, except that every HEAD git takes reads the same."""
    contents: list[bytes | bool | None] = []
    for path, kind in inputs:
        if kind == FOLDER:
            contents.append(path.is_dir())
            continue
        try:
            data = path.read_bytes()
        except OSError:
            contents.append(None)
            continue
        # A run's worktree HEAD moves with every commit the run makes there, and leaves and
        # takes a branch; git only asks of it that it names a ref or a commit id (whether the
        # folder is a repository), and a listing that could depend on which branch it names
        # (an `onbranch:` include) is never reused.
        contents.append(_A_HEAD if kind == HEAD and _HEAD_GIT_TAKES.fullmatch(data) else data)
    return tuple(contents)


def overrides(trees: Iterable[Path]) -> list[tuple[str, str]]:
    """The `key=value` settings fixloop's git gets for commands touching `trees`."""
    given: dict[str, str] = {}
    # A tree named twice (the step's folder is its worktree) is listed once.
    for tree in dict.fromkeys(tree.absolute() for tree in trees):
        if not tree.is_dir():
            continue
        listing = _listing(tree)
        protected = {key: value for scope, key, value in listing if scope in _PROTECTED_SCOPES}
        for scope, key, _ in listing:
            if scope in _REPOSITORY_SCOPES and _PROGRAM_KEYS.match(key):
                given[key] = protected.get(key, "")
                if key.startswith("filter.") and not key.endswith(".required"):
                    driver = key.rsplit(".", 1)[0]
                    given[f"{driver}.required"] = protected.get(f"{driver}.required", "false")
    given |= {key.lower(): value for key, value in FIXED}
    return sorted(given.items())


def environment(trees: Iterable[Path], base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) made safe for git on `trees`."""
    trees = [Path(tree) for tree in trees]
    for tree in trees:
        pin_gitfile(tree)
    source = dict(os.environ if base is None else base)
    env = {key: value for key, value in source.items() if not _dropped(key)}
    settings = overrides(trees)
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    for index, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env | ENVIRONMENT


# Where run worktrees live, relative to the top of the main working tree; hidden from the user's
# git by this line of the repository's `info/exclude`. The step library's `fixloop_worktrees_dir`
# names the same folder (and writes the exclude line); tests hold the two to agree.
WORKTREES_FOLDER = Path(".fixloop") / "worktrees"
EXCLUDE_LINE = "/.fixloop/"


def run_worktree_folders(common_dir: Path) -> tuple[Path, ...]:
    """The folders that may hold run worktrees of the repository whose git common dir is
    `common_dir`, the current place first: `.fixloop/worktrees` beside a working tree's `.git`
    folder (outside `.git/`, where Claude Code lets a subagent edit), then
    `<common dir>/fixloop/worktrees`, where runs kept them before and where a repository whose git
    folder is not a working tree's `.git` (a submodule, `--separate-git-dir`) still does."""
    legacy = common_dir / "fixloop" / "worktrees"
    if common_dir.name != ".git":
        return (legacy,)
    return (common_dir.parent / WORKTREES_FOLDER, legacy)


def _common_dir_of_run_tree(tree: Path) -> Path | None:
    # From a run worktree's own path: <top>/.fixloop/worktrees/<id>, or
    # <common>/fixloop/worktrees/<id> (the old place; a repository whose git folder is elsewhere).
    if tree.parent.name != WORKTREES_FOLDER.name:
        return None
    holder = tree.parent.parent
    if holder.name == WORKTREES_FOLDER.parent.name:
        return holder.parent / ".git"
    if holder.name == "fixloop":
        return holder.parent
    return None


def registered_gitdir(tree: Path) -> Path | None:
    """The git folder the repository registered for the run worktree `tree`, found from the
    repository's side (`<common>/worktrees/<name>/gitdir` naming `tree/.git`), never from the
    `.git` file in the tree. None for a tree that is not a fixloop run's worktree."""
    tree = tree.resolve()
    common = _common_dir_of_run_tree(tree)
    if common is None or common.is_symlink() or not common.is_dir():
        return None
    admin = common / "worktrees"
    if not admin.is_dir():
        return None
    for candidate in sorted(admin.iterdir()):
        try:
            back = (candidate / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if Path(back) == tree / ".git":
            return candidate
    return None


def pin_gitfile(tree: Path) -> bool:
    """Put a run worktree's `.git` file back to its registered git folder; True if it had been
    changed (or replaced by something else)."""
    gitdir = registered_gitdir(tree)
    if gitdir is None:
        return False
    gitfile = tree / ".git"
    expected = f"gitdir: {gitdir}\n"
    try:
        pointer = not gitfile.is_symlink() and gitfile.is_file()
        if pointer and gitfile.read_text(encoding="utf-8") == expected:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    try:
        if gitfile.is_dir() and not gitfile.is_symlink():
            import shutil

            shutil.rmtree(gitfile)
        else:
            gitfile.unlink(missing_ok=True)
        gitfile.write_text(expected, encoding="utf-8")
    except OSError:
        return False
    return True


def pin_run_worktrees(state_dir: Path) -> list[Path]:
    """`pin_gitfile` for every run worktree of the repository whose state folder is `state_dir`
    (recovery and cleanup reach a worktree through the repository, not by its path); the ones
    that had been changed."""
    pinned = []
    for folder in run_worktree_folders(state_dir.parent):
        if folder.is_dir():
            pinned += [
                tree for tree in sorted(folder.iterdir()) if tree.is_dir() and pin_gitfile(tree)
            ]
    return pinned


__all__ = [
    "DROPPED",
    "ENVIRONMENT",
    "EXCLUDE_LINE",
    "FIXED",
    "WORKTREES_FOLDER",
    "environment",
    "overrides",
    "pin_gitfile",
    "pin_run_worktrees",
    "registered_gitdir",
    "run_worktree_folders",
]
