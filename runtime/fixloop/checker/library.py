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
- a helper the step does not call adds nothing, and costs nothing: a function's syntax tree,
  events and facts are made when a document first reaches it (a step calls a few of a
  library's helpers; converting all of them was most of the bash a check read). A function
  written `name() {` at the start of a line and closed by a line `}` is even parsed then, on
  its own: the rest of the file is parsed at once with each such function as a one-line
  `name() { :; }` in its place, and only if that parse is clean and keeps every one of them a
  function of the file's top level (not a heredoc's or a string's lines), which makes every
  function's text its own, as in the whole file. A function that does not parse cleanly on
  its own is read as the whole file's parse reads it. Otherwise it is the tree `parse_bash`
  makes of the whole file; a file that needs the whole parse to tell (a top-level statement
  tree-sitter ran into the next line or nested too deep, a file too large for one tree) is
  converted whole when loaded. A helper nested past the checker's limit is followed as doing
  nothing (when the whole file was converted at once, it hid every other helper).

A source line naming a file that is not in the pack is a `source-not-found` error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from tree_sitter import Node

from fixloop.checker.events import CommandEvent, extract, iter_commands
from fixloop.checker.syntax import PIECE_BYTES, TopLevel, parse_bash
from fixloop.checker.tree import Command, Function, Node_, Pos
from fixloop.checker.words import TooDeep
from fixloop.checker.worlds import HelperSummary
from fixloop.diagnostics import Diagnostic, display_path
from fixloop.documents.files import read_text

RULE = "source-not-found"
LIBRARY_FOLDER = Path("workflows") / "lib"
# The variables a library path is written under: `$FIXLOOP_LIB/x.sh`, `$CLAUDE_PLUGIN_ROOT/…`.
# The words are read with string methods, not regexes: compiling those was part of every check's
# start.
_LIBRARY_ROOTS = ("FIXLOOP_LIB", "CLAUDE_PLUGIN_ROOT")
_POSITIONAL = {f"${index}": index for index in range(1, 10)}  # `$1` … `$9`


class Helper:
    """One function of a step library, as a document reaches it: its syntax tree, what it sets
    for its caller, the commands it calls; its events when a contract first asks for them."""

    __slots__ = ("_extracted", "calls", "display", "function", "sets_arguments", "sets_globals")

    def __init__(self, function: Function, display: str) -> None:
        self.function = function
        self.display = display
        self._extracted: tuple[list[CommandEvent], dict[int, Node_]] | None = None
        self.sets_arguments: set[int] = set()  # `local -n x=$1` → {1}
        local: set[str] = set()
        commands = list(iter_commands(function.body))  # walked once for the three looks below
        for command in commands:
            for assign in command.assigns:
                if assign.kind in ("local", "declare", "typeset"):
                    local.add(assign.name)
                    if _is_nameref(command) and assign.value is not None:
                        index = _POSITIONAL.get(assign.value.shape)
                        if index is not None:
                            self.sets_arguments.add(index)
            if command.name in ("local", "declare", "typeset"):
                local.update(word.shape for word in command.words[1:])
        self.calls = [c.name for c in commands if c.name]
        self.sets_globals = {
            a.name
            for command in commands
            for a in command.assigns
            if a.kind == "plain" and a.name not in local
        }

    @property
    def events(self) -> list[CommandEvent]:
        return self._extract()[0]

    @property
    def owners(self) -> dict[int, Node_]:
        return self._extract()[1]

    def _extract(self) -> tuple[list[CommandEvent], dict[int, Node_]]:
        if self._extracted is None:
            body = self.function.body
            self._extracted = extract(body, self.display, None, block=-1, finally_=False)
        return self._extracted


class _Written(NamedTuple):
    """A function's own text (`name() {` … `}`), parsed when first reached; `row`: its line."""

    row: int
    text: str


class StepLibrary:
    """One sourced file: its functions, each converted (`helper`) when first reached. Compared
    by identity: one object per version of the file (`load_library`)."""

    def __init__(
        self,
        path: Path,
        display: str,
        sources: dict[str, Node | Function | _Written],
        top: TopLevel | None = None,
        text: str = "",
    ) -> None:
        self.path = path
        self.display = display
        # Each function's node in `top`, its own text, or its syntax tree when the file was
        # converted whole.
        self.sources = sources
        self._top = top
        self._text = text  # the file's text, when a function may need the whole parse
        self._whole: StepLibrary | None = None
        self._helpers: dict[str, Helper] = {}
        self._called_by: dict[str, frozenset[str]] = {}
        # The path analysis's summaries of its helpers, and the nodes each helper's call reaches
        # (`worlds.RunFacts.sharing_library`).
        self.summaries: dict[tuple[int, bool, bool], HelperSummary] = {}
        self.reach: dict[str, frozenset[int]] = {}

    def __repr__(self) -> str:
        return f"StepLibrary({self.display!r}, {list(self.sources)!r})"

    def helper(self, name: str) -> Helper:
        found = self._helpers.get(name)
        if found is None:
            source = self.sources[name]
            if isinstance(source, Function):
                function = source
            elif isinstance(source, _Written):
                function = self._parse(name, source)
            else:
                assert self._top is not None
                function = _convert(self._top, name, source)
            found = self._helpers[name] = Helper(function, self.display)
        return found

    def function(self, name: str) -> Function | None:
        """Helper `name`'s function, converted now if it was not yet; None if the file has none."""
        return self.helper(name).function if name in self.sources else None

    def _parse(self, name: str, written: _Written) -> Function:
        own = TopLevel(written.text, Pos(written.row, 0))
        if own.clean and len(own.nodes) == 1 and own.nodes[0].type == "function_definition":
            return _convert(own, name, own.nodes[0])
        # Not one clean function on its own (a `}` line inside it, an error in it): as read in
        # the whole file's parse, where the error's recovery may take the lines around it too.
        if self._whole is None:
            self._whole = _build(self.path, self._text, self.display, functions_alone=False)
        if name in self._whole.sources:
            return self._whole.helper(name).function
        return Function(Pos(written.row, 0), name=name)

    def called_by(self, name: str) -> frozenset[str]:
        """Every command name a call to helper `name` can run, through the helpers it calls."""
        if name not in self._called_by:
            found: set[str] = set()
            pending = [name]
            while pending:
                helper = pending.pop()
                for called in self.helper(helper).calls if helper in self.sources else []:
                    if called not in found:
                        found.add(called)
                        if called in self.sources:
                            pending.append(called)
            self._called_by[name] = frozenset(found)
        return self._called_by[name]

    def called(self, commands: list[Command]) -> list[str]:
        """The helpers these commands call, and the helpers those call, in order of first call."""
        found: list[str] = []
        pending = [c.name for c in commands if c.name]
        while pending:
            name = pending.pop(0)
            if name in self.sources and name not in found:
                found.append(name)
                pending += self.helper(name).calls
        return found


class RunFunctions(Mapping[str, Function]):
    """The functions a shell run can call by name: its own, else its step libraries' (a later
    library's over an earlier one's), a library's converted when first looked up."""

    __slots__ = ("_libraries", "_own")

    def __init__(self, own: dict[str, Function], libraries: Sequence[StepLibrary]) -> None:
        self._own = own
        self._libraries = list(reversed(libraries))

    def __getitem__(self, name: str) -> Function:
        found = self._own.get(name)
        if found is not None:
            return found
        for library in self._libraries:
            if name in library.sources:
                return library.helper(name).function
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._own or any(name in lib.sources for lib in self._libraries)

    def __iter__(self) -> Iterator[str]:
        return iter(
            {**dict.fromkeys(n for lib in self._libraries for n in lib.sources), **self._own}
        )

    def __len__(self) -> int:
        return sum(1 for _ in self)


_CACHE: dict[tuple[Path, int, int], StepLibrary] = {}


def sourced_path(command: Command, pack_root: Path | None) -> Path | None:
    """The file a `.`/`source` command reads, when it is a library of the pack; else None."""
    words = command.words
    if len(words) != 2 or command.name not in (".", "source") or pack_root is None:
        return None
    variable, slash, path = words[1].shape.partition("/")
    if variable[1:] not in _LIBRARY_ROOTS or variable[:1] != "$" or not slash or not path:
        return None
    if "$" in path or "`" in path or any(char.isspace() for char in path):
        return None  # a path of its own variables, substitutions or blanks: not known here
    base = pack_root / LIBRARY_FOLDER if variable == "$FIXLOOP_LIB" else pack_root
    return base / path


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


def _build(path: Path, text: str, display: str, functions_alone: bool = True) -> StepLibrary:
    if functions_alone and len(text) <= PIECE_BYTES:
        library = _functions_alone(path, text, display)
        if library is not None:
            return library
    top = TopLevel(text) if len(text) <= PIECE_BYTES else None  # characters: at most the bytes
    sources = _definitions(top) if top is not None and len(top.source) <= PIECE_BYTES else None
    if top is None or sources is None:  # converted whole, as a block is
        script = parse_bash(text)
        whole: dict[str, Node | Function | _Written] = {
            n.name: n for n in script.body.items if isinstance(n, Function)
        }
        return StepLibrary(path, display, whole)
    return StepLibrary(path, display, sources, top)


def _functions_alone(path: Path, text: str, display: str) -> StepLibrary | None:
    """The library with each `name() {` … `}` function's text kept for later (see above); None
    when the rest of the file does not show them as functions of its top level."""
    lines = text.split("\n")
    written: dict[int, _Written] = {}
    row = 0
    while row < len(lines):
        name = _header_name(lines[row])
        try:
            end = lines.index("}", row + 1) if name else None
        except ValueError:  # never closed: left to the parse of the rest
            end = None
        if end is None:
            row += 1
            continue
        written[row] = _Written(row, "\n".join(lines[row : end + 1]))
        # One line in its place, the lines after it kept empty: every row stays where it was.
        lines[row : end + 1] = [f"{name}() {{ :; }}", *[""] * (end - row)]
        # The comments just above it are not parsed either (most of a library's text). Were one
        # of them a heredoc's or a string's last line, the stand-in is inside it now: refused.
        above = row - 1
        while above >= 0 and lines[above].lstrip(" \t")[:1] in ("#", ""):
            lines[above] = ""
            above -= 1
        row = end + 1
    if not written:
        return None
    top = TopLevel("\n".join(lines))
    sources = _definitions(top) if top.clean else None
    if sources is None:
        return None
    stand_ins = {
        n.start_point[0]
        for n in top.nodes
        if n.type == "function_definition" and n.start_point == (n.end_point[0], 0)
    }
    if not stand_ins >= written.keys():
        return None  # one of them is inside a heredoc, a string or a longer statement
    for name, source in sources.items():
        if isinstance(source, Node) and source.start_point[0] in written:
            sources[name] = written[source.start_point[0]]
    return StepLibrary(path, display, sources, top, text)


def _header_name(line: str) -> str | None:
    """`name` of a line `name() {` that starts a function; else None (read with string
    methods: a regex compiled was part of every check's start)."""
    name = line[:-4] if line.endswith("() {") else ""
    if name and name.isascii() and name.isidentifier():
        return name
    return None


def _convert(top: TopLevel, name: str, node: Node) -> Function:
    try:
        built, _ = top.build(node)
    except TooDeep:
        built = None
    if isinstance(built, Function):
        return built
    return Function(node.start_point, name=name)  # nested too deep: followed as doing nothing


def _definitions(top: TopLevel) -> dict[str, Node | Function | _Written] | None:
    """The file's functions by name (a later definition wins, as in bash), their nodes left for
    later; None when the file must be converted whole to know its statements. The statements
    that are not function definitions are built now: few, and where tree-sitter may have run a
    line into the next (which changes how the rest reads), or nested too deep."""
    sources: dict[str, Node | Function | _Written] = {}
    for node in top.nodes:
        if node.type == "function_definition":
            name = node.child_by_field_name("name")
            text = top.source[name.start_byte : name.end_byte] if name is not None else b""
            sources[text.decode("utf-8", "replace")] = node
            continue
        try:
            built, split = top.build(node)
        except TooDeep:
            return None
        if split:
            return None
        if isinstance(built, Function):  # `f() { …; } >&2`
            sources[built.name] = built
    return sources


def _is_nameref(command: Command) -> bool:
    return any(
        (w.literal or "").startswith("-") and "n" in (w.literal or "") for w in command.words
    )
