"""A role's own tools, run by fixloop for a backend whose model only asks for them (`openai`).

The role's frontmatter names Claude Code's tools (`Read, Edit, Write, Bash, Grep, Glob`, or
`Bash(git diff:*)` entries); `RoleTools` offers those of them it knows, with the parameters
Claude Code gives them (models know them), and runs each call under the rules every backend
keeps:

- writes (`Write`, `Edit`) pass the call's write scope first (`scope.WriteScope`: inside the
  worktree, never `.git`, only the assigned files when the workflow assigned some); a refusal is
  a `DeniedWrite` the workflow reads, and an error the model reads;
- reads (`Read`, `Grep`, `Glob`) stay inside the worktree too (the one path check,
  `steps.paths`), and never read a secret file (`fixloop.secret_files`): what a model reads goes
  to its provider; a file with more than one name (a hard link its shell may have made to a file
  outside) is neither read nor written, and Grep passes it by;
- `Bash` as `shell_tool.py` says: whole, or only the programs the role's entries name, in the
  run's sandbox;
- a tool the role was not given, or one the call's lent toolbox replaces (fix-issue's versioned
  edits stand in for Edit, Write and Bash), is not offered, and a call of it is refused.

It is a `Toolbox` (`toolbox.py`): the backend serves it beside the workflow's lent one.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.agents.backend import AgentRequest, DeniedWrite
from fixloop.agents.scope import WRITE_TOOLS, WriteScope
from fixloop.agents.shell_tool import DEFAULT_TIMEOUT_S, BashPolicy, run_command
from fixloop.agents.toolbox import ToolReply, ToolSpec
from fixloop.documents.tools import parse_tool
from fixloop.secret_files import SecretFiles
from fixloop.steps.paths import hard_link_problem, unsafe_reason

MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_MATCHES = 200
MAX_FILES_LISTED = 1000
MAX_FILE_BYTES = 2_000_000
MAX_SCAN_BYTES = 50_000_000
MAX_SCAN_ENTRIES = 20_000  # files and folders one Glob or Grep walk visits

_PATH = {"type": "string", "description": "A path in the worktree (relative, or absolute)."}
SPECS: Mapping[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "Read",
            "Read a text file, with line numbers.",
            {
                "type": "object",
                "properties": {
                    "file_path": _PATH,
                    "offset": {"type": "integer", "description": "First line (1-based)."},
                    "limit": {"type": "integer", "description": "How many lines."},
                },
                "required": ["file_path"],
            },
        ),
        ToolSpec(
            "Write",
            "Write a whole file (created if needed).",
            {
                "type": "object",
                "properties": {"file_path": _PATH, "content": {"type": "string"}},
                "required": ["file_path", "content"],
            },
        ),
        ToolSpec(
            "Edit",
            "Replace old_string (found exactly once, unless replace_all) with new_string.",
            {
                "type": "object",
                "properties": {
                    "file_path": _PATH,
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean"},
                },
                "required": ["file_path", "old_string", "new_string"],
            },
        ),
        ToolSpec(
            "Glob",
            "List the files whose path matches a glob pattern, e.g. src/**/*.py.",
            {
                "type": "object",
                "properties": {"pattern": {"type": "string"}, "path": _PATH},
                "required": ["pattern"],
            },
        ),
        ToolSpec(
            "Grep",
            "Find lines matching a regular expression in the worktree's files.",
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": _PATH,
                    "glob": {"type": "string", "description": "Only files matching, e.g. *.py"},
                    "case_insensitive": {"type": "boolean"},
                },
                "required": ["pattern"],
            },
        ),
        ToolSpec(
            "Bash",
            "Run a command in the worktree; returns its exit code and output.",
            {
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout": {"type": "number", "description": "Seconds (at most 600)."},
                },
                "required": ["command"],
            },
        ),
    )
}


def _reply(ok: bool, **data: Any) -> ToolReply:
    return ToolReply(json.dumps({"ok": ok, **data}, ensure_ascii=False), is_error=not ok)


def _refused(message: str) -> ToolReply:
    return _reply(False, error="refused", message=message)


@dataclass
class RoleTools:
    """The role's own tools for one call; `denied` collects the writes its scope refused."""

    request: AgentRequest
    secret_files: SecretFiles = field(default_factory=SecretFiles)
    denied: list[DeniedWrite] = field(default_factory=list)
    deadline: float | None = None  # time.monotonic() by which a command must have ended

    def __post_init__(self) -> None:
        self.root = self.request.cwd.resolve()
        self.scope = WriteScope.create(self.root, self.request.writable)
        entries = [e for e in map(parse_tool, self.request.tools) if e is not None]
        lent = self.request.toolbox
        replaced = lent.replaces if lent is not None else frozenset()
        self.bash = None if "Bash" in replaced else BashPolicy.of(entries)
        whole = {e.name for e in entries if e.pattern is None}
        everything = "*" in whole
        self.offered = [
            name
            for name in SPECS
            if name not in replaced
            and (name in whole or everything or (name == "Bash" and self.bash is not None))
        ]
        if everything and "Bash" not in replaced:
            self.bash = BashPolicy(whole=True)

    @property
    def replaces(self) -> frozenset[str]:
        return frozenset()

    def specs(self) -> Sequence[ToolSpec]:
        return [SPECS[name] for name in self.offered]

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        if name not in self.offered:
            reason = f"{name} is not among this role's tools ({', '.join(self.offered) or 'none'})"
            if name in WRITE_TOOLS:  # a write it wanted: the workflow reads the file it named
                path = arguments.get(WRITE_TOOLS[name], "")
                self.denied.append(DeniedWrite(name, path if isinstance(path, str) else "", reason))
            return _refused(reason)
        try:
            if name == "Read":
                return self._read(arguments)
            if name == "Write":
                return self._write(arguments)
            if name == "Edit":
                return self._edit(arguments)
            if name == "Glob":
                return self._glob(arguments)
            if name == "Grep":
                return self._grep(arguments)
            return self._bash(arguments)
        except (KeyError, TypeError, ValueError) as exc:
            return _reply(False, error="bad_arguments", message=f"{name}: {exc}")
        except OSError as exc:
            return _reply(False, error="os_error", message=f"{name}: {exc.strerror or exc}")

    # -- paths ------------------------------------------------------------------------------

    def _inside(self, raw: object, *, folder: bool = False) -> tuple[str, Path] | ToolReply:
        """A path in the worktree as (relative, absolute), or the refusal."""
        if not isinstance(raw, str) or not raw.strip():
            return _refused("a path is needed")
        relative = raw
        if Path(raw).is_absolute():
            lexical = Path(os.path.normpath(raw))
            for root in (self.root, self.request.cwd):
                if lexical.is_relative_to(root):
                    relative = lexical.relative_to(root).as_posix() or "."
                    break
        if folder and os.path.normpath(relative) == ".":
            return ".", self.root
        reason = unsafe_reason(self.root, relative)
        if reason is not None:
            return _refused(f"{raw}: {reason} (the tools reach the worktree {self.root} only)")
        clean = Path(os.path.normpath(relative)).as_posix()
        secret = self.secret_files.problem(self.root, clean)
        if secret is not None:
            return _refused(secret)
        linked = hard_link_problem(self.root / clean, clean)
        if linked is not None:
            return _refused(linked)
        return clean, self.root / clean

    def _text(self, target: Path, shown: str) -> str | ToolReply:
        if not target.is_file():
            return _refused(f"{shown} is not a file")
        if target.stat().st_size > MAX_FILE_BYTES:
            return _refused(f"{shown} is larger than {MAX_FILE_BYTES} bytes")
        try:
            return target.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            return _refused(f"{shown} is not UTF-8 text")

    # -- the tools --------------------------------------------------------------------------

    def _read(self, arguments: Mapping[str, Any]) -> ToolReply:
        found = self._inside(arguments["file_path"])
        if isinstance(found, ToolReply):
            return found
        shown, target = found
        text = self._text(target, shown)
        if isinstance(text, ToolReply):
            return text
        lines = text.splitlines()
        first = max(int(arguments.get("offset") or 1), 1)
        count = min(int(arguments.get("limit") or MAX_READ_LINES), MAX_READ_LINES)
        chosen = lines[first - 1 : first - 1 + count]
        numbered = "".join(
            f"{number:>6}\t{line[:MAX_LINE_CHARS]}\n" for number, line in enumerate(chosen, first)
        )
        last = first + len(chosen) - 1
        return _reply(True, path=shown, total_lines=len(lines), end_line=last, content=numbered)

    def _checked_write(self, tool: str, raw: object) -> tuple[str, Path] | ToolReply:
        denial = self.scope.check(tool, {"file_path": raw})
        if denial is not None:
            self.denied.append(denial)
            return _refused(f"fixloop scope: {denial.reason}")
        return self._inside(raw)

    def _write(self, arguments: Mapping[str, Any]) -> ToolReply:
        content = arguments["content"]
        if not isinstance(content, str):
            raise TypeError("content must be text")
        if len(content.encode("utf-8")) > MAX_FILE_BYTES:
            return _refused(f"content is larger than {MAX_FILE_BYTES} bytes")
        found = self._checked_write("Write", arguments["file_path"])
        if isinstance(found, ToolReply):
            return found
        shown, target = found
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return _reply(True, path=shown, bytes=len(content.encode("utf-8")))

    def _edit(self, arguments: Mapping[str, Any]) -> ToolReply:
        old, new = arguments["old_string"], arguments["new_string"]
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise TypeError("old_string (not empty) and new_string must be text")
        found = self._checked_write("Edit", arguments["file_path"])
        if isinstance(found, ToolReply):
            return found
        shown, target = found
        text = self._text(target, shown)
        if isinstance(text, ToolReply):
            return text
        count = text.count(old)
        every = bool(arguments.get("replace_all"))
        if count == 0 or (count > 1 and not every):
            why = "was not found" if count == 0 else f"was found {count} times; add context"
            return _reply(False, error="no_unique_match", message=f"old_string {why}")
        target.write_text(text.replace(old, new, -1 if every else 1), encoding="utf-8")
        return _reply(True, path=shown, replaced=count if every else 1)

    def _files(self, arguments: Mapping[str, Any]) -> tuple[str, list[str], int] | ToolReply:
        """The folder named, its files (secret ones left out) and how many entries the walk left
        unvisited when it stopped at MAX_SCAN_ENTRIES (a vendored tree must not hold one call
        for minutes): counted from the folders it did not enter, so the model knows to narrow."""
        found = self._inside(arguments.get("path") or ".", folder=True)
        if isinstance(found, ToolReply):
            return found
        shown, base = found
        listed: list[str] = []
        visited, unvisited = 0, 0
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != ".git" and not Path(folder, d).is_symlink())
            room = MAX_SCAN_ENTRIES - visited
            if room <= 0:  # counted, not entered
                unvisited += len(dirs) + len(files)
                dirs[:] = []
                continue
            names = sorted(files)
            for name in names[:room]:
                relative = Path(folder, name).relative_to(self.root).as_posix()
                if self.secret_files.pattern_of(relative) is None:
                    listed.append(relative)
            unvisited += max(len(names) - room, 0)
            visited += min(len(names), room) + len(dirs)
        return shown, listed, unvisited

    def _glob(self, arguments: Mapping[str, Any]) -> ToolReply:
        pattern = str(arguments["pattern"])
        found = self._files(arguments)
        if isinstance(found, ToolReply):
            return found
        shown, files, unvisited = found
        prefix = "" if shown == "." else shown + "/"
        matched = [f for f in files if _glob_match(f.removeprefix(prefix), pattern)]
        truncated = len(matched) > MAX_FILES_LISTED or unvisited > 0
        return _reply(
            True, files=matched[:MAX_FILES_LISTED], truncated=truncated, **_unvisited(unvisited)
        )

    def _grep(self, arguments: Mapping[str, Any]) -> ToolReply:
        flags = re.IGNORECASE if arguments.get("case_insensitive") else 0
        try:
            regex = re.compile(str(arguments["pattern"]), flags)
        except re.error as exc:
            return _reply(False, error="bad_pattern", message=f"pattern: {exc}")
        found = self._files(arguments)
        if isinstance(found, ToolReply):
            return found
        _, files, unvisited = found
        only = arguments.get("glob")
        matches: list[str] = []
        linked: list[str] = []  # hard links: never read (the other name may be outside)
        scanned = 0

        def answer(truncated: bool) -> ToolReply:
            more = {"hard_links": linked} if linked else {}
            return _reply(
                True,
                matches=matches,
                truncated=truncated or unvisited > 0,
                **more,
                **_unvisited(unvisited),
            )

        for relative in files:
            if only and not _glob_match(relative, str(only)):
                continue
            target = self.root / relative
            if target.is_symlink() or target.stat().st_size > MAX_FILE_BYTES:
                continue
            if hard_link_problem(target, relative) is not None:
                linked.append(relative)
                continue
            scanned += target.stat().st_size
            if scanned > MAX_SCAN_BYTES:  # a vendored tree must not hold the call for minutes
                return answer(True)
            try:
                lines = target.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(lines, 1):
                if regex.search(line):
                    matches.append(f"{relative}:{number}:{line[:MAX_LINE_CHARS]}")
                    if len(matches) >= MAX_MATCHES:
                        return answer(True)
        return answer(False)

    def _bash(self, arguments: Mapping[str, Any]) -> ToolReply:
        command = arguments["command"]
        if not isinstance(command, str) or not command.strip():
            raise TypeError("command must be text")
        assert self.bash is not None
        argv = self.bash.argv(command)
        if isinstance(argv, str):
            return _refused(argv)
        timeout = float(arguments.get("timeout") or DEFAULT_TIMEOUT_S)
        if self.deadline is not None:  # the call's wall budget bounds its commands too
            timeout = min(timeout, max(self.deadline - time.monotonic(), 1.0))
        done = run_command(
            argv, cwd=self.request.cwd, sandbox=self.request.sandbox, timeout_s=timeout
        )
        return _reply(
            not done.timed_out,
            exit_code=done.exit_code,
            timed_out=done.timed_out,
            output=done.output,
        )


def _unvisited(count: int) -> dict[str, Any]:
    """What a walk that stopped at MAX_SCAN_ENTRIES tells the model (nothing when it did not)."""
    if not count:
        return {}
    return {
        "unvisited": count,
        "message": f"the walk stopped after {MAX_SCAN_ENTRIES} entries; {count} more (files, "
        "and folders not entered) were not looked at: name a narrower path",
    }


def _glob_match(path: str, pattern: str) -> bool:
    """`**` spans folders, `*` and `?` stay within one; a pattern without `/` matches the name."""
    if "/" not in pattern:
        path = path.rsplit("/", 1)[-1]
    regex = ""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            regex, index = regex + "(?:.*/)?", index + 3
            continue
        if pattern.startswith("**", index):
            regex, index = regex + ".*", index + 2
            continue
        regex += "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
        index += 1
    return re.fullmatch(regex, path) is not None


__all__ = ["SPECS", "RoleTools"]
