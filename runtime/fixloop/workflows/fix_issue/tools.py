"""The issue-fixer's tools: locate, read, edit, create and test; `parts` add the patch preview
(`diff_tool.py`) and, under docker, the model's own test image (`environment.py`).

The only way the role changes the worktree is `edit_file` (a unique, exact replacement in a file
whose version it names) and `create_file` (a file that does not exist yet). The claude backend
serves these as an MCP server and refuses its own Edit, Write and Bash; the scripted backend
plays them from a script. Every call is checked and answered, never raised:

- paths go through the one path check (`steps.paths`): no absolute path, `..`, `.git`, or
  symbolic link on the way out of the worktree;
- a file with more than one name (a hard link, perhaps to a file outside the worktree) is
  refused by every tool that reads or writes it (`hard_link`) and left out of `search_code`;
- environment and credential files (`.env*`, private keys, `.netrc`, `.npmrc`, …; the project
  setting `secret-files`, see `fixloop.secret_files`), and links to them, are refused by
  `read_file`, `edit_file` and `create_file` (`secret_file`) and left out of `search_code`;
- `edit_file` is refused, with a code the model can act on, when the file changed since the
  version it names (`stale_version`), when `old` is missing (`no_match`) or found more than once
  (`ambiguous_match`), when `old` equals `new` (`no_change`), or when the result is too large;
- `run_tests` runs the preset commands only (`suite.py`), in the sandbox, and says which
  revision each result holds for.

Calls run one at a time (a model may send several at once). Each emits a `tool` event with the
arguments summarised, not copied (file contents stay out of the trace).
"""

from __future__ import annotations

import fnmatch
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fixloop.agents.toolbox import WRITING_TOOLS, ToolReply, ToolSpec
from fixloop.events import Event, EventKind
from fixloop.gitrepo import visible_files
from fixloop.secret_files import SecretFiles
from fixloop.steps.paths import check_path, hard_link_problem, path_problem
from fixloop.workflows.fix_issue.suite import RunStatus, Suite, all_passed
from fixloop.workflows.fix_issue.versions import MAX_FILE_BYTES, file_version

MAX_READ_LINES = 400
MAX_LIST_ENTRIES = 2000
MAX_SNIPPET_CHARS = 400
MAX_SCAN_BYTES = MAX_FILE_BYTES * 20
MAX_SCAN_ENTRIES = 20_000  # files one list or search looks at


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


Handler = tuple[type[BaseModel], Callable[[Any], ToolReply]]


class ToolPart(Protocol):
    """More tools for the same toolbox (`diff_tool.py`, `environment.py`): their specs, and a
    handler (arguments model, function) per name. They are called, traced and counted as the
    toolbox's own."""

    def specs(self) -> Sequence[ToolSpec]: ...
    def handlers(self) -> Mapping[str, Handler]: ...


class ListArgs(_Arguments):
    path: str = Field(".", description="A folder, relative to the repository root.")
    max_depth: Annotated[int, Field(ge=0, le=20)] = 3


class SearchArgs(_Arguments):
    query: Annotated[str, Field(min_length=1, description="Literal text (not a pattern).")]
    glob: str = Field("*", description="Only files whose path or name matches, e.g. *.py")
    max_results: Annotated[int, Field(ge=1, le=1000)] = 50


class ReadArgs(_Arguments):
    path: str
    start_line: Annotated[int, Field(ge=1)] = 1
    end_line: Annotated[int, Field(ge=1)] | None = None


class EditArgs(_Arguments):
    path: str
    version: str = Field(description="The version read_file (or your last edit) returned.")
    old: Annotated[str, Field(min_length=1, description="Exact text, found exactly once.")]
    new: str


class CreateArgs(_Arguments):
    path: str
    content: str


class RunTestsArgs(_Arguments):
    target: str = Field("all", description="all, or the number of one preset test command.")


