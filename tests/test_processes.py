"""Capped output keeps how a stream started and how it ended, and counts what it dropped."""

from __future__ import annotations

from fixloop.processes import CappedOutput


def _captured(chunks: list[bytes], cap: int) -> str:
    output = CappedOutput(cap)
    for chunk in chunks:
        output.feed(chunk)
    return output.text()


def test_output_under_the_cap_is_kept_whole() -> None:
    assert _captured([b"ab", b"cd", b"ef"], 6) == "abcdef"
    assert _captured([], 6) == ""


def test_output_over_the_cap_keeps_head_and_tail() -> None:
    chunks = [b"HEAD", *[bytes([ord("a") + i % 26]) * 7 for i in range(100)], b"TAIL"]
    omitted = 4 + 700 + 4 - 20
    assert _captured(chunks, 20) == f"HEADaaaaaa\n[… {omitted} bytes omitted …]\nvvvvvvTAIL"


def test_a_split_character_is_replaced_not_an_error() -> None:
    assert _captured(["é".encode()[:1]], 10) == "\ufffd"


def test_a_zero_cap_keeps_only_the_count() -> None:
    assert _captured([b"abc"], 0) == "\n[… 3 bytes omitted …]\n"
