"""An efficacy corpus: frozen tasks, each an issue, a repository and hidden acceptance tests.

    CORPUS/
      corpus.yaml                 name, version, the test command, the task ids, the digest
      tasks/<id>/task.yaml        kind (off-by-one, regex, ...), title; optional tests, acceptance
      tasks/<id>/issue.md         the issue, as a user would file it
      tasks/<id>/repo/            the repository's files at the commit the issue is about
      tasks/<id>/hidden/          acceptance tests the agent never sees (copied over the checkout)
      tasks/<id>/answer.yaml      the scripted model's answer (what `--backend scripted` plays)

The `digest` in corpus.yaml is a sha256 over every file of every task (path and bytes): a corpus
whose files changed since it was frozen is refused, so two runs that report the same digest ran
the same tasks, and numbers from different agents compare. `fixloop bench efficacy CORPUS
--freeze` writes the digest after a deliberate change.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fixloop.diagnostics import Diagnostic, FixloopError, display_path

CORPUS_FILE = "corpus.yaml"
TASK_ID = r"^[a-z0-9][a-z0-9-]{0,47}$"
_DIGEST_LINE = re.compile(r"^digest:.*$", re.MULTILINE)

Argv = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CorpusSpec(_Strict):
    name: Annotated[str, Field(min_length=1)]
    version: int = 1
    description: str = ""
    tests: list[Argv] = Field(min_length=1)  # the preset commands of every task
    tasks: list[Annotated[str, Field(pattern=TASK_ID)]] = Field(min_length=1)
    digest: str | None = None  # written by --freeze


class TaskSpec(_Strict):
    kind: Annotated[str, Field(min_length=1)]  # the kind of bug: off-by-one, regex, ...
    title: Annotated[str, Field(min_length=1)]
    tests: list[Argv] | None = None  # instead of the corpus's commands
    acceptance: list[Argv] = Field(default_factory=list)  # more commands, run at acceptance only
    # The tests that decide (pytest node ids or unittest ids). Default: fail-to-pass, every test
    # failing at the base (hidden tests in); pass-to-pass, every test passing there.
    fail_to_pass: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    pass_to_pass: list[Annotated[str, Field(min_length=1)]] | None = None


@dataclass(frozen=True)
class Task:
    id: str
    folder: Path
    spec: TaskSpec
    tests: tuple[tuple[str, ...], ...]

    @property
    def issue(self) -> Path:
        return self.folder / "issue.md"

    @property
    def repo(self) -> Path:
        return self.folder / "repo"

    @property
    def hidden(self) -> Path | None:
        folder = self.folder / "hidden"
        return folder if folder.is_dir() else None

    @property
    def answer(self) -> Path:
        return self.folder / "answer.yaml"


@dataclass(frozen=True)
class Corpus:
    root: Path
    spec: CorpusSpec
    tasks: tuple[Task, ...]
    digest: str  # of the files as they are now (equal to spec.digest once checked)

    def select(self, ids: list[str]) -> tuple[Task, ...]:
        known = {task.id: task for task in self.tasks}
        unknown = [task_id for task_id in ids if task_id not in known]
        if unknown:
            raise _refuse(self.root / CORPUS_FILE, f"no task {unknown[0]!r} in this corpus")
        return tuple(known[task_id] for task_id in ids)


def _refuse(path: Path, message: str, line: int = 1) -> FixloopError:
    return FixloopError(Diagnostic(display_path(path), line, 1, "corpus", message))


def _load(path: Path, model: type[_Strict]) -> Any:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _refuse(path, exc.strerror or str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise _refuse(path, f"invalid YAML: {exc}", mark.line + 1 if mark else 1) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise _refuse(path, f"{where}: {first['msg']}") from None


def corpus_digest(root: Path, task_ids: list[str]) -> str:
    """sha256 over every file of the listed tasks: relative path, executable bit and bytes."""
    digest = hashlib.sha256()
    for task_id in task_ids:
        folder = root / "tasks" / task_id
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not _skipped(p)):
            relative = path.relative_to(root).as_posix()
            executable = b"x" if os.access(path, os.X_OK) else b"-"
            digest.update(relative.encode() + b"\0" + executable + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _skipped(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix == ".pyc"


def load_corpus(root: Path, *, check_digest: bool = True) -> Corpus:
    """The corpus at `root`, every task checked; a FixloopError (exit 2) naming what is wrong."""
    spec: CorpusSpec = _load(root / CORPUS_FILE, CorpusSpec)
    tasks: list[Task] = []
    for task_id in spec.tasks:
        folder = root / "tasks" / task_id
        task_spec: TaskSpec = _load(folder / "task.yaml", TaskSpec)
        for needed in ("issue.md", "repo"):
            if not (folder / needed).exists():
                raise _refuse(folder / needed, f"task {task_id}: {needed} is missing")
        tests = task_spec.tests or spec.tests
        tasks.append(Task(task_id, folder, task_spec, tuple(tuple(argv) for argv in tests)))
    digest = corpus_digest(root, spec.tasks)
    if check_digest and spec.digest != digest:
        recorded = spec.digest or "none"
        raise _refuse(
            root / CORPUS_FILE,
            f"the corpus is not frozen as it is: digest {digest}, recorded {recorded}; "
            "after a deliberate change run `fixloop bench efficacy CORPUS --freeze`",
        )
    return Corpus(root, spec, tuple(tasks), digest)


def freeze(root: Path) -> str:
    """Write the corpus's current digest into corpus.yaml; return it."""
    corpus = load_corpus(root, check_digest=False)
    path = root / CORPUS_FILE
    text = path.read_text(encoding="utf-8")
    line = f"digest: {corpus.digest}"
    if _DIGEST_LINE.search(text):
        frozen = _DIGEST_LINE.sub(line, text)
    else:
        frozen = f"{text.rstrip()}\n{line}\n"
    path.write_text(frozen, encoding="utf-8")
    return corpus.digest


__all__ = [
    "CORPUS_FILE",
    "Corpus",
    "CorpusSpec",
    "Task",
    "TaskSpec",
    "corpus_digest",
    "freeze",
    "load_corpus",
]
