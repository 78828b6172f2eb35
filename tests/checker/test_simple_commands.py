"""Simple commands: declarations, bare assignments, `[ … ]`/`[[ … ]]` and `((…))` as tree leaves."""

from __future__ import annotations

from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Arith, Command


def only_command(text: str) -> Command:
    (command,) = parse_bash(text).body.items
    assert isinstance(command, Command)
    return command


def test_declarations_name_their_keyword_and_kind() -> None:
    command = only_command("local rc=$? name")
    assert [w.shape for w in command.words] == ["local", "name"]
    assert [(a.name, a.kind) for a in command.assigns] == [("rc", "local"), ("name", "local")]
    value = command.assigns[0].value
    assert value is not None and value.shape == "$?"
    exported = only_command("export PATH")
    assert list(exported.exported) == ["PATH"] and not exported.assigns


def test_bare_and_prefix_assignments_are_plain() -> None:
    bare = only_command("a=1 b[2]=x")
    assert bare.words == [] and [(a.name, a.kind) for a in bare.assigns] == [
        ("a", "plain"),
        ("b", "plain"),
    ]
    prefixed = only_command('GIT_DIR="$d" git status > out')
    assert [w.shape for w in prefixed.words] == ["git", "status"]
    assert [a.name for a in prefixed.assigns] == ["GIT_DIR"]
    assert [(r.op, r.target.shape if r.target else None) for r in prefixed.redirects] == [
        (">", "out")
    ]


def test_tests_become_the_argv_of_test() -> None:
    command = only_command('[[ -n "$x" && $y == z ]]')
    assert [w.shape for w in command.words] == ["[[", "-n", "$x", "&&", "$y", "==", "z", "]]"]
    single = only_command('[ "$rc" -eq 0 ]')
    assert [w.shape for w in single.words] == ["[", "$rc", "-eq", "0", "]"]


def test_arithmetic_commands_read_their_names() -> None:
    (arith,) = parse_bash("(( total += count ))").body.items
    assert isinstance(arith, Arith) and not arith.increments
    assert sorted(r.name for r in arith.reads) == ["count", "total"]