def _spec(name: str, description: str, model: type[BaseModel]) -> ToolSpec:
    return ToolSpec(name, description, model.model_json_schema())


SPECS = (
    _spec("list_files", "List the repository's files under a folder.", ListArgs),
    _spec("search_code", "Find literal text in the repository's files.", SearchArgs),
    _spec(
        "read_file",
        "Read a text file with line numbers. Returns its version: the edit of this file must "
        "name it.",
        ReadArgs,
    ),
    _spec(
        "edit_file",
        "Replace `old` (found exactly once) with `new` in a file, based on the version you "
        "read. Refused when the file changed since that version: read it again.",
        EditArgs,
    ),
    _spec("create_file", "Create a new file (refused when the path exists).", CreateArgs),
    _spec(
        "run_tests",
        "Run the preset test commands (or one of them) in the sandbox. A result holds only "
        "for the revision it ran on.",
        RunTestsArgs,
    ),
)


def reply(ok: bool, **data: Any) -> ToolReply:
    return ToolReply(json.dumps({"ok": ok, **data}, ensure_ascii=False), is_error=not ok)


def refused(code: str, message: str, **data: Any) -> ToolReply:
    return reply(False, error=code, message=message, **data)


@dataclass
class IssueTools:
    """The toolbox of one fix-issue run (it persists across attempts: versions stay valid)."""

    worktree: Path
    suite: Suite
    emit: Callable[[Event], None] = lambda event: None
    item: str = ""
    touched: set[str] = field(default_factory=set)  # files changed through edit or create
    secret_files: SecretFiles = field(default_factory=SecretFiles)
    parts: Sequence[ToolPart] = ()
    calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def replaces(self) -> frozenset[str]:
        return WRITING_TOOLS

    def specs(self) -> Sequence[ToolSpec]:
        return [*SPECS, *(spec for part in self.parts for spec in part.specs())]

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        handlers: dict[str, Handler] = {
            "list_files": (ListArgs, self.list_files),
            "search_code": (SearchArgs, self.search_code),
            "read_file": (ReadArgs, self.read_file),
            "edit_file": (EditArgs, self.edit_file),
            "create_file": (CreateArgs, self.create_file),
            "run_tests": (RunTestsArgs, self.run_tests),
        }
        for part in self.parts:
            handlers.update(part.handlers())
        with self._lock:
            self.calls += 1
            started = time.monotonic()
            if name not in handlers:
                known = ", ".join(handlers)
                answer = refused("unknown_tool", f"no tool {name!r}; the tools are {known}")
            else:
                model, handler = handlers[name]
                try:
                    parsed = model.model_validate(dict(arguments))
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(part) for part in first["loc"]) or "(arguments)"
                    answer = refused("bad_arguments", f"{where}: {first['msg']}")
                else:
                    answer = handler(parsed)
            self._trace(name, arguments, answer, time.monotonic() - started)
            return answer

    def _trace(
        self, name: str, arguments: Mapping[str, Any], given: ToolReply, took: float
    ) -> None:
        answer = json.loads(given.text)
        data: dict[str, Any] = {
            "tool": name,
            "ok": answer.get("ok", False),
            "error": answer.get("error"),
            "duration_s": round(took, 3),
            "path": arguments.get("path"),
            "version": answer.get("version"),
            "revision": answer.get("revision"),
        }
        if name == "run_tests":
            data["results"] = [r.get("status") for r in answer.get("results", [])]
        data |= {key: answer[key] for key in ("files", "exit_code", "image_id") if key in answer}
        message = f"{name} {'ok' if data['ok'] else data['error']}"
        self.emit(Event(EventKind.TOOL, message, workflow="fix-issue", item=self.item, data=data))

    # -- locating ---------------------------------------------------------------------------

    def _file(self, raw: str) -> tuple[str, Path] | ToolReply:
        """The clean repository path and the file it names, or the refusal."""
        problem = path_problem(self.worktree, raw)
        if problem is not None:
            return refused("unsafe_path", problem)
        clean = check_path(self.worktree, raw)
        secret = self.secret_files.problem(self.worktree, clean)
        if secret is not None:
            return refused("secret_file", secret)
        linked = hard_link_problem(self.worktree / clean, clean)
        if linked is not None:
            return refused("hard_link", linked)
        return clean, self.worktree / clean

    def _walk(self, keep: Callable[[str], bool]) -> tuple[list[str], int]:
        """The files git sees that `keep` wants, at most MAX_SCAN_ENTRIES of them, and how many
        more there were (a vendored tree must not hold one call for minutes)."""
        wanted = [path for path in visible_files(self.worktree) if keep(path)]
        return wanted[:MAX_SCAN_ENTRIES], max(len(wanted) - MAX_SCAN_ENTRIES, 0)

    def list_files(self, args: ListArgs) -> ToolReply:
        prefix = ""
        if args.path.strip("./"):
            folder = self._file(args.path)
            if isinstance(folder, ToolReply):
                return folder
            prefix = folder[0] + "/"
        found, unscanned = self._walk(
            lambda path: (
                path.startswith(prefix) and path[len(prefix) :].count("/") <= args.max_depth
            )
        )
        truncated = len(found) > MAX_LIST_ENTRIES or unscanned > 0
        return reply(
            True,
            files=found[:MAX_LIST_ENTRIES],
            truncated=truncated,
            **_unscanned(unscanned),
        )

    def search_code(self, args: SearchArgs) -> ToolReply:
        matches: list[dict[str, Any]] = []
        skipped: list[str] = []
        withheld: list[str] = []  # secret files: never searched
        linked: list[str] = []  # hard links: never read
        scanned = 0
        walked, unscanned = self._walk(
            lambda path: (
                fnmatch.fnmatch(path, args.glob) or fnmatch.fnmatch(Path(path).name, args.glob)
            )
        )

        def answer(truncated: bool) -> ToolReply:
            return reply(
                True,
                matches=matches,
                truncated=truncated or unscanned > 0,
                skipped=skipped,
                secret_files=withheld,
                hard_links=linked,
                **_unscanned(unscanned),
            )

        for path in walked:
            if self.secret_files.problem(self.worktree, path) is not None:
                withheld.append(path)
                continue
            full = self.worktree / path
            if full.is_symlink() or not full.is_file() or full.stat().st_size > MAX_FILE_BYTES:
                continue
            if hard_link_problem(full, path) is not None:
                linked.append(path)
                continue
            scanned += full.stat().st_size
            if scanned > MAX_SCAN_BYTES:
                skipped.append(path)
                continue
            try:
                text = full.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if args.query in line:
                    snippet = line.strip()[:MAX_SNIPPET_CHARS]
                    matches.append({"path": path, "line": number, "text": snippet})
                    if len(matches) >= args.max_results:
                        return answer(True)
        return answer(False)

    # -- reading and changing ---------------------------------------------------------------

    def read_file(self, args: ReadArgs) -> ToolReply:
        found = self._file(args.path)
        if isinstance(found, ToolReply):
            return found
        path, target = found
        loaded = _load(target, path)
        if isinstance(loaded, ToolReply):
            return loaded
        data, text = loaded
        lines = text.splitlines(keepends=True)
        last = len(lines) if args.end_line is None else min(args.end_line, len(lines))
        first = min(args.start_line, max(len(lines), 1))
        last = min(last, first + MAX_READ_LINES - 1)
        numbered = "".join(
            f"{number:>6}\t{line}" for number, line in enumerate(lines[first - 1 : last], first)
        )
        return reply(
            True,
            path=path,
            version=file_version(data),
            total_lines=len(lines),
            start_line=first,
            end_line=last,
            truncated=last < len(lines),
            content=numbered,
        )

    def edit_file(self, args: EditArgs) -> ToolReply:
        found = self._file(args.path)
        if isinstance(found, ToolReply):
            return found
        path, target = found
        if not target.is_file() or target.is_symlink():
            return refused("not_found", f"{path} is not a file; create_file makes a new one")
        loaded = _load(target, path)
        if isinstance(loaded, ToolReply):
            return loaded
        data, text = loaded
        current = file_version(data)
        if args.version != current:
            return refused(
                "stale_version",
                f"{path} is not at the version this edit is based on ({args.version[:12]}); it "
                f"is now {current[:12]}. Read it again and edit what is there now.",
            )
        old, new = args.old, args.new
        if "\r\n" in text and "\r" not in old:  # the model writes \n; the file keeps its \r\n
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        if old == new:
            return refused("no_change", "`old` and `new` are the same: nothing would change")
        count = text.count(old)
        if count != 1:
            code, why = (
                ("no_match", "was not found exactly (copy it from read_file, indentation too)")
                if count == 0
                else ("ambiguous_match", f"was found {count} times; include more lines")
            )
            return refused(code, f"`old` {why}")
        changed = text.replace(old, new, 1).encode("utf-8")
        if len(changed) > MAX_FILE_BYTES:
            return refused("too_large", f"{path} would exceed {MAX_FILE_BYTES} bytes")
        target.write_bytes(changed)  # in place: the file keeps its mode
        self.touched.add(path)
        line = text[: text.index(old)].count("\n") + 1
        return reply(
            True,
            path=path,
            version=file_version(changed),
            line=line,
            revision=self.suite.revision(),
        )

    def create_file(self, args: CreateArgs) -> ToolReply:
        found = self._file(args.path)
        if isinstance(found, ToolReply):
            return found
        path, target = found
        if target.exists() or target.is_symlink():
            return refused("exists", f"{path} exists; read it and use edit_file")
        data = args.content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            return refused("too_large", f"{path} would exceed {MAX_FILE_BYTES} bytes")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.touched.add(path)
        return reply(True, path=path, version=file_version(data), revision=self.suite.revision())

    # -- testing ----------------------------------------------------------------------------

    def run_tests(self, args: RunTestsArgs) -> ToolReply:
        count = len(self.suite.commands)
        if args.target == "all":
            indexes = list(range(count))
        elif args.target.isdigit() and 1 <= int(args.target) <= count:
            indexes = [int(args.target) - 1]
        else:
            return refused("bad_target", f"target is `all` or a number from 1 to {count}")
        runs = self.suite.run(indexes)
        results = [run.to_json() for run in runs]
        # A command that timed out or could not start says nothing about the code.
        broken = [r for r in runs if r.status in (RunStatus.TIMED_OUT, RunStatus.NOT_FOUND)]
        revision = runs[0].revision if runs else self.suite.revision()
        return reply(
            not broken,
            revision=revision,
            passed=all_passed(runs),
            results=results,
            **(
                {"error": "test_run_failed", "message": "a command timed out or was not found"}
                if broken
                else {}
            ),
        )


def _unscanned(count: int) -> dict[str, Any]:
    """What a walk that stopped at MAX_SCAN_ENTRIES tells the model (nothing when it did not)."""
    if not count:
        return {}
    return {
        "unscanned": count,
        "message": f"stopped after {MAX_SCAN_ENTRIES} files; {count} more were not looked at "
        "(name a folder, or a narrower glob)",
    }


def _load(target: Path, shown: str) -> tuple[bytes, str] | ToolReply:
    if not target.is_file():
        return refused("not_found", f"{shown} is not a file")
    data = target.read_bytes()
    if len(data) > MAX_FILE_BYTES:
        return refused("too_large", f"{shown} is larger than {MAX_FILE_BYTES} bytes")
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        return refused("not_text", f"{shown} is not UTF-8 text")


__all__ = ["SPECS", "Handler", "IssueTools", "ToolPart", "refused", "reply"]
