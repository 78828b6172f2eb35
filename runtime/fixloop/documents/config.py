"""Project settings (`fixloop check`, `validate`, the workflows): `fixloop.toml`, `[tool.fixloop]`.

    [tool.fixloop]                   # in pyproject.toml; in fixloop.toml the same keys, no table
    pack = "plugins/ours"            # the pack to use when no path is given
    profile = "claude"               # or "fixloop": fixloop's house rules (see `Profile`)
    select = ["undefined-variable"]  # report only these rule or contract ids (default: all)
    ignore = ["rm-rf-empty-var"]     # never report these
    secret-files = [".env*"]         # files agents' file tools refuse (default: secret_files.py)
    extend-secret-files = ["conf/prod.yml"]  # more of them, on top of that list
    model-profile = "budget"         # the roles' models: quality, balanced or budget (models.py)
    [tool.fixloop.models]            # in fixloop.toml: [models]; one role's model, over the profile
    verifier = "opus"
    [tool.fixloop.openai]            # `--backend openai` (docs/backends.md); fixloop.toml: [openai]
    provider = "deepseek"            # openai, deepseek, gemini, qwen or custom
    model = "deepseek-chat"
    [tool.fixloop.per-file-ignores]  # in fixloop.toml: [per-file-ignores]
    "workflows/legacy-*.md" = ["undefined-variable"]

Found as ruff finds its own: from the pack (or the current directory) upwards, the nearest
`fixloop.toml`, or the nearest `pyproject.toml` with a `[tool.fixloop]` table; `fixloop.toml` wins
in a folder that has both. Paths in it (`pack`, the per-file globs) are relative to its folder.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop.diagnostics import Diagnostic, FixloopError, Severity, did_you_mean, display_path
from fixloop.documents import simple_toml
from fixloop.documents.files import present, read_text, resolved
from fixloop.documents.located_yaml import KeyPath
from fixloop.documents.plain_models import Refused, built, keyed
from fixloop.records import record, replace

if TYPE_CHECKING:
    from fixloop.secret_files import SecretFiles

CONFIG_FILE = "fixloop.toml"
PYPROJECT = "pyproject.toml"


class Profile(StrEnum):
    """Which rules a pack is held to.

    `claude`: what Claude Code itself accepts, and nothing of fixloop's own making; the default.
    `fixloop`: fixloop's house rules on top: an agent's name equals its file name, agent size
    budgets, declared inputs match the template, strict frontmatter values, and the runner's
    semantics (one shell per step, `set -euo pipefail`, inputs as environment variables) for the
    bash of `workflows/*.md`.
    """

    CLAUDE = "claude"
    FIXLOOP = "fixloop"


_DESTINATION = (
    "where your key goes is not a project setting (a cloned repository could send it "
    "anywhere): give it with {}"
)


# Plain classes, with pydantic's model made from them only to word the settings' problems
# (plain_models.py): defining models, and importing what that needs, was a good part of
# `fixloop check`'s start. Unknown keys are refused, and a key is written as its alias.
@record(frozen=True, kw_only=True)
class OpenAISettings:
    """What a project may choose for `--backend openai`. Where the key is sent (the base URL) and
    which variable holds it are the user's alone (flags, environment): a cloned repository's
    settings must not send the user's key to a server of its choosing."""

    provider: str | None = None
    model: str | None = None
    # A role's `model:` (opus, sonnet, haiku) → the model that plays it, e.g. a cheaper one for
    # the reviewer and verifier (`sonnet`).
    models: dict[str, str] = keyed(default_factory=dict)
    max_turns: int | None = keyed(default=None, alias="max-turns", ge=1)
    call_token_budget: int | None = keyed(default=None, alias="call-token-budget", ge=1)
    # USD per million tokens: what the run's cost budget counts with.
    price_input: float | None = keyed(default=None, alias="price-input", ge=0)
    price_output: float | None = keyed(default=None, alias="price-output", ge=0)
    base_url: str | None = keyed(
        default=None,
        alias="base-url",
        refused=_DESTINATION.format("--base-url or OPENAI_BASE_URL"),
    )
    api_key: str | None = keyed(
        default=None,
        alias="api-key",
        refused="a key in a settings file is committed with it; keep it in the environment "
        "(OPENAI_API_KEY, or the variable --api-key-env names)",
    )
    api_key_env: str | None = keyed(
        default=None, alias="api-key-env", refused=_DESTINATION.format("--api-key-env")
    )


