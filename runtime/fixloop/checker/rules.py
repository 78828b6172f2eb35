"""Generic rules: defects any pack can have, found without a single contract.

- `bash-syntax`: a bash block that does not parse (confirmed with `bash -n`; when bash accepts what
  tree-sitter-bash rejects, it is a warning that the checker cannot see into that stretch).
- `undefined-variable`: a variable read that nothing in scope sets, declares as an input or output,
  or lists under `checker.env` (in the runner's documents, or those listing their inputs).
- `unexported-env`: an environment variable read by an embedded `node -e`, `python -c` (or
  heredoc) script that nothing exports: the REVIEW_PATH / FIX_REPORT_PATH defect. On everywhere.
- `unquoted-input`: `$INPUT` unquoted in a command's arguments: an input is data, never code.
- `rm-rf-empty-var`: `rm -r` of a path built from a variable that could be empty.
- `errexit-arithmetic`: `((n++))` under `set -e` exits when n was 0; use `n=$((n + 1))`.
- `undeclared-output`: a `NAME=` written to `"$FIXLOOP_OUTPUT"` whose NAME the document's
  `outputs:` does not declare (`outputs.py`): the runtime would fail that step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from fixloop.checker import bash_n
from fixloop.checker.events import visit
from fixloop.checker.outputs import undeclared_outputs
from fixloop.checker.scoped import errexit_of
from fixloop.checker.tree import Arith, Command
from fixloop.checker.tree_words import reads_in
from fixloop.checker.variables import undefined_variables, unexported_env
from fixloop.checker.words import MAX_NESTING
from fixloop.diagnostics import Diagnostic, Severity
from fixloop.documents.pack_rules import PACK_RULES
from fixloop.records import record

if TYPE_CHECKING:
    from fixloop.checker.document import CheckedDocument, Unit

Check = Callable[["CheckedDocument"], list[Diagnostic]]


@record(frozen=True)
class Rule:
    help: str
    check: Check | None = None  # None: reported where the checker meets it, not by a pass


def _per_unit(check: Callable[[CheckedDocument, Unit], list[Diagnostic]]) -> Check:
    return lambda document: [d for unit in document.units for d in check(document, unit)]


def _unclosed(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    if unit.block.closed:
        return []
    message = "this code fence is never closed"
    return [Diagnostic(document.display, unit.block.fence_line, 1, "unclosed-fence", message)]


def check_rules(document: CheckedDocument) -> list[Diagnostic]:
    """Every generic rule with a check, on one document."""
    return [d for rule in RULES.values() if rule.check for d in rule.check(document)]


def _syntax(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    if unit.script.too_deep:
        at = unit.block.content_line
        message = (
            f"nested more than {MAX_NESTING} levels deep; the checker does not look into this block"
        )
        if unit.block.closed and not bash_n.accepts(unit.block.content):
            message += ", and bash -n cannot parse it"
            return [Diagnostic(document.display, at, 1, "bash-syntax", message)]
        return [Diagnostic(document.display, at, 1, "bash-syntax", message, Severity.WARNING)]
    if not unit.script.errors or not unit.block.closed:
        return []
    accepted = bash_n.accepts(unit.block.content)
    sketch = None if document.runner or accepted else _sketch(unit.block.content)
    if sketch is not None:
        # A template for the model to fill in (`git merge <feature-branch>`, `# ...` for the
        # part left out), not a script fixloop runs: worth a look, not a failed check.
        message = f"bash cannot parse this block as written: it is a sketch ({sketch})"
        return [
            Diagnostic(
                document.display,
                unit.block.content_line,
                1,
                "bash-syntax",
                message,
                Severity.WARNING,
            )
        ]
    found = []
    for error in unit.script.errors[:1]:
        near = error.reason or (
            f"missing `{error.missing}`" if error.missing else _unexpected(error.text)
        )
        if accepted:
            found.append(
                Diagnostic(
                    document.display,
                    error.pos.row + 1,
                    error.pos.col + 1,
                    "bash-syntax",
                    f"tree-sitter-bash cannot parse this ({near}) "
                    "though bash -n accepts it; commands here are not checked",
                    Severity.WARNING,
                )
            )
        else:
            found.append(
                Diagnostic(
                    document.display,
                    error.pos.row + 1,
                    error.pos.col + 1,
                    "bash-syntax",
                    f"bash cannot parse this block: {near}",
                )
            )
    return found


def _unexpected(text: str) -> str:
    """What is wrong at a stretch tree-sitter could not place, in one line."""
    if text[:1] in ("'", '"', "`") and text.count(text[0]) == 1:
        # bash reads an unclosed quote to the end of the block: every command after it is text.
        return f"the {text[0]} quote opened here is never closed"
    lines = text.strip().splitlines() or [text]
    cut = len(lines) > 1 or len(lines[0]) > 80
    return f"unexpected `{lines[0][:80]}{'…' if cut else ''}`"


# Compiled on first need: only a block bash refuses meets these two.
@cache
def _placeholder() -> re.Pattern[str]:
    return re.compile(r"(?<![<\w$])<[A-Za-z][^<>\n]{0,80}>")


@cache
def _elision() -> re.Pattern[str]:
    return re.compile(r"^\s*(?:#\s*)?(?:\.\.\.|…)\s*$", re.MULTILINE)


def _sketch(text: str) -> str | None:
    """Why a block that bash refuses reads as a sketch for the model, or None."""
    placeholder = _placeholder().search(text)
    if placeholder is not None:
        return f"placeholders such as `{placeholder.group(0)}` for the model to fill in"
    if _elision().search(text):
        return "`...` stands for a part left out"
    return None


def bash_refusals(documents: Sequence[CheckedDocument]) -> list[Diagnostic]:
    """`bash-syntax` for the blocks tree-sitter parsed cleanly but bash refuses (`bash_n.py`),
    at the line bash names."""
    clean = [
        (document, unit)
        for document in documents
        for unit in document.units
        if unit.block.closed and not unit.script.errors and not unit.script.too_deep
    ]
    found = []
    for index, refusal in bash_n.refusals([unit.block.content for _, unit in clean]).items():
        document, unit = clean[index]
        last = unit.block.content_line + max(unit.block.content.count("\n") - 1, 0)
        line = min(unit.block.content_line + (refusal.line or 1) - 1, last)
        sketch = None if document.runner else _sketch(unit.block.content)
        if sketch is not None:
            message = f"bash cannot parse this block as written: it is a sketch ({sketch})"
            found.append(
                Diagnostic(document.display, line, 1, "bash-syntax", message, Severity.WARNING)
            )
        else:
            message = f"bash cannot parse this block: {refusal.message}"
            found.append(Diagnostic(document.display, line, 1, "bash-syntax", message))
    return found


def _unquoted_inputs(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    inputs = document.inputs
    found: list[Diagnostic] = []
    if not inputs:
        return found
    for node in unit.commands:
        if not node.words:
            continue
        if node.name in ("[[", "export", "local", "declare", "readonly"):
            continue
        reads = reads_in(node.words[1:])
        if node.redirects:
            reads += reads_in(r.target for r in node.redirects if r.target is not None)
        for read in reads:
            if read.name in inputs and not read.quoted:
                found.append(
                    Diagnostic(
                        document.display,
                        read.pos.row + 1,
                        read.pos.col,
                        "unquoted-input",
                        f'input ${read.name} is expanded without quotes: write "${read.name}"',
                    )
                )
    return found


def _non_empty_inputs(document: CheckedDocument) -> set[str]:
    """Inputs whose declared pattern rejects the empty string."""
    safe: set[str] = set()
    for name, spec in (document.source.metadata.get("inputs") or {}).items():
        pattern = spec.get("pattern") if isinstance(spec, dict) else None
        if pattern and re.search(str(pattern), "") is None:
            safe.add(str(name))
    return safe


# Compiled on first need: only an assignment or a word with `${NAME:?}` meets these two.
@cache
def _expansion() -> re.Pattern[str]:
    return re.compile(r"\$(?:\(…\)|\(\(…\)\)|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])")


@cache
def _required() -> re.Pattern[str]:
    return re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*):?\?")


def _made_safe(command: Command) -> set[str]:
    """Names this command makes non-empty: a value with a literal part (`"$HOME/x"`) or from
    `mktemp`, a `-n`/`-d` test, `${NAME:?}` (the shell stops when NAME is empty)."""
    safe: set[str] = set()
    for assign in command.assigns:
        value = assign.value
        if value is None:
            continue
        from_mktemp = any(
            isinstance(c, Command) and c.name == "mktemp"
            for sub in value.subs
            for c, _ in visit(sub)
        )
        if _expansion().sub("", value.shape).strip() or from_mktemp:
            safe.add(assign.name)
    for word in command.words:
        safe |= {m["name"] for m in _required().finditer(word.text)}
    if command.name in ("[", "[[", "test"):
        shapes = [w.shape for w in command.words]
        for flag in ("-n", "-d"):
            if flag in shapes and shapes.index(flag) + 1 < len(shapes):
                safe.add(shapes[shapes.index(flag) + 1].lstrip("$"))
    return safe


def _is_recursive_rm(command: Command) -> bool:
    if command.name != "rm":
        return False
    words = command.words
    short = "".join(w.shape[1:] for w in words[1:] if w.shape[:1] == "-" and w.shape[:2] != "--")
    return "r" in short or "R" in short or any(w.shape == "--recursive" for w in words[1:])


def _rm_rf(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    # Most blocks remove nothing recursively: what makes a name safe is not looked for there.
    if not any(_is_recursive_rm(node) for node in unit.commands):
        return []
    safe = _non_empty_inputs(document)
    found = []
    for node in unit.commands:
        safe |= _made_safe(node)
        if not _is_recursive_rm(node):
            continue
        for word in node.words[1:]:
            if word.shape.startswith("-") or not word.reads:
                continue
            first = word.reads[0]
            if not word.shape.startswith(f"${first.name}") or first.defaulted:
                continue
            if word.shape == f"${first.name}":
                continue  # `rm -rf "$dir"` with dir empty removes nothing; `"$dir"/x` is `/x`
            if first.name in safe:
                continue
            command = " ".join(w.text for w in node.words)
            message = (
                f"`{command}`: ${first.name} could be empty; guard it "
                f'(`${{{first.name}:?}}` or `[ -n "${first.name}" ]`)'
            )
            found.append(
                Diagnostic(
                    document.display, word.pos.row + 1, word.pos.col + 1, "rm-rf-empty-var", message
                )
            )
    return found


def _arithmetic(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    # fixloop's runner starts a workflow's shell under `set -euo pipefail`.
    errexit = errexit_of(document, unit)
    found = []
    for node, cond in unit.nodes:
        if isinstance(node, Command):
            name = node.name
            if name == "set":
                args = [w.literal or "" for w in node.words[1:]]
                if any(a.startswith("-") and "e" in a[1:] and a[1:].isalpha() for a in args) or (
                    "-o" in args and "errexit" in args
                ):
                    errexit = True
                continue
            if name != "let" or not any(
                ("++" in (w.literal or "")) or ("--" in (w.literal or "")) for w in node.words[1:]
            ):
                continue
        elif not (isinstance(node, Arith) and node.increments):
            continue
        if errexit and not cond:
            found.append(
                Diagnostic(
                    document.display,
                    node.pos.row + 1,
                    node.pos.col + 1,
                    "errexit-arithmetic",
                    "under `set -e`, `((n++))` exits the script when n was 0; write n=$((n + 1))",
                )
            )
    return found


# The one registry of what the checker reports: generic rules run by `check_rules`, and the ids
# the checker itself reports. A contract id may take none of these, nor a pack rule's id.
RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "bash-syntax": Rule("a bash block that bash cannot parse", _per_unit(_syntax)),
        "undefined-variable": Rule(
            "a variable read that nothing in scope sets, declares or exports", undefined_variables
        ),
        "unexported-env": Rule(
            "an embedded script reads an environment variable that nothing exports", unexported_env
        ),
        "unquoted-input": Rule(
            "an input expanded without quotes in a command's arguments", _per_unit(_unquoted_inputs)
        ),
        "rm-rf-empty-var": Rule(
            "rm -r of a path built from a variable that could be empty", _per_unit(_rm_rf)
        ),
        "errexit-arithmetic": Rule(
            "((n++)) under set -e exits the script when n was 0", _per_unit(_arithmetic)
        ),
        "unclosed-fence": Rule("a code fence that is never closed", _per_unit(_unclosed)),
        "undeclared-output": Rule(
            "an output written to $FIXLOOP_OUTPUT that `outputs:` does not declare",
            undeclared_outputs,
        ),
        "contract-spec": Rule("a contract declaration that does not load"),
        "contract-scope": Rule("a contract whose `in:` names a step or document that is not there"),
        "usage": Rule("a path or option the command line cannot use"),
        "unused-suppression": Rule("a `# fixloop: ignore[rule]` comment that silences nothing"),
        "source-not-found": Rule("a block sources a step library that is not in the pack"),
    }
)
RESERVED_IDS = frozenset(RULES) | frozenset(PACK_RULES)
