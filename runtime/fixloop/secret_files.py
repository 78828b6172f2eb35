"""Which files of a repository hold secrets: environment files, private keys, credentials.

An agent's file tools neither read nor change them (`fix-issue`'s `read_file`, `edit_file`,
`create_file`; `search_code` leaves them out), and a link to one counts as the file it leads
to. The list is a project setting (`fixloop.toml`, or `[tool.fixloop]` in `pyproject.toml`):

    secret-files = [".env*", "*.pem"]         # replaces the list below
    extend-secret-files = ["config/prod.yml"] # adds to it

A pattern without `/` matches a file's name in any folder (`.env.*` matches `app/.env.local`);
one with `/` matches the end of the path (`.aws/credentials`). Case is ignored. `.npmrc`,
`.pypirc` and the like are refused whole, whether or not they hold a token this time: telling
needs reading them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from fixloop.records import record

DEFAULT_SECRET_FILES: tuple[str, ...] = (
    # environment files (dotenv, direnv, docker compose's env files)
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    # private keys and key stores
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    # credentials and token-bearing configuration
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".pgpass",
    ".htpasswd",
    "credentials",  # .aws/credentials, a CLI's credentials file
    ".aws/*",
    ".docker/config.json",
    ".kube/config",
)


@record(frozen=True)
class SecretFiles:
    """The patterns of one project's secret files."""

    patterns: tuple[str, ...] = DEFAULT_SECRET_FILES

    @classmethod
    def configured(
        cls, replaced: Sequence[str] | None = None, extended: Sequence[str] = ()
    ) -> SecretFiles:
        base = DEFAULT_SECRET_FILES if replaced is None else tuple(replaced)
        return cls(tuple(dict.fromkeys((*base, *extended))))

    def pattern_of(self, path: str) -> str | None:
        """The pattern `path` (relative, `/`-separated) matches, if any."""
        lowered = path.lower().strip("/")
        name = lowered.rsplit("/", 1)[-1]
        for pattern in self.patterns:
            wanted = pattern.lower().strip("/")
            if "/" in wanted:
                if fnmatch.fnmatchcase(lowered, wanted) or fnmatch.fnmatchcase(
                    lowered, f"*/{wanted}"
                ):
                    return pattern
            elif fnmatch.fnmatchcase(name, wanted):
                return pattern
        return None

    def problem(self, root: Path, path: str) -> str | None:
        """Why the file at `path` under `root` is a secret one (itself, or where a link on its
        way leads), else None."""
        candidates = [path]
        target = root / path
        try:
            resolved = target.resolve()
            real_root = root.resolve()
        except (OSError, RuntimeError):  # a loop of links: nothing to read there
            resolved, real_root = target, root
        if resolved.is_relative_to(real_root) and resolved != real_root:
            candidates.append(resolved.relative_to(real_root).as_posix())
        for candidate in candidates:
            pattern = self.pattern_of(candidate)
            if pattern is not None:
                shown = path if candidate == path else f"{path} (a link to {candidate})"
                return (
                    f"{shown} is a secret file (it matches {pattern!r}): environment and "
                    "credential files are never read or changed by these tools; the list is "
                    "the project setting `secret-files` (fixloop.toml)"
                )
        return None


__all__ = ["DEFAULT_SECRET_FILES", "SecretFiles"]
