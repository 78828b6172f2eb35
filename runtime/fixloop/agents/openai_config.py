"""Which OpenAI-compatible server `--backend openai` talks to: presets, and where each value comes
from.

    provider   --provider      > project settings `provider`           > openai
    model      --model         > OPENAI_MODEL   > settings `models` (by the role's `model:`)
               > settings `model`     > the preset's model
    base URL   --base-url      > OPENAI_BASE_URL (openai, custom)      > the preset's URL
    key        --api-key-env NAME > the preset's variables (DEEPSEEK_API_KEY, …; openai and
               custom: OPENAI_API_KEY)

The key is only ever read from the environment, and only held in memory: a key on a command line
is in `ps` and the shell's history, one in a settings file is committed with it. The project's
settings (`[openai]` in fixloop.toml) may choose the provider, the model, prices and budgets but
never the base URL or the key's variable (`documents.config.OpenAISettings`), so a cloned
repository cannot send the user's key to a server of its choosing; a preset's key goes only to
that preset's server unless the user names another URL. Everything fixloop writes passes through
`fixloop.masking`, which masks the value of every `*_API_KEY` variable; a variable named with
`--api-key-env` must look like a secret's name for the same reason.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.claude_code import valid_model
from fixloop.documents.config import OpenAISettings
from fixloop.masking import is_secret_name

DEFAULT_CALL_TOKEN_BUDGET = 150_000  # input and output tokens of one role call, every turn
DEFAULT_MAX_TURNS = 50  # when the role's document sets no maxTurns
NO_KEY = "no-key"  # what is sent to a server that needs none (the SDK insists on a value)


@dataclass(frozen=True)
class Preset:
    name: str
    base_url: str  # "" for custom: the user names it
    key_variables: tuple[str, ...]
    model: str  # "" for custom: the user names it


PRESETS: Mapping[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("openai", "https://api.openai.com/v1", ("OPENAI_API_KEY",), "gpt-4.1"),
        Preset("deepseek", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",), "deepseek-chat"),
        Preset(
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            "gemini-2.5-flash",
        ),
        Preset(
            "qwen",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            ("DASHSCOPE_API_KEY",),
            "qwen-plus",
        ),
        Preset("custom", "", ("OPENAI_API_KEY",), ""),
    )
}
# The SDK's own variables apply where they mean what the user set them for.
SDK_BASE_URL = "OPENAI_BASE_URL"
SDK_MODEL = "OPENAI_MODEL"
_SDK_PRESETS = frozenset({"openai", "custom"})


@dataclass(frozen=True)
class OpenAIFlags:
    """What the command line said (None: not said)."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None

    def given(self) -> list[str]:
        named = {
            "--provider": self.provider,
            "--model": self.model,
            "--base-url": self.base_url,
            "--api-key-env": self.api_key_env,
        }
        return [flag for flag, value in named.items() if value is not None]


@dataclass(frozen=True)
class OpenAITarget:
    """The server, model and budgets of one backend, with the key's variable (never the key)."""

    provider: str
    base_url: str
    model: str
    key_variable: str | None  # None: no key found (allowed only for a server the user named)
    # A role's `model:` alias (opus, sonnet) → the model name, from the project's settings.
    models: Mapping[str, str] = field(default_factory=dict)
    max_turns: int = DEFAULT_MAX_TURNS
    call_token_budget: int = DEFAULT_CALL_TOKEN_BUDGET
    price_input: float | None = None  # USD per million tokens
    price_output: float | None = None

    def model_for(self, alias: str) -> str:
        """The model that plays a role whose model is `alias`: a Claude alias its document,
        a profile or the settings name (mapped by `models`, else the backend's model), or a
        server model name `--model ROLE=NAME` chose."""
        if alias in self.models:
            return self.models[alias]
        return self.model if not alias or valid_model(alias) else alias

    @property
    def priced(self) -> bool:
        return self.price_input is not None and self.price_output is not None

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        if not self.priced:
            return 0.0
        assert self.price_input is not None and self.price_output is not None
        return (input_tokens * self.price_input + output_tokens * self.price_output) / 1e6

    def api_key(self, environ: Mapping[str, str]) -> str:
        """The key, read now from the environment; `NO_KEY` for a server that needs none."""
        if self.key_variable is None:
            return NO_KEY
        return environ.get(self.key_variable, "").strip() or NO_KEY


