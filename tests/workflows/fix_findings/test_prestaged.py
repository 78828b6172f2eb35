"""The pre-staged heuristic: changed lines in index coordinates, and seed 002's three answers."""

from __future__ import annotations

from fixloop.workflows.fix_findings.prestaged import Hunk, PrestagedChoice, assess, parse_hunks


def diff(path: str, header: str, *body: str) -> str:
    return (
        "\n".join(
            [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}", header, *body]
        )
        + "\n"
    )


STAGED_LINE_20 = diff("a.py", "@@ -18,5 +18,5 @@", " c", " c", "-old", "+new", " c")
FIX_LINE_2 = diff("a.py", "@@ -1,3 +1,3 @@", " c", "-bug", "+fix", " c")
FIX_LINE_21 = diff("a.py", "@@ -19,5 +19,5 @@", " c", " c", "-x", "+y", " c")
FIX_LINE_20 = diff("a.py", "@@ -19,3 +19,3 @@", " c", "-new", "+newer", " c")


def test_context_lines_do_not_count() -> None:
    assert parse_hunks(STAGED_LINE_20, index_side="+") == [Hunk("a.py", 20, 20, 2)]
    assert parse_hunks(FIX_LINE_2, index_side="-") == [Hunk("a.py", 2, 2, 2)]


def test_a_pure_insertion_sits_before_the_next_index_line() -> None:
    inserted = diff("a.py", "@@ -4,2 +4,3 @@", " c", "+added", " c")
    assert parse_hunks(inserted, index_side="-") == [Hunk("a.py", 5, 5, 1)]


def test_small_and_apart_recommends_commit_first() -> None:
    report = assess(STAGED_LINE_20, FIX_LINE_2)
    assert report.recommendation is PrestagedChoice.COMMIT
    assert report.summary() == "1 hunk in a.py totaling 2 lines, no overlap with fix's edits"


def test_adjacent_recommends_proceed() -> None:
    report = assess(STAGED_LINE_20, FIX_LINE_21)
    assert report.recommendation is PrestagedChoice.PROCEED
    assert "next to the fix's edits" in report.summary()


def test_overlap_recommends_setting_aside() -> None:
    report = assess(STAGED_LINE_20, FIX_LINE_20)
    assert report.recommendation is PrestagedChoice.SET_ASIDE
    assert "overlapping" in report.summary()


def test_large_hunks_recommend_setting_aside_even_when_apart() -> None:
    big = diff("a.py", "@@ -100,0 +100,50 @@", *[f"+line {n}" for n in range(50)])
    assert assess(big, FIX_LINE_2).recommendation is PrestagedChoice.SET_ASIDE


def test_other_files_never_overlap() -> None:
    other = diff("b.py", "@@ -19,3 +19,3 @@", " c", "-new", "+newer", " c")
    assert assess(STAGED_LINE_20, other).recommendation is PrestagedChoice.COMMIT


def test_labels_say_what_each_choice_does() -> None:
    assert [c.label for c in PrestagedChoice] == [
        "Commit pre-existing first",
        "Set pre-existing aside",
        "Proceed (treat as part of this fix)",
    ]
