"""The $FIXLOOP_OUTPUT format: NAME=value lines and NAME<<DELIMITER heredocs; nothing guessed."""

from __future__ import annotations

import pytest

from fixloop.steps.outputs import OutputError, parse_outputs


def test_plain_lines_and_empty_values() -> None:
    assert parse_outputs("A=1\nB=\nC=x=y\n") == {"A": "1", "B": "", "C": "x=y"}


def test_heredoc_keeps_newlines_and_shell_text_verbatim() -> None:
    text = "MSG<<EOF\nline 1\n$(rm -rf /) 'q' \"d\"\n\nEOF\nAFTER=yes\n"
    assert parse_outputs(text) == {"MSG": "line 1\n$(rm -rf /) 'q' \"d\"\n", "AFTER": "yes"}


def test_a_later_line_wins() -> None:
    assert parse_outputs("A=1\nA=2\n") == {"A": "2"}


def test_value_may_contain_double_angle_after_equals() -> None:
    assert parse_outputs("A=x<<y\n") == {"A": "x<<y"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("no equals sign\n", "line 1: expected NAME=value"),
        ("OK=1\n9BAD=1\n", "line 2: '9BAD' is not a valid output name"),
        ("A<<EOF\nnever closed\n", "line 1: heredoc A<<EOF is never closed"),
        ("A<<\n", "has no delimiter"),
        ("bad-name=1\n", "'bad-name' is not a valid output name"),
    ],
)
def test_malformed_output_is_an_error_naming_the_line(text: str, fragment: str) -> None:
    with pytest.raises(OutputError, match=None) as caught:
        parse_outputs(text)
    assert fragment in str(caught.value)
