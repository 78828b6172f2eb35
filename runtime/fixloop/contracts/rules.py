"""Generic rules: defects any pack can have, found without a single contract.

- `bash-syntax`: a bash block that does not parse (confirmed with `bash -n`; when bash accepts what
  tree-sitter-bash rejects, it is a warning that the checker cannot see into that stretch).
- `undefined-variable`: a variable read that nothing in scope sets, declares as an input or output,
  or lists under `checker.env`; and an environment variable read by an embedded `node -e`,
  `python -c` (or heredoc) script that nothing exports: the REVIEW_PATH / FIX_REPORT_PATH defect.
- `unquoted-input`: `$INPUT` unquoted in a command's arguments: an input is data, never code.
- `rm-rf-empty-var`: `rm -r` of a path built from a variable that could be empty.
- `errexit-arithmetic`: `((n++))` under `set -e` exits when n was 0; use `n=$((n + 1))`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from fixloop.contracts.document import CheckedDocument, Unit
from fixloop.contracts.events import children
from fixloop.contracts.syntax import (
    AndOr,
    Arith,
    Case,
    Command,
    If,
    Loop,
    Node_,
    Not,
    Read,
    Word,
)
from fixloop.diagnostics import Diagnostic, Severity

RULES = {
    "bash-syntax": "a bash block that bash cannot parse",
    "undefined-variable": "a variable read that nothing in scope sets, declares or exports",
    "unquoted-input": "an input expanded without quotes in a command's arguments",
    "rm-rf-empty-var": "rm -r of a path built from a variable that could be empty",
    "errexit-arithmetic": "((n++)) under set -e exits the script when n was 0",
    "unclosed-fence": "a code fence that is never closed",
}

WELL_KNOWN = {
    "HOME", "PATH", "PWD", "OLDPWD", "USER", "SHELL", "TMPDIR", "LANG", "LC_ALL", "TERM",
    "HOSTNAME", "UID", "EUID", "PPID", "RANDOM", "SECONDS", "LINENO", "BASH", "BASH_SOURCE",
    "BASH_VERSION", "BASHPID", "BASH_REMATCH", "FUNCNAME", "IFS", "OPTARG", "OPTIND",
    "PIPESTATUS", "REPLY", "CI", "EDITOR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR",
    "ARGUMENTS", "GIT_DIR", "GIT_WORK_TREE", "NODE_OPTIONS", "PYTHONPATH", "VIRTUAL_ENV",
}  # fmt: skip
_WELL_KNOWN_PREFIXES = ("FIXLOOP_", "GITHUB_", "RUNNER_", "LC_")
_SCRIPT_RUNNERS = {"node", "python", "python3", "ruby", "perl", "deno", "bun"}
_ENV_READ = re.compile(
    r"process\.env(?:\.(?P<a>[A-Za-z_]\w*)|\[\s*['\"](?P<b>[A-Za-z_]\w*)['\"]\s*\])"
    r"|os\.environ(?:\.get\(\s*|\[\s*)['\"](?P<c>[A-Za-z_]\w*)['\"]"
    r"|os\.getenv\(\s*['\"](?P<d>[A-Za-z_]\w*)['\"]"
    r"|ENV\[\s*['\"](?P<e>[A-Za-z_]\w*)['\"]\s*\]"
)
_DEFINING_COMMANDS = {"read", "mapfile", "readarray", "getopts"}


def _visit(node: Node_ | None, cond: bool = False) -> Iterator[tuple[Node_, bool]]:
    """Every node with whether it runs in a condition context (where `set -e` does not apply)."""
    if node is None:
        return
    yield node, cond
    if isinstance(node, Command):
        for word in _words(node):
            for sub in word.subs:
                yield from _visit(sub, True)
        if node.trap is not None:
            yield from _visit(node.trap, cond)
        return
    if isinstance(node, If):
        for test, body in node.clauses:
            yield from _visit(test, True)
            yield from _visit(body, cond)
        yield from _visit(node.orelse, cond)
        return
    if isinstance(node, AndOr):
        yield from _visit(node.left, True)
        yield from _visit(node.right, cond)
        return
    if isinstance(node, Not):
        yield from _visit(node.body, True)
        return
    if isinstance(node, Loop):
        yield from _visit(node.cond, True)
        yield from _visit(node.body, cond)
        return
    for child in children(node):
        yield from _visit(child, cond)


def _words(command: Command) -> list[Word]:
    words = list(command.words)
    words += [a.value for a in command.assigns if a.value is not None]
    for redirect in command.redirects:
        words += [w for w in (redirect.target, redirect.body) if w is not None]
    return words


def _node_words(node: Node_) -> list[Word]:
    if isinstance(node, Command):
        return _words(node)
    words = [w for r in node.redirects for w in (r.target, r.body) if w is not None]
    if isinstance(node, Loop) and node.words:
        words += node.words
    if isinstance(node, Case) and node.subject is not None:
        words.append(node.subject)
    return words


@dataclass
class _Scope:
    defined: set[str]
    exported: set[str]


def _defined_in(units: list[Unit]) -> _Scope:
    defined: set[str] = set()
    exported: set[str] = set()
    for unit in units:
        for node, _ in _visit(unit.script.body):
            if isinstance(node, Command):
                defined |= {a.name for a in node.assigns}
                exported |= set(node.exported)
                exported |= {a.name for a in node.assigns if a.kind == "export"}
                defined |= _defined_by_command(node)
            elif isinstance(node, Loop) and node.var:
                defined.add(node.var)
    return _Scope(defined | exported, exported)


def _defined_by_command(command: Command) -> set[str]:
    names: set[str] = set()
    if not command.words:
        return names
    name = command.words[0].literal
    args = [w.literal or "" for w in command.words[1:]]
    if name in _DEFINING_COMMANDS:
        names |= {a for a in args if re.fullmatch(r"[A-Za-z_]\w*", a)}
        if name == "read" and not names:
            names.add("REPLY")
    if name == "printf" and "-v" in args and args.index("-v") + 1 < len(args):
        names.add(args[args.index("-v") + 1])
    if name == "declare" and any(a.startswith("-") and "x" in a for a in args):
        names |= {a for a in args if not a.startswith("-")}
    return names


def _known(name: str, document: CheckedDocument) -> bool:
    return (
        name in WELL_KNOWN
        or name.startswith(_WELL_KNOWN_PREFIXES)
        or name in document.inputs
        or name in document.outputs
        or name in document.contracts.checker.env
    )


def check_rules(document: CheckedDocument, strict_variables: bool) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for unit in document.units:
        if not unit.block.closed:
            found.append(Diagnostic(document.display, unit.block.fence_line, 1, "unclosed-fence",
                                    "this code fence is never closed"))  # fmt: skip
        found += _syntax(document, unit)
        found += _rm_rf(document, unit)
        found += _arithmetic(document, unit)
        found += _unquoted_inputs(document, unit)
    if strict_variables:
        found += _undefined(document)
    return found


def _syntax(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    if not unit.script.errors or not unit.block.closed:
        return []
    accepted = _bash_accepts(unit.block.content)
    found = []
    for error in unit.script.errors[:1]:
        near = f"missing `{error.missing}`" if error.missing else f"unexpected `{error.text}`"
        if accepted:
            found.append(Diagnostic(document.display, error.pos.row + 1, error.pos.col + 1,
                                    "bash-syntax", f"tree-sitter-bash cannot parse this ({near}) "
                                    "though bash -n accepts it; commands here are not checked",
                                    Severity.WARNING))  # fmt: skip
        else:
            found.append(Diagnostic(document.display, error.pos.row + 1, error.pos.col + 1,
                                    "bash-syntax", f"bash cannot parse this block: {near}"))  # fmt: skip
    return found


def _bash_accepts(text: str) -> bool:
    try:
        done = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True,
                              timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _undefined(document: CheckedDocument) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    steps: dict[str | None, list[Unit]] = {}
    for unit in document.units:
        steps.setdefault(unit.step, []).append(unit)
    for units in steps.values():
        scope = _defined_in(units)
        reported: set[str] = set()
        for unit in units:
            for node, _ in _visit(unit.script.body):
                reads: list[Read] = [r for w in _node_words(node) for r in w.reads]
                if isinstance(node, Arith):
                    reads += node.reads
                for read in reads:
                    if (read.defaulted or read.name in scope.defined or read.name in reported
                            or _known(read.name, document)):  # fmt: skip
                        continue
                    reported.add(read.name)
                    found.append(Diagnostic(
                        document.display, read.pos.row + 1, read.pos.col + 1,
                        "undefined-variable",
                        f"${read.name} is read but nothing in this step sets it, and it is not "
                        "a declared input, output or checker.env name",
                    ))  # fmt: skip
                if isinstance(node, Command):
                    found += _env_reads(document, node, scope)
    return found


def _env_reads(document: CheckedDocument, command: Command, scope: _Scope) -> list[Diagnostic]:
    from fixloop.contracts.events import unwrap

    argv, _ = unwrap(command.words)
    runner = (argv[0].literal or "").rsplit("/", 1)[-1] if argv else ""
    if runner not in _SCRIPT_RUNNERS and not runner.startswith("python"):
        return []
    prefixed = {a.name for a in command.assigns}
    prefixed |= {(w.literal or "").split("=", 1)[0] for w in command.words[: len(command.words)
                                                                          - len(argv)]}  # fmt: skip
    texts = [w for w in argv[1:] if w.literal is not None]
    texts += [r.body for r in command.redirects if r.body is not None]
    found = []
    for word in texts:
        for match in _ENV_READ.finditer(word.text):
            name = next(g for g in match.groups() if g)
            if name in scope.exported or name in prefixed or _known(name, document):
                continue
            before = word.text[: match.start()]
            row = word.pos.row + before.count("\n")
            col = (len(before) - before.rfind("\n") - 1) if "\n" in before else word.pos.col + len(
                before)  # fmt: skip
            state = "assigned but not exported" if name in scope.defined else "nothing exports it"
            found.append(Diagnostic(document.display, row + 1, col + 1, "undefined-variable",
                                    f"the embedded `{runner}` script reads the environment "
                                    f"variable {name}, but {state}"))  # fmt: skip
    return found


def _unquoted_inputs(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    inputs = document.inputs
    found = []
    for node, _ in _visit(unit.script.body):
        if not isinstance(node, Command) or not node.words:
            continue
        if node.words[0].literal in ("[[", "export", "local", "declare", "readonly"):
            continue
        targets = [r.target for r in node.redirects if r.target is not None]
        for word in [*node.words[1:], *targets]:
            for read in word.reads:
                if read.name in inputs and not read.quoted:
                    found.append(Diagnostic(document.display, read.pos.row + 1, read.pos.col,
                                            "unquoted-input",
                                            f"input ${read.name} is expanded without quotes: "
                                            f'write "${read.name}"'))  # fmt: skip
    return found


def _rm_rf(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    safe: set[str] = set()
    for name, spec in (document.source.metadata.get("inputs") or {}).items():
        pattern = spec.get("pattern") if isinstance(spec, dict) else None
        if pattern and re.search(str(pattern), "") is None:
            safe.add(str(name))
    found = []
    for node, _ in _visit(unit.script.body):
        if not isinstance(node, Command):
            continue
        for assign in node.assigns:
            value = assign.value
            if value is not None and (
                (value.literal or "").strip() or any(
                    c.words and c.words[0].literal == "mktemp"
                    for s in value.subs for c, _ in _visit(s) if isinstance(c, Command))
            ):  # fmt: skip
                safe.add(assign.name)
        words = node.words
        if words and words[0].literal in ("[", "[[", "test"):
            shapes = [w.shape for w in words]
            for flag in ("-n", "-d"):
                if flag in shapes and shapes.index(flag) + 1 < len(shapes):
                    safe.add(shapes[shapes.index(flag) + 1].lstrip("$"))
        if not words or words[0].literal != "rm":
            continue
        flags = "".join(w.shape[1:] for w in words[1:] if w.shape.startswith("-")
                        and not w.shape.startswith("--"))  # fmt: skip
        long = {w.shape for w in words[1:] if w.shape.startswith("--")}
        if not ("r" in flags or "R" in flags or "--recursive" in long):
            continue
        for word in words[1:]:
            if word.shape.startswith("-") or not word.reads:
                continue
            first = word.reads[0]
            if not word.shape.startswith(f"${first.name}") or first.defaulted:
                continue
            if first.name in safe:
                continue
            found.append(Diagnostic(document.display, word.pos.row + 1, word.pos.col + 1,
                                    "rm-rf-empty-var",
                                    f"`{' '.join(w.text for w in words)}`: ${first.name} could "
                                    f"be empty; guard it (`${{{first.name}:?}}` or "
                                    f'`[ -n "${first.name}" ]`)'))  # fmt: skip
    return found


def _arithmetic(document: CheckedDocument, unit: Unit) -> list[Diagnostic]:
    errexit = False
    found = []
    for node, cond in _visit(unit.script.body):
        if isinstance(node, Command) and node.words and node.words[0].literal == "set":
            args = [w.literal or "" for w in node.words[1:]]
            if any(a.startswith("-") and "e" in a[1:] and a[1:].isalpha() for a in args) or (
                "-o" in args and "errexit" in args
            ):
                errexit = True
        is_let = (isinstance(node, Command) and node.words and node.words[0].literal == "let"
                  and any(("++" in (w.literal or "")) or ("--" in (w.literal or ""))
                          for w in node.words[1:]))  # fmt: skip
        if errexit and not cond and ((isinstance(node, Arith) and node.increments) or is_let):
            found.append(Diagnostic(document.display, node.pos.row + 1, node.pos.col + 1,
                                    "errexit-arithmetic",
                                    "under `set -e`, `((n++))` exits the script when n was 0; "
                                    "write n=$((n + 1))"))  # fmt: skip
    return found
