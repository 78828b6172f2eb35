"""Secret masking: what fixloop writes to disk (traces, run files, reports) never holds a secret.

Two kinds of secrets are replaced by a placeholder naming what was there, never the value:

- the values of environment variables whose names look like keys, tokens, secrets or passwords
  (`ANTHROPIC_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`, `AUTH`, `*_CREDENTIALS`, …) become
  `«masked:ANTHROPIC_API_KEY»`. Values too short or too common to be a secret (`true`, under 8
  characters) are left alone: masking them would garble every trace and protect nothing;
- strings shaped like well-known credentials become `«masked:KIND»`: Anthropic and OpenAI keys,
  GitHub tokens, AWS access key ids and the secret keys written next to them, PEM private-key
  blocks, Slack, Google, Stripe, npm and Hugging Face tokens, the credentials of Authorization
  and API-key headers, bare bearer tokens, passwords in URLs;
- values assigned to a secret-looking name in text, as `.env` files, shells, YAML and JSON write
  them (`AWS_SECRET_ACCESS_KEY=…`, `export GH_TOKEN=…`, `password: …`, `"api_key": "…"`),
  become `«masked:NAME»`, whatever the value looks like: an upper-case variable name is judged
  as the environment's names are; a name in any case must hold a strong part (`secret`,
  `password`, `token`, `api_key`, …), so `key: value` in prose is left alone.

`MaskingStream` puts the same masking in front of a terminal stream: the command line writes
everything it prints through one (`cli/main.py`), so no secret reaches the screen either.

`mask_text`, `mask_json` and `dumps_masked` use a process-wide `Masker`: it snapshots the
environment once and takes a new snapshot only when the environment changed (a cheap check). Most
text holds no secret, so a masker first asks whether a text could hold one (a few scans for the
literals every secret shape contains) and only then rewrites it; `dumps_masked` asks once for a
whole serialised object. `bench/masking.py` measures it against `json.dumps`.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

MIN_SECRET_LENGTH = 8

# Values an environment variable with a secret-looking name often holds that are no secret.
_COMMON_VALUES = frozenset(
    {
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "none",
        "null",
        "undefined",
        "enabled",
        "disabled",
        "changeme",
        "password",
        "********",
        "xxxxxxxx",
    }
)
# Anywhere in a name: `GH_TOKEN`, `CLIENT_SECRET`, `PGPASSWORD`, `GOOGLE_CREDENTIALS`, `APIKEY`.
_NAME_PARTS = ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "TOKEN", "CREDENTIAL", "APIKEY")
# Whole words of a name only: `OPENAI_API_KEY`, `NPM_AUTH`, `DB_PASS` (but not `XAUTHORITY`,
# `GIT_AUTHOR_NAME`, `KEYBOARD`).
_NAME_WORDS = frozenset({"KEY", "KEYS", "AUTH", "PASS", "PAT", "COOKIE", "CREDS"})
# A name ending in one of these says where a secret is, not what it is (`SSH_AUTH_SOCK`).
_LOCATION_WORDS = frozenset({"SOCK", "SOCKET", "PATH", "DIR", "FILE", "HOME"})

_KEYC = "A-Za-z0-9_-"  # the characters of most API keys
# Well-known credential shapes: (kind, literal every match contains, pattern). Each pattern starts
# with its literal and checks the word boundary just after it, so that `re` can search for the
# literal as fast as `in` does instead of trying the whole pattern at every position.
_SHAPE_SOURCES: tuple[tuple[str, str, str], ...] = (
    (
        "private-key",
        "-----BEGIN",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",  # cut short: to the end
    ),
    ("anthropic-key", "sk-ant-", rf"sk-ant-[{_KEYC}]{{20,}}"),
    ("openai-key", "sk-", rf"sk-(?<![A-Za-z0-9]sk-)(?:proj-|svcacct-|admin-)?[{_KEYC}]{{20,}}"),
    ("github-token", "gh", r"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{30,}"),
    ("github-token", "github_pat_", r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{22,}"),
    ("aws-access-key-id", "AKIA", r"AKIA(?<![A-Za-z0-9]AKIA)[A-Z0-9]{16}\b"),
    ("aws-access-key-id", "ASIA", r"ASIA(?<![A-Za-z0-9]ASIA)[A-Z0-9]{16}\b"),
    ("slack-token", "xox", rf"xox(?<![A-Za-z0-9]xox)[abposr]-[{_KEYC}]{{10,}}"),
    ("slack-token", "xapp-", rf"xapp-(?<![A-Za-z0-9]xapp-)[{_KEYC}]{{10,}}"),
    ("google-api-key", "AIza", rf"AIza(?<![A-Za-z0-9]AIza)[{_KEYC}]{{35}}"),
    ("stripe-key", "k_live_", r"\b[rs]k_live_[A-Za-z0-9]{16,}"),
    ("stripe-key", "k_test_", r"\b[rs]k_test_[A-Za-z0-9]{16,}"),
    ("npm-token", "npm_", r"npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{36}"),
    ("huggingface-token", "hf_", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}"),
)
# The same literals found by three scans instead of one per literal: each pattern starts with one
# character, which `re` looks for as fast as `in` does, and checks the rest only there. Each is
# compiled when a text first holds its character: most of what a check prints holds none.
_SHAPE_HINTS = (
    ("-", r"-(?:(?<=sk-)|(?<=xox[abposr]-)|(?<=xapp-)|----BEGIN)"),
    (
        "_",
        r"_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=npm_)|(?<=hf_)|(?<=[rs]k_live_)|(?<=[rs]k_test_))",
    ),
    ("A", r"A(?:KIA|SIA|Iza)"),
)


@cache
def _shape_hint(index: int) -> re.Pattern[str]:
    return re.compile(_SHAPE_HINTS[index][1])


def _has_shape_hint(text: str) -> bool:
    return any(
        first in text and _shape_hint(index).search(text) is not None
        for index, (first, _) in enumerate(_SHAPE_HINTS)
    )


# Secrets known by where they stand: the marker stays, the value goes.
_HEADER = (
    r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|token|basic|digest)\s+)?"
    r"|\b(?:x-)?(?:api-key|auth-token)[\"']?\s*[:=]\s*[\"']?)"
    r"([A-Za-z0-9._~+/-]{8,}=*)"
    r"|(\bbearer\s+)([A-Za-z0-9._~+/-]{16,}=*)"
)
_HEADER_HINTS = ("authorization", "bearer", "api-key", "auth-token")
_URL_USERINFO = r"(://[^/\s:@\"'\\]{1,256}:)([^/\s@\"'\\]{1,256})(@)"
# An AWS secret access key: 40 base64 characters near an access key id or named as one.
# (An `=` may stand before one: `AWS_SECRET_ACCESS_KEY=…`; base64 pads only at the end.)
_AWS_KEY_SHAPE = r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
_AWS_ANCHOR = r"«masked:(?:aws-access-key-id|[A-Z0-9_]*ACCESS_KEY_ID)»|(?i:secret_?access_?key)"
_HEX_ID = r"[0-9a-f]{40}"  # a git object id is no secret
# `NAME=value`, `export NAME=value`, `NAME: value`, `"NAME": "value"`; the value quoted or a run
# of characters that cannot end a JSON string early (no quote, no backslash). A path's last part
# is no name: `'/etc/passwd': absolute paths are refused` assigns nothing.
_ASSIGNMENT = (
    r"(?<![\w./-])(?:export\s+)?([A-Za-z_][\w.-]*)([\"']?\s*[:=]\s*)"
    r"(?:\"([^\"\n\\]*)\"|'([^'\n\\]*)'|([^\s\"'`,;\\]+))"
)
# Parts that make a name of any case a secret's; the same as a cheap first test of a text.
_STRONG_NAME = (
    r"(?i)secret|passw(?:or)?d|passphrase|token|credential|api_?key|access_?key|private_?key"
)
_ENV_NAME = r"[A-Z][A-Z0-9_]*"
# A cheap first test for an assignment worth a closer look: a secret-looking word of a name, then
# the rest of the name, `=` or `:` and a value that is not a number, an object or a placeholder
# (it may start with digits: `API_TOKEN=7f3a…`; `"input_tokens": 12` and `"tokens": {` in a trace
# line are no secrets). Words are found with `str.find`: one regex alternation over them costs
# more than serialising the line.
_STRONG_WORDS = (
    "secret",
    "passw",
    "passphrase",
    "token",
    "credential",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
)
_UPPER_WORDS = ("KEY", "AUTH", "PASS", "PAT", "COOKIE", "CREDS")  # whole words, upper case only
_ASSIGNED = r"[\w.-]*[\"']?\s*[:=]\s*[\"']?\d*[^\s\"'\d{\[«$<,}\]]"


class _Rewriting:
    """The patterns that find and replace a secret, compiled when a text first may hold one.

    Most processes never print or write one (`fixloop check` prints its summary line): compiled
    at import, these 22 patterns were 2 to 3 ms of a one-document check (bench/startup.py). The
    first scans (`_SHAPE_HINTS`) are compiled when a text first holds their first character;
    the one only a text holding a secret-looking word meets (`_ASSIGNED`, see `_assigned`) on
    first need.
    """

    def __init__(self) -> None:
        self.shapes = tuple(
            (kind, hint, re.compile(pattern, re.DOTALL)) for kind, hint, pattern in _SHAPE_SOURCES
        )
        self.header = re.compile(_HEADER)
        self.url_password = re.compile(_URL_USERINFO)
        self.aws_secret = re.compile(_AWS_KEY_SHAPE)
        self.aws_anchor = re.compile(_AWS_ANCHOR)
        self.hex_id = re.compile(_HEX_ID)
        self.assignment = re.compile(_ASSIGNMENT)
        self.strong_name = re.compile(_STRONG_NAME)
        self.env_name = re.compile(_ENV_NAME)


@cache
def _rewriting() -> _Rewriting:
    return _Rewriting()


@cache
def _assigned() -> re.Pattern[str]:
    return re.compile(_ASSIGNED)


def _may_assign_secret(text: str) -> bool:
    for haystack, words in ((text.lower(), _STRONG_WORDS), (text, _UPPER_WORDS)):
        for word in words:
            at = haystack.find(word)
            while at != -1:
                if _assigned().match(text, at + len(word)):
                    return True
                at = haystack.find(word, at + 1)
    return False


_AWS_WINDOW = 200


def placeholder(kind: str) -> str:
    return f"«masked:{kind}»"


def is_secret_name(name: str) -> bool:
    """True for an environment variable name that looks like it holds a key, token or password."""
    upper = name.upper()
    words = [word for word in re.split(r"[^A-Z0-9]+", upper) if word]
    if not words or words[-1] in _LOCATION_WORDS:
        return False
    return any(part in upper for part in _NAME_PARTS) or any(w in _NAME_WORDS for w in words)


def is_secret_assignment_name(name: str) -> bool:
    """True for a name whose assigned value in text is a secret: an environment-style name that
    looks like a secret's, or any name holding a strong part (`password`, `api_key`, `token`)."""
    if _rewriting().env_name.fullmatch(name):
        return is_secret_name(name)
    words = [word for word in re.split(r"[^A-Za-z0-9]+", name.upper()) if word]
    return (
        bool(words)
        and words[-1] not in _LOCATION_WORDS
        and bool(_rewriting().strong_name.search(name))
    )


