"""Composing a step's script, and parsing the crash-injection switch."""

from __future__ import annotations

import pytest

from fixloop.diagnostics import FixloopError
from fixloop.documents.blocks import FencedBlock
from fixloop.steps.script import CrashPoint, TracedCommand, compose, crash_point, read_trace


def test_no_switch_means_no_crash() -> None:
    assert crash_point({}) is None
    assert crash_point({"FIXLOOP_CRASH_AT": "  "}) is None


def test_step_and_count() -> None:
    assert crash_point({"FIXLOOP_CRASH_AT": "cleanup:3"}) == CrashPoint("cleanup", 3)


def test_workflow_qualified_step_matches_only_that_workflow() -> None:
    point = crash_point({"FIXLOOP_CRASH_AT": "git-protocol/cleanup:1"})
    assert point == CrashPoint("cleanup", 1, "git-protocol")
    assert point.matches("git-protocol", "cleanup")
    assert not point.matches("review-fix", "cleanup")
    assert CrashPoint("cleanup", 1).matches("anything", "cleanup")


def test_an_occurrence_arms_only_that_run_of_the_step() -> None:
    point = crash_point({"FIXLOOP_CRASH_AT": "commit-paths#2:5"})
    assert point == CrashPoint("commit-paths", 5, None, 2)
    assert not point.matches("git-protocol", "commit-paths", 1)
    assert point.matches("git-protocol", "commit-paths", 2)
    assert CrashPoint("tag", 1).matches("git-protocol", "tag", 7)


@pytest.mark.parametrize(
    "raw", ["cleanup", "cleanup:0", "cleanup:-1", ":3", "a b:1", "tag#0:1", "tag#:1"]
)
def test_a_malformed_switch_is_a_usage_error(raw: str) -> None:
    with pytest.raises(FixloopError) as caught:
        crash_point({"FIXLOOP_CRASH_AT": raw})
    assert caught.value.diagnostics[0].format().startswith("FIXLOOP_CRASH_AT:1:1: usage:")


def test_trace_is_nul_separated_and_keeps_multiline_commands() -> None:
    data = b"3\t\techo a\0004\t\tif x; then\n  y\nfi\0007\t/p/workflows/lib/fixloop.sh\tgit add\0"
    assert read_trace(data) == [
        TracedCommand("echo a", 3),
        TracedCommand("if x; then\n  y\nfi", 4),
        TracedCommand("git add", 7, "/p/workflows/lib/fixloop.sh"),
    ]


def test_script_lines_map_back_to_document_lines() -> None:
    blocks = [
        FencedBlock("bash", "echo one\necho two\n", 10, 11, 13, (), "s"),
        FencedBlock("bash", "echo three\n", 20, 21, 22, (), "s"),
    ]
    script = compose(blocks, "workflows/x.md")
    lines = script.text.splitlines()
    one = lines.index("echo one") + 1
    three = lines.index("echo three") + 1
    assert script.document_line(one) == "workflows/x.md:11"
    assert script.document_line(one + 1) == "workflows/x.md:12"
    assert script.document_line(three) == "workflows/x.md:21"
    assert script.document_line(1) is None  # the preamble is not the document's
    # a command of a traced library helper is located in the library
    assert script.document_line(7, "/pack/workflows/lib/fixloop.sh") == "workflows/lib/fixloop.sh:7"
