"""Before a run with the claude backend changes anything: can the Claude Code CLI answer at all?

A run that finds out only at its first role call (no login, no key) fails every item with a bare
`backend_error` and reports nothing done. So the backend's preflight asks the CLI itself, `claude
auth status --json`: it reads local state and calls no model, and it counts a keychain login, a
token or a cloud provider exactly as the CLI will. A CLI too old to say falls back to the
environment: a key, a token, or a cloud provider's switch is enough.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import claude_agent_sdk

from fixloop.diagnostics import Diagnostic, FixloopError

NO_LOGIN = (
    "claude: not logged in and no ANTHROPIC_API_KEY; set ANTHROPIC_API_KEY, or {login}; "
    "--backend scripted --script FILE runs offline"
)
NO_CLI = (
    "claude: the Claude Code CLI was not found (it ships in the claude-agent-sdk wheel; "
    "reinstall fixloop, or put `claude` on PATH)"
)
CREDENTIAL_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)
TIMEOUT_S = 60.0


def find_cli(cli_path: Path | str | None) -> str | None:
    """The CLI a call would start, looked for as the SDK looks: given, bundled, then PATH."""
    if cli_path is not None:
        return str(cli_path) if Path(cli_path).is_file() else None
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if bundled.is_file():
        return str(bundled)
    return shutil.which("claude")


def login_hint(cli: str | None, env: Mapping[str, str]) -> str:
    """How to log in, in words that work here: a pip install puts no `claude` on PATH, only the
    CLI inside the claude-agent-sdk wheel, so that one is named by its path."""
    path = env.get("PATH", os.environ.get("PATH", ""))
    if shutil.which("claude", path=path) is not None or cli is None:
        return "log in to Claude Code (`claude /login`)"
    return f"log in with the Claude Code CLI fixloop installed (`{shlex.quote(cli)} /login`)"


def check_claude_login(cli_path: Path | str | None, env: Mapping[str, str]) -> None:
    """A FixloopError (one line, exit 2) unless the CLI is there and logged in or has a key."""
    cli = find_cli(cli_path)
    if cli is None:
        raise _refuse(NO_CLI)
    child_env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"} | dict(env)
    try:
        done = subprocess.run(
            [cli, "auth", "status", "--json"],
            env=child_env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        status = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        status = None
    if isinstance(status, dict) and "loggedIn" in status:
        if status["loggedIn"] is not True:
            raise _refuse(NO_LOGIN.format(login=login_hint(cli, child_env)))
        return
    if not any(child_env.get(name) for name in CREDENTIAL_ENV):
        raise _refuse(NO_LOGIN.format(login=login_hint(cli, child_env)))


def _refuse(problem: str) -> FixloopError:
    return FixloopError(Diagnostic("backend", 1, 1, "backend", problem))


__all__ = ["NO_CLI", "NO_LOGIN", "check_claude_login", "find_cli", "login_hint"]
