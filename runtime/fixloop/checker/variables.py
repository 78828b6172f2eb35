"""Variables: a read that nothing in scope sets, declares or exports (`undefined-variable`), and
an embedded script's environment read that nothing exports (`unexported-env`).

In scope for a read are: the step's own assignments (a step's blocks run in one shell), `read`,
`mapfile`, `getopts`, `printf -v` and `for` targets, the document's declared inputs and outputs,
the names listed under `checker.env`, and the environment every shell has. An embedded `node -e`,
`python -c` (or heredoc) script reads the *environment*: its `process.env.X` / `os.environ["X"]`
needs X exported, a prefix assignment, or an input. This is the REVIEW_PATH / FIX_REPORT_PATH
defect: a step that sets one name while its script reads another.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from fixloop.checker.tree import Arith, Command, Loop, Read, node_words
from fixloop.checker.tree_words import reads_in
from fixloop.checker.wrappers import WRAPPERS, unwrap
from fixloop.diagnostics import Diagnostic
from fixloop.records import record

if TYPE_CHECKING:
    from fixloop.checker.document import CheckedDocument, Unit
    from fixloop.documents.interface import StepInterface

WELL_KNOWN = {
    "HOME",
    "PATH",
    "PWD",
    "OLDPWD",
    "USER",
    "SHELL",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "TERM",
    "HOSTNAME",
    "UID",
    "EUID",
    "PPID",
    "RANDOM",
    "SECONDS",
    "LINENO",
    "BASH",
    "BASH_SOURCE",
    "BASH_VERSION",
    "BASHPID",
    "BASH_REMATCH",
    "FUNCNAME",
    "IFS",
    "OPTARG",
    "OPTIND",
    "PIPESTATUS",
    "REPLY",
    "CI",
    "EDITOR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PROJECT_DIR",
    "ARGUMENTS",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "NODE_OPTIONS",
    "PYTHONPATH",
    "VIRTUAL_ENV",
}
_WELL_KNOWN_PREFIXES = ("FIXLOOP_", "GITHUB_", "RUNNER_", "LC_")
_SCRIPT_RUNNERS = {"node", "python", "python3", "ruby", "perl", "deno", "bun"}


# Compiled on first need: only a command running a script (`python -c …`) is searched.
@cache
def _env_read() -> re.Pattern[str]:
    return re.compile(
        r"process\.env(?:\.(?P<a>[A-Za-z_]\w*)|\[\s*['\"](?P<b>[A-Za-z_]\w*)['\"]\s*\])"
        r"|os\.environ(?:\.get\(\s*|\[\s*)['\"](?P<c>[A-Za-z_]\w*)['\"]"
        r"|os\.getenv\(\s*['\"](?P<d>[A-Za-z_]\w*)['\"]"
        r"|ENV\[\s*['\"](?P<e>[A-Za-z_]\w*)['\"]\s*\]"
    )


_DEFINING_COMMANDS = {"read", "mapfile", "readarray", "getopts"}
_NAMING_COMMANDS = _DEFINING_COMMANDS | {"printf", "declare"}  # `_defined_by_command` reads


@record
class Scope:
    """What a step's blocks set (and export), however: assignments, `read`, loops, helpers."""

    defined: set[str]
    exported: set[str]


def _steps(document: CheckedDocument) -> dict[str | None, tuple[list[Unit], Scope]]:
    """Each step's units and what they set, found once per document for both rules here."""
    if document.step_scopes is None:
        steps: dict[str | None, list[Unit]] = {}
        for unit in document.units:
            steps.setdefault(unit.step, []).append(unit)
        document.step_scopes = {step: (units, _defined_in(units)) for step, units in steps.items()}
    return document.step_scopes


def _defined_in(units: list[Unit]) -> Scope:
    defined: set[str] = set()
    exported: set[str] = set()
    for unit in units:
        # The names the block's libraries define: most commands call none of them.
        helpers: set[str] = set().union(*(library.sources for library in unit.libraries))
        for node, _ in unit.nodes:
            if isinstance(node, Command):
                # Most commands set nothing: the tests below are what they cost.
                for assign in node.assigns:
                    defined.add(assign.name)
                    if assign.kind == "export":
                        exported.add(assign.name)
                if node.exported:
                    exported.update(node.exported)
                name = node.name
                if name in _NAMING_COMMANDS:
                    defined |= _defined_by_command(node)
                if name in helpers:
                    defined |= _defined_by_helper(node, unit)
            elif isinstance(node, Loop) and node.var:
                defined.add(node.var)
    return Scope(defined | exported, exported)


def _defined_by_helper(command: Command, unit: Unit) -> set[str]:
    """What a step-library helper sets for its caller: `local -n` arguments and globals."""
    name = command.name
    names: set[str] = set()
    for library in unit.libraries:
        if name is None or name not in library.sources:
            continue
        helper = library.helper(name)
        for index in helper.sets_arguments:
            if index < len(command.words) and command.words[index].literal:
                names.add(command.words[index].literal or "")
        names |= helper.sets_globals
    return names


