"""The contract every sandbox keeps: argv only, cwd inside the worktree, a clean environment,
exit codes as shells report them, capped output, and bad input as one line with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.sandboxes.support import OpenSandbox, kinds, python_in

from fixloop.diagnostics import FixloopError

KINDS = kinds("local", "bwrap", "docker")


def _one_line(error: pytest.ExceptionInfo[FixloopError]) -> str:
    assert error.value.exit_code == 2
    [diagnostic] = error.value.diagnostics
    text = diagnostic.format()
    assert "\n" not in text
    return text


@pytest.mark.parametrize("kind", KINDS)
def test_exit_code_output_and_environment(
    sandbox_of: OpenSandbox, worktree: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXLOOP_TEST_SECRET", "do-not-pass-me")
    (worktree / "show.py").write_text(
        "import os, sys\n"
        "print(os.environ.get('FIXLOOP_TEST_SECRET'), os.environ.get('GIVEN'), os.getcwd())\n"
        "print(os.environ['HOME'], os.environ['TMPDIR'], 'PATH' in os.environ)\n"
        "print('to stderr', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    sandbox = sandbox_of(kind)
    result = sandbox.run([python_in(kind), "show.py"], env={"GIVEN": "a value; $(with) 'quotes'"})
    assert result.exit_code == 3 and not result.timed_out and not result.ok
    first, second = result.stdout.splitlines()
    assert first == f"None a value; $(with) 'quotes' {worktree}"
    home = str(Path.home()) if kind == "local" else "/tmp"
    assert second == f"{home} /tmp True"
    assert result.stderr == "to stderr\n"
    assert result.duration_s > 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_command_that_does_not_exist_exits_127(sandbox_of: OpenSandbox, kind: str) -> None:
    result = sandbox_of(kind).run(["fixloop-no-such-program", "--help"])
    assert result.exit_code == 127
    assert result.stderr == (
        f"fixloop-no-such-program: command not found (in the {kind} sandbox)\n"
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_signal_exits_128_plus_its_number(sandbox_of: OpenSandbox, kind: str) -> None:
    result = sandbox_of(kind).run([python_in(kind), "probe.py", "signal", "15"])
    assert result.exit_code == 128 + 15 and not result.timed_out


@pytest.mark.parametrize("kind", KINDS)
def test_output_is_capped_keeping_head_and_tail(
    sandbox_of: OpenSandbox, worktree: Path, kind: str
) -> None:
    (worktree / "loud.py").write_text(
        "import sys\nsys.stdout.write('HEAD' + 'x' * 100_000 + 'TAIL')\n"
        "sys.stderr.write('e' * 50 + 'END')\n"
    )
    result = sandbox_of(kind, output_cap=1000).run([python_in(kind), "loud.py"])
    assert result.ok, result.stderr
    assert result.stdout.startswith("HEAD" + "x" * 496)
    assert result.stdout.endswith("x" * 496 + "TAIL")
    omitted = 100_008 - 1000
    assert f"\n[… {omitted} bytes omitted …]\n" in result.stdout
    assert result.stderr == "e" * 50 + "END"


def test_shell_text_is_refused(sandbox_of: OpenSandbox) -> None:
    with pytest.raises(FixloopError) as error:
        sandbox_of("local").run("echo hi")  # the mistake under test: a str is a Sequence[str]
    assert "a command is a list of words, never shell text" in _one_line(error)


@pytest.mark.parametrize(
    ("argv", "message"),
    [([], "the command is empty"), (["echo", "a\0b"], "without NUL bytes")],
)
def test_bad_argv_is_refused(sandbox_of: OpenSandbox, argv: list[str], message: str) -> None:
    with pytest.raises(FixloopError) as error:
        sandbox_of("local").run(argv)
    assert message in _one_line(error)


def test_cwd_outside_the_worktree_is_refused(sandbox_of: OpenSandbox, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as error:
        sandbox_of("local").run(["true"], cwd=tmp_path)
    assert _one_line(error).startswith(f"cwd:1:1: sandbox: {tmp_path} is outside the sandbox's")


def test_a_bad_environment_name_is_refused(sandbox_of: OpenSandbox) -> None:
    with pytest.raises(FixloopError) as error:
        sandbox_of("local").run(["true"], env={"A=B": "x"})
    assert "environment variable 'A=B'" in _one_line(error)


def test_the_worktree_must_be_a_directory(sandbox_of: OpenSandbox, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as error:
        sandbox_of("local", worktree=tmp_path / "missing")
    assert "is not a directory" in _one_line(error)


def test_the_local_sandbox_says_it_is_not_isolation(sandbox_of: OpenSandbox) -> None:
    choice = sandbox_of("local").choice
    assert str(choice) == (
        "sandbox: local (asked for with --sandbox local; not isolation: commands can write "
        "outside the worktree and use the network)"
    )
