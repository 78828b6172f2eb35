"""Command patterns: `git worktree add -b $branch $wt` matched against argv words, structurally.

A pattern is written like the command it matches. Its first word is the command name (matched
against the basename, so `/usr/bin/git` is `git`). Words that start with `-` are options: each must
be present somewhere in the command, in any order (`-D` also matches inside `-fD`); an option that
is followed by a value in the pattern (`-b $branch`) matches the same option followed by that value
in the command. Every other word must appear in the command in the pattern's order, not
necessarily adjacent. `$name` matches `$name`, `"$name"` and `"${name}"`, and also matches when both
sides resolve to the same static value. `*` and `?` are wildcards inside a word. An option written
`!-b` must be absent: `git worktree add !-b` is `git worktree add` without `-b`. A pattern that
starts with `>` matches an output redirection (`>`, `>>`, `&>`) or `tee` to the target that follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from fixloop.records import record

WRITE = ">"


def is_option(word: str) -> bool:
    return word.startswith("-") and word not in ("-", "--")


def is_negated(word: str) -> bool:
    """`!-b`: the option must not be there."""
    return word.startswith("!") and is_option(word[1:])


def glob_matches(pattern: str, word: str) -> bool:
    """`*` (any run) and `?` (one character) in `pattern` against the whole `word`.

    Not a regular expression: `.*a.*a.*b` backtracks in time polynomial in the word with a
    power of the number of stars, and an embedded `node -e` script is a word of thousands of
    characters. Here a star only ever resumes from the latest one, so the time is at most the
    word's length times the pattern's.
    """
    p = w = 0
    star = -1  # the pattern position after the latest `*`
    resume = 0  # the word position that `*` is tried to cover up to next
    while w < len(word):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p + 1, w
            p += 1
        elif p < len(pattern) and pattern[p] in ("?", word[w]):
            p += 1
            w += 1
        elif star >= 0:
            resume += 1
            p, w = star, resume
        else:
            return False
    return all(c == "*" for c in pattern[p:])


@record(frozen=True)
class Pattern:
    text: str
    name: str
    words: tuple[str, ...]  # everything after the name, as written

    @property
    def is_write(self) -> bool:
        return self.name == WRITE


class PatternError(ValueError):
    pass


# A pattern with no quote and no backslash, as most are: shlex's words are the runs between its
# blanks (shlex's four), found at once instead of a character at a time (a tenth of a contract's
# load). String methods, not regexes: compiling them was part of every check's start.
_QUOTING = ("'", '"', "\\")
_BLANK_AS_SPACE = str.maketrans("\t\r\n", "   ")


def split_words(text: str) -> list[str]:
    """`shlex.split(text)` (POSIX rules, no comments); ValueError for an unclosed quote."""
    if not any(char in text for char in _QUOTING):
        return [word for word in text.translate(_BLANK_AS_SPACE).split(" ") if word]
    import shlex  # here: most checks never need it

    return shlex.split(text, comments=False, posix=True)


@cache
def parse_pattern(text: str) -> Pattern:
    try:
        words = split_words(text)
    except ValueError as exc:
        raise PatternError(f"pattern {text!r}: {exc}") from None
    if not words:
        raise PatternError("empty command pattern")
    if words[0].startswith(">") and words[0] != WRITE:
        words = [WRITE, words[0].lstrip(">"), *words[1:]]
    if words[0] == WRITE and len(words) != 2:
        raise PatternError(f"pattern {text!r}: a write pattern is '> TARGET'")
    return Pattern(text, words[0], tuple(words[1:]))


Forms = Callable[[str], Sequence[str]]  # a word's shape → the shapes it may stand for


@cache
def literal_words(pattern: Pattern) -> frozenset[str]:
    """Words after the name that a matching command must hold among its words' forms.

    Every non-option word of a pattern (a positional, or an option's value) is matched against
    one command word; when it has no `$` and no wildcard, only an equal form matches it. So a
    command lacking one of these forms cannot match: a cheap test before `matches`.
    """
    return frozenset(
        w
        for w in pattern.words
        if not is_option(w) and not is_negated(w) and not any(c in w for c in "$*?")
    )


def word_matches(pattern_word: str, shape: str, forms: Forms) -> bool:
    if pattern_word == shape:
        return True
    candidates = forms(shape)
    wanted = forms(pattern_word)
    if not any("*" in p or "?" in p for p in wanted):
        return any(p == c for p in wanted for c in candidates)
    return any(glob_matches(p, c) for p in wanted for c in candidates)


def _option_matches(pattern_word: str, shape: str) -> bool:
    if shape == pattern_word or shape.startswith(pattern_word + "="):
        return True
    single_short = len(pattern_word) == 2 and pattern_word[1].isalpha()
    if not single_short or len(shape) < 3 or shape[0] != "-":
        return False
    letters = shape[1:]  # a cluster of short options, `-[A-Za-z]{2,}`: `-xvf` holds `-v`
    return letters.isascii() and letters.isalpha() and pattern_word[1] in letters


def _basename(shape: str) -> str:
    return shape.rsplit("/", 1)[-1] if "/" in shape and not shape.startswith("$") else shape


def _take_options(
    words: tuple[str, ...], rest: list[str], used: list[bool], forms: Forms
) -> list[str] | None:
    """Mark the command words the pattern's options use; None when an option is missing."""
    positionals: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if is_negated(word):
            index += 1
            continue
        if not is_option(word):
            positionals.append(word)
            index += 1
            continue
        value = words[index + 1] if index + 1 < len(words) else None
        if value is not None and not is_option(value):
            pair = next(
                (
                    at
                    for at in range(len(rest) - 1)
                    if not used[at]
                    and not used[at + 1]
                    and _option_matches(word, rest[at])
                    and word_matches(value, rest[at + 1], forms)
                ),
                None,
            )
            if pair is not None:
                used[pair] = used[pair + 1] = True
                index += 2
                continue
        alone = next(
            (at for at, shape in enumerate(rest) if not used[at] and _option_matches(word, shape)),
            None,
        )
        if alone is None:
            return None
        used[alone] = True
        index += 1
    return positionals


def matches(pattern: Pattern, argv: Sequence[str], forms: Forms) -> bool:
    """Does a command whose words have these shapes (name first) match `pattern`?"""
    if not argv or not word_matches(pattern.name, _basename(argv[0]), forms):
        return False
    rest = list(argv[1:])
    for word in pattern.words:
        if is_negated(word) and any(_option_matches(word[1:], shape) for shape in rest):
            return False
    used = [False] * len(rest)
    positionals = _take_options(pattern.words, rest, used, forms)
    if positionals is None:
        return False
    remaining = [shape for at, shape in enumerate(rest) if not used[at]]
    cursor = 0
    for wanted in positionals:
        while cursor < len(remaining) and not word_matches(wanted, remaining[cursor], forms):
            cursor += 1
        if cursor == len(remaining):
            return False
        cursor += 1
    return True
