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
