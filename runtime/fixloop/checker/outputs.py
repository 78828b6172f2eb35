"""Step outputs a document writes but does not declare (rule `undeclared-output`).

A step hands values back by writing `NAME=value` lines (or `NAME<<DELIMITER` heredocs) to the file
`"$FIXLOOP_OUTPUT"` (`fixloop.steps.outputs`); the runtime fails a step that writes a name the
document's `outputs:` does not declare. This rule finds the same typo before anything runs, at the
line and column of the name. It reads the writes that name their NAME literally:

    printf 'COMMIT=%s\\nFILES=%s\\n' "$c" "$n" >> "$FIXLOOP_OUTPUT"    # every line of the format
    echo "COMMIT=$c" >> "$FIXLOOP_OUTPUT"                           # `echo -e`: every `\\n` line
    { printf 'A=1\\n'; printf 'B<<EOF\\n%s\\nEOF\\n' "$b"; } >> "$FIXLOOP_OUTPUT"   # a group
    cat >> "$FIXLOOP_OUTPUT" <<EOF                                   # a heredoc body
    COMMIT=$c
    EOF

with `>`, `>>`, `>|`, `&>` or `&>>`; and the step library's writer, `fixloop_output NAME VALUE`
(`workflows/lib/fixloop.sh`), whose NAME is its first argument. The lines of a `NAME<<DELIMITER`
value are skipped up to the delimiter. Not seen (the runtime still catches them when the step
runs): a name that is computed (`printf '%s=%s\\n' "$name" …`, `echo "$name=…"`), a write through
`tee`, a variable holding the path, a file descriptor opened with `exec`, or a script
(`python -c`, `node -e`) that opens the file itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING

from fixloop.checker.events import visit
from fixloop.checker.tree import Command, Node_, Redirect, Word
from fixloop.diagnostics import Diagnostic

if TYPE_CHECKING:
    from fixloop.checker.document import CheckedDocument

OUTPUT_VARIABLE = "FIXLOOP_OUTPUT"
OUTPUT_HELPER = "fixloop_output"  # the step library's `fixloop_output NAME VALUE`
_OUTPUT_OPS = {">", ">>", ">|", "&>", "&>>"}


# A line of the output file as the source writes it: `\n` escapes (printf, echo -e) or newlines.
# Compiled on first need: only a document writing its step's outputs meets them.
@cache
def _line_break() -> re.Pattern[str]:
    return re.compile(r"\\n|\n")


@cache
def _output_line() -> re.Pattern[str]:
    return re.compile(
        r"\t*(?:\$')?['\"]*(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=|<<(?P<delimiter>[^'\"]*))"
    )


def undeclared_outputs(document: CheckedDocument) -> list[Diagnostic]:
    everywhere = {str(name) for name in document.outputs}
    found: list[Diagnostic] = []
    reported: set[tuple[int, int]] = set()
    for unit in document.units:
        interface = document.interface_of(unit.step)
        declared = set(interface.output_names) if interface is not None else everywhere
        shown = ", ".join(sorted(declared)) or "none"
        where = "its interface does not declare it" if interface else "the document does not"
        where += "" if interface else " declare it under `outputs:`"
        for node, _ in unit.nodes:
            # Most nodes neither call the writer nor redirect: tested inline, without a call.
            written = []
            if isinstance(node, Command) and node.name == OUTPUT_HELPER:
                written = _helper_write(node.words)
            if node.redirects and any(_to_output_file(r) for r in node.redirects):
                written += _written_names(node)
            for name, row, col in written:
                if name in declared or (row, col) in reported:
                    continue
                reported.add((row, col))
                step = f"step {unit.step!r}" if unit.step else "this block"
                found.append(
                    Diagnostic(
                        document.display,
                        row + 1,
                        col + 1,
                        "undeclared-output",
                        f"{step} writes output {name} to ${OUTPUT_VARIABLE}, but {where} "
                        f"(declared: {shown})",
                    )
                )
    return found


def _is_name(text: str) -> bool:
    """A shell variable name, `[A-Za-z_][A-Za-z0-9_]*`: an ASCII identifier (string tests, not
    a regex compiled at every check's start)."""
    return text.isascii() and text.isidentifier()


def _helper_write(words: Sequence[Word]) -> list[tuple[str, int, int]]:
    """The literal NAME of a `fixloop_output NAME VALUE` call, with 0-based row and column."""
    if len(words) >= 2:
        helper, name = words[0], words[1]
        literal = name.literal
        if helper.literal == OUTPUT_HELPER and literal and _is_name(literal):
            return [(literal, name.row, name.col)]
    return []


def _to_output_file(redirect: Redirect) -> bool:
    target = redirect.target
    if redirect.op not in _OUTPUT_OPS or redirect.fd not in (None, "1") or target is None:
        return False
    reads = target.reads
    return len(reads) == 1 and reads[0].name == OUTPUT_VARIABLE and reads[0].whole


def _stdout_elsewhere(command: Command) -> bool:
    for redirect in command.redirects:
        if redirect.fd not in (None, "1") or _to_output_file(redirect):
            continue
        if redirect.op in _OUTPUT_OPS or redirect.op == ">&":
            return True
    return False


def _writers(node: Node_) -> Iterator[Command]:
    """The commands whose standard output goes where `node`'s redirection points."""
    if isinstance(node, Command):
        yield node
        return
    captured: set[int] = set()  # commands inside `$(…)`: their output is a word, not the file
    walked = visit(node)
    for inner, _ in walked:
        if isinstance(inner, Command):
            captured |= {id(n) for sub in inner.substitutions for n, _ in visit(sub)}
    for inner, _ in walked:
        if (
            isinstance(inner, Command)
            and id(inner) not in captured
            and not _stdout_elsewhere(inner)
        ):
            yield inner


def _written_names(node: Node_) -> Iterator[tuple[str, int, int]]:
    for command in _writers(node):
        words = command.words
        name = command.name
        if name == "printf":
            yield from _printf(words[1:])
        elif name == "echo":
            yield from _echo(words[1:])
        elif name == "cat":
            for redirect in command.redirects:
                if redirect.op in ("<<", "<<-") and redirect.body is not None:
                    yield from _lines(redirect.body, escapes=False)


def _printf(args: list[Word]) -> Iterator[tuple[str, int, int]]:
    if args and args[0].literal == "--":
        args = args[1:]
    if args and args[0].literal != "-v":  # `printf -v var` writes a variable, not the file
        yield from _lines(args[0], escapes=True)


def _echo(args: list[Word]) -> Iterator[tuple[str, int, int]]:
    escapes = False
    while args and re.fullmatch(r"-[neE]+", args[0].literal or ""):
        for flag in (args[0].literal or "")[1:]:
            escapes = {"e": True, "E": False}.get(flag, escapes)
        args = args[1:]
    if args:
        yield from _lines(args[0], escapes=escapes)


def _lines(word: Word, *, escapes: bool) -> Iterator[tuple[str, int, int]]:
    """The literal names of the output lines `word` writes, with 0-based row and column."""
    text = word.text
    breaks = [m for m in _line_break().finditer(text) if escapes or m.group() == "\n"]
    bounds = zip(
        [0] + [m.end() for m in breaks], [m.start() for m in breaks] + [len(text)], strict=True
    )
    delimiter: str | None = None
    for start, end in bounds:
        line = text[start:end]
        if delimiter is not None:  # a line of a NAME<<DELIMITER value
            if line.rstrip("'\"").endswith(delimiter):
                delimiter = None
            continue
        match = _output_line().match(line)
        if match is None:  # not an output line, or a computed name (`%s=`, `$name=`)
            continue
        if match["delimiter"] is not None:
            delimiter = match["delimiter"].strip() or None
        offset = start + match.start("name")
        before = text[:offset]
        row = word.pos.row + before.count("\n")
        col = len(before) - before.rfind("\n") - 1 if "\n" in before else word.pos.col + offset
        yield match["name"], row, col