def is_secret_value(value: str) -> bool:
    """False for values too short or too common to be a secret worth masking."""
    stripped = value.strip()
    return (
        len(stripped) >= MIN_SECRET_LENGTH
        and stripped.lower() not in _COMMON_VALUES
        and len(set(stripped)) > 1
    )


class Masker:
    """Masks one snapshot of the environment's secrets and the well-known credential shapes."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        found: dict[str, str] = {}
        for name, value in sorted(environ.items()):
            if is_secret_name(name) and is_secret_value(value):
                found.setdefault(value.strip(), name)
        # Longest first, so a secret that contains another one is masked whole.
        self._secrets = sorted(found.items(), key=lambda item: len(item[0]), reverse=True)
        # In serialised JSON a value may stand escaped (quotes, backslashes, newlines, non-ASCII).
        escaped = {json.dumps(v, ensure_ascii=a)[1:-1] for v in found for a in (False, True)}
        self._needles = tuple(sorted(set(found) | escaped, key=len, reverse=True))

    @property
    def variable_names(self) -> list[str]:
        """The variables whose values this masker hides (names only, sorted)."""
        return sorted({name for _, name in self._secrets})

    def may_hold_secret(self, text: str) -> bool:
        """False only when `text` certainly holds nothing this masker would replace."""
        if len(text) < MIN_SECRET_LENGTH:
            return False
        if any(needle in text for needle in self._needles):
            return True
        if "://" in text or _has_shape_hint(text):
            return True
        lowered = text.lower()
        if any(hint in lowered for hint in _HEADER_HINTS) or "secret" in lowered:
            return True
        return _may_assign_secret(text)

    def mask_text(self, text: str) -> str:
        """`text` with every secret replaced by «masked:NAME» (environment) or «masked:KIND»."""
        if not self.may_hold_secret(text):
            return text
        for value, name in self._secrets:
            if value in text:
                text = text.replace(value, placeholder(name))
        patterns = _rewriting()
        for kind, hint, pattern in patterns.shapes:
            if hint in text:
                text = pattern.sub(placeholder(kind), text)
        lowered = text.lower()
        if any(hint in lowered for hint in _HEADER_HINTS):
            text = patterns.header.sub(_mask_header, text)
        if "://" in text:
            text = patterns.url_password.sub(rf"\1{placeholder('url-password')}\3", text)
        if len(text) >= 40 and ("ACCESS_KEY_ID»" in text or "access" in text.lower()):
            text = _mask_aws_secrets(text)
        if _may_assign_secret(text):
            text = _mask_assignments(text)
        return text

    def mask_json(self, data: Any) -> Any:
        """`data` with every string masked, recursively; dict keys and other values kept.

        Returns `data` itself when nothing in it needs masking (do not mutate the result).
        """
        if isinstance(data, str):
            return self.mask_text(data)
        if not self.may_hold_secret(json.dumps(data, ensure_ascii=False, default=str)):
            return data
        return self._walk(data, None)

    def _walk(self, data: Any, default: Callable[[Any], Any] | None) -> Any:
        if isinstance(data, str):
            return self.mask_text(data)
        if isinstance(data, dict):
            return {key: self._walk(value, default) for key, value in data.items()}
        if isinstance(data, list | tuple):
            return [self._walk(value, default) for value in data]
        if data is None or isinstance(data, bool | int | float) or default is None:
            return data
        # What `json.dumps(default=...)` would write for it (a path, an enum): masked as well.
        return self._walk(default(data), None)

    def dumps(self, data: Any, **options: Any) -> str:
        """`json.dumps(data, **options)` of `data` masked; one serialisation when nothing is."""
        text = json.dumps(data, **options)
        if not self.may_hold_secret(text):
            return text
        return json.dumps(self._walk(data, options.get("default")), **options)


def _mask_assignments(text: str) -> str:
    """Every value assigned to a secret name, masked. A match whose name is no secret's is
    looked into again from its value on: `progress: DB_PASSWORD=…` holds an assignment in what
    first reads as the value of `progress`."""
    out: list[str] = []
    at = 0
    assignment = _rewriting().assignment
    while (match := assignment.search(text, at)) is not None:
        name = match.group(1)
        group = next(i for i in (3, 4, 5) if match.group(i) is not None)
        value = match.group(group)
        if (
            not is_secret_assignment_name(name)
            or not is_secret_value(value)
            or value.isdigit()  # a count (`max_tokens: 100000000`), not a secret worth hiding
            or value.startswith(("$", "«masked:", "<"))  # a reference or a placeholder
        ):
            out.append(text[at : match.end(2)])
            at = match.end(2)
            continue
        out.append(text[at : match.start(group)] + placeholder(name))
        at = match.end(group)
    return "".join(out) + text[at:]


def _mask_header(match: re.Match[str]) -> str:
    marker = match.group(1) if match.group(1) is not None else match.group(3)
    return marker + placeholder("bearer-token")


def _mask_aws_secrets(text: str) -> str:
    """40-character base64 words near an access key id, or right after a secret-key name."""
    patterns = _rewriting()
    anchors = [m.start() for m in patterns.aws_anchor.finditer(text)]
    if not anchors:
        return text

    def replace(match: re.Match[str]) -> str:
        word = match.group()
        near = any(abs(match.start() - anchor) <= _AWS_WINDOW for anchor in anchors)
        return (
            placeholder("aws-secret-access-key")
            if near and not patterns.hex_id.fullmatch(word)
            else word
        )

    return patterns.aws_secret.sub(replace, text)


_lock = threading.Lock()
_current: tuple[object, Masker] | None = None


def _environment_fingerprint() -> object:
    # The raw dict behind `os.environ`: a tuple of its items is cheap to build and compares by
    # identity, while going through `os.environ` would decode every name and value on each call.
    raw: Mapping[bytes, bytes] | None = getattr(os.environ, "_data", None)
    return tuple(raw.items()) if raw is not None else tuple(os.environ.items())


def current_masker() -> Masker:
    """The process-wide masker, snapshotted again when the environment changed since last time."""
    global _current  # noqa: PLW0603 - one cached snapshot per process, replaced whole
    fingerprint = _environment_fingerprint()
    cached = _current
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    with _lock:
        masker = Masker(os.environ)
        _current = (fingerprint, masker)
    return masker


def mask_text(text: str) -> str:
    """`text` with every secret replaced by «masked:NAME» (environment) or «masked:KIND» (shape)."""
    return current_masker().mask_text(text)


def mask_json(data: Any) -> Any:
    """JSON-like `data` with every string masked; dict keys and non-string values kept."""
    return current_masker().mask_json(data)


def dumps_masked(data: Any, **options: Any) -> str:
    """`json.dumps` for anything written to disk: the same text, with every secret masked."""
    return current_masker().dumps(data, **options)


class MaskingStream:
    """A text stream that masks what it is given before its target sees it.

    Text is held until a line ends (or `flush`), then masked whole: a secret printed in pieces
    on one line (`print("token", value)` writes three times) is masked as one line, and a
    multi-line one printed at once (a PEM block) as one text. Everything else is the target's.
    """

    def __init__(self, target: Any) -> None:
        self.target = target
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        cut = self._pending.rfind("\n") + 1
        if cut:
            ready, self._pending = self._pending[:cut], self._pending[cut:]
            self.target.write(mask_text(ready))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            ready, self._pending = self._pending, ""
            self.target.write(mask_text(ready))
        self.target.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding, buffer, …
        return getattr(self.target, name)
