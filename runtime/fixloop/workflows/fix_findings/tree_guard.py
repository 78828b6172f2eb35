"""What a fixer call changed outside its files, whatever made the change, put back exactly.

A backend refuses file-tool writes outside a call's files (`denied_writes`), but a shell command,
a script or a backend that does not report can still change another file. So around every fixer
call the loop takes a fingerprint of the working tree and the index (document step
`tree-fingerprint`: the `git status --porcelain=v2` entries, and each dirty or untracked path's
kind and blob) and, before the call, keeps the bytes of every dirty or untracked file in the run
folder: the user's unstaged work in another file can then be put back exactly; a clean tracked
file comes back from the index. After the call:

- a path outside the call's files whose status entry, kind or blob differs changed;
- each such path, and no other, gets back its index entry (step `restore-index`), then its bytes
  (kept copy, or step `checkout-from-index` for a file that was clean); a file the fixer created
  is removed only when a second fingerprint still shows it as new (so a file that was merely
  ignored before, say under a `.gitignore` the fixer changed, is kept);
- the second fingerprint must show every restored path as it was before; if not, it is reported;
- the bytes each changed file held are copied aside first (`Stray.displaced`): after a resume,
  "the fixer's change" may be the user's own later work, and nothing is lost either way.

`Stray.changed` are then the call's out-of-scope changes, put back: the workflow makes them a
scope-expansion request (`Denials.unasked`). `Stray.unrestorable` cannot be put back exactly and
are never a request (the attempt fails): HEAD or the branch moved (nothing is put back at all), a
file over the keep limit, a directory or nested repository, a submodule, a conflicted path, a
name git paths cannot carry here (a newline). Such a path is left as the fixer left it.

Not seen: ignored files, empty directories, and anything inside `.git` but the index and HEAD.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from fixloop.diagnostics import FixloopError
from fixloop.steps.paths import check_path
from fixloop.workflows.fix_findings.staging import StagingSteps, parse_status

KEEP_FILE_LIMIT = 16 << 20  # a dirty or untracked file larger than this is hashed, not kept
KEEP_CALL_LIMIT = 256 << 20  # at most this much is kept per call (content seen before is free)
FINGERPRINT = "fingerprint.json"


class PathState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    status: str  # the porcelain v2 record without its path ("?" for an untracked path)
    kind: str = "-"  # f file, x executable file, l symbolic link, d directory, - absent
    blob: str = "-"
    kept: str | None = None  # the kept copy's name in the blob folder
    perms: int | None = None

    def same(self, other: PathState | None) -> bool:
        return other is not None and (self.status, self.kind, self.blob) == (
            other.status,
            other.kind,
            other.blob,
        )

    def _entry(self, mode: int, blob: int) -> str | None:
        fields = self.status.split(" ")
        if fields[0] != "1" or fields[mode] == "000000":
            return None
        return f"{fields[mode]} {fields[blob]}"

    @property
    def head(self) -> str | None:
        return self._entry(3, 6)

    @property
    def index(self) -> str | None:
        return self._entry(4, 7)

    @property
    def odd(self) -> str | None:
        """Why this path cannot be put back exactly, whatever changed, or None."""
        fields = self.status.split(" ")
        if fields[0] == "u":
            return "a conflicted path"
        if fields[0] == "1" and fields[2] != "N...":
            return "a submodule"
        if self.kind == "d":
            return "a directory or nested repository"
        return None


class Fingerprint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    head: str  # "<branch.oid> <branch.head>"
    paths: dict[str, PathState]
    kept_in: str = ""  # the folder of the kept copies (a resumed run reads the killed run's)


@dataclass(frozen=True)
class Stray:
    changed: tuple[str, ...] = ()  # outside the call's files, changed, and put back
    unrestorable: tuple[str, ...] = ()  # "<path>: why it could not be put back"
    displaced: str = ""  # where the changed files' bytes were copied before they were put back

    def notes(self, call: str) -> list[str]:
        kept = f" (as the fixer left it: {self.displaced})" if self.displaced else ""
        put_back = [f"{call}: the fixer changed {p} unasked; put back{kept}" for p in self.changed]
        return put_back + [f"{call}: the fixer changed {p}" for p in self.unrestorable]


class TreeGuard:
    """Fingerprints around fixer calls; `blobs` keeps file bytes for the whole run (by blob)."""

    def __init__(self, steps: StagingSteps, repo: Path, blobs: Path) -> None:
        self.steps = steps
        self.repo = repo
        self.blobs = blobs

    def before(self, round_folder: Path) -> Path:
        """Fingerprint the tree, keep the dirty and untracked files' bytes; the saved file."""
        folder = round_folder / f"tree-{len(list(round_folder.glob('tree-*')))}"
        fingerprint = self._take(folder, keep=True)
        target = folder / FINGERPRINT
        target.write_text(fingerprint.model_dump_json(), encoding="utf-8")
        return target

    def after(self, saved: Path, scope: list[str], into: Path | None = None) -> Stray:
        """Put back every path outside `scope` that changed since the fingerprint in `saved`;
        the files this writes go to `into` (default: beside `saved`)."""
        before = Fingerprint.model_validate_json(saved.read_text(encoding="utf-8"))
        folder = into or saved.parent
        now = self._take(folder / "after", keep=False)
        if now.head != before.head:
            moved = f"HEAD: moved from {before.head} to {now.head}; nothing was put back"
            return Stray(unrestorable=(moved,))
        outside = set(before.paths) | set(now.paths)
        changed = sorted(
            p
            for p in outside - set(scope)
            if not (p in before.paths and before.paths[p].same(now.paths.get(p)))
        )
        return self._restore(before, now, changed, folder) if changed else Stray()

    # -- taking ----------------------------------------------------------------------------

    def _take(self, folder: Path, *, keep: bool) -> Fingerprint:
        folder.mkdir(parents=True, exist_ok=True)
        status, hashes = folder / "status", folder / "hashes"
        self.steps.tree_fingerprint(status, hashes)
        head, records = parse_status(status.read_bytes())
        found: dict[str, tuple[str, str]] = {}
        for record in hashes.read_bytes().split(b"\0"):
            if record:
                kind, blob, path = os.fsdecode(record).split(" ", 2)
                found[path] = (kind, blob)
        paths: dict[str, PathState] = {}
        budget = KEEP_CALL_LIMIT
        for path, line in records.items():
            kind, blob = found.get(path, ("-", "-"))
            state = PathState(status=line, kind=kind, blob=blob)
            if keep and kind in ("f", "x", "l"):
                state, budget = self._keep(path, state, budget)
            paths[path] = state
        return Fingerprint(head=head, paths=paths, kept_in=str(self.blobs) if keep else "")

    def _keep(self, path: str, state: PathState, budget: int) -> tuple[PathState, int]:
        target = self.repo / path
        try:
            info = target.lstat()
            if state.kind == "l":
                data, name = os.fsencode(target.readlink()), f"{state.blob}.link"
            else:
                if info.st_size > min(KEEP_FILE_LIMIT, budget):
                    return state, budget
                data, name = target.read_bytes(), state.blob
                if len(state.blob) == 40 and _git_blob(data) != state.blob:
                    return state, budget  # changing as we read it: not kept, fails closed
        except OSError:
            return state, budget
        self.blobs.mkdir(parents=True, exist_ok=True)
        if not (self.blobs / name).exists():
            (self.blobs / name).write_bytes(data)
        perms = info.st_mode & 0o7777
        return state.model_copy(update={"kept": name, "perms": perms}), budget - len(data)

    # -- putting back ----------------------------------------------------------------------

    def _restore(
        self, before: Fingerprint, now: Fingerprint, changed: list[str], folder: Path
    ) -> Stray:
        plan = _plan(self.repo, before, now, changed)
        # Whatever is there now is copied first: on a resume it may be the user's later work.
        displaced = folder / "displaced"
        for path in changed:
            source = self.repo / path
            if path not in plan.unrestorable and source.is_file() and not source.is_symlink():
                (displaced / path).parent.mkdir(parents=True, exist_ok=True)
                (displaced / path).write_bytes(source.read_bytes())
        if plan.entries:
            kept_entries = {p: e for p, e in plan.entries.items() if e is not None}
            self.steps.restore_index(list(plan.entries), kept_entries)
        if plan.from_index:
            self.steps.checkout_from_index(plan.from_index)
        for path in plan.from_kept:
            _put_back(self.repo / path, before.paths[path], Path(before.kept_in))
        check = self._take(folder / "restored", keep=False)
        unrestorable = plan.unrestorable
        for path in dict.fromkeys([*plan.entries, *plan.from_index, *plan.from_kept]):
            was, back = before.paths.get(path), check.paths.get(path)
            if not (was.same(back) if was is not None else back is None):
                unrestorable[path] = "the fixer changed it and it could not be put back exactly"
        # A "new" path no longer new now was there before, ignored: not the fixer's, kept.
        merely_ignored = set()
        for path in plan.created:
            if path in check.paths and check.paths[path].status == "?":
                (self.repo / path).unlink(missing_ok=True)
            else:
                merely_ignored.add(path)
        put_back = tuple(p for p in changed if p not in unrestorable and p not in merely_ignored)
        gone = tuple(f"{p}: {why}" for p, why in unrestorable.items())
        return Stray(put_back, gone, str(displaced) if displaced.exists() else "")


