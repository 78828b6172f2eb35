"""An efficacy corpus: frozen tasks, each an issue, a repository and hidden acceptance tests.

    CORPUS/
      corpus.yaml                 name, version, the test command, the task ids, the digest
      tasks/<id>/task.yaml        kind, title; the repository (url or path, and commit), tests,
                                  setup, image, fail-to-pass and pass-to-pass ids; meta: anything
      tasks/<id>/issue.md         the issue, as a user would file it
      tasks/<id>/repo/            or a vendored snapshot of the repository, instead of repository:
      tasks/<id>/hidden/          acceptance tests the agent never sees (copied over the checkout)
      tasks/<id>/test.patch       or as a patch (SWE-bench's test_patch), applied the same way
      tasks/<id>/gold.patch       the reference fix `validate` proves the task with (optional)
      tasks/<id>/answer.yaml      the scripted model's answer (what `--backend scripted` plays)

The `digest` in corpus.yaml is a sha256 over what a run uses: each task's settings as resolved
(the commit, the test and setup commands, the image, the test ids; not `meta:`, not where the
repository is found, since the commit names its content) and every other file of the task (path,
executable bit, bytes; a symbolic link by its target). A corpus that changed since it was frozen
is refused, so two runs that report the same digest ran the same tasks, and numbers from
different agents compare. `fixloop bench efficacy CORPUS --freeze` writes the digest after a
deliberate change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.located_yaml import LocatedYaml, load_located

CORPUS_FILE = "corpus.yaml"
# A folder and file name on every system (no `/`, never `.` or `..`); SWE-bench's instance ids
# (`owner__name-1234`) are task ids as they are, so predictions name the instance.
TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
COMMIT = r"^[0-9a-f]{40}$"
_DIGEST_LINE = re.compile(r"^digest:.*$", re.MULTILINE)
META_HINT = "unknown key; notes and provenance go under meta:"

Argv = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
TestId = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CorpusSpec(_Strict):
    name: Annotated[str, Field(min_length=1)]
    version: int = 1
    description: str = ""
    tests: list[Argv] = Field(min_length=1)  # the preset commands of every task
    tasks: list[Annotated[str, Field(pattern=TASK_ID)]] = Field(min_length=1)
    digest: str | None = None  # written by --freeze
    meta: dict[str, Any] = Field(default_factory=dict)  # the corpus author's; no run reads it


class Repository(_Strict):
    """Where a task's repository comes from: cloned with git at `commit`, never vendored."""

    url: Annotated[str, Field(min_length=1)] | None = None  # anything `git clone` takes
    path: Annotated[str, Field(min_length=1)] | None = None  # absolute, or from the corpus
    # A full commit id, not a branch: the digest names the repository's content by it.
    commit: Annotated[str, Field(pattern=COMMIT)]

    @model_validator(mode="after")
    def _one_source(self) -> Repository:
        if (self.url is None) == (self.path is None):
            raise ValueError("name the repository by url or by path, one of them")
        return self


class TaskSpec(_Strict):
    kind: Annotated[str, Field(min_length=1)]  # the kind of bug: off-by-one, regex, ...
    title: Annotated[str, Field(min_length=1)]
    repository: Repository | None = None  # instead of a vendored repo/ folder
    tests: list[Argv] | None = None  # instead of the corpus's commands
    acceptance: list[Argv] = Field(default_factory=list)  # more commands, run at acceptance only
    # Run in the sandbox before the tests, each time they run (`pip install -e .`, a build):
    # commands of the suite, graded by their exit code, so a failing setup fails the verdict.
    setup: list[Argv] = Field(default_factory=list)
    image: Annotated[str, Field(min_length=1)] | None = None  # the docker image of this task
    # The tests that decide (pytest node ids or unittest ids). Default: fail-to-pass, every test
    # failing at the base (hidden tests in); pass-to-pass, every test passing there.
    fail_to_pass: list[TestId] = Field(default_factory=list)
    pass_to_pass: list[TestId] | None = None
    meta: dict[str, Any] = Field(default_factory=dict)  # provenance, notes: no run reads it


@dataclass(frozen=True)
class Task:
    id: str
    folder: Path
    spec: TaskSpec
    tests: tuple[tuple[str, ...], ...]
    root: Path = Path()  # the corpus folder (a repository's relative path starts there)

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
    def test_patch(self) -> Path | None:
        path = self.folder / "test.patch"
        return path if path.is_file() else None

    @property
    def gold(self) -> Path | None:
        path = self.folder / "gold.patch"
        return path if path.is_file() else None

    @property
    def answer(self) -> Path:
        return self.folder / "answer.yaml"

    @property
    def commands(self) -> tuple[tuple[str, ...], ...]:
        """What the suite runs, in order: the setup, then the tests."""
        return tuple(tuple(argv) for argv in self.spec.setup) + self.tests

    def source(self) -> str:
        """The repository to clone: its url, or its path (a relative one from the corpus)."""
        repository = self.spec.repository
        assert repository is not None
        if repository.url is not None:
            return repository.url
        assert repository.path is not None
        return str((self.root / repository.path).resolve())

    def run_inputs(self) -> dict[str, Any]:
        """What a run of this task uses, as the digest covers it."""
        data = self.spec.model_dump(mode="json", exclude={"meta", "repository", "tests"})
        repository = self.spec.repository
        data["commit"] = repository.commit if repository is not None else None
        data["tests"] = [list(argv) for argv in self.tests]
        return data


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


