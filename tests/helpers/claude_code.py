"""Running a slash command of the pack in real Claude Code, as a user would have it installed.

The plugin is installed through `claude plugin marketplace add` + `claude plugin install` in a
temporary HOME; the project gets exactly the permission rules fixloop documents (`fixloop init
--claude --local`); the CLI runs `claude -p` in its default permission mode. Only the model is
scripted, on loopback (`MessagesServer`). Requests the headless runtime makes for a role carry
its call key (`X-Fixloop-Call`), so one server answers both the orchestrator and the roles.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

from fixloop.extras.testing.claude_cli import bundled_cli, child_env, plugin_command
from fixloop.extras.testing.messages_server import MessagesServer, RecordedRequest, Turn, tool_use

Responder = Callable[[RecordedRequest], Turn]


def install_plugin(folder: Path) -> Path:
    """A HOME in `folder` with fixloop installed from a marketplace (`folder/market`)."""
    home = folder / "home"
    home.mkdir()
    market = folder / "market"
    shutil.copytree(
        REPO_ROOT,
        market,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "tests", "bench", "__pycache__", "*.egg-info"
        ),
    )
    for argv in (["marketplace", "add", str(market)], ["install", "fixloop@fixloop"]):
        done = plugin_command(*argv, env={"HOME": str(home)})
        assert done.returncode == 0, done.stdout + done.stderr
    return home


@dataclass(frozen=True)
class Installed:
    """A HOME with the plugin installed, and the marketplace folder it came from."""

    home: Path
    market: Path

    def session(self, repo: Path) -> dict[str, str]:
        """The environment of a CLI run in `repo`, after `fixloop init --claude --local` there."""
        init = subprocess.run(
            [
                *(sys.executable, "-m", "fixloop", "init", "--claude", "--local", "--yes"),
                *("--plugin-root", str(self.market)),
            ],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert init.returncode == 0, init.stderr
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        return {"HOME": str(self.home), "PATH": path}


def installed(folder: Path) -> Installed:
    return Installed(install_plugin(folder), folder / "market")


def bash(command: str, timeout_ms: int | None = None) -> Turn:
    move: dict[str, Any] = {"command": command, "description": "a step of the workflow"}
    if timeout_ms is not None:
        move["timeout"] = timeout_ms
    return tool_use("Bash", move)


def step(workflow: str, name: str, *args: str, repo: str = ".") -> Turn:
    words = ["fixloop", "step", "run", workflow, name, "--repo", repo, *args, "--json"]
    return bash(" ".join(words))


def run_claude(prompt: str, *, cwd: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    argv = [str(bundled_cli()), "-p", "--output-format", "stream-json", "--verbose", "--", prompt]
    done = subprocess.run(
        argv, cwd=cwd, env=child_env(env), capture_output=True, text=True, timeout=600, check=False
    )
    events = []
    for line in done.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    assert done.returncode == 0, done.stderr[-3000:]
    return events


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


@dataclass(frozen=True)
class Played:
    outcomes: list[str]  # the orchestrator's tool results, in order
    roles: list[RecordedRequest]  # the requests the headless runtime made for its roles


def played(
    moves: Sequence[Turn],
    prompt: str,
    repo: Path,
    env: dict[str, str],
    *,
    roles: Responder | None = None,
) -> Played:
    """Run `prompt` with the orchestrator playing `moves` and `roles` answering every request
    that carries a role's call key. Fails on any refusal, error or unplayed move."""

    def answer(request: RecordedRequest) -> Turn:
        if request.call_key:
            assert roles is not None, f"a role call nobody scripted: {request.call_key}"
            return roles(request)
        answered = sum(1 for message in request.messages if message.get("role") == "assistant")
        return moves[min(answered, len(moves) - 1)]

    with MessagesServer(answer) as server:
        events = run_claude(prompt, cwd=repo, env={**server.env(), **env})
    result = next(e for e in reversed(events) if e.get("type") == "result")
    main = [r for r in server.conversation if not r.call_key]
    outcomes = main[-1].tool_results()
    errors = [result_text(r) for r in outcomes if r.get("is_error")]
    assert errors == [], errors
    assert result.get("permission_denials") == [], result.get("permission_denials")
    assert len(outcomes) == len(moves) - 1, [result_text(r) for r in outcomes]
    assert server.unscripted == 0
    return Played(
        [result_text(r) for r in outcomes], [r for r in server.conversation if r.call_key]
    )


def envelope(outcome: str) -> dict[str, Any]:
    """The `--json` envelope a fixloop command printed (its first `{` line on)."""
    start = outcome.index("{")
    loaded = json.loads(outcome[start:])
    assert isinstance(loaded, dict), outcome
    return loaded