def _defined_by_command(command: Command) -> set[str]:
    names: set[str] = set()
    if not command.words:
        return names
    name = command.name
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


def undefined_variables(document: CheckedDocument) -> list[Diagnostic]:
    """Reads nothing sets: in documents fixloop's runner executes, or that list their inputs.

    Elsewhere a `$NAME` is as often a value the prose asks the model to fill in as a mistake.
    """
    checker = document.contracts.checker
    if not (document.runner or checker.inputs or checker.env):
        return []
    found: list[Diagnostic] = []
    for step, (units, scope) in _steps(document).items():
        reported: set[str] = set()
        interface = document.interface_of(step)
        not_taken = _not_taken(document, interface)
        for unit in units:
            for node, _ in unit.nodes:
                reads = reads_in(node_words(node))
                if isinstance(node, Arith):
                    reads += node.reads
                for read in reads:
                    if read.name in scope.defined:  # the cheapest test first: most reads are set
                        continue
                    if read.name in not_taken:
                        assert interface is not None
                        if read.name not in reported:
                            reported.add(read.name)
                            found.append(_not_taken_diagnostic(document, step, read, interface))
                        continue
                    if read.name in reported or read.defaulted or _known(read.name, document):
                        continue
                    reported.add(read.name)
                    found.append(
                        Diagnostic(
                            document.display,
                            read.pos.row + 1,
                            read.pos.col + 1,
                            "undefined-variable",
                            f"${read.name} is read but nothing in this step sets it, and it is not "
                            "a declared input, output or checker.env name",
                        )
                    )
    return found


def unexported_env(document: CheckedDocument) -> list[Diagnostic]:
    """Environment reads of embedded scripts that nothing exports (rule `unexported-env`).

    In any document: a script's `process.env.X` is read from the environment, never from the
    shell's own variables, so X must be exported, given as a prefix assignment or an input.
    Outside the runner's documents a name may come from the user's own environment, so there a
    read is reported only when the step prepares the script's environment itself (it exports
    or assigns a variable) and leaves that name out: the REVIEW_PATH / FIX_REPORT_PATH slip.
    """
    found: list[Diagnostic] = []
    for units, scope in _steps(document).values():
        if not (document.runner or scope.defined):
            continue
        for unit in units:
            for node in unit.commands:
                # A command whose name expands runs no script, nor does one run by its own name
                # (most are) that names no script runner: both told without a call.
                if not node.name:
                    continue
                name = node.name
                if "/" in name or name in WRAPPERS or _is_script_runner(name):
                    found += _env_reads(document, node, scope)
    return found


def _not_taken(document: CheckedDocument, interface: StepInterface | None) -> set[str]:
    """The workflow inputs a step with its own interface does not take: the runner passes a
    step only the inputs its interface lists, so a read of one the step does not set itself is
    always empty."""
    declared = document.source.metadata.get("inputs")
    if interface is None or not isinstance(declared, dict):
        return set()
    return set(declared) - set(interface.input_names)


def _not_taken_diagnostic(
    document: CheckedDocument, step: str | None, read: Read, interface: StepInterface
) -> Diagnostic:
    takes = ", ".join(interface.input_names) or "none"
    return Diagnostic(
        document.display,
        read.pos.row + 1,
        read.pos.col + 1,
        "undefined-variable",
        f"step {step!r} reads input ${read.name}, which its interface does not take "
        f"(takes: {takes}); the runner passes a step only the inputs its interface lists",
    )


def _is_script_runner(name: str) -> bool:
    return name in _SCRIPT_RUNNERS or name.startswith("python")


def _env_reads(document: CheckedDocument, command: Command, scope: Scope) -> list[Diagnostic]:
    argv, _ = unwrap(command.words)
    runner = (argv[0].literal or "").rsplit("/", 1)[-1] if argv else ""
    if not _is_script_runner(runner):
        return []
    prefixed = {a.name for a in command.assigns}
    prefixed |= {
        (w.literal or "").split("=", 1)[0] for w in command.words[: len(command.words) - len(argv)]
    }
    texts = [w for w in argv[1:] if w.literal is not None]
    texts += [r.body for r in command.redirects if r.body is not None]
    found = []
    for word in texts:
        for match in _env_read().finditer(word.text):
            name = next(g for g in match.groups() if g)
            if name in scope.exported or name in prefixed or _known(name, document):
                continue
            before = word.text[: match.start()]
            row = word.pos.row + before.count("\n")
            col = (
                (len(before) - before.rfind("\n") - 1)
                if "\n" in before
                else word.pos.col + len(before)
            )
            state = (
                "it is assigned, not exported" if name in scope.defined else "nothing exports it"
            )
            found.append(
                Diagnostic(
                    document.display,
                    row + 1,
                    col + 1,
                    "unexported-env",
                    f"the embedded `{runner}` script reads the environment "
                    f"variable {name}, but {state}",
                )
            )
    return found
