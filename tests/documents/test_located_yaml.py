"""The one YAML loader: key lines, and limits that turn a hostile file into one located line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixloop.agents.scripted import read_script
from fixloop.diagnostics import FixloopError
from fixloop.documents.located_yaml import Limits, load_located
from fixloop.reviews.parser import load_review


def alias_bomb(levels: int, width: int = 9) -> str:
    """A few hundred bytes that stand for width**levels values."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for level in range(1, levels):
        items = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{items}]")
    return "\n".join(lines) + "\n"


def error_of(text: str, limits: Limits | None = None) -> str:
    with pytest.raises(FixloopError) as caught:
        load_located(text, display="x.yaml", rule="test", limits=limits or Limits())
    (diagnostic,) = caught.value.diagnostics
    return diagnostic.format()


def test_key_lines_and_values() -> None:
    text = "name: a\nlist:\n  - one\n  - two: 2\nnested:\n  deeper:\n    key: v\n"
    located = load_located(text, display="x.yaml", rule="test", first_line=5)
    assert located.data["list"][1] == {"two": 2}
    assert located.line_of("name") == 5
    assert located.line_of("list", 1, "two") == 8
    assert located.line_of("nested", "deeper", "key") == 11
    assert located.line_of("nested", "deeper", "missing") == 10


def test_a_plain_value_cut_by_a_comment_is_noticed() -> None:
    text = 'why: broken by (issue #12)\nquoted: "kept (issue #12)"\nplain: fine # a note\n'
    located = load_located(text, display="x.yaml", rule="test")
    assert located.data["why"] == "broken by (issue"
    assert located.commented == {("why",), ("plain",)}


def test_an_alias_bomb_in_a_review_is_one_line_not_a_hang(tmp_path: Path) -> None:
    # Before the bound, this frontmatter took seconds and a gigabyte per extra level.
    review = tmp_path / "REVIEW.md"
    review.write_text(f"---\n{alias_bomb(8)}---\n\n# Review\n", encoding="utf-8")
    with pytest.raises(FixloopError) as caught:
        load_review(review, tmp_path)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.path == "REVIEW.md" and diagnostic.rule == "frontmatter"
    assert "expands to more than 100,000 values through its aliases" in diagnostic.message


def test_an_alias_bomb_in_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(alias_bomb(8), encoding="utf-8")
    with pytest.raises(FixloopError) as caught:
        read_script(script)
    assert "script: YAML expands to more than" in caught.value.diagnostics[0].format()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: &a x\nb: [" + ", ".join(["*a"] * 101) + "]\n", "x.yaml:1:4: test: YAML uses"),
        ("a: " + "[" * 70 + "]" * 70 + "\n", "YAML nested more than 64 levels deep"),
        ("".join(f"{'  ' * i}k{i}:\n" for i in range(70)) + "  " * 70 + "v\n", "nested more"),
        ("a: &a [*a]\n", "an alias refers to the value that contains it"),
        ("a: [1\n", "x.yaml:2:1: test: invalid YAML"),
        ("a: !!python/object:os.system x\n", "invalid YAML"),
        ("a: *nowhere\n", "invalid YAML: found undefined alias"),
        ("k: " + "x" * 1_000_001 + "\n", "YAML of 1,000,005 characters; the limit is 1,000,000"),
    ],
)
def test_limits_and_errors_are_located_lines(text: str, expected: str) -> None:
    assert expected in error_of(text)


def test_many_aliases_is_its_own_limit() -> None:
    text = "a: &a x\nb: [" + ", ".join(["*a"] * 101) + "]\n"
    assert error_of(text).endswith("test: YAML uses more than 100 aliases")
    assert load_located(text, display="x", rule="t", limits=Limits(max_aliases=200)).data["b"]


def test_an_alias_bomb_within_the_alias_limit_is_stopped_by_its_size() -> None:
    message = error_of(alias_bomb(6))  # 45 aliases, 9**6 values
    assert message.endswith("YAML expands to more than 100,000 values through its aliases")
    assert load_located(alias_bomb(3), display="x", rule="t").data["a2"][0][0] == ["x"] * 9


_ODD_YAML = [
    "a: 1\nb: [true, null, 1.5, 2001-12-14, !!binary aGk=]\nc: {d: e}\n",
    "base: &b {x: 1}\nuse: *b\n",  # an alias: the same object twice
    "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",  # a merge key
    "= : value\n",  # the value key
    "? [a, b]\n: complex\n",  # a key the constructor refuses (unhashable)
    "s: !!set {a, b}\no: !!omap [a: 1, b: 2]\np: !!pairs [a: 1]\n",
    "m: !!map ''\n",  # a scalar tagged as a mapping: the constructor's error
    "t: !custom x\n",  # an unknown tag: the constructor's error
    "n: !!int x\n",  # an int that is none: the constructor's ValueError
    "dup: 1\ndup: 2\n",
    "- a\n- [b, {c: d}]\n- 'quoted'\n",
    "plain text",
]


@pytest.mark.parametrize("text", _ODD_YAML)
def test_the_data_is_what_pyyamls_constructor_builds(text: str) -> None:
    import yaml
    from yaml.constructor import SafeConstructor

    from fixloop.documents.located_yaml import _LOADER, _constructed

    def outcome(build: Any) -> tuple[str, Any]:
        node = yaml.compose(text, Loader=_LOADER)
        try:
            return "data", build(node)
        except (yaml.YAMLError, ValueError) as exc:  # `!!int x`: the constructor's ValueError
            return type(exc).__name__, str(exc)

    expected = outcome(lambda node: SafeConstructor().construct_document(node))
    assert outcome(_constructed) == expected
    if text.startswith("base: &b {x: 1}\nuse"):  # shared, as the constructor shares it
        data = outcome(_constructed)[1]
        assert data["base"] is data["use"]


def test_every_yaml_of_this_repository_is_built_as_pyyamls_constructor_builds_it() -> None:
    import yaml
    from yaml.constructor import SafeConstructor

    from fixloop.documents.located_yaml import _LOADER, _constructed

    root = Path(__file__).resolve().parents[2]
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("*/*.contracts.yaml"))]
    for path in [*root.glob("workflows/*.md"), *root.glob("agents/*.md")]:
        parts = path.read_text(encoding="utf-8").split("---\n")
        texts += [parts[1]] if len(parts) > 2 else []
    assert len(texts) > 10
    for text in texts:
        node = yaml.compose(text, Loader=_LOADER)
        assert node is not None
        assert _constructed(node) == SafeConstructor().construct_document(
            yaml.compose(text, Loader=_LOADER)
        )
