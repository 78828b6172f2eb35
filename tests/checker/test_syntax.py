"""Bash → syntax tree: every construct the documents use, with exact positions."""

from __future__ import annotations

from fixloop.checker.events import iter_commands
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import (
    AndOr,
    Arith,
    Command,
    Function,
    If,
    Loop,
    Not,
    Pipeline,
    Pos,
    Subshell,
)


def names(text: str) -> list[str]:
    return [c.words[0].shape for c in iter_commands(parse_bash(text).body) if c.words]


def test_control_structures_keep_their_shape() -> None:
    script = parse_bash(
        "if a; then b; elif c; then d; else e; fi\n"
        "f && g || h\n"
        "! i | j\n"
        "for x in 1 2; do k; done\n"
        "until l; do m; done\n"
        "fn() { n; }\n"
        "( o; exit 1 )\n"
        "((count++))\n"
    )
    kinds = [type(item) for item in script.body.items]
    assert kinds == [If, AndOr, Not, Loop, Loop, Function, Subshell, Arith]
    branch = script.body.items[0]
    assert isinstance(branch, If)
    assert len(branch.clauses) == 2 and branch.orelse is not None
    chain = script.body.items[1]
    assert isinstance(chain, AndOr) and [op for op, _ in chain.rest] == ["&&", "||"]
    negated = script.body.items[2]
    assert isinstance(negated, Not) and isinstance(negated.body, Pipeline)
    until = script.body.items[4]
    assert isinstance(until, Loop) and until.kind == "until"
    arith = script.body.items[7]
    assert isinstance(arith, Arith) and arith.increments


def test_substitutions_traps_and_heredocs_hold_commands() -> None:
    text = (
        "branch=$(git branch --show-current)\n"
        "trap 'rm -f \"$sentinel\"' EXIT\n"
        "cat <<EOF | node -e 'process.stdin.pipe(process.stdout)'\n"
        "x $Y\n"
        "EOF\n"
    )
    assert names(text) == ["git", "trap", "rm", "cat", "node"]
    script = parse_bash(text)
    trap = script.body.items[1]
    assert isinstance(trap, Command) and trap.trap_signals == ("EXIT",)
    heredoc = script.body.items[2]
    assert isinstance(heredoc, Pipeline)
    body = heredoc.items[0].redirects[0].body
    assert body is not None and [r.name for r in body.reads] == ["Y"]


def test_quoted_heredoc_bodies_read_nothing() -> None:
    script = parse_bash("cat <<'EOF'\n$NOT_A_READ\nEOF\n")
    command = script.body.items[0]
    assert isinstance(command, Command)
    body = command.redirects[0].body
    assert body is not None and body.reads == []


def test_words_are_normalised_and_reads_located() -> None:
    script = parse_bash('git worktree add -b "${b}" "$wt" x"$base"/y \'$lit\'', Pos(9, 2))
    command = script.body.items[0]
    assert isinstance(command, Command)
    assert [w.shape for w in command.words] == [
        "git",
        "worktree",
        "add",
        "-b",
        "$b",
        "$wt",
        "x$base/y",
        "$lit",
    ]
    assert command.words[7].literal == "$lit"
    read = command.words[5].reads[0]
    assert (read.name, read.pos, read.quoted, read.whole) == ("wt", Pos(9, 31), True, True)


def test_columns_count_characters_not_bytes() -> None:
    script = parse_bash('echo "修复引擎" && git commit -m x')
    command = script.body.items[0]
    assert isinstance(command, AndOr) and isinstance(command.rest[0][1], Command)
    assert command.rest[0][1].pos == Pos(0, 15)


def test_errors_are_located_and_the_rest_is_kept() -> None:
    script = parse_bash("echo a\nif then fi\necho b\n", Pos(4, 0))
    assert [e.pos for e in script.errors] == [Pos(5, 0)]
    assert names("echo a\nif then fi\necho b\n")[0] == "echo"
    missing = parse_bash("if x; then y\n")
    assert missing.errors and missing.errors[0].missing == "fi"


def test_assignments_then_a_keyword_on_the_next_line_stay_two_statements() -> None:
    # tree-sitter-bash 0.25 joins them into one command named `while`.
    script = parse_bash('a=1 b=""\nwhile read -r line; do echo "$line"; done < f\n')
    assert [type(item) for item in script.body.items] == [Command, Loop]
    loop = script.body.items[1]
    assert isinstance(loop, Loop) and loop.redirects[0].op == "<"
