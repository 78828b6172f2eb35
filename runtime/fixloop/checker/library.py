"""The shared step library: bash files a document's blocks source, seen through by the checker.

Steps share helpers instead of pasting them: a block starts with `. "$FIXLOOP_LIB/fixloop.sh"`
(or `source …`, or `${CLAUDE_PLUGIN_ROOT}/…`), where `$FIXLOOP_LIB` is the pack's
`workflows/lib`. The checker resolves the file inside the pack being checked and treats the
functions it defines as defined at that point:

- a step that calls a helper runs the helper's commands: they are the step's events (at their
  line in the library), so a contract sees `git stash` inside a helper a step calls, the path
  analysis follows the call, and `fixloop_output NAME …` declares NAME like a write would;
- a variable a helper sets for its caller (through `local -n ref=$1`, or a global assignment) is
  set for the step after the call;
- a helper the step does not call adds nothing.

A source line naming a file that is not in the pack is a `source-not-found` error.
"""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path

from fixloop.checker.events import CommandEvent, extract, iter_commands
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Command, Function, Node_, Script
from fixloop.diagnostics import Diagnostic, display_path
from fixloop.documents.files import read_text
from fixloop.records import record

RULE = "source-not-found"
LIBRARY_FOLDER = Path("workflows") / "lib"
_SOURCED = re.compile(r"^\$(?P<variable>FIXLOOP_LIB|CLAUDE_PLUGIN_ROOT)/(?P<path>[^$`\s]+)$")
_NAMEREF = re.compile(r"^\$(?P<index>[1-9])$")


@record
class StepLibrary:
    """One sourced file: its functions, and the events of each function's commands."""

    path: Path
    display: str
    script: Script
    functions: dict[str, Function] = field(default_factory=dict)
    events: dict[str, list[CommandEvent]] = field(default_factory=dict)  # by function
    owners: dict[str, dict[int, Node_]] = field(default_factory=dict)
    sets_arguments: dict[str, set[int]] = field(default_factory=dict)  # `local -n x=$1` → {1}
    sets_globals: dict[str, set[str]] = field(default_factory=dict)
    calls: dict[str, list[str]] = field(default_factory=dict)  # helper → helpers it calls
    # The path analysis's summaries of its helpers (`worlds.RunFacts.library_summaries`).
    summaries: dict[tuple[int, bool, bool], tuple[frozenset[int | None], frozenset[int | None]]] = (
        field(default_factory=dict)
    )
    _called_by: dict[str, frozenset[str]] = field(default_factory=dict)

    def called_by(self, name: str) -> frozenset[str]:
        """Every command name a call to helper `name` can run, through the helpers it calls."""
        if name not in self._called_by:
            found: set[str] = set()
            pending = [name]
            while pending:
                helper = pending.pop()
                for called in self.calls.get(helper, []):
                    if called not in found:
                        found.add(called)
                        if called in self.functions:
                            pending.append(called)
            self._called_by[name] = frozenset(found)
        return self._called_by[name]

    def called(self, commands: list[Command]) -> list[str]:
        """The helpers these commands call, and the helpers those call, in order of first call."""
        found: list[str] = []
        pending = [c.words[0].literal for c in commands if c.words and c.words[0].literal]
        while pending:
            name = pending.pop(0)
            if name in self.functions and name not in found:
                found.append(name)
                pending += self.calls[name]
        return found


_CACHE: dict[tuple[Path, int, int], StepLibrary] = {}


def sourced_path(command: Command, pack_root: Path | None) -> Path | None:
    """The file a `.`/`source` command reads, when it is a library of the pack; else None."""
    words = command.words
    if len(words) != 2 or words[0].literal not in (".", "source") or pack_root is None:
        return None
    match = _SOURCED.match(words[1].shape)
    if match is None:
        return None
    base = pack_root / LIBRARY_FOLDER if match["variable"] == "FIXLOOP_LIB" else pack_root
    return base / match["path"]


def not_found(command: Command, path: Path, display: str) -> Diagnostic:
    word = command.words[1]
    message = f"`{command.words[0].text} {word.text}` names {path.name}, which is not in the pack"
    return Diagnostic(display, word.pos.row + 1, word.pos.col + 1, RULE, message)


def load_library(path: Path, base: Path | None) -> StepLibrary | None:
    """The library at `path`, parsed once per version of the file; None when it is not there."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _CACHE:
        try:
            text = read_text(path)
        except (OSError, UnicodeDecodeError):
            return None
        _CACHE[key] = _build(path, text, display_path(path, base))
    return _CACHE[key]


def _build(path: Path, text: str, display: str) -> StepLibrary:
    script = parse_bash(text)
    library = StepLibrary(path, display, script)
    for node in script.body.items:
        if not isinstance(node, Function):
            continue
        library.functions[node.name] = node
        events, owners = extract(node.body, display, None, block=-1, finally_=False)
        library.events[node.name] = events
        library.owners[node.name] = owners
        local: set[str] = set()
        commands = list(iter_commands(node.body))  # walked once for the three looks below
        for command in commands:
            for assign in command.assigns:
                if assign.kind in ("local", "declare", "typeset"):
                    local.add(assign.name)
                    if _is_nameref(command) and assign.value is not None:
                        index = _NAMEREF.match(assign.value.shape)
                        if index:
                            library.sets_arguments.setdefault(node.name, set()).add(
                                int(index["index"])
                            )
            for word in command.words[1:]:
                if command.words[0].literal in ("local", "declare", "typeset"):
                    local.add(word.shape)
        library.calls[node.name] = [
            c.words[0].literal for c in commands if c.words and c.words[0].literal
        ]
        library.sets_globals[node.name] = {
            a.name
            for command in commands
            for a in command.assigns
            if a.kind == "plain" and a.name not in local
        }
    return library


def _is_nameref(command: Command) -> bool:
    return any(
        (w.literal or "").startswith("-") and "n" in (w.literal or "") for w in command.words
    )