@record(frozen=True, kw_only=True)
class Settings:
    pack: str | None = None
    profile: Profile | None = None
    select: list[str] | None = None
    ignore: list[str] = keyed(default_factory=list)
    per_file_ignores: dict[str, list[str]] = keyed(default_factory=dict, alias="per-file-ignores")
    secret_files: list[str] | None = keyed(default=None, alias="secret-files")
    extend_secret_files: list[str] = keyed(default_factory=list, alias="extend-secret-files")
    model_profile: str | None = keyed(default=None, alias="model-profile")
    models: dict[str, str] = keyed(default_factory=dict)
    openai: OpenAISettings | None = None


@record(frozen=True)
class Config:
    settings: Settings = dataclasses.field(default_factory=Settings)
    path: Path | None = None  # the file the settings come from
    cli: frozenset[str] = frozenset()  # ids given on the command line
    cli_select: frozenset[str] = frozenset()  # of which, those given to `--select`

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path else None

    @property
    def pack(self) -> Path | None:
        if self.settings.pack is None or self.folder is None:
            return None
        return resolved(self.folder / self.settings.pack)

    @property
    def secret_files(self) -> SecretFiles:
        # Imported here: only the agents' file tools ask, and every check reads the settings.
        from fixloop.secret_files import SecretFiles

        return SecretFiles.configured(self.settings.secret_files, self.settings.extend_secret_files)

    def profile(self, chosen: Profile | None = None) -> Profile:
        return chosen or self.settings.profile or Profile.CLAUDE

    def wanted(self, diagnostic: Diagnostic, base: Path | None = None) -> bool:
        """Does `select`/`ignore`/`per-file-ignores` let this diagnostic through?"""
        rule = diagnostic.rule
        if self.settings.select is not None and rule not in self.settings.select:
            return False
        if rule in self.settings.ignore:
            return False
        if not self.settings.per_file_ignores or self.folder is None:
            return True
        where = ((base or Path.cwd()) / diagnostic.path).resolve()
        try:
            relative = where.relative_to(resolved(self.folder)).as_posix()
        except ValueError:
            return True
        return not any(
            rule in rules and fnmatch.fnmatch(relative, pattern)
            for pattern, rules in self.settings.per_file_ignores.items()
        )

    def narrowed(self, select: list[str] | None, ignore: list[str] | None) -> Config:
        """These settings with the command line's `--select` (instead of theirs) and `--ignore`
        (besides theirs)."""
        update: dict[str, Any] = {}
        if select is not None:
            update["select"] = select
        if ignore:
            update["ignore"] = [*self.settings.ignore, *ignore]
        return replace(
            self,
            settings=replace(self.settings, **update),
            cli=frozenset([*(select or []), *(ignore or [])]),
            cli_select=frozenset(select or []),
        )

    def unknown_id(self, rule: str, known: Iterable[str] = ()) -> Diagnostic:
        """A warning about an id nothing reports, at its line in the settings (or the command
        line's, when it was given there).

        An error when the command line's `--select` names it: a check narrowed to a misspelt id
        reports nothing and passes. The settings' ids stay warnings: they serve every check of
        the pack, including one of a single document whose contracts live elsewhere."""
        message = f"{rule!r} is neither a rule fixloop reports nor a contract id it checked"
        message += did_you_mean(rule, known)
        if rule in self.cli_select:
            return Diagnostic("command line", 1, 1, "config", message, Severity.ERROR)
        if rule in self.cli or self.path is None:
            return Diagnostic("command line", 1, 1, "config", message, Severity.WARNING)
        shown = display_path(self.path)
        line = 1
        try:
            for number, text in enumerate(read_text(self.path).splitlines(), 1):
                if re.search(rf"[\"']{re.escape(rule)}[\"']", text):
                    line = number
                    break
        except (OSError, UnicodeDecodeError):
            pass
        return Diagnostic(shown, line, 1, "config", message, Severity.WARNING)

    def named_ids(self) -> set[str]:
        named = set(self.settings.select or []) | set(self.settings.ignore)
        return named | {r for rules in self.settings.per_file_ignores.values() for r in rules}


