"""The plain settings reader reads what it reads as tomllib does, and leaves the rest to it."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.documents import simple_toml

# Pieces of lines, valid and not, of the kinds the plain reader reads and of the kinds it leaves.
_KEYS = ["a", "b", "profile", "x-y_1", '"q"', "'lit'", '"a b"', '""', "a.b", "", "é", "1"]
_VALUES = [
    '"s"',
    "'s'",
    '""',
    '"a#b"',
    "'C:\\x'",
    '"a\\"b"',
    '"\\u00e9"',
    '"""m"""',
    "'''m'''",
    '"un',
    "true",
    "false",
    "truex",
    "0",
    "7",
    "-3",
    "-0",
    "+1",
    "00",
    "1_000",
    "0x1",
    "1.5",
    "1e3",
    "1979-05-27",
    "inf",
    "[]",
    "[ ]",
    '["a", "b"]',
    '["a",]',
    "[1, 'x', true]",
    "[[1]]",
    "[,]",
    '["a"',
    "[1 2]",
    "{ a = 1 }",
    "",
    '"a" "b"',
    '"\t"',
]
_TAILS = ["", " ", "\t", " # note", "#", " x", " ]", "\x7f"]
_HEADERS = ["[t]", "[t.u]", "[a]", "[ t ]", "[t.]", "[]", "[[t]]", '["t"]', "[t] # c", "[t]x", "[u"]


def _line(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.15:
        return rng.choice(_HEADERS)
    if kind < 0.25:
        return rng.choice(["", "# a comment", "  # indented", "\t", "#\x01"])
    spaces = rng.choice(["", " ", "\t"])
    key, value = rng.choice(_KEYS), rng.choice(_VALUES)
    return f"{spaces}{key}{rng.choice(['=', ' = ', ' =', '= '])}{value}{rng.choice(_TAILS)}"


def _documents(count: int) -> list[str]:
    rng = random.Random(20261204)
    newline = ["\n"] * 8 + ["\r\n"]
    return [
        rng.choice(newline).join(_line(rng) for _ in range(rng.randint(1, 6))) for _ in range(count)
    ]


def _tomllib(text: str) -> object:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "error"


def test_what_it_reads_it_reads_as_tomllib_does() -> None:
    read = 0
    for text in _documents(6000):
        found = simple_toml.loads(text)
        if found is not None:
            read += 1
            assert found == _tomllib(text), repr(text)
    assert read > 300  # the comparison covers a good share of what it reads


@pytest.mark.parametrize(
    "text",
    [
        'profile = "fixloop"\n',
        '# settings\npack = "plugins/ours"\nselect = ["undefined-variable"]\n',
        '[models]\nverifier = "opus"\n[per-file-ignores]\n"workflows/legacy-*.md" = ["x"]\n',
        "[tool.fixloop]\nprofile = 'claude'  # house rules off\n",
        "[a.b]\n[a]\nc = 1\n",
    ],
)
def test_plain_settings_are_read_without_tomllib(text: str) -> None:
    assert simple_toml.loads(text) == tomllib.loads(text)


def test_the_projects_own_settings_are_plain() -> None:
    text = (REPO_ROOT / "fixloop.toml").read_text(encoding="utf-8")
    assert simple_toml.loads(text) == tomllib.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        'a = "x"\na = "y"\n',  # a key twice
        "[t]\n[t]\n",  # a table twice
        "a = 1\n[a]\n",  # a table where a value is
        "[t]\nu = 1\n[t.u]\n",
        'a = [\n  "x",\n]\n',  # multi-line arrays: read by tomllib
        "a.b = 1\n",  # dotted keys
        "a = { b = 1 }\n",
        'a = "\\n"\n',  # escapes
        "a = 1\r\n",
        'a = "é"\n',
        "a = 1979-05-27\n",
        "a = " + "[" * 5000 + "]" * 5000 + "\n",  # nested arrays: tomllib's depth limit words it
    ],
)
def test_anything_else_is_left_to_tomllib(text: str) -> None:
    assert simple_toml.loads(text) is None


def test_a_pyproject_is_read_by_tomllib_or_as_it_reads_it() -> None:
    text = Path(REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = simple_toml.loads(text)
    assert found is None or found == tomllib.loads(text)
