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
    "glob: '*.md'\nlist: [a, '*', {b: c}]\n",  # a '*' that is no alias: the nodes are counted
]


def _outcome(build: Any) -> tuple[str, Any]:
    """The data built, or the kind of error (FixloopError is how the loader reports YAMLError)."""
    import yaml

    try:
        return "data", build()
    except (yaml.YAMLError, FixloopError):
        return "invalid", None
    except ValueError as exc:  # `!!int x`: the constructor's ValueError, left to propagate
        return type(exc).__name__, str(exc)


def _constructed(text: str) -> tuple[str, Any]:
    """What PyYAML's own safe loader (pure Python, no fast paths) makes of `text`."""
    import yaml

    return _outcome(lambda: yaml.load(text, Loader=yaml.SafeLoader))


@pytest.mark.parametrize("text", _ODD_YAML)
def test_the_data_is_what_pyyamls_constructor_builds(text: str) -> None:
    located = _outcome(lambda: load_located(text, display="x", rule="t").data)
    assert located == _constructed(text)
    if text.startswith("base: &b {x: 1}\nuse"):  # shared, as the constructor shares it
        data = located[1]
        assert data["base"] is data["use"]


def test_every_yaml_of_this_repository_is_built_as_pyyamls_constructor_builds_it() -> None:
    root = Path(__file__).resolve().parents[2]
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("*/*.contracts.yaml"))]
    for path in [*root.glob("workflows/*.md"), *root.glob("agents/*.md")]:
        parts = path.read_text(encoding="utf-8").split("---\n")
        texts += [parts[1]] if len(parts) > 2 else []
    assert len(texts) > 10
    for text in texts:
        located = _outcome(lambda text=text: load_located(text, display="x", rule="t").data)
        assert located[0] == "data" and located == _constructed(text)


# Plain scalars whose tag PyYAML resolves by its first character, and some near misses.
_ODD_SCALARS = [
    *("", "~", "null", "Null", "NULL", "nul", "none", "yes", "Yes", "YES", "no", "on", "off"),
    *("true", "True", "TRUE", "tRue", "false", "y", "n", "Y", "N"),
    *("0", "-0", "+1", "0x1F", "0o17", "017", "0b101", "1_000", "1:30", "190:20:30", "12e3"),
    *("1.5", "-1.5e+3", ".5", "1.", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "._", "1e3"),
    *("2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-1-1"),
    *("<<", "<", "=", "==", "- x", "x", "text with: colon", "\u00e9t\u00e9", "0.1.2", "1-2"),
]


@pytest.mark.parametrize("scalar", _ODD_SCALARS)
def test_each_node_has_the_tag_pyyamls_safe_loader_gives_it(scalar: str) -> None:
    import yaml

    from fixloop.documents.located_yaml import _IMPLICIT, _Loader

    # The fast resolver relies on the safe loader having no path or wildcard resolvers.
    assert not yaml.SafeLoader.yaml_path_resolvers
    assert None not in yaml.SafeLoader.yaml_implicit_resolvers
    assert _IMPLICIT is _Loader.yaml_implicit_resolvers  # the table the loader would read
    for text in (f"k: {scalar}\n", f"- '{scalar}'\n", f"{scalar}: [{scalar}, {{a: b}}]\n"):

        def tags(loader: Any, text: str = text) -> list[tuple[str, str]] | str:
            try:
                root: yaml.Node | None = yaml.compose(text, Loader=loader)
            except yaml.YAMLError as exc:  # `k: - x`
                return str(exc)
            nodes, found = [root] if root is not None else [], []
            while nodes:
                node = nodes.pop()
                found.append((type(node).__name__, node.tag))
                if isinstance(node, yaml.MappingNode):
                    nodes += [child for pair in node.value for child in pair]
                elif isinstance(node, yaml.SequenceNode):
                    nodes += node.value
            return found

        assert tags(_Loader) == tags(_Loader.__bases__[0]), text  # PyYAML's, libyaml's parser


@pytest.mark.parametrize(
    ("text", "lines", "commented"),
    [
        ("dup: 1\ndup: 2\n", {("dup",): 1}, set()),  # the first of a key written twice
        (
            "dup:\n  x: 1\nother: 2\ndup:\n  x: 3\n  y: 4\n",
            {("dup",): 1, ("other",): 3, ("dup", "x"): 5, ("dup", "y"): 6},
            set(),
        ),
        (
            "- a # c\n- b: c # d\n  e: 'f' # g\n-\n  - [1, 2]\n",
            {(0,): 1, (1,): 2, (1, "b"): 2, (1, "e"): 3, (2,): 5, (2, 0): 5, (2, 0, 0): 5}
            | {(2, 0, 1): 5},
            {(1, "b")},
        ),
        ("a: &x foo\nb: *x\nc: {d: *x}\n", {("a",): 1, ("b",): 2, ("c",): 3, ("c", "d"): 3}, set()),
        ("a: x\t# tab\nb: y#no\nc: |\n  z # no\n", {("a",): 1, ("b",): 2, ("c",): 3}, {("a",)}),
        ("1: one\nnull: two\n", {("1",): 1, ("null",): 2}, set()),
    ],
)
def test_the_lines_of_odd_keys(
    text: str, lines: dict[tuple[str | int, ...], int], commented: set[tuple[str | int, ...]]
) -> None:
    located = load_located(text, display="x", rule="t")
    assert located.key_lines == lines
    assert located.commented == commented


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- " * 63 + "x\n", None),
        ("- " * 64 + "x\n", "x.yaml:1:129: test: YAML nested more than 64 levels deep"),
        ("- " * 62 + "{a: b}\n", None),
        ("- " * 63 + "{a: b}\n", "x.yaml:1:128: test: YAML nested more than 64 levels deep"),
        ("a: &x [1]\nb: " + "[" * 62 + "*x" + "]" * 62 + "\n", "x.yaml:1:1: test: YAML nested"),
        ("a: &x [1]\nb: " + "[" * 63 + "*x" + "]" * 63 + "\n", "x.yaml:2:4: test: YAML nested"),
    ],
)
def test_the_depth_limit_counts_keys_values_and_aliased_values(
    text: str, expected: str | None
) -> None:
    if expected is None:
        assert load_located(text, display="x.yaml", rule="test").data
    else:
        assert error_of(text).startswith(expected)
