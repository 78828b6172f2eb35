"""Running the Claude Code CLI that ships inside the claude-agent-sdk wheel, headless.

For tests of a pack as Claude Code itself sees it: does the plugin load, which agents and
commands does the `init` message list, what does a slash command expand to. Pair it with a
`MessagesServer` (pass `server.env()`) so the run never leaves loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import claude_agent_sdk


def bundled_cli() -> Path:
    """The CLI binary in the installed claude-agent-sdk wheel; raises when it is missing."""
    path = Path(claude_agent_sdk.__file__).resolve().parent / "_bundled" / "claude"
    if not path.is_file():
        raise FileNotFoundError(f"no Claude Code CLI bundled with claude-agent-sdk at {path}")
    return path


@dataclass(frozen=True)
class CliRun:
    returncode: int
    events: list[dict[str, Any]]  # the stream-json lines, in order
    stderr: str

    @property
    def init(self) -> dict[str, Any]:
        """The `system/init` event: tools, agents, slash commands, plugins, plugin errors."""
        for event in self.events:
            if event.get("type") == "system" and event.get("subtype") == "init":
                return event
        raise LookupError(f"the CLI sent no init message (exit {self.returncode}): {self.stderr}")

    @property
    def result(self) -> dict[str, Any] | None:
        return next((e for e in reversed(self.events) if e.get("type") == "result"), None)


def child_env(overrides: Mapping[str, str]) -> dict[str, str]:
    """The current environment with `overrides`, minus CLAUDECODE (a nested CLI balks at it)."""
    env = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}
    env.update(overrides)
    return env


def run_headless(
    prompt: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    plugin_dirs: Sequence[Path] = (),
    extra_args: Sequence[str] = (),
    timeout_s: float = 120.0,
) -> CliRun:
    """`claude -p PROMPT` with stream-json output; user and project settings are not loaded."""
    argv = [
        str(bundled_cli()),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--setting-sources",
        "",
    ]
    for folder in plugin_dirs:
        argv += ["--plugin-dir", str(folder)]
    argv += [*extra_args, "--", prompt]
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    events = []
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return CliRun(done.returncode, events, done.stderr)


def plugin_validate(path: Path, *flags: str, env: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """`claude plugin validate --json [flags] PATH`: the exit code and the JSON report."""
    argv = [str(bundled_cli()), "plugin", "validate", "--json", *flags, str(path)]
    done = subprocess.run(
        argv, env=child_env(env), capture_output=True, text=True, timeout=120, check=False
    )
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = {"unparsed": done.stdout, "stderr": done.stderr}
    return done.returncode, report if isinstance(report, dict) else {"unparsed": report}


def plugin_command(*args: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """`claude plugin ARGS…` (marketplace add, install, details), its output as text."""
    argv = [str(bundled_cli()), "plugin", *args]
    return subprocess.run(
        argv, env=child_env(env), capture_output=True, text=True, timeout=120, check=False
    )


__all__ = [
    "CliRun",
    "bundled_cli",
    "child_env",
    "plugin_command",
    "plugin_validate",
    "run_headless",
]
