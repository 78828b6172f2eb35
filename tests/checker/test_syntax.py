"""Bash → syntax tree: every construct the documents use, with exact positions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixloop.checker import syntax
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
    assert body is not None and not body.reads


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Each line is a statement of its own in bash; tree-sitter-bash 0.25 joins all three.
        ('a=1 b=2\nw="$(pwd)"\nTZ=UTC printf x\n', [(0, []), (1, []), (2, ["printf", "x"])]),
        ("a=1 b=2\n\nz=3 ls\n", [(0, []), (2, ["ls"])]),
        # A comment at the end of a line is not where the `;` goes.
        ("c=3 d=4 # note\ngit stash\n", [(0, []), (1, ["git", "stash"])]),
        # A line continuation does join the lines.
        ("q=1 \\\n  r=2 env x\n", [(0, ["env", "x"])]),
    ],
)
def test_assignment_lines_are_statements_of_their_own(
    text: str, expected: list[tuple[int, list[str]]]
) -> None:
    items = parse_bash(text).body.items
    got = [
        (item.pos.row, [word.text for word in item.words])
        for item in items
        if isinstance(item, Command)
    ]
    assert got == expected


# A large block is parsed a piece at a time: the same tree as one parse, one piece's tree alive.
ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```bash[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _workflow_bash() -> str:
    """Every bash block of fixloop's workflows that parses cleanly, one after the other."""
    blocks = [
        block
        for path in sorted((ROOT / "workflows").glob("*.md"))
        for block in _FENCE.findall(path.read_text(encoding="utf-8"))
        if not parse_bash(block).errors
    ]
    return "\n".join(blocks) + "\n"


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "PIECE_BYTES", 2048)


@pytest.mark.usefixtures("small_pieces")
def test_pieces_build_the_tree_of_one_parse() -> None:
    text = _workflow_bash()
    cuts = syntax._cuts(text.encode())
    assert len(cuts) > 5  # it was cut, at line starts
    assert all(text.encode()[cut - 1 : cut] == b"\n" for cut in cuts)
    pieced = parse_bash(text, Pos(40, 2))
    whole = syntax._parse_whole(text.encode(), Pos(40, 2), 0)
    assert pieced == whole
    assert not pieced.errors


@pytest.mark.usefixtures("small_pieces")
def test_a_quote_left_open_late_in_a_large_block_is_found_where_it_is() -> None:
    text = _workflow_bash()
    broken = text + "echo 'never closed\ngit stash\n"
    script = parse_bash(broken, Pos(10, 0))
    assert syntax._cuts(broken.encode())
    assert script.errors
    last_row = 10 + broken.count("\n") - 2
    assert any(error.pos.row == last_row for error in script.errors)


@pytest.mark.usefixtures("small_pieces")
def test_a_statement_larger_than_a_piece_stays_whole() -> None:
    heredoc = "cat <<'EOF'\n" + "line of text\n" * 400 + "EOF\n"
    text = "echo first\n" * 300 + heredoc + "git status\n"
    pieced = parse_bash(text)
    assert pieced == syntax._parse_whole(text.encode(), Pos(0, 0), 0)
    assert len(pieced.body.items) == 302


@pytest.mark.usefixtures("small_pieces")
def test_a_piece_never_ends_inside_a_continued_command() -> None:
    # A window that ends just after a `\` line: tree-sitter ends the command at the window's
    # end and puts an empty ERROR on the next line, which is no statement start to cut at.
    text = "".join(
        f'echo {"x" * (i % 13)}\n"${{PY:-python3}}" tool.py record \\\n  --item "$I"\n'
        for i in range(300)
    )
    pieced = syntax._parse_pieces(text.encode(), Pos(0, 0), 0)
    assert pieced is not None  # cut into pieces, each parsed cleanly, not parsed whole
    assert pieced == syntax._parse_whole(text.encode(), Pos(0, 0), 0)
    assert not pieced.errors
