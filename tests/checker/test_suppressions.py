"""Finding suppression comments without a list of every line of the block."""

from __future__ import annotations

import itertools

from fixloop.checker.suppressions import _lines_naming_fixloop


def test_lines_naming_fixloop_are_the_lines_splitlines_gives_at_the_same_index() -> None:
    pieces = ["x", "fixloop", "\n", "\r", "\r\n", "\f", "\u2028", "\x85", "# fixloop: ignore[a]"]
    for length in range(5):
        for parts in itertools.product(pieces, repeat=length):
            text = "".join(parts)
            expected = [(i, line) for i, line in enumerate(text.splitlines()) if "fixloop" in line]
            assert list(_lines_naming_fixloop(text)) == expected, repr(text)


def test_every_character_splitlines_breaks_at_breaks_a_line_here_too() -> None:
    breaks = [chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2]
    assert len(breaks) == 10  # as str.splitlines documents them (\r\n aside)
    for text in ("fixloop\r\nfixloop", *(f"x{c}fixloop{c}{c}fixloop" for c in breaks)):
        expected = [(i, line) for i, line in enumerate(text.splitlines()) if "fixloop" in line]
        assert list(_lines_naming_fixloop(text)) == expected, repr(text)
