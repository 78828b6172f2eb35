"""No input makes `fixloop check` or `fixloop validate` crash (exit 70): a fuzz corpus of our own.

Each case is a small pack with one hostile document: deep nesting, long chains, huge files,
binary bytes, odd YAML. The commands may find problems (exit 1) or refuse the input (exit 2);
they must never fail with an internal error, and must say something located about the document.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from fixloop.cli.main import main


def bash_doc(script: str) -> str:
    front = "---\nname: x\ndescription: A document.\n---\n\n"
    return f"{front}## Step {{#step}}\n\n```bash\n{script}\n```\n"


def nested(depth: int, open_: str, close: str, inner: str = "true") -> str:
    return open_ * depth + inner + close * depth


def ifs(depth: int) -> str:
    return "if true; then\n" * depth + "echo deep\n" + "fi\n" * depth


def loops(depth: int) -> str:
    return "for i in a; do\n" * depth + "echo $i\n" + "done\n" * depth


def functions(depth: int) -> str:
    return "".join(f"f{i}() {{\n" for i in range(depth)) + "true\n" + "}\n" * depth


def substitutions(depth: int) -> str:
    return "x=" + "$(echo " * depth + "y" + ")" * depth


random.seed(1729)
BINARY = bytes(random.randrange(256) for _ in range(4096))

CASES: dict[str, Callable[[], bytes | str]] = {
    "and-chain": lambda: bash_doc(" && ".join(["true"] * 600)),
    "or-chain": lambda: bash_doc(" || ".join(["false"] * 600)),
    "mixed-chain": lambda: bash_doc(" && ".join(f"a{i} || b{i}" for i in range(400))),
    "pipeline": lambda: bash_doc(" | ".join(["cat"] * 800)),
    "semicolons": lambda: bash_doc("; ".join(["echo x"] * 5000)),
    "nested-ifs": lambda: bash_doc(ifs(300)),
    "nested-loops": lambda: bash_doc(loops(300)),
    "nested-functions": lambda: bash_doc(functions(300)),
    "nested-subshells": lambda: bash_doc(nested(400, "( ", " )")),
    "nested-groups": lambda: bash_doc(nested(400, "{ ", "; }")),
    "nested-substitutions": lambda: bash_doc(substitutions(300)),
    "nested-arithmetic": lambda: bash_doc("echo $((" + "(" * 500 + "1" + ")" * 500 + "))"),
    "nested-strings": lambda: bash_doc('echo "' + '$(echo "' * 200 + "x" + '")' * 200 + '"'),
    "empty-then": lambda: bash_doc("if true; then\nfi"),
    "huge-block": lambda: bash_doc(
        "\n".join(f'echo "line {i}" > "$out{i % 7}"' for i in range(40_000))
    ),
    "many-blocks": lambda: "---\nname: x\ndescription: d\n---\n" + "```bash\necho hi\n```\n" * 3000,
    "many-headings": lambda: "".join(
        f"## H {i} {{#s{i}}}\n\n```bash\ntrue\n```\n" for i in range(2000)
    ),
    "binary": lambda: BINARY,
    "nul-bytes": lambda: bash_doc("echo a\0b\ncat <<EOF\n\0\nEOF"),
    "latin-1": lambda: "---\nname: caf\xe9\n---\n".encode("latin-1"),
    "unclosed-fence": lambda: bash_doc("echo x").rstrip("`\n") + "\n",
    "fence-in-fence": lambda: "~~~bash\n```bash\necho x\n```\n~~~\n```\n",
    "unclosed-frontmatter": lambda: "---\nname: x\n",
    "tools-number": lambda: "---\nname: x\ndescription: d\ntools: 5\n---\nBody\n",
    "tools-true": lambda: "---\nname: x\ndescription: d\ntools: true\n---\nBody\n",
    "tools-mapping": lambda: "---\nname: x\ndescription: d\ntools: {a: 1}\n---\nBody\n",
    "name-list": lambda: "---\nname: [a, b]\ndescription: d\n---\nBody\n",
    "key-not-text": lambda: "---\n1: x\n? [a, b]\n: c\nname: x\n---\nBody\n",
    "dates-and-floats": lambda: "---\nname: 2024-01-01\ndescription: 1.5\nmaxTurns: 1e9\n---\n",
    "binary-tag": lambda: "---\nname: x\ndescription: !!binary aGVsbG8=\n---\n",
    "python-tag": lambda: "---\nname: !!python/object:os.system x\n---\n",
    "alias-bomb": lambda: (
        "---\n"
        + "a0: &a0 [x,x,x,x,x,x,x,x,x]\n"
        + "".join(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
        + "---\n"
    ),
    "deep-yaml": lambda: "---\nname: " + "[" * 200 + "]" * 200 + "\n---\n",
    "long-line": lambda: "---\nname: x\ndescription: " + "y" * 2_000_000 + "\n---\n",
    "frontmatter-only-dashes": lambda: "---\n---\n---\n",
    "contracts-not-a-list": lambda: "---\nname: x\ndescription: d\ncontracts: 5\n---\n",
    "contract-odd-pattern": lambda: (
        "---\nname: x\ndescription: d\ncontracts:\n"
        '  - {id: a, forbidden: "git \'unclosed"}\n  - {id: b, order: [[], [x]]}\n'
        "  - {id: c, required: ''}\n---\n```bash\ngit x\n```\n"
    ),
    "checker-odd": lambda: (
        "---\nname: x\ndescription: d\ncheckers: 1\nchecker: {steps: 5, shell: x}\n---\n"
    ),
}


def _pack(root: Path, name: str, content: bytes | str) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "fuzz"}\n')
    for folder in ("agents", "workflows"):
        path = root / folder / f"{name}.md"
        path.parent.mkdir()
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogateescape")
    return root


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("profile", ["claude", "fixloop"])
def test_no_input_crashes_check_or_validate(
    name: str, profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = _pack(tmp_path / "pack", name, CASES[name]())
    for command in ("check", "validate"):
        code = main([command, str(pack), "--profile", profile])
        _, err = capsys.readouterr()
        assert code in (0, 1, 2), f"{command} {name}: exit {code}\n{err[-2000:]}"
        assert "internal error" not in err
