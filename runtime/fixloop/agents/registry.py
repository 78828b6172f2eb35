"""Backends by name: `scripted`, `claude`, `openai`, or any `package.module:Class` that plays the
roles.

A team can bring its own backend (another model provider, a recorder, a proxy) without changing
fixloop: a class whose instances have a `name` and a `dispatch(AgentRequest) -> AgentOutcome`
(the `Backend` protocol), importable from the Python path, named as `module:Class`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path

from fixloop.agents.backend import Backend
from fixloop.agents.openai_config import OpenAIFlags
from fixloop.diagnostics import Diagnostic, FixloopError

BUILTIN = ("scripted", "claude", "openai")


def load_backend(
    spec: str,
    *,
    script: Path | None = None,
    openai: OpenAIFlags | None = None,
    project: Path | None = None,
    where: str = "backend",
) -> Backend:
    """The backend `spec` names; a FixloopError (exit 2) saying why when it cannot be had.

    `openai`: the command line's choices for `--backend openai`; `project`: where its project
    settings are looked for (`[openai]` in fixloop.toml; default: the current directory)."""

    def refuse(problem: str) -> FixloopError:
        return FixloopError(Diagnostic(where, 1, 1, "usage", problem))

    flags = openai or OpenAIFlags()
    if spec != "openai" and flags.given():
        named = ", ".join(flags.given())
        raise refuse(f"{named}: for --backend openai; --backend {spec} does not read it")

    if spec == "scripted":
        if script is None:
            raise refuse("--backend scripted needs --script FILE (the scripted model's replies)")
        from fixloop.agents.scripted import ScriptedBackend

        return ScriptedBackend.from_file(script)
    if script is not None:
        raise refuse(f"--script is for --backend scripted; --backend {spec} does not read it")
    if spec == "openai":
        return _openai_backend(flags, project, refuse)
    if spec == "claude":
        # Imported here: claude-agent-sdk takes about half a second to import, which every other
        # command (and `fixloop --help`) should not pay; and the slim install has none.
        try:
            from fixloop.agents.claude import ClaudeBackend
        except ModuleNotFoundError:
            raise refuse(
                "--backend claude needs claude-agent-sdk: pip install 'fixloop[claude]'"
            ) from None

        return ClaudeBackend()
    module_name, colon, class_name = spec.partition(":")
    if not colon or not module_name or not class_name.isidentifier():
        choices = ", ".join(BUILTIN)
        raise refuse(f"unknown backend {spec!r}: use {choices}, or module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise refuse(f"backend {spec!r}: cannot import {module_name}: {exc}") from None
    backend_class = getattr(module, class_name, None)
    if not isinstance(backend_class, type):
        raise refuse(f"backend {spec!r}: {module_name} has no class {class_name}")
    try:
        backend = backend_class()
    except Exception as exc:  # a plugin's constructor: any failure is the user's to read
        raise refuse(f"backend {spec!r}: could not be created: {exc}") from None
    if not callable(getattr(backend, "dispatch", None)) or not isinstance(
        getattr(backend, "name", None), str
    ):
        raise refuse(f"backend {spec!r}: needs a `name` and a `dispatch(request)` method")
    return backend  # type: ignore[no-any-return]


def _openai_backend(
    flags: OpenAIFlags, project: Path | None, refuse: Callable[[str], FixloopError]
) -> Backend:
    from fixloop.agents.openai_config import resolve_target
    from fixloop.documents.config import find_config

    config = find_config(project or Path.cwd())
    target = resolve_target(flags, os.environ, config.settings.openai)
    # Imported here: the SDK takes most of a second to import, and the slim install has none.
    try:
        from fixloop.agents.openai_backend import OpenAIBackend
    except ModuleNotFoundError:
        raise refuse(
            "--backend openai needs the openai package: pip install 'fixloop[openai]'"
        ) from None
    return OpenAIBackend(target, secret_files=config.secret_files)


__all__ = ["BUILTIN", "load_backend"]
