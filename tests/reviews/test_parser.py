"""REVIEW.md parsing: fields, locations, multi-file fixes, opaque fences, and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.diagnostics import FixloopError
from fixloop.reviews.model import FixScope, ReviewSeverity
from fixloop.reviews.parser import parse_review, path_problem

REVIEW = """\
---
phase: 02
reviewed: 2025-01-31T10:00:00Z
depth: deep
files_reviewed: 2
files_reviewed_list:
  - src/auth.py
  - src/db.py
findings:
  critical: 2
  warning: 1
  info: 1
  total: 4
status: issues_found
---

# Phase 02: Code Review

## Critical Issues

### CR-01: SQL injection in login query
**File:** `src/auth.py:42`
**Issue:** `username` is interpolated
into the SQL string.
**Fix:** Use a parameterized query:

```python
### WR-99: not a finding, just a comment in code
cur.execute("SELECT 1 WHERE name = %s", (username,))
```

Also update src/db.py and `src/helpers/escape.py` the same way.

## Warnings

### IN-01: Naming
**File:** src/names.py
**Issue:** short names
**Fix:** rename `x` to `count` (see os.path for style)

### WR-01: Connection leaked
**File:** src/db.py:17
**Issue:** no close on error
**Fix:** use `with`

### BL-02: Blocker
**File:** src/db.py:3
**Issue:** crash
**Fix:** guard
"""


def parse(text: str) -> object:
    return parse_review(text, Path("02-REVIEW.md"))


def test_frontmatter_keeps_phase_as_written_and_reads_scope() -> None:
    review = parse_review(REVIEW, Path("02-REVIEW.md"))
    assert review.phase == "02"
    assert review.status == "issues_found"
    assert review.depth == "deep"
    assert review.files_reviewed_list == ("src/auth.py", "src/db.py")
    assert review.counts() == {"critical": 2, "warning": 1, "info": 1, "total": 4}


def test_finding_fields_and_fenced_heading_is_code() -> None:
    review = parse_review(REVIEW, Path("02-REVIEW.md"))
    assert [f.id for f in review.findings] == ["CR-01", "IN-01", "WR-01", "BL-02"]
    first = review.findings[0]
    assert first.severity is ReviewSeverity.CRITICAL
    assert first.title == "SQL injection in login query"
    assert (first.file, first.line) == ("src/auth.py", 42)
    assert first.issue == "`username` is interpolated\ninto the SQL string."
    assert "### WR-99: not a finding" in first.fix
    assert first.fix.endswith("`src/helpers/escape.py` the same way.")
    assert first.files == ("src/auth.py", "src/db.py", "src/helpers/escape.py")
    assert first.heading_line == 21


def test_bare_path_has_no_line_and_dotted_names_are_not_files() -> None:
    naming = parse_review(REVIEW, Path("02-REVIEW.md")).findings[1]
    assert (naming.file, naming.line, naming.files) == ("src/names.py", None, ("src/names.py",))


def test_blocker_prefix_counts_as_critical_and_scope_sort_is_stable() -> None:
    review = parse_review(REVIEW, Path("02-REVIEW.md"))
    assert [f.id for f in review.in_scope(FixScope.CRITICAL_WARNING)] == ["CR-01", "BL-02", "WR-01"]
    assert [f.id for f in review.in_scope(FixScope.ALL)] == ["CR-01", "BL-02", "WR-01", "IN-01"]


@pytest.mark.parametrize(
    ("status", "expected"),
    [("clean", "clean"), ("skipped", "skipped"), ("weird", "unknown"), (None, "unknown")],
)
def test_status_values(status: str | None, expected: str) -> None:
    front = f"status: {status}\n" if status else ""
    review = parse_review(f"---\nphase: 1\n{front}---\n\n# Review\n", Path("R.md"))
    assert review.status == expected
    assert review.findings == ()


def error_of(text: str) -> str:
    with pytest.raises(FixloopError) as caught:
        parse_review(text, Path("R.md"))
    assert caught.value.exit_code == 2
    [diagnostic] = caught.value.diagnostics
    return diagnostic.format()


HEAD = "---\nphase: 1\nstatus: issues_found\n---\n"


def test_unclosed_fence_names_the_fence_line() -> None:
    text = HEAD + "### CR-01: t\n**File:** a.py\n**Fix:**\n```python\nx = 1\n"
    assert error_of(text) == (
        "R.md:8:1: review-fence: code fence is never closed; "
        "the rest of the file would be read as code"
    )


def test_missing_file_line_names_the_finding() -> None:
    text = HEAD + "### WR-03: t\n**Issue:** i\n**Fix:** f\n"
    assert error_of(text) == "R.md:5:1: review-file: finding WR-03 has no **File:** line"


def test_file_line_inside_a_fence_does_not_count() -> None:
    text = HEAD + "### WR-03: t\n```\n**File:** a.py\n```\n"
    assert "finding WR-03 has no **File:** line" in error_of(text)


def test_unknown_severity_prefix() -> None:
    text = HEAD + "\n### XX-01: t\n**File:** a.py\n"
    assert error_of(text) == (
        "R.md:6:1: review-severity: finding XX-01: unknown severity prefix 'XX' "
        "(expected CR-, BL-, WR-, IN-)"
    )


def test_duplicate_id() -> None:
    text = HEAD + "### CR-01: a\n**File:** a.py\n\n### CR-01: b\n**File:** b.py\n"
    assert "finding CR-01 is defined twice (first at line 5)" in error_of(text)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../outside.py", "'..' could leave the repository"),
        ("/etc/passwd", "absolute paths are refused"),
        (".git/config", "paths inside .git are refused"),
        ("src/../../x.py", "'..' could leave the repository"),
        ("C:\\x.py", "is absolute or not a relative POSIX path"),
    ],
)
def test_paths_escaping_the_repository_are_refused(path: str, why: str) -> None:
    text = HEAD + f"### CR-01: t\n**File:** {path}:3\n"
    message = error_of(text)
    assert message.startswith("R.md:6:1: review-path: finding CR-01: path")
    assert why in message


def test_path_problem_accepts_ordinary_relative_paths() -> None:
    assert path_problem("src/pkg/mod.py") is None
    assert path_problem("") is not None


def test_title_with_shell_metacharacters_is_plain_text() -> None:
    title = '$(touch /tmp/pwned) `id` "; rm -rf ~'
    review = parse_review(HEAD + f"### WR-01: {title}\n**File:** a.py:1\n", Path("R.md"))
    assert review.findings[0].title == title


def test_a_heading_that_almost_names_a_finding_is_an_error() -> None:
    text = HEAD + "### CR-1 missing colon\n**File:** a.py\n"
    assert error_of(text) == (
        "R.md:5:1: review-finding: heading 'CR-1 missing colon' looks like a finding "
        "but is not `### ID: Title`"
    )


def test_frontmatter_total_must_count_the_findings() -> None:
    front = "---\nphase: 1\nfindings:\n  critical: 2\n  total: 2\n---\n"
    assert error_of(front + "### CR-01: t\n**File:** a.py\n") == (
        "R.md:5:1: review-count: findings.total is 2 "
        "but the body holds 1 `### ID: Title` finding(s)"
    )


def test_fields_may_be_list_items() -> None:
    text = HEAD + "### WR-01: t\n- **File:** `a.py:3`\n- **Issue:** i\n- **Fix:** f\n"
    [only] = parse_review(text, Path("R.md")).findings
    assert (only.file, only.line, only.issue, only.fix) == ("a.py", 3, "i", "f")
