"""`bash -n` in batches: which blocks bash refuses, found in few processes."""

from __future__ import annotations

from fixloop.checker.bash_n import refusals


def test_bash_refusals_are_found_in_batches_down_to_the_single_block() -> None:
    blocks = ["echo ok"] * 40 + ['echo "${x:-`y}"'] + ["true"] * 40 + ["if x; then\n:\nfiif"]
    found = refusals(blocks)
    assert sorted(found) == [40, 81]
    assert found[40].line == 1