def _refuse(problem: str) -> FixloopError:
    return FixloopError(Diagnostic("backend", 1, 1, "backend", f"openai: {problem}"))


def resolve_target(
    flags: OpenAIFlags, environ: Mapping[str, str], settings: OpenAISettings | None
) -> OpenAITarget:
    """The target the flags, environment and settings name; a FixloopError (exit 2) saying
    which value is missing or wrong."""
    project = settings or OpenAISettings()
    provider = flags.provider or project.provider or "openai"
    preset = PRESETS.get(provider)
    if preset is None:
        raise _refuse(f"unknown provider {provider!r}: use one of {', '.join(PRESETS)}")
    sdk = provider in _SDK_PRESETS
    base_url = (
        flags.base_url or (environ.get(SDK_BASE_URL, "").strip() if sdk else "") or preset.base_url
    ).rstrip("/")
    if not base_url:
        raise _refuse(
            "the custom provider needs a base URL: --base-url http://HOST:PORT/v1 "
            f"(or {SDK_BASE_URL})"
        )
    _check_url(base_url)
    chosen = flags.model or (environ.get(SDK_MODEL, "").strip() if sdk else "")
    model = chosen or project.model or preset.model
    if not model:
        raise _refuse(f"the custom provider needs a model: --model NAME (or {SDK_MODEL})")
    variable = _key_variable(flags, preset, environ)
    named_server = base_url != preset.base_url
    if variable is None and not named_server:
        wanted = " or ".join(preset.key_variables)
        raise _refuse(
            f"no API key: set {wanted} (or name the variable with --api-key-env); "
            "--backend scripted --script FILE runs offline"
        )
    return OpenAITarget(
        provider=provider,
        base_url=base_url,
        model=model,
        key_variable=variable,
        models={} if chosen else dict(project.models),  # one model named is every role's
        max_turns=project.max_turns or DEFAULT_MAX_TURNS,
        call_token_budget=project.call_token_budget or DEFAULT_CALL_TOKEN_BUDGET,
        price_input=project.price_input,
        price_output=project.price_output,
    )


def _key_variable(flags: OpenAIFlags, preset: Preset, environ: Mapping[str, str]) -> str | None:
    if flags.api_key_env is not None:
        name = flags.api_key_env
        if not is_secret_name(name):
            raise _refuse(
                f"--api-key-env {name}: name a variable that looks like a key's (…_API_KEY, "
                "…_TOKEN), so that every trace and report masks its value"
            )
        if not environ.get(name, "").strip():
            raise _refuse(f"--api-key-env {name}: the variable is not set")
        return name
    return next((name for name in preset.key_variables if environ.get(name, "").strip()), None)


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _refuse(f"base URL {url!r}: expected http(s)://HOST[:PORT]/PATH, e.g. .../v1")
    if parts.scheme == "http" and not _is_local(parts.hostname):
        raise _refuse(
            f"base URL {url!r}: plain http sends the key in the clear; use https, or a server "
            "on this machine or your network"
        )


def _is_local(host: str) -> bool:
    """Loopback, a private network or a name without dots (a LAN host): where plain http is
    an honest choice (vLLM, Ollama, llama.cpp on a box of yours)."""
    if host == "localhost" or ("." not in host and ":" not in host):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host.endswith((".local", ".lan", ".internal"))
    return address.is_loopback or address.is_private or address.is_link_local


__all__ = [
    "DEFAULT_CALL_TOKEN_BUDGET",
    "DEFAULT_MAX_TURNS",
    "PRESETS",
    "OpenAIFlags",
    "OpenAITarget",
    "Preset",
    "resolve_target",
]
