"""A batch's jobs file: JSONL, one fix-issue job a line, every line checked before any job runs.

    {"id": "slug-42", "repository": "../shop", "commit": "9f1c2e7", "issue": {"file": "42.md"},
     "tests": {"commands": ["python3 -m pytest -q"], "fail_to_pass": ["tests/test_slug.py::t"]}}
    {"repository": "https://git.example.com/team/api.git", "commit": "main",
     "issue": "GET /users?page=0 answers 500", "tests": ["make test"], "setup": ["make deps"]}

Keys: `repository` (a url, or a local path from the jobs file's folder), `commit` (the base: a
commit id, or a branch or tag of the repository), `issue` (its text, or `{"file": PATH}`) and
`tests` (a list of test commands, or `{"commands", "fail_to_pass", "pass_to_pass"}` as
fix-issue's `--test`, `--fail-to-pass` and `--pass-to-pass` take them; a command is a string,
split like a shell splits it but never run by one, or a list of words); optional `id` (default
`job-LINE`), `setup` (commands run before the tests, each time they run), `image` (the job's
docker image) and `meta` (anything: notes, provenance; nothing reads it).

A bad line is one error, `JOBS.jsonl:LINE:COL: KEY: message`, at the key it is about, and
nothing runs: invalid JSON, a line that is no object, a key twice, an unknown key, a missing
one, a value of the wrong shape, a path that is not there, an id used twice.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.extras.efficacy.corpus import META_HINT, TASK_ID

KEYS = ("id", "repository", "commit", "issue", "tests", "setup", "image", "meta")
REQUIRED = ("repository", "commit", "issue", "tests")
TEST_KEYS = ("commands", "fail_to_pass", "pass_to_pass")
# A commit id, or a branch or tag name: never an option, never a range.
REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,254}$")
_ID = re.compile(TASK_ID)
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCP_URL = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+:")  # git@host:owner/name

Argv = tuple[str, ...]
Place = tuple[str | int, ...]  # a key's place in a line: ("tests", "commands", 0)


@dataclass(frozen=True)
class Job:
    """One checked line: what a fix-issue run of it needs, and where it came from."""

    id: str
    line: int
    repository: str  # as the line gives it
    source: str  # what is cloned: the url, or the path resolved
    commit: str  # the base as the line names it (resolved in the clone)
    issue: str  # the issue's text
    tests: tuple[Argv, ...] = ()  # empty: fix-issue's own guess (pytest for a pytest project)
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    setup: tuple[Argv, ...] = ()
    image: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    file: str = ""  # the jobs file as the user named it: where a problem of the line is shown

    @property
    def title(self) -> str:
        """The issue's first line, as a row names it."""
        first = next((line for line in self.issue.splitlines() if line.strip()), self.id)
        return first.lstrip("# ").strip()[:80]


class _Line:
    """One line of the jobs file, parsed, with the column of each key in it."""

    def __init__(self, shown: str, number: int, text: str) -> None:
        self.shown, self.number, self.text = shown, number, text
        self.columns: dict[Place, int] = {}
        try:
            self.data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.error((), f"invalid JSON: {exc.msg}", "json", exc.colno) from None
        self._walk(0, ())

    def error(
        self, where: Place, message: str, key: str | None = None, col: int | None = None
    ) -> FixloopError:
        """A problem at `where` (its deepest part the line has), named by its dotted key."""
        named = key or ".".join(str(part) for part in where) or "job"
        place = where
        while place and place not in self.columns:
            place = place[:-1]
        column = col if col is not None else self.columns.get(place, self._start())
        return FixloopError(Diagnostic(self.shown, self.number, column, named, message))

    def _start(self) -> int:
        return len(self.text) - len(self.text.lstrip()) + 1

    def _walk(self, index: int, where: Place) -> int:
        """Record where each key and element of the value at `index` starts; its end. The
        text is valid JSON already (json.loads read it), so only positions are read here."""
        index = _WHITESPACE.match(self.text, index).end()  # type: ignore[union-attr]
        opening = self.text[index]
        if opening not in "{[":
            return json.JSONDecoder().raw_decode(self.text, index)[1]
        closing, count = ("}" if opening == "{" else "]"), 0
        index += 1
        while True:
            index = _WHITESPACE.match(self.text, index).end()  # type: ignore[union-attr]
            if self.text[index] == closing:
                return index + 1
            if self.text[index] == ",":
                index = _WHITESPACE.match(self.text, index + 1).end()  # type: ignore[union-attr]
            part: str | int = count
            if opening == "{":
                part, end = json.decoder.scanstring(self.text, index + 1)  # type: ignore[attr-defined]
                if (*where, part) in self.columns:  # json.loads keeps the last one, silently
                    raise self.error(
                        (), "this key is given twice", _dotted((*where, part)), index + 1
                    )
                self.columns[(*where, part)] = index + 1
                index = self.text.index(":", end) + 1
            else:
                self.columns[(*where, part)] = index + 1
            index = self._walk(index, (*where, part))
            count += 1


def _dotted(where: Place) -> str:
    return ".".join(str(part) for part in where)


def _command(line: _Line, value: Any, where: Place) -> Argv:
    if isinstance(value, str):
        try:
            words = tuple(shlex.split(value))
        except ValueError as exc:
            raise line.error(where, f"{value!r}: {exc}") from None
    elif isinstance(value, list) and all(isinstance(word, str) and word for word in value):
        words = tuple(value)
    else:
        raise line.error(where, "a command is a string or a list of words")
    if not words:
        raise line.error(where, "the command is empty")
    return words


