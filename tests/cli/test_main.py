"""The entry point: one table of commands, each module imported only when its command runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

from fixloop.cli.main import COMMANDS, build_parser


def _registered(parser_modules: list[str]) -> set[str]:
    import argparse
    import importlib

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    for module in parser_modules:
        importlib.import_module(module).register(subparsers)
    return set(subparsers.choices)


def test_the_table_names_every_command_its_module_registers() -> None:
    for module in set(COMMANDS.values()):
        assert _registered([module]) == {c for c, m in COMMANDS.items() if m == module}, module
    everything = build_parser()
    assert "check" in everything.format_help() and "review-fix" in everything.format_help()


def test_version_and_check_import_no_workflow_or_backend_module() -> None:
    probe = (
        "import sys\n"
        "from fixloop.cli.main import build_parser\n"
        "build_parser(sys.argv[1:])\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('fixloop.'))))\n"
    )
    for argv in (["--version"], ["check", "x.md"], ["validate"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True
        )
        loaded = done.stdout.split()
        assert not [m for m in loaded if m.startswith(("fixloop.workflows", "fixloop.agents"))]
        assert ("fixloop.cli.check_command" in loaded) == (argv[0] == "check"), argv


# What a clean check of one workflow uses none of, imported on the path that needs it: judging an
# agent's, command's or skill's frontmatter (Claude Code's names and tools), wording what
# pydantic refused, the agents' secret files, the `--json` envelope, the `rule` command.
_NOT_FOR_A_CLEAN_CHECK = (
    "fixloop.cli.envelope",
    "fixloop.cli.rule_command",
    "fixloop.documents.claude_code",
    "fixloop.documents.claude_code_names",
    "fixloop.documents.spec_errors",
    "fixloop.documents.tools",
    "fixloop.secret_files",
)


def test_a_clean_check_of_one_document_imports_only_what_it_uses() -> None:
    probe = (
        "import sys\n"
        "from fixloop.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print(code, *sorted(m for m in sys.modules if m.startswith('fixloop.')))\n"
    )
    document = str(REPO_ROOT / "workflows" / "fix-findings.md")
    loaded = {}
    for argv in (["check", document], ["check", "--json", document]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=False
        )
        code, *modules = done.stdout.splitlines()[-1].split()
        assert code == "0", done.stderr
        loaded[argv[1]] = [m for m in _NOT_FOR_A_CLEAN_CHECK if m in modules]
    assert loaded == {document: [], "--json": ["fixloop.cli.envelope"]}


def test_without_the_claude_extra_a_claude_backend_is_one_line_not_a_crash() -> None:
    """The slim install (`pip install fixloop`) has no claude-agent-sdk."""
    probe = (
        "import sys\n"
        "sys.modules['claude_agent_sdk'] = None  # as if it were not installed\n"
        "from fixloop.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    for argv in (["demo", "--backend", "claude"], ["review-fix", "R.md", "--backend", "claude"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=False
        )
        assert done.returncode == 2, done.stderr
        assert "needs claude-agent-sdk: pip install 'fixloop[claude]'" in done.stderr
        assert "internal error" not in done.stderr


def test_a_command_run_as_its_own_process_freezes_its_imports_and_a_call_does_not(
    tmp_path: Path,
) -> None:
    document = tmp_path / "small.md"
    document.write_text("# small\n\n```bash\necho hello\n```\n", encoding="utf-8")
    counts = {}
    # `main()` as the console script calls it, and `main(argv)` as a program embedding it does.
    for how, call in (("process", "main()"), ("call", "main(sys.argv[1:])")):
        probe = (
            "import atexit, gc, sys\n"
            "from fixloop.cli.main import main\n"
            "state = lambda: print(gc.get_freeze_count(), gc.isenabled(), file=sys.stderr)\n"
            "atexit.register(state)\n"
            f"sys.exit({call})\n"
        )
        argv = [sys.executable, "-c", probe, "check", str(document)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        frozen, enabled = done.stderr.split()[-2:]
        assert (enabled, done.returncode) == ("True", 0), done.stderr
        counts[how] = int(frozen)
    assert counts["process"] > 10_000  # every module the check imported
    # Called from a longer-lived program, nothing of that program is kept from the collector.
    assert counts["call"] == 0


def test_a_check_as_its_own_process_runs_with_the_collector_off_and_ends_with_it_on(
    tmp_path: Path,
) -> None:
    document = tmp_path / "small.md"
    document.write_text("# small\n\n```bash\necho hello\n```\n", encoding="utf-8")
    probe = (
        "import atexit, gc, sys\n"
        "import fixloop.checker.checking as checking\n"
        "from fixloop.cli.main import main\n"
        "real, seen = checking.check_paths, []\n"
        "def spy(*args, **kwargs):\n"
        "    seen.append(gc.isenabled())\n"
        "    return real(*args, **kwargs)\n"
        "checking.check_paths = spy\n"
        "atexit.register(lambda: print(seen, gc.isenabled(), file=sys.stderr))\n"
        "sys.exit({call})\n"
    )
    states = {}
    for how, call in (("process", "main()"), ("call", "main(sys.argv[1:])")):
        argv = [sys.executable, "-c", probe.format(call=call), "check", str(document)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        states[how] = done.stderr.strip().splitlines()[-1]
    # Its own process: off from the imports to the end of the command, on again for the exit
    # handlers. A call leaves the collector to the program (the check pauses it by itself).
    assert states == {"process": "[False] True", "call": "[True] True"}


def test_a_check_as_its_own_process_ends_without_the_teardown_but_with_every_exit_handler(
    tmp_path: Path,
) -> None:
    document = tmp_path / "broken.md"
    document.write_text('# broken\n\n```bash\nrm -rf "$NOWHERE/"\n```\n', encoding="utf-8")
    probe = (
        "import atexit, sys\n"
        "from fixloop.cli.main import main\n"
        "class Torn:\n"
        "    def __del__(self):\n"
        "        print('torn down', file=sys.__stderr__)\n"
        "kept = Torn()  # freed by the interpreter's teardown, if there is one\n"
        "atexit.register(print, 'exit handler ran', file=sys.__stderr__)\n"
        "sys.exit({call})\n"
    )
    runs = {}
    for how, entry in (("process", "main()"), ("call", "main(sys.argv[1:])")):
        argv = [sys.executable, "-c", probe.format(call=entry), "check", str(document)]
        runs[how] = subprocess.run(argv, capture_output=True, text=True, check=False)
    process, call = runs["process"], runs["call"]
    # The same verdict, exit code and output, to the last line, through a pipe (not flushed by
    # a line end), and the exit handlers ran.
    assert process.returncode == call.returncode == 1
    assert process.stdout == call.stdout and "rm-rf-empty-var" in process.stdout
    assert "exit handler ran" in process.stderr and "exit handler ran" in call.stderr
    assert "checked 1 documents" in process.stderr
    # Only the process skipped the teardown; the call, in a program that goes on, never does.
    assert "torn down" not in process.stderr and "torn down" in call.stderr