@dataclass
class _Plan:
    unrestorable: dict[str, str] = field(default_factory=dict)
    entries: dict[str, str | None] = field(default_factory=dict)  # index entry (None: remove)
    from_index: list[str] = field(default_factory=list)  # clean before: back from the index
    from_kept: list[str] = field(default_factory=list)  # dirty or untracked before: kept bytes
    created: list[str] = field(default_factory=list)  # new: removed if still new after the rest


def _plan(repo: Path, before: Fingerprint, now: Fingerprint, changed: list[str]) -> _Plan:
    plan = _Plan()
    for path in changed:
        was, then = before.paths.get(path), now.paths.get(path)
        why = _why_not(repo, path, was, then)
        if why is not None:
            plan.unrestorable[path] = why
            continue
        # A path missing from one status was clean there: its index entry is HEAD's.
        index_then = was.index if was else then.head if then else None
        index_now = then.index if then else was.head if was else None
        if index_then != index_now:
            plan.entries[path] = index_then
        if was is not None:
            plan.from_kept.append(path)
        elif then is not None and then.status == "?":
            plan.created.append(path)
        else:
            plan.from_index.append(path)
    return plan


def _put_back(target: Path, was: PathState, kept_in: Path) -> None:
    if was.kind == "-":
        if target.is_symlink() or target.is_file():
            target.unlink()
        return
    assert was.kept is not None
    data = (kept_in / was.kept).read_bytes()
    if target.is_symlink() or (target.exists() and not target.is_file()):
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if was.kind == "l":
        target.symlink_to(os.fsdecode(data))
        return
    if not target.is_file() or target.read_bytes() != data:
        target.write_bytes(data)
    if was.perms is not None:
        target.chmod(was.perms)


def _why_not(repo: Path, path: str, was: PathState | None, now: PathState | None) -> str | None:
    for state in (was, now):
        if state is not None and state.odd is not None:
            return f"{state.odd}; left as the fixer left it"
    if was is not None and was.kind != "-" and was.kept is None:
        return (
            f"its earlier content was not kept (over {KEEP_FILE_LIMIT >> 20} MiB, or changing "
            "while read); left as the fixer left it"
        )
    try:
        check_path(repo, path)
    except FixloopError as exc:
        return f"{exc.diagnostics[0].message}; left as the fixer left it"
    return None


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