def find_config(start: Path) -> Config:
    """The settings that apply at `start` (a file or folder); empty settings when none."""
    folder = resolved(start)
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        own = candidate / CONFIG_FILE
        if present(own):
            return _load(own, table=False)
        pyproject = candidate / PYPROJECT
        if present(pyproject) and re.search(r"(?m)^\[tool\.fixloop[.\]]", _text(pyproject)):
            return _load(pyproject, table=True)
    return Config()


def _text(path: Path) -> str:
    try:
        return read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise FixloopError(Diagnostic(display_path(path), 1, 1, "config", str(exc))) from None


# Settings read before, by file, table and text: a check looks them up for the paths it is given
# and again for the folder of each document it reads (`checking.Library.profile_of`), mostly the
# one same file. Keyed by the text, which is read again every time, so an edit is never missed.
_LOADED: dict[tuple[Path, bool, str], Config] = {}
_LOADED_LIMIT = 256


def _load(path: Path, table: bool) -> Config:
    text = _text(path)
    key = (path, table, text)
    found = _LOADED.get(key)
    if found is None:
        found = _parsed(path, table, text)
        if len(_LOADED) >= _LOADED_LIMIT:
            _LOADED.clear()
        _LOADED[key] = found
    return found


def _parsed(path: Path, table: bool, text: str) -> Config:
    data: Any = simple_toml.loads(text)
    if data is None:
        data = _read_toml(path, text)
    prefix: KeyPath = ("tool", "fixloop") if table else ()
    for key in prefix:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    try:
        return Config(built(Settings, data), path)
    except Refused as exc:
        raise FixloopError(
            exc.diagnostics(
                display=display_path(path),
                rule="config",
                key_lines=_key_lines(text, prefix),
                prefix=prefix,
            )
        ) from None


def _read_toml(path: Path, text: str) -> Any:
    """The document as tomllib reads it, its errors worded as diagnostics."""
    # Here, not at the top: tomllib compiles its patterns when imported, 3 ms of a check's start
    # (bench/startup.py) that a plain settings file (simple_toml) never needs.
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise FixloopError(
            Diagnostic(display_path(path), 1, 1, "config", "invalid TOML: nested too deeply")
        ) from None
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"line (\d+), column (\d+)", str(exc))
        end = (text.count("\n") + 1, 1) if "end of document" in str(exc) else (1, 1)
        line, col = (int(at[1]), int(at[2])) if at else end
        problem = re.sub(r" \(at [^)]*\)$", "", str(exc))
        raise FixloopError(
            Diagnostic(display_path(path), line, col, "config", f"invalid TOML: {problem}")
        ) from None


def _key_lines(text: str, prefix: KeyPath) -> dict[KeyPath, int]:
    """Lines of the settings' keys, found in the text (tomllib keeps no positions)."""
    lines: dict[KeyPath, int] = {}
    table: KeyPath = prefix
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[([A-Za-z0-9_.-]+)\]\s*$", line)
        if header:  # a key below `[openai]` is `openai.<key>` (`[tool.fixloop.openai]` too)
            parts = tuple(header[1].split("."))
            table = parts if parts[: len(prefix)] == prefix else (*prefix, *parts)
            continue
        key = re.match(r'\s*"?([A-Za-z0-9_-]+)"?\s*=', line)
        if key and (*table, key[1]) not in lines:
            lines[(*table, key[1])] = number
    return lines
