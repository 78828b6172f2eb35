"""The entry point: one table of commands, each module imported only when its command runs."""

from __future__ import annotations

import subprocess
import sys

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
