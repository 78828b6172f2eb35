"""fix-issue's file tools refuse environment and credential files, and links to them: the model
gets a `secret_file` error naming the file and the setting, never the content; `search_code`
leaves them out. The list is the project setting `secret-files` / `extend-secret-files`."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    fixing_tools,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.gitrepo import git

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.config import find_config
from fixloop.documents.pack import Pack
from fixloop.sandboxes import open_sandbox
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.fix_issue.suite import PresetTest, Suite
from fixloop.workflows.fix_issue.tools import IssueTools
from fixloop.workflows.kernel.workflow import Context

SECRET = "s3cr3t-" + secrets.token_hex(12)
SECRET_FILES = {
    ".env": f"DB_URL=postgres://app:{SECRET}@db/app\n",
    "deploy/.env.production": f"API_KEY={SECRET}\n",
    "keys/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n",
    "certs/server.pem": f"{SECRET}\n",
    "certs/server.key": f"{SECRET}\n",
    ".netrc": f"machine example.com login me password {SECRET}\n",
    ".npmrc": f"//registry.npmjs.org/:_authToken={SECRET}\n",
    ".pypirc": f"[pypi]\npassword = {SECRET}\n",
    "home/.aws/credentials": f"[default]\naws_secret_access_key = {SECRET}\n",
}


def _commit(repo: Path, files: dict[str, str], links: dict[str, str]) -> None:
    for relative, content in files.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(content)
    for relative, target in links.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "secrets")


def _tools(repo: Path) -> IssueTools:
    suite = Suite(
        [PresetTest(tuple(UNITTEST))], open_sandbox("local", worktree=repo), repo, timeout_s=60
    )
    return IssueTools(repo, suite, item="ISSUE", secret_files=find_config(repo).secret_files)


def _call(tools: IssueTools, name: str, **arguments: Any) -> dict[str, Any]:
    reply = tools.call(name, arguments)
    assert SECRET not in reply.text
    answer: dict[str, Any] = json.loads(reply.text)
    return answer


# (A path through a linked folder is refused before: the one path check allows no such link.)
LINKS = {"notes/settings.txt": "../.env", "home/aws-credentials": ".aws/credentials"}


@pytest.mark.parametrize("path", [*SECRET_FILES, *LINKS])
def test_reading_or_editing_a_secret_file_or_a_link_to_one_is_refused(
    tmp_path: Path, path: str
) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    _commit(repo, SECRET_FILES, LINKS)
    tools = _tools(repo)
    answer = _call(tools, "read_file", path=path)
    assert (answer["ok"], answer["error"]) == (False, "secret_file"), answer
    assert path in answer["message"] and "secret-files" in answer["message"]
    edit = _call(tools, "edit_file", path=path, version="x", old=SECRET, new="leaked")
    assert edit["error"] == "secret_file"
    assert SECRET in (repo / path).read_text()  # unchanged


def test_creating_a_secret_file_is_refused(tmp_path: Path) -> None:
    tools = _tools(make_issue_repo(tmp_path / "repo"))
    answer = _call(tools, "create_file", path="app/.env.local", content="TOKEN=x\n")
    assert answer["error"] == "secret_file"
    assert not (tools.worktree / "app/.env.local").exists()


def test_search_leaves_secret_files_out_and_says_so(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    _commit(repo, {**SECRET_FILES, "calc/config.py": f"# not a secret: {SECRET[:6]}\n"}, LINKS)
    found = _call(_tools(repo), "search_code", query=SECRET[:6])
    assert [m["path"] for m in found["matches"]] == ["calc/config.py"]
    assert set(found["secret_files"]) >= set(SECRET_FILES)


def test_the_list_is_a_project_setting(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    _commit(repo, {".env": "LEVEL=debug\n", "conf/prod.yml": f"token: {SECRET}\n"}, {})
    (repo / "fixloop.toml").write_text('secret-files = ["*.yml"]\n')
    tools = _tools(repo)
    assert _call(tools, "read_file", path=".env")["ok"]  # replaced: .env is not on the list
    assert _call(tools, "read_file", path="conf/prod.yml")["error"] == "secret_file"
    (repo / "fixloop.toml").write_text('extend-secret-files = ["conf/*.yml"]\n')
    tools = _tools(repo)
    assert _call(tools, "read_file", path=".env")["error"] == "secret_file"
    assert _call(tools, "read_file", path="conf/prod.yml")["error"] == "secret_file"


def test_a_scripted_fixer_never_gets_a_secret_file(tmp_path: Path, pack: Pack) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    _commit(repo, SECRET_FILES, LINKS)
    script = {
        "issue-fixer/ISSUE/attempt-1": {
            "tools": [
                {"name": "read_file", "input": {"path": ".env"}},
                {"name": "read_file", "input": {"path": "notes/settings.txt"}},
                {"name": "search_code", "input": {"query": SECRET}},
                *fixing_tools(),
            ],
            "output": FIXED_OUTPUT,
        }
    }
    issue = write_issue(tmp_path)
    options = FixIssueOptions(issue=issue, repo=repo, tests=[UNITTEST], open_sandbox=recorder())
    result = run_fix_issue(options, Context(pack, ScriptedBackend(script)))
    assert result.status is IssueStatus.RESOLVED, result.reason
    events = [json.loads(line) for line in Path(result.trace_path).read_text().splitlines()]
    tools = [e for e in events if e["event"] == "tool"]
    refused = [(t["tool"], t["path"]) for t in tools if t["error"] == "secret_file"]
    assert refused == [("read_file", ".env"), ("read_file", "notes/settings.txt")]
    written = [p for p in (repo / ".git" / "fixloop").rglob("*") if p.is_file()]
    assert not [p for p in written if SECRET in p.read_text("utf-8", "replace")]
