"""The fix-findings document's git steps, called from Python with paths passed as data.

Each method runs one step of `workflows/fix-findings.md` through the step runner: the paths go
to bash as a NUL-separated file named by `FILES_LIST` (checked by `steps.paths`), diffs come back
through files in the run folder, never through shell text. The git commands themselves live only
in the document; this module decides nothing and only reads the results.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixloop import gitrepo
from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.run import Run
from fixloop.steps.caller import Steps
from fixloop.steps.paths import write_paths_file
from fixloop.steps.result import StepResult, required_count, required_output


@dataclass(frozen=True)
class PrestagedDiffs:
    staged: str  # the user's staged hunks in the fixed files (HEAD → index)
    fix: str  # the fix's own edits (index → working tree)

    @property
    def found(self) -> bool:
        return bool(self.staged.strip())


@dataclass(frozen=True)
class StagedSummary:
    stat: str
    added: int
    removed: int


class StagingSteps:
    def __init__(self, workflow: WorkflowDoc, repo: Path, run: Run, scratch: Path) -> None:
        self.workflow = workflow
        self.repo = repo
        self.run = run
        self.scratch = scratch  # a folder outside the repository for lists, diffs and patches
        scratch.mkdir(parents=True, exist_ok=True)

    def _run(self, step: str, files: Sequence[str] | None, **inputs: str) -> StepResult:
        values = dict(inputs)
        if files is not None:  # a step that takes no FILES_LIST gets none
            listing = write_paths_file(self.scratch / "files.list", self.repo, files)
            values["FILES_LIST"] = str(listing)
        return Steps(self.workflow, self.run).must(step, self.repo, **values)

    def prestaged(self, files: Sequence[str]) -> PrestagedDiffs:
        staged, fix = self.scratch / "prestaged.diff", self.scratch / "fix.diff"
        self._run("prestaged-check", files, DIFF_FILE=str(staged), FIX_DIFF_FILE=str(fix))
        return PrestagedDiffs(_read(staged), _read(fix))

    def commit_prestaged(self, files: Sequence[str], message: str) -> str:
        result = self._run("commit-prestaged", files, COMMIT_MESSAGE=message)
        return required_output(result, "COMMIT")

    def set_aside_prestaged(self, files: Sequence[str], ref: str, patch: Path) -> bool:
        """True when the user's staged hunks were set aside; False when they cannot come out
        cleanly, and nothing (no ref, no patch) was created."""
        result = self._run("set-aside-prestaged", files, SAVED_REF=ref, PATCH_FILE=str(patch))
        if required_output(result, "SET_ASIDE", ("yes", "no")) == "no":
            return False
        required_output(result, "SAVED_COMMIT")
        return True

    def stage(self, files: Sequence[str]) -> None:
        self._run("stage", files)

    def undo_fixer_git(self, before: str, branch_ref: str, stash: str) -> None:
        """HEAD back on `branch_ref` at `before`, the stash entries above `stash` put back and
        dropped; index and files otherwise stay."""
        self._run(
            "undo-fixer-commit", None, BEFORE_HEAD=before, HEAD_REF=branch_ref, BEFORE_STASH=stash
        )

    def index_entries(self, files: Sequence[str]) -> dict[str, str]:
        """path → "mode blob" of each file's index entry (files not in the index are absent)."""
        return gitrepo.index_entries(self.repo, files)

    def restore_index(self, files: Sequence[str], entries: dict[str, str]) -> None:
        """Give `files` back the index `entries` ("mode blob" by path); absent → unindexed."""
        target = self.scratch / "restore.entries"
        records = [f"{entries[f]} 0\t{f}" for f in files if f in entries]
        target.write_bytes(b"".join(r.encode("utf-8", "surrogateescape") + b"\0" for r in records))
        self._run("restore-index", files, INDEX_FILE=str(target))

    def tree_fingerprint(self, status: Path, hashes: Path) -> None:
        """`git status --porcelain=v2 -z` into `status`; each listed path's kind and blob into
        `hashes` (see `tree_guard`, which reads both)."""
        self._run("tree-fingerprint", None, STATUS_FILE=str(status), HASH_FILE=str(hashes))

    def checkout_from_index(self, files: Sequence[str]) -> None:
        """Give `files` back the bytes of their index entries (and nothing else)."""
        self._run("checkout-from-index", files)

    def user_work(self, files: Sequence[str]) -> list[str]:
        """The `files` holding the user's changes staging would take in, each with what they
        are: unstaged edits, an untracked file, a conflict (staged hunks alone are not)."""
        target = self.scratch / "user-work.status"
        self._run("user-work-check", files, STATUS_FILE=str(target))
        _, records = parse_status(target.read_bytes())
        target.unlink()
        found = []
        for path, record in records.items():
            kind = record.split(" ", 2)
            if record == "?" or record.endswith(" ?"):
                found.append(f"{path} (untracked)")
            elif kind[0] == "u":
                found.append(f"{path} (conflicted)")
            elif kind[0] == "1" and kind[1][1] != ".":
                found.append(f"{path} (unstaged changes)")
        return sorted(found)

    def staged_diff(self, files: Sequence[str]) -> str:
        target = self.scratch / "staged.diff"
        self._run("staged-diff", files, DIFF_FILE=str(target))
        return _read(target)

    def staged_summary(self, files: Sequence[str]) -> StagedSummary:
        result = self._run("staged-summary", files)
        return StagedSummary(
            required_output(result, "STAT"),
            required_count(result, "ADDED"),
            required_count(result, "REMOVED"),
        )


def parse_status(data: bytes) -> tuple[str, dict[str, str]]:
    """("<oid> <branch>", path → record without its path) from porcelain v2 -z --branch."""
    branch: dict[str, str] = {}
    records: dict[str, str] = {}
    for raw in data.split(b"\0"):
        record = os.fsdecode(raw)
        if record.startswith("# "):
            name, _, value = record[2:].partition(" ")
            branch[name] = value
        elif record.startswith(("1 ", "u ")):
            fields = record.split(" ", 8 if record[0] == "1" else 10)
            records[fields[-1]] = " ".join(fields[:-1])
        elif record.startswith("? "):
            # `git rm --cached` leaves a path both deleted in the index and untracked.
            path = record[2:]
            records[path] = f"{records[path]} ?" if path in records else "?"
        elif record:
            raise ValueError(f"unexpected git status record: {record[:80]!r}")
    return f"{branch.get('branch.oid', '')} {branch.get('branch.head', '')}", records


def _read(path: Path) -> str:
    """A diff a step wrote to the scratch folder, read once and removed: it holds file content
    (which may hold a secret), and what is kept of it is kept masked (`runs.show.save_diff`)."""
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace")
    path.unlink()
    return text