def _refuse(path: Path, message: str, line: int = 1, col: int = 1) -> FixloopError:
    return FixloopError(Diagnostic(display_path(path), line, col, "corpus", message))


def _where(located: LocatedYaml, loc: tuple[int | str, ...]) -> tuple[int, int]:
    """The line and column of the deepest key of `loc` the file has (its parents', else 1:1)."""
    path = tuple(loc)
    while path:
        if path in located.key_lines:
            return located.key_lines[path], located.key_columns.get(path, 1)
        path = path[:-1]
    return 1, 1


def _load(path: Path, model: type[_Strict]) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _refuse(path, exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise _refuse(path, "not UTF-8 text") from None
    located = load_located(text, display=display_path(path), rule="corpus")
    try:
        return model.model_validate(located.data)
    except ValidationError as exc:
        errors = exc.errors()
        # An unknown key first: a misspelt one is also why its right spelling is "missing".
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = tuple(part for part in first["loc"] if isinstance(part, (int, str)))
        where = ".".join(str(part) for part in loc) or "(top level)"
        message = META_HINT if first["type"] == "extra_forbidden" else first["msg"]
        line, col = _where(located, loc)
        raise _refuse(path, f"{where}: {message}", line, col) from None


def _walk(folder: Path) -> list[Path]:
    """Every file and symbolic link under `folder`, sorted; a link to a folder is not entered."""
    found: list[Path] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        base = Path(top)
        found += [base / name for name in files]
        found += [base / name for name in dirs if (base / name).is_symlink()]
    return sorted(path for path in found if not _skipped(path))


def _digest_task(digest: Any, root: Path, task: Task) -> None:
    inputs = json.dumps(task.run_inputs(), sort_keys=True, separators=(",", ":"))
    digest.update(f"task\0{task.id}\0{inputs}\0".encode())
    for path in _walk(task.folder):
        relative = path.relative_to(root).as_posix()
        if path.parent == task.folder and path.name == "task.yaml":
            continue  # its settings are in the inputs above; comments and meta: are not
        if path.is_symlink():
            kind, data = b"l", str(path.readlink()).encode()
        else:
            kind, data = (b"x" if os.access(path, os.X_OK) else b"-"), path.read_bytes()
        digest.update(relative.encode() + b"\0" + kind + data + b"\0")


def corpus_digest(root: Path, tasks: tuple[Task, ...]) -> str:
    """sha256 over what a run of the tasks uses (see the module docstring)."""
    digest = hashlib.sha256()
    for task in tasks:
        _digest_task(digest, root, task)
    return "sha256:" + digest.hexdigest()


def _skipped(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix == ".pyc"


def _task(root: Path, spec: CorpusSpec, task_id: str) -> Task:
    folder = root / "tasks" / task_id
    task_spec: TaskSpec = _load(folder / "task.yaml", TaskSpec)
    if not (folder / "issue.md").is_file():
        raise _refuse(folder / "issue.md", f"task {task_id}: issue.md is missing")
    vendored = (folder / "repo").exists()
    if vendored == (task_spec.repository is not None):
        problem = "has both" if vendored else "has neither"
        raise _refuse(
            folder / "task.yaml",
            f"task {task_id} {problem} a repo/ folder and a repository: key; name exactly one",
        )
    if (folder / "hidden").exists() and (folder / "test.patch").exists():
        raise _refuse(
            folder / "test.patch", f"task {task_id}: hidden tests as a folder or a patch, not both"
        )
    tests = task_spec.tests or spec.tests
    return Task(task_id, folder, task_spec, tuple(tuple(argv) for argv in tests), root)


def load_corpus(root: Path, *, check_digest: bool = True) -> Corpus:
    """The corpus at `root`, every task checked; a FixloopError (exit 2) naming what is wrong."""
    spec: CorpusSpec = _load(root / CORPUS_FILE, CorpusSpec)
    tasks = tuple(_task(root, spec, task_id) for task_id in spec.tasks)
    digest = corpus_digest(root, tasks)
    if check_digest and spec.digest != digest:
        recorded = spec.digest or "none"
        raise _refuse(
            root / CORPUS_FILE,
            f"the corpus is not frozen as it is: digest {digest}, recorded {recorded}; "
            "after a deliberate change run `fixloop bench efficacy CORPUS --freeze`",
        )
    return Corpus(root, spec, tasks, digest)


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
    "Repository",
    "Task",
    "TaskSpec",
    "corpus_digest",
    "freeze",
    "load_corpus",
]
