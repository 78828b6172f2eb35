"""Command patterns match structurally: option order, quoting and static values do not matter."""

from __future__ import annotations

import random
import shlex
from collections.abc import Sequence

import pytest

from fixloop.checker.patterns import PatternError, matches, parse_pattern, split_words
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Command

VALUES = {"$sentinel": "$state/sentinels/$RUN_ID"}


def forms(shape: str) -> Sequence[str]:
    return (shape, VALUES[shape]) if shape in VALUES else (shape,)


def hit(pattern: str, command: str) -> bool:
    node = parse_bash(command).body.items[0]
    assert isinstance(node, Command)
    return matches(parse_pattern(pattern), [w.shape for w in node.words], forms)


@pytest.mark.parametrize(
    "command",
    [
        'git worktree add -b "$b" "$wt" "$base"',
        'git worktree add "$wt" -b "${b}" "$base"',
        "git worktree add --quiet -b $b $wt $base",
        '/usr/bin/git worktree add -b "$b" "$wt" "$base"',
    ],
)
def test_option_order_quoting_and_path_do_not_matter(command: str) -> None:
    assert hit("git worktree add -b $b $wt $base", command)


@pytest.mark.parametrize(
    ("pattern", "command", "expected"),
    [
        ("git merge --ff-only", 'git -C "$repo" merge --ff-only --quiet "$t"', True),
        ("git merge --ff-only", 'git merge --no-ff "$t"', False),
        ("git branch -D", "git branch -fD x", True),
        ("git branch -D", "git branch -d x", False),
        ("git checkout -- .", 'git checkout -- "$file"', False),
        ("git checkout -- .", "git checkout -- .", True),
        ("git add --pathspec-from-file", "git add --pathspec-from-file=list", True),
        ("git worktree add -b $b $wt", 'git worktree add -b "$other" "$wt"', False),
        ("rm -f $state/sentinels/$RUN_ID", 'rm -f "$sentinel"', True),
        ("rm -f $sentinel", 'rm -f "$state/sentinels/$RUN_ID"', True),
        ("python3 -c * $meta status completed", 'python3 -c "$s" "$meta" status completed', True),
        ("python3 -c * $meta status completed", 'python3 -c "$s" "$meta" progress 1/2', False),
        ("* *worktree_path*", "jq -r .worktree_path f", True),
    ],
)
def test_structural_matching(pattern: str, command: str, expected: bool) -> None:
    assert hit(pattern, command) is expected


def test_write_patterns() -> None:
    pattern = parse_pattern('> "$sentinel"')
    assert pattern.is_write and pattern.words == ("$sentinel",)
    assert parse_pattern(">$out").words == ("$out",)


@pytest.mark.parametrize("text", ["", "git 'unclosed", "> a b"])
def test_bad_patterns_are_refused(text: str) -> None:
    with pytest.raises(PatternError):
        parse_pattern(text)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('git worktree add "$wt" HEAD', True),
        ('git worktree add -b "$b" "$wt" HEAD', False),
        ('git worktree add -fb "$b" "$wt"', False),
        ('git worktree add --detach "$wt"', True),
        ('git worktree remove "$wt"', False),
    ],
)
def test_a_negated_option_must_be_absent(command: str, expected: bool) -> None:
    assert hit("git worktree add !-b", command) is expected


def test_a_pattern_splits_into_the_words_shlex_finds() -> None:
    # Unquoted patterns take a shortcut; quoted ones, and every blank shlex and str.split
    # disagree on (a vertical tab, a no-break space), must come out the same either way.
    rng = random.Random(7)
    alphabet = "ab#*$-=> \t\n\r\x0b\xa0\u2003'\"\\"
    for _ in range(5_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        try:
            expected: list[str] | str = shlex.split(text, comments=False, posix=True)
        except ValueError as exc:
            expected = str(exc)
        try:
            got: list[str] | str = split_words(text)
        except ValueError as exc:
            got = str(exc)
        assert got == expected, repr(text)
