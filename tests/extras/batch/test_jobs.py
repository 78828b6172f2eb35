"""The jobs file: every line checked before any job runs; a bad one is one located line."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.extras.batch.conftest import UNITTEST, WriteJobs, job

from fixloop.diagnostics import FixloopError
from fixloop.extras.batch.jobs import load_jobs


def _problem(path: Path, out: Path | None = None) -> str:
    with pytest.raises(FixloopError) as raised:
        load_jobs(path, out=out)
    assert raised.value.exit_code == 2
    (diagnostic,) = raised.value.diagnostics
    return diagnostic.format()


def test_a_good_file_gives_each_job_its_tests_and_its_issue(
    write_jobs: WriteJobs, repo: Path, base: str, tmp_path: Path
) -> None:
    (tmp_path / "42.md").write_text("# slug() drops digits\n", encoding="utf-8")
    tests = {"commands": [UNITTEST], "fail_to_pass": ["tests.test_stats.StatsTest.test_average"]}
    path = write_jobs(
        job("avg", base),
        {
            "repository": "shop",
            "commit": "main",
            "issue": {"file": "42.md"},
            "tests": tests,
            "setup": [["python3", "-c", "pass"]],
            "meta": {"ticket": 42},
        },
    )
    first, second = load_jobs(path)
    assert (first.id, first.source, first.tests) == ("avg", str(repo), (tuple(UNITTEST.split()),))
    assert (second.id, second.line, second.title) == ("job-2", 2, "slug() drops digits")
    assert second.fail_to_pass == ("tests.test_stats.StatsTest.test_average",)
    assert second.setup == (("python3", "-c", "pass"),) and second.meta == {"ticket": 42}


BAD = "jobs.jsonl:2:{col}: "
# (the line, where its column points (None: the line's start), the key and message expected)
BAD_LINES = [
    ('{"id": "a", "repository": "shop"', None, "json: invalid JSON"),
    (
        '{"id": "a", "repository": "shop", "commit": "x", "issue": "y", "tests": [], "owner": 1}',
        '"owner"',
        "owner: unknown key",
    ),
    ('{"id": "a", "repository": "shop", "commit": "x", "issue": "y"}', None, "tests: missing"),
    (
        '{"id": "a", "repository": "nowhere", "commit": "x", "issue": "y", "tests": []}',
        '"repository"',
        "repository: no such directory",
    ),
    (
        '{"id": "a", "repository": "shop", "commit": "--all", "issue": "y", "tests": []}',
        '"commit"',
        "commit: a commit id",
    ),
    (
        '{"id": "a", "repository": "shop", "commit": "x", "issue": "y", "tests": [7]}',
        "7",
        "tests.0: a command is a string or a list of words",
    ),
    (
        '{"id": "a", "id": "b", "repository": "shop", "commit": "x", "issue": "y", "tests": []}',
        '"id": "b"',
        "id: this key is given twice",
    ),
    (
        '{"id": "avg", "repository": "shop", "commit": "x", "issue": "y", "tests": []}',
        '"id"',
        "id: 'avg' is line 1's id too",
    ),
]


@pytest.mark.parametrize(("line", "at", "expected"), BAD_LINES)
def test_a_bad_line_is_one_located_error(
    write_jobs: WriteJobs, base: str, line: str, at: str | None, expected: str
) -> None:
    path = write_jobs(job("avg", base), line)
    problem = _problem(path)
    if at is None:
        assert "jobs.jsonl:2:" in problem and expected in problem, problem
    else:
        assert BAD.format(col=line.index(at) + 1) + expected in problem, problem


def test_an_issue_naming_a_file_as_text_is_refused(
    write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    (tmp_path / "42.md").write_text("# an issue\n", encoding="utf-8")
    path = write_jobs(job("a", base, issue="42.md"))
    assert 'issue: names a file; write {"file": "42.md"}' in _problem(path)


def test_a_batch_folder_inside_a_job_repository_is_refused(
    write_jobs: WriteJobs, repo: Path, base: str
) -> None:
    path = write_jobs(job("a", base))
    assert "repository: the batch folder (--out) is inside" in _problem(path, out=repo / "out")
