"""SWE-bench in and out: its instance records imported as a corpus, and predictions written as
its harness reads them.

    fixloop bench efficacy import SWEBENCH.json[l] --repos MIRROR_DIR_OR_URL_BASE --out CORPUS
    fixloop bench efficacy CORPUS --backend claude --predictions preds.jsonl

An instance record (`instance_id`, `repo`, `base_commit`, `problem_statement`, `patch`,
`test_patch`, `FAIL_TO_PASS`, `PASS_TO_PASS`; the last two a list or, as the published dataset
has them, a JSON-encoded list) becomes a task: the repository cloned at `base_commit` (from
`MIRROR/owner__name`, `MIRROR/owner/name` or `MIRROR/name`, with or without `.git`; or
`URL_BASE/owner/name`), the issue, `test_patch` as its hidden tests (`test.patch`), `patch` as its
reference fix (`gold.patch`, what `validate` proves the task with), the test ids as they are, and
every other key under `meta:`. The test ids must be pytest node ids (`FILE::NAME`): the tests run
as `python3 -m pytest -q FILES` (`--test` changes the words before the files), the files the base
has as the commands the agent may run, the files `test_patch` adds at acceptance only (the agent
never sees them; a task with none of the former gets the corpus's command, the whole suite).

A record that is not one is one located line (`FILE:LINE:COL`, the key), exit 2, and nothing is
written. Predictions: one JSON object a line, `instance_id` (the task id: an imported task keeps
its instance id), `model_name_or_path` and `model_patch` (the patch graded, empty when none), for
every task of the run, as SWE-bench's `run_evaluation --predictions_path` takes them.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.extras.efficacy.corpus import COMMIT, TASK_ID, freeze
from fixloop.extras.efficacy.outcome import BenchResult

REQUIRED = (
    "instance_id",
    "repo",
    "base_commit",
    "problem_statement",
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)
DEFAULT_TEST = "python3 -m pytest -q"
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_NEW_FILE = re.compile(r"^--- /dev/null\n\+\+\+ b/(.+)$", re.MULTILINE)
TITLE_CHARS = 100


@dataclass(frozen=True)
class Record:
    """One instance as read: its fields, and where it starts in the file (for messages)."""

    data: Any
    path: Path
    text: str
    start: int
    end: int

    def position(self, key: str | None = None) -> tuple[int, int]:
        offset = self.start
        if key is not None:
            found = self.text.find(json.dumps(key), self.start, self.end)
            offset = found if found >= 0 else offset
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def error(self, key: str | None, message: str) -> FixloopError:
        line, col = self.position(key)
        shown = f"{key}: {message}" if key else message
        name = self.data.get("instance_id") if isinstance(self.data, dict) else None
        if isinstance(name, str) and key != "instance_id":
            shown = f"instance {name}: {shown}"
        return FixloopError(Diagnostic(display_path(self.path), line, col, "swebench", shown))


def _refuse(path: Path, message: str, line: int = 1, col: int = 1) -> FixloopError:
    return FixloopError(Diagnostic(display_path(path), line, col, "swebench", message))


def read_records(path: Path) -> list[Record]:
    """The instance records of a JSON file (a list, or one record) or a JSONL file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(path, getattr(exc, "strerror", None) or str(exc)) from None
    decoder = json.JSONDecoder()
    if path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _refuse(path, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        if isinstance(data, dict):
            return [Record(data, path, text, len(text) - len(text.lstrip()), len(text))]
        if not isinstance(data, list):
            raise _refuse(path, "a list of SWE-bench instance records, or one, is expected")
        records: list[Record] = []
        index = text.index("[") + 1
        while True:
            index += len(text[index:]) - len(text[index:].lstrip())
            if text[index] == "]":
                return records
            item, end = decoder.raw_decode(text, index)
            records.append(Record(item, path, text, index, end))
            index = end + len(text[end:]) - len(text[end:].lstrip())
            index += 1 if text[index] == "," else 0
    records = []
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.strip():
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _refuse(path, f"invalid JSON: {exc.msg}", number, exc.colno) from None
            records.append(Record(item, path, text, offset, offset + len(line)))
        offset += len(line)
    return records


def _test_ids(record: Record, key: str) -> list[str]:
    value = record.data.get(key)
    if isinstance(value, str):  # the published dataset's form: a JSON-encoded list
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise record.error(key, "a list of test ids, or a JSON-encoded one") from None
    if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
        raise record.error(key, "a list of test ids, or a JSON-encoded one")
    for test_id in value:
        if "::" not in test_id or not test_id.split("::", 1)[0].strip():
            raise record.error(key, f"{test_id!r} is not a pytest node id (FILE::NAME)")
    return list(dict.fromkeys(value))


def _checked(record: Record) -> dict[str, Any]:
    data = record.data
    if not isinstance(data, dict):
        raise record.error(None, "a SWE-bench instance record is a JSON object")
    for key in REQUIRED:
        if key not in data:
            raise record.error(None, f"{key}: missing")
    for key in REQUIRED[:6]:
        if not isinstance(data[key], str) or not data[key].strip():
            raise record.error(key, "a non-empty string is expected")
    if not re.match(TASK_ID, data["instance_id"]):
        raise record.error("instance_id", f"{data['instance_id']!r} is not a usable task id")
    if not _REPO.match(data["repo"]):
        raise record.error("repo", f"{data['repo']!r} is not OWNER/NAME")
    if not re.match(COMMIT, data["base_commit"]):
        raise record.error("base_commit", "a full commit id (40 hex digits) is expected")
    fail_to_pass = _test_ids(record, "FAIL_TO_PASS")
    if not fail_to_pass:
        raise record.error("FAIL_TO_PASS", "empty: nothing would show the issue fixed")
    return {**data, "FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": _test_ids(record, "PASS_TO_PASS")}


def _is_url(repos: str) -> bool:
    return "://" in repos or repos.startswith("git@")


def _git_ok(repo: Path, *args: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    return done.returncode == 0


def _repository(record: Record, data: dict[str, Any], repos: str) -> dict[str, str]:
    owner, name = data["repo"].split("/")
    if _is_url(repos):
        return {"url": f"{repos.rstrip('/')}/{owner}/{name}", "commit": data["base_commit"]}
    mirror = Path(repos)
    for folder in (f"{owner}__{name}", f"{owner}/{name}", name):
        for candidate in (mirror / folder, mirror / f"{folder}.git"):
            if candidate.is_dir() and _git_ok(candidate, "rev-parse", "--git-dir"):
                if not _git_ok(candidate, "cat-file", "-e", f"{data['base_commit']}^{{commit}}"):
                    raise record.error("base_commit", f"not in {candidate}")
                return {"path": str(candidate.resolve()), "commit": data["base_commit"]}
    raise record.error("repo", f"no repository for {data['repo']} in {mirror}")


def _files(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(test_id.split("::", 1)[0] for test_id in ids))


def _task(data: dict[str, Any], repository: dict[str, str], options: ImportOptions) -> Any:
    files = _files(data["FAIL_TO_PASS"] + data["PASS_TO_PASS"])
    new = set(_NEW_FILE.findall(data["test_patch"]))
    public = [path for path in files if path not in new]
    hidden = [path for path in files if path in new]
    title = data["problem_statement"].strip().splitlines()[0][:TITLE_CHARS].strip()
    task: dict[str, Any] = {
        "kind": "swebench",
        "title": title or data["instance_id"],
        "repository": repository,
    }
    if public:
        task["tests"] = [[*options.test, *public]]
    if hidden:
        task["acceptance"] = [[*options.test, *hidden]]
    if options.setup:
        task["setup"] = [list(argv) for argv in options.setup]
    if options.image:
        task["image"] = options.image
    task["fail_to_pass"] = data["FAIL_TO_PASS"]
    task["pass_to_pass"] = data["PASS_TO_PASS"]
    others = {key: value for key, value in data.items() if key not in REQUIRED}
    task["meta"] = {"source": "swebench", "repo": data["repo"], **others}
    return task


@dataclass(frozen=True)
class ImportOptions:
    source: Path
    repos: str
    out: Path
    test: tuple[str, ...] = tuple(shlex.split(DEFAULT_TEST))
    setup: tuple[tuple[str, ...], ...] = ()
    image: str | None = None
    name: str = ""


def _dump(path: Path, data: Any) -> None:
    path.write_text(
        yaml.safe_dump(
            data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
        ),
        encoding="utf-8",
    )


def import_instances(options: ImportOptions) -> list[str]:
    """Write the corpus of `options.source`'s instances at `options.out`, frozen; its task ids."""
    if options.out.exists() and any(options.out.iterdir()):
        raise _refuse(options.out, "exists and is not empty; import into a new folder")
    records = read_records(options.source)
    if not records:
        raise _refuse(options.source, "no SWE-bench instance records")
    tasks: dict[str, tuple[dict[str, Any], Any]] = {}
    for record in records:
        data = _checked(record)
        if data["instance_id"] in tasks:
            raise record.error("instance_id", f"{data['instance_id']} is imported twice")
        tasks[data["instance_id"]] = (
            data,
            _task(data, _repository(record, data, options.repos), options),
        )
    for task_id, (data, task) in tasks.items():
        folder = options.out / "tasks" / task_id
        folder.mkdir(parents=True)
        _dump(folder / "task.yaml", task)
        (folder / "issue.md").write_text(data["problem_statement"], encoding="utf-8")
        (folder / "test.patch").write_text(data["test_patch"], encoding="utf-8")
        (folder / "gold.patch").write_text(data["patch"], encoding="utf-8")
    corpus = {
        "name": options.name or options.source.stem,
        "version": 1,
        "description": f"SWE-bench instances imported from {options.source.name}",
        "tests": [list(options.test)],
        "tasks": list(tasks),
    }
    _dump(options.out / "corpus.yaml", corpus)
    freeze(options.out)
    return list(tasks)


def predictions(result: BenchResult, model: str) -> list[dict[str, str]]:
    """SWE-bench's predictions of a run: one per task, its patch (empty when none)."""
    return [
        {"instance_id": o.id, "model_name_or_path": model, "model_patch": o.model_patch}
        for o in result.outcomes
    ]


def write_predictions(result: BenchResult, path: Path, model: str) -> int:
    """`path` as SWE-bench's JSONL predictions of `result`; how many it holds."""
    rows = predictions(result, model)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")
    return len(rows)


__all__ = [
    "DEFAULT_TEST",
    "ImportOptions",
    "Record",
    "import_instances",
    "predictions",
    "read_records",
    "write_predictions",
]
