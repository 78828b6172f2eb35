"""Every workflow end to end with `--backend openai`: `fixloop … --backend openai --base-url
http://127.0.0.1:PORT/v1` as a subprocess, the official openai SDK, fixloop's own tools in real
git worktrees, and a scripted Chat Completions server on loopback playing the model.

The model's moves are the scripted-backend scripts the other tests use (the demo's, fix-engine's
scenario, fix-issue's), replayed by `ChatReplay` as the tool calls a model would make: Read the
file, Edit it, answer through `submit_result`, matched to each agent call by its call key. Each
test ends where the scripted backend's ends, and checks that the key reached nothing on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import cli
from tests.helpers.demo import assert_demo_review_fixed
from tests.helpers.fix_issue import STATS, fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import UserRepo, git
from tests.workflows.execute_wave.scripts import fix, implement, score, scores
from tests.workflows.execute_wave.test_workflow import DIV, MUL, SAFE_DIV, TASKS
from tests.workflows.fix_engine.scenario import (
    ADD_RIGHT,
    MINI_PRD,
    make_section_repo,
    script,
    subjects,
)
from tests.workflows.review.test_workflow import FOUND, PHASE_DIR

from fixloop.extras.demo.example import REVIEW_PATH, build_example
from fixloop.extras.demo.model import FINDINGS, FIX_FINDINGS_SCRIPT, REVIEW_FIX_SCRIPT
from fixloop.extras.testing.chat_replay import SUBMIT, ChatReplay
from fixloop.extras.testing.chat_server import SCRIPTED_KEY, ChatServer, failure

pytestmark = pytest.mark.slow


def run_openai(
    server: ChatServer, *args: str, cwd: Path, key: str = SCRIPTED_KEY
) -> subprocess.CompletedProcess[str]:
    """`fixloop ARGS --backend openai --base-url SERVER` with the key in OPENAI_API_KEY only, in
    a process of its own (forked warm: tests/helpers/cli.py), `python3` in the runs' test
    commands being this suite's interpreter rather than the first on PATH."""
    child = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENAI_", "CLAUDECODE"))
    }
    child["OPENAI_API_KEY"] = key
    child["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{child['PATH']}"
    return cli.fixloop(
        *args,
        *("--backend", "openai", "--base-url", server.base_url),
        *("--model", "scripted-model", "--json"),
        cwd=cwd,
        env=child,
        timeout=600,
    )


def key_on_disk(*roots: Path) -> list[str]:
    """Files under `roots` (.git included) that hold the key."""
    needle = SCRIPTED_KEY.encode()
    return [
        str(path)
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and not path.is_symlink() and needle in path.read_bytes()
    ]


def test_review_fix_on_the_demo_repository(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    replay = ChatReplay(REVIEW_FIX_SCRIPT)
    with ChatServer(replay) as server:
        done = run_openai(server, "review-fix", REVIEW_PATH, "--repo", str(repo), cwd=repo)

    assert done.returncode == 1, done.stderr  # two findings skipped: partial
    assert replay.unplayed() == [] and server.unscripted == 0
    assert_demo_review_fixed(repo, base, json.loads(done.stdout)["items"])

    first = server.requests[0]
    assert first.call_key == "fixer/CR-01/iteration-1" and first.model == "scripted-model"
    assert "# Fixer" in first.system and "CR-01" in first.system
    assert {"Read", "Edit", "Write", "Bash", "Grep", "Glob", SUBMIT} == set(first.tool_names)
    assert first.authorization() == f"Bearer {SCRIPTED_KEY}"
    assert key_on_disk(repo) == []


def test_fix_findings_on_the_demo_findings(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps(FINDINGS))
    replay = ChatReplay(FIX_FINDINGS_SCRIPT)
    with ChatServer(replay) as server:
        done = run_openai(
            server,
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--on-prestaged",
            "proceed",
            "--on-scope-expansion",
            "defer",
            cwd=repo,
        )
    assert done.returncode == 1, done.stderr  # one finding escalated
    assert replay.unplayed() == [] and server.unscripted == 0
    result = json.loads(done.stdout)["result"]["buckets"]
    assert (result["resolved"], [e["id"] for e in result["escalated"]]) == ([2], [1])
    assert [d["id"] for d in result["dropped"]] == [3]
    assert "verifier/3/pre-gate" in {request.call_key for request in server.requests}
    assert git(repo, "diff", "--cached", "--name-only") != "", "the fix is staged"
    assert key_on_disk(repo) == []


def test_fix_engine_one_item_done_one_escalated(tmp_path: Path) -> None:
    repo = make_section_repo(tmp_path / "repo")
    before, tip = repo.user_work(), repo.head()
    replay = ChatReplay(script())
    with ChatServer(replay) as server:
        done = run_openai(server, "fix-engine", MINI_PRD, "--repo", str(repo.path), cwd=repo.path)

    assert done.returncode == 1, done.stderr
    envelope = json.loads(done.stdout)
    assert [(i["id"], i["status"], i["attempts"]) for i in envelope["items"]] == [
        ("AC-1", "done", 2),
        ("check-2", "failed", 3),
    ]
    assert replay.unplayed() == [] and server.unscripted == 0
    assert subjects(repo.path, tip) == ["calc: AC-1 `add(a, b)` returns the sum of a and b"]
    assert (repo.path / "src" / "app.py").read_text() == ADD_RIGHT
    assert repo.user_work() == before
    judge = next(r for r in server.requests if r.call_key == "verifier/AC-1/attempt-1")
    assert "# Verifier" in judge.system
    # The verifier's Bash is `Bash(git diff:*)`-style: offered, but only those programs.
    assert {"Read", "Grep", "Glob", "Bash", SUBMIT} <= set(judge.tool_names)
    assert key_on_disk(repo.path) == []


def test_execute_wave_two_waves_with_a_fix_loop(user_repo: UserRepo, tmp_path: Path) -> None:
    before, old_tip = user_repo.user_work(), user_repo.head()
    tasks = tmp_path / "tasks.json"
    # One fix attempt each: every call the run makes is scripted (an unscripted one is the
    # server failing, which stops the run).
    tasks.write_text(json.dumps({"tasks": TASKS, "maxRetries": 1}))
    replay = ChatReplay(
        {
            "executor/1/implement": implement(1, {"src/mul.py": MUL}),
            "executor/2/implement": implement(2, {"src/div.py": DIV}),
            "reviewer/1/verify": score(1, scores("logic", 9)),
            "reviewer/2/verify": score(2, scores("logic", 5), analysis="division by zero"),
            "fixer/2/attempt-1": fix({"src/div.py": SAFE_DIV}),
            "reviewer/2/attempt-1": score(2, scores("logic", 8)),
            "executor/3/implement": implement(3, {"src/both.py": "from src.mul import mul\n"}),
            "reviewer/3/verify": score(3, scores("logic", 3)),
            "fixer/3/attempt-1": fix({"src/both.py": "from src.div import div\n"}),
            "reviewer/3/attempt-1": score(3, scores("logic", 3)),
        }
    )
    with ChatServer(replay) as server:
        done = run_openai(
            server,
            "execute-wave",
            str(tasks),
            "--repo",
            str(user_repo.path),
            "--parallel",
            "2",
            cwd=tmp_path,
        )
    assert done.returncode == 1, done.stderr
    assert replay.unplayed() == []
    items = {item["id"]: item["status"] for item in json.loads(done.stdout)["items"]}
    assert items == {"1": "committed", "2": "committed", "3": "rolled-back"}
    assert user_repo.git("show", "main:src/mul.py") == MUL
    assert user_repo.git("show", "main:src/div.py") == SAFE_DIV, "the fix loop's version"
    assert user_repo.git("ls-tree", "--name-only", "main", "src/both.py") == ""
    assert user_repo.git("merge-base", "--is-ancestor", old_tip, "main", check=False) == ""
    assert user_repo.user_work() == before
    assert user_repo.branches() == ["main"] and user_repo.worktrees() == [str(user_repo.path)]
    fixer = next(r for r in server.requests if r.call_key == "fixer/2/attempt-1")
    assert "# Fixer" in fixer.system and "division by zero" in fixer.system
    assert key_on_disk(user_repo.path, tmp_path) == []


def test_fix_issue_through_the_versioned_tools(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    replay = ChatReplay(fixing_script())
    with ChatServer(replay, served_model="scripted-model-2026-09-14") as server:
        done = run_openai(
            server,
            "fix-issue",
            str(issue),
            "--repo",
            str(repo),
            "--test",
            "python3 -m unittest",
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["status"] == "resolved" and result["tool_calls"] == 5
    assert replay.unplayed() == [] and server.unscripted == 0
    first = server.requests[0]
    assert "# Issue fixer" in first.system
    names = set(first.tool_names)
    assert {"read_file", "edit_file", "run_tests", SUBMIT} <= names
    assert names.isdisjoint({"Edit", "Write", "Bash"}), "the versioned tools replace them"
    assert (repo / "calc/stats.py").read_text() == STATS, "the user's tree is never touched"
    git(repo, "apply", "--check", result["patch"]["path"])
    assert key_on_disk(repo, tmp_path) == []
    # The model the server said answered is recorded beside the one asked for.
    assert [a["served_model"] for a in result["attempts"]] == ["scripted-model-2026-09-14"]
    trace = Path(result["trace_path"]).read_text(encoding="utf-8").splitlines()
    [agent] = [json.loads(line) for line in trace if '"event": "agent"' in line]
    assert agent["served_model"] == "scripted-model-2026-09-14"
    assert first.model == "scripted-model"  # what was asked for


def test_review_writes_the_review_review_fix_takes(user_repo: UserRepo) -> None:
    (user_repo.path / PHASE_DIR).mkdir(parents=True)
    (user_repo.path / "src" / "app.py").write_text("def add(a, b):\n    return a - b  # 02\n")
    user_repo.git("add", "--", "src/app.py")
    user_repo.git("commit", "--quiet", "-m", "feat(02-01): add", "--", "src/app.py")
    replay = ChatReplay({"reviewer/review/findings": {"output": FOUND}})
    with ChatServer(replay) as server:
        done = run_openai(server, "review", "02", "--repo", str(user_repo.path), cwd=user_repo.path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["counts"] == {"found": 3} and data["result"]["files"] == ["src/app.py"]
    review = (user_repo.path / PHASE_DIR / "02-REVIEW.md").read_text()
    assert "### CR-01" in review
    [request] = server.requests
    # The reviewer writes nothing: its tools offer no write, and its Bash runs git's readers.
    assert "Edit" not in request.tool_names
    assert key_on_disk(user_repo.path) == []


def test_an_out_of_scope_edit_is_denied_and_the_finding_skipped(tmp_path: Path) -> None:
    """The attack: a fixer edits a file its finding was not assigned (and one outside the
    repository). Both are refused before they run; the workflow reads the refusal."""
    repo = tmp_path / "shelf"
    build_example(repo)
    wants_labels = {
        "edits": [
            {"path": "shelf/labels.py", "old": "def slug", "new": "def slug_"},
            {"path": "../pwned.txt", "content": "pwned"},
        ],
        "output": {
            "needs_scope_expansion": True,
            "additional_files": ["shelf/labels.py"],
            "justification": "the threshold helper lives next to the labels",
        },
    }
    replay = ChatReplay({**REVIEW_FIX_SCRIPT, "fixer/WR-03/iteration-1": wants_labels})
    with ChatServer(replay) as server:
        done = run_openai(server, "review-fix", REVIEW_PATH, "--repo", str(repo), cwd=repo)

    wr03 = next(o for o in json.loads(done.stdout)["items"] if o["id"] == "WR-03")
    # A forbidden path outweighs the scope request: no approval could grant it.
    assert (
        wr03["label"]
        == "skipped: fixer tried to write ../pwned.txt: '..' could leave the repository"
    )
    assert "def slug_" not in (repo / "shelf" / "labels.py").read_text()
    assert not (tmp_path / "pwned.txt").exists()
    request = next(r for r in reversed(server.requests) if r.call_key == "fixer/WR-03/iteration-1")
    assert sum("fixloop scope" in text for text in request.tool_results()) == 2
    events = [
        json.loads(line)
        for path in (repo / ".git" / "fixloop").rglob("events.jsonl")
        for line in path.read_text().splitlines()
    ]
    denials = [e["denied"] for e in events if e["event"] == "agent" and e["denied"]]
    assert [d["path"] for d in denials[0]] == ["shelf/labels.py", "../pwned.txt"]


def test_a_cost_budget_needs_prices_and_then_stops_the_run(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    replay = ChatReplay(REVIEW_FIX_SCRIPT)
    with ChatServer(replay) as server:
        unpriced = run_openai(
            server, "review-fix", REVIEW_PATH, "--repo", str(repo), "--max-cost-usd", "1", cwd=repo
        )
        assert unpriced.returncode == 2 and server.requests == []
        assert unpriced.stderr.strip() == (
            "review-fix:1:1: usage: --max-cost-usd needs the model's prices: set price-input "
            "and price-output (USD per million tokens) under [openai] in fixloop.toml"
        )
        # $0.01 a token: the first turn (120 tokens) spends the whole budget of $1.
        (repo / "fixloop.toml").write_text("[openai]\nprice-input = 10000\nprice-output = 10000\n")
        done = run_openai(
            server, "review-fix", REVIEW_PATH, "--repo", str(repo), "--max-cost-usd", "1", cwd=repo
        )
    assert done.returncode == 1, done.stderr
    assert len(server.requests) == 1, "no turn after the cap, no call after the budget"
    labels = [item["label"] for item in json.loads(done.stdout)["items"]]
    assert labels[0] == "skipped: fixer result inconclusive (call_budget)"
    assert labels[1:] == ["skipped: fixer result inconclusive (run_budget)"] * (len(labels) - 1)
    assert len(labels) == 5


def test_a_refused_key_is_one_warning_and_the_key_an_error_echoes_reaches_no_file(
    tmp_path: Path,
) -> None:
    """The attack on the key: a server whose error message repeats it whole."""
    repo = tmp_path / "shelf"
    build_example(repo)
    echo = failure(401, f"Incorrect API key provided: {SCRIPTED_KEY}")
    with ChatServer(lambda request: echo) as server:
        done = run_openai(server, "review-fix", REVIEW_PATH, "--repo", str(repo), cwd=repo)
        url = server.base_url
    assert done.returncode == 1
    assert len(server.requests) == 1, "a refused key is not tried again for every finding"
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARN:")]
    assert warnings == [
        f"WARN: fixer/CR-01/iteration-1: openai: 401 from {url}: the key in OPENAI_API_KEY was "
        "refused: Incorrect API key provided: «masked:OPENAI_API_KEY»"
    ]
    # A refused key stops the run at its first call, in one line naming the cause, exit 1.
    (problem,) = json.loads(done.stdout)["items"]
    assert (
        problem["rule"] == "backend"
        and "the key in OPENAI_API_KEY was refused" in (problem["message"])
    )
    assert f"--backend:1:1: backend: {problem['message']}" in done.stderr
    assert SCRIPTED_KEY not in done.stdout + done.stderr
    assert key_on_disk(repo) == []
