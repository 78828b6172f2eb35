"""Entry point. Each command group lives in its own module exposing `register(subparsers)`.

A command's module is imported only when that command runs (`COMMANDS` maps each command to its
module): `fixloop --version` imports no command, and `fixloop check` does not pay for the
workflows, the Claude backend or the demo. The workflows are not listed here: any other command
name is looked up in the workflow registry, and `workflow_command` builds its command from the
registry's row. `fixloop --help` imports them all to list them.

Exit codes: 0 ok, 1 findings or violations, 2 usage or input error. Expected failures arrive as
FixloopError and are printed as `file:line:col: rule: message` lines; set FIXLOOP_DEBUG=1 to see a
traceback for an unexpected one.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import importlib
import os
import sys

from fixloop import __version__

# Not typing's TYPE_CHECKING: a hook runs `fixloop --version` only to see that fixloop is there,
# and importing typing (or argparse, or collections) would be a good part of its start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Collection, Sequence
    from typing import NoReturn

# The usage errors argparse reported in this process, with the command of the parser that
# reported it (the last one is the command line's).
_USAGE_ERRORS: list[tuple[str, str]] = []

# Command name → the module that registers it (workflows: `WORKFLOW_COMMAND`, from the registry).
COMMANDS: dict[str, str] = {
    "validate": "fixloop.cli.pack_commands",
    "agents": "fixloop.cli.pack_commands",
    "render": "fixloop.cli.pack_commands",
    "schema": "fixloop.cli.pack_commands",
    "step": "fixloop.cli.step_commands",
    "recover": "fixloop.cli.step_commands",
    "runs": "fixloop.cli.runs_command",
    "check": "fixloop.cli.check_command",
    "rule": "fixloop.cli.rule_command",
    "demo": "fixloop.cli.demo_command",
    "browser": "fixloop.cli.browser_command",
    "bench": "fixloop.cli.bench_command",
    "sandbox": "fixloop.cli.sandbox_command",
    "init": "fixloop.cli.init_command",
    "models": "fixloop.cli.model_option",
}
WORKFLOW_COMMAND = "fixloop.cli.workflow_command"


def _command_in(argv: Sequence[str]) -> str | None:
    """The command argv names (the top level takes no option with a value), if any."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv`: only the module of the command it names (all without argv)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        """argparse's own parser, remembering its usage error for `--json` (`_main`)."""

        def error(self, message: str) -> NoReturn:
            _USAGE_ERRORS.append((self.prog.removeprefix("fixloop").strip(), message))
            super().error(message)

    parser = Parser(
        prog="fixloop",
        description=(
            "Verified, automated code fixing driven by Markdown agent documents. "
            "Validate, render and check a pack; run its workflows headless."
        ),
    )
    parser.add_argument("--version", action="version", version=f"fixloop {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    command = _command_in(argv) if argv is not None else None
    if command is not None and command in COMMANDS:
        importlib.import_module(COMMANDS[command]).register(subparsers)
    elif argv is not None and "--version" in argv:
        pass
    elif command is not None and command in _workflows():
        importlib.import_module(WORKFLOW_COMMAND).register(subparsers, [command])
    else:
        for module in dict.fromkeys(COMMANDS.values()):
            importlib.import_module(module).register(subparsers)
        importlib.import_module(WORKFLOW_COMMAND).register(subparsers)
    return parser


def _workflows() -> Collection[str]:
    """The workflow names (the registry's rows: importing it imports no workflow)."""
    from fixloop.workflows.registry import WORKFLOWS

    return WORKFLOWS


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments == ["--version"]:  # what a hook runs to see fixloop is there: no parser needed
        print(f"fixloop {__version__}")
        return 0
    if _command_in(arguments) == "sandbox":
        # `sandbox exec` relays a command's output to the step that ran it, byte for byte; the
        # step's own output is masked where it is traced or printed.
        return _main(arguments, process=argv is None)
    if argv is None:
        gc.disable()  # for the imports too, until the command's parser is frozen (`_parser_frozen`)
    from fixloop.masking import MaskingStream

    # Every byte fixloop prints goes through masking: progress, summaries, escalations,
    # diagnostics quoting a model's answer, --json. Everything printing takes the stream when
    # it prints or when it is built (`ProgressPrinter`), both after this.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = MaskingStream(sys.stdout), MaskingStream(sys.stderr)
    try:
        code = _main(arguments, process=argv is None)
    finally:
        if argv is None:
            gc.enable()  # off for the whole of a quick command (`_parser_frozen`)
        for masked in (sys.stdout, sys.stderr):
            # A reader gone or a stream closed: nothing is lost by not flushing.
            with contextlib.suppress(BrokenPipeError, ValueError):
                masked.flush()
        sys.stdout, sys.stderr = streams
    if argv is None and _command_in(arguments) in _QUICK_EXIT:
        _exit_now(code)
    return code


# Commands a hook runs once per commit, which start no thread and leave no file open: their
# process ends without the interpreter's teardown (freeing every module, class and function it
# imported, a tenth of a one-document check's CPU; bench/startup.py). Everything else an exit
# does still happens, in the same order: the `atexit` handlers, then the streams' flush.
_QUICK_EXIT = frozenset({"check", "rule"})


def _exit_now(code: int) -> NoReturn:
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a stream closed
            stream.flush()
    os._exit(code)


def _parser_frozen(arguments: list[str]) -> argparse.ArgumentParser:
    """The parser, its command's modules imported with the collector off, then frozen.

    What the command imports (its modules, their classes and constants) lives as long as the
    process: the cycle collector walking it at every collection, during the imports and after,
    was a tenth of a one-document `fixloop check` (bench/startup.py). Frozen, it is left out.
    Only for the process's own command: called from a longer-lived program (a test), freezing
    would keep that program's garbage from the collector for ever.

    A quick command (`check`, `rule`) then runs with the collector still off, as a check called
    from a program does anyway (`checker.checking._collector_paused`: it builds no cycles): its
    young collections were 2 ms of a one-document check, and asking whether the process froze
    anything (`gc.get_freeze_count()` walks every frozen object) 3 ms more. `main` turns the
    collector on again before the exit handlers run.
    """
    gc.disable()
    try:
        return build_parser(arguments)
    finally:
        gc.freeze()
        if _command_in(arguments) not in _QUICK_EXIT:
            gc.enable()


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def _main(arguments: list[str], process: bool = False) -> int:
    parser = _parser_frozen(arguments) if process else build_parser(arguments)
    command = ""
    try:
        # parse_args, in two halves: an unknown flag is refused once its command is known.
        args, extra = parser.parse_known_args(arguments)
        if extra:
            from fixloop.cli.envelope import command_of

            command = command_of(args)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:
        if exc.code == 2 and "--json" in arguments and _USAGE_ERRORS:
            where, message = _USAGE_ERRORS[-1]
            _usage_envelope(command or where, message)
        raise
    from fixloop.diagnostics import FixloopError

    try:
        result: int = args.handler(args)
    except FixloopError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        from fixloop.cli import envelope

        if envelope.wants_json(args):  # a script reading stdout gets the one shape, failed
            items = envelope.diagnostic_items(exc.diagnostics)
            envelope.emit(envelope.command_of(args), exc.exit_code, items=items)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fixloop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`fixloop … | head`): nothing is wrong, and nothing more is said.
        # Python would still flush stdout at exit and complain; point it at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13  # what a shell reports for a writer ended by SIGPIPE
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in _FULL:
            # A full disk is the machine's condition, not fixloop's fault: one located line.
            where = os.fsdecode(exc.filename) if exc.filename else "fixloop"
            print(f"{where}:1:1: disk: {exc.strerror}", file=sys.stderr)
            return 1
        if os.environ.get("FIXLOOP_DEBUG"):
            import traceback

            traceback.print_exc()
        print(
            f"fixloop: internal error: {type(exc).__name__}: {exc} "
            "(set FIXLOOP_DEBUG=1 for a traceback; please report it)",
            file=sys.stderr,
        )
        return 70
    return result


def _usage_envelope(command: str, message: str) -> None:
    """A command line argparse refused, with `--json`: the envelope too (its line is on stderr)."""
    from fixloop.cli import envelope
    from fixloop.diagnostics import Diagnostic

    problem = Diagnostic("command line", 1, 1, "usage", message)
    try:
        envelope.emit(command, 2, items=envelope.diagnostic_items([problem]))
    except BrokenPipeError:  # the reader went away: as for any command, nothing more is said
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