def _commands(line: _Line, value: Any, where: Place) -> tuple[Argv, ...]:
    if not isinstance(value, list):
        raise line.error(where, "a list of commands is expected")
    return tuple(_command(line, item, (*where, n)) for n, item in enumerate(value))


def _test_ids(line: _Line, value: Any, where: Place) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(i, str) and i.strip() for i in value):
        raise line.error(where, "a list of test ids (pytest node ids or unittest ids) is expected")
    return tuple(dict.fromkeys(value))


def _tests(line: _Line, value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        return {"tests": _commands(line, value, ("tests",))}
    if not isinstance(value, dict):
        raise line.error(
            ("tests",),
            "a list of test commands, or an object of commands, fail_to_pass, pass_to_pass",
        )
    unknown = [key for key in value if key not in TEST_KEYS]
    if unknown:
        raise line.error(
            ("tests", unknown[0]), "unknown key; commands, fail_to_pass or pass_to_pass"
        )
    return {
        "tests": _commands(line, value.get("commands", []), ("tests", "commands")),
        "fail_to_pass": _test_ids(line, value.get("fail_to_pass", []), ("tests", "fail_to_pass")),
        "pass_to_pass": _test_ids(line, value.get("pass_to_pass", []), ("tests", "pass_to_pass")),
    }


def _text_file(line: _Line, path: Path, where: Place) -> str:
    if not path.is_file():
        raise line.error(where, f"no such file: {display_path(path)}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise line.error(where, exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise line.error(where, f"{display_path(path)} is not UTF-8 text") from None
    if not text.strip():
        raise line.error(where, f"{display_path(path)} is empty")
    return text


def _issue(line: _Line, value: Any, folder: Path) -> str:
    if isinstance(value, dict):
        unknown = [key for key in value if key != "file"]
        if unknown or not isinstance(value.get("file"), str) or not value["file"]:
            where = ("issue", unknown[0]) if unknown else ("issue",)
            raise line.error(where, 'the issue\'s text, or {"file": PATH}')
        return _text_file(line, folder / value["file"], ("issue", "file"))
    if not isinstance(value, str) or not value.strip():
        raise line.error(("issue",), 'the issue\'s text, or {"file": PATH}')
    if "\n" not in value and " " not in value.strip() and (folder / value.strip()).is_file():
        # A path given as text would be fixed as an issue saying only its name.
        problem = f'names a file; write {{"file": {json.dumps(value.strip())}}} to read it'
        raise line.error(("issue",), problem)
    return value


def is_url(repository: str) -> bool:
    return "://" in repository or repository.startswith("file:") or bool(_SCP_URL.match(repository))


def _source(line: _Line, value: Any, folder: Path, out: Path | None) -> str:
    if not isinstance(value, str) or not value.strip() or value.startswith("-"):
        raise line.error(("repository",), "a url, or the path of a local repository")
    if is_url(value):
        return value
    path = (folder / value).resolve()
    if not path.is_dir():
        raise line.error(("repository",), f"no such directory: {display_path(path)}")
    known = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True, check=False
    )
    if known.returncode != 0:
        raise line.error(("repository",), f"{display_path(path)} is not a git repository")
    if out is not None and out.resolve().is_relative_to(path):
        # The jobs' clones would be files of the user's repository, in its `git status`.
        raise line.error(("repository",), "the batch folder (--out) is inside this repository")
    return str(path)


def _job(line: _Line, folder: Path, out: Path | None) -> Job:
    data = line.data
    if not isinstance(data, dict):
        raise line.error((), "a job is a JSON object", "job")
    unknown = [key for key in data if key not in KEYS]
    if unknown:
        raise line.error((unknown[0],), META_HINT)
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise line.error((), "missing", missing[0])
    job_id = data.get("id", f"job-{line.number}")
    if not isinstance(job_id, str) or not _ID.match(job_id):
        raise line.error(
            ("id",), "letters, digits, '.', '_' and '-', starting with one of the first two"
        )
    commit = data["commit"]
    if not isinstance(commit, str) or not REVISION.match(commit) or ".." in commit:
        raise line.error(("commit",), "a commit id, or a branch or tag name of the repository")
    image = data.get("image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise line.error(("image",), "a docker image name is expected")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise line.error(("meta",), "an object is expected")
    return Job(
        id=job_id,
        line=line.number,
        repository=data["repository"] if isinstance(data["repository"], str) else "",
        source=_source(line, data["repository"], folder, out),
        commit=commit,
        issue=_issue(line, data["issue"], folder),
        setup=_commands(line, data.get("setup", []), ("setup",)),
        image=image,
        meta=meta,
        file=line.shown,
        **_tests(line, data["tests"]),
    )


def load_jobs(path: Path, *, out: Path | None = None) -> list[Job]:
    """Every job of the file, checked; a FixloopError (exit 2) at the first bad line. `out`:
    the batch folder, which no local repository of a job may hold."""
    shown = display_path(path)

    def refuse(message: str, line: int = 1, col: int = 1, key: str = "jobs") -> FixloopError:
        return FixloopError(Diagnostic(shown, line, col, key, message))

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise refuse(exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text") from None
    jobs: list[Job] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        line = _Line(shown, number, raw)
        job = _job(line, path.parent, out)
        if job.id in seen:
            problem = f"{job.id!r} is line {seen[job.id]}'s id too; each job needs its own"
            raise line.error(("id",), problem) if "id" in line.data else refuse(problem, number)
        seen[job.id] = number
        jobs.append(job)
    if not jobs:
        raise refuse("no jobs: one JSON object a line is expected")
    return jobs


__all__ = ["KEYS", "Job", "is_url", "load_jobs"]
