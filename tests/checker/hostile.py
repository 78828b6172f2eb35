"""A corpus of hostile and unusual packs, each built into a folder by a small function.

Each case is input someone could commit: a loop, a FIFO, a device, nesting past any parser's
recursion, wildcards that backtrack, bytes that are not text. `test_hostile.py` runs `fixloop
check` and `fixloop validate` on each in a process of its own with a time bound.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

MANIFEST = '{"name": "hostile"}'
AGENT = "---\nname: a\ndescription: an agent\n---\n"


def _pack(root: Path, manifest: str = MANIFEST) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(manifest, encoding="utf-8")
    for kind in ("agents", "commands", "workflows"):
        (root / kind).mkdir()
    return root


def _agent(root: Path, text: str, name: str = "a.md") -> None:
    (_pack(root) / "agents" / name).write_text(text, encoding="utf-8")


def _contract_doc(forbidden: str, block: str) -> str:
    return (
        f"---\nname: a\ndescription: d\ncontracts:\n  - id: no-x\n    forbidden: '{forbidden}'\n"
        f"---\n\n```bash\n{block}\n```\n"
    )


def symlink_loop(root: Path) -> None:
    (_pack(root) / "agents" / "self.md").symlink_to("self.md")


def symlink_cycle(root: Path) -> None:
    agents = _pack(root) / "agents"
    (agents / "a.md").symlink_to("b.md")
    (agents / "b.md").symlink_to("a.md")


def folder_link_loop(root: Path) -> None:
    (_pack(root) / "commands" / "again").symlink_to("..")


def dangling_link(root: Path) -> None:
    (_pack(root) / "agents" / "gone.md").symlink_to("nowhere.md")


def fifo_document(root: Path) -> None:
    os.mkfifo(_pack(root) / "agents" / "pipe.md")


def fifo_sidecar(root: Path) -> None:
    _agent(root, AGENT)
    os.mkfifo(root / "agents" / "a.contracts.yaml")


def fifo_manifest(root: Path) -> None:
    _pack(root)
    (root / ".claude-plugin" / "plugin.json").unlink()
    os.mkfifo(root / ".claude-plugin" / "plugin.json")


def fifo_config(root: Path) -> None:
    _agent(root, AGENT)
    os.mkfifo(root / "fixloop.toml")


def device_document(root: Path) -> None:
    (_pack(root) / "agents" / "zero.md").symlink_to("/dev/zero")


def device_hooks(root: Path) -> None:
    (_pack(root) / "hooks").mkdir()
    (root / "hooks" / "hooks.json").symlink_to("/dev/zero")


def folder_named_md(root: Path) -> None:
    (_pack(root) / "agents" / "dir.md").mkdir()


def huge_document(root: Path) -> None:
    _agent(root, AGENT + "```bash\n" + "echo x\n" * 2_000_000 + "```\n")


def deep_manifest(root: Path) -> None:
    _pack(root, "[" * 1000 + "]" * 1000)


def deep_manifest_object(root: Path) -> None:
    _pack(root, '{"name": "p", "x": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}")


def deep_hooks(root: Path) -> None:
    (_pack(root) / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text("[" * 1000 + "]" * 1000, encoding="utf-8")


def deep_mcp(root: Path) -> None:
    (_pack(root) / ".mcp.json").write_text('{"a":' * 5000 + "1" + "}" * 5000, encoding="utf-8")


def deep_frontmatter(root: Path) -> None:
    _agent(root, "---\nname: a\ndescription: " + "[" * 1000 + "]" * 1000 + "\n---\n")


def deep_frontmatter_block(root: Path) -> None:
    nested = "".join("  " * i + "k:\n" for i in range(1000))
    _agent(root, "---\nname: a\ndescription: d\nx:\n" + nested + "---\n")


def deep_sidecar(root: Path) -> None:
    _agent(root, AGENT)
    (root / "agents" / "a.contracts.yaml").write_text("[" * 1000 + "]" * 1000, encoding="utf-8")


def yaml_alias_bomb(root: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    _agent(root, AGENT)
    (root / "agents" / "a.contracts.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def deep_config(root: Path) -> None:
    _agent(root, AGENT)
    (root / "fixloop.toml").write_text("x = " + "[" * 1000 + "]" * 1000 + "\n", encoding="utf-8")


def deep_bash_subshells(root: Path) -> None:
    _agent(root, AGENT + "```bash\n" + "(" * 3000 + "true" + ")" * 3000 + "\n```\n")


def deep_bash_substitutions(root: Path) -> None:
    _agent(root, AGENT + "```bash\necho " + "$(" * 2000 + "x" + ")" * 2000 + "\n```\n")


def deep_bash_ifs(root: Path) -> None:
    block = "if true; then\n" * 1500 + "echo x\n" + "fi\n" * 1500
    _agent(root, AGENT + "```bash\n" + block + "```\n")


def long_pipeline(root: Path) -> None:
    _agent(root, AGENT + "```bash\n" + " | ".join(["cat"] * 20000) + "\n```\n")


def long_and_list(root: Path) -> None:
    _agent(root, AGENT + "```bash\n" + " && ".join(["true"] * 20000) + "\n```\n")


def many_functions_calling(root: Path) -> None:
    funcs = "".join(f"f{i}() {{ f{i + 1}; }}\n" for i in range(3000))
    _agent(root, AGENT + "```bash\n" + funcs + "f0\n```\n")


def recursive_function(root: Path) -> None:
    _agent(root, AGENT + "```bash\nf() { g; }\ng() { f; }\nf\n```\n")


def backtracking_glob(root: Path) -> None:
    _agent(root, _contract_doc("echo *a*a*a*a*a*a*b", "echo " + "a" * 5000))


def backtracking_glob_script(root: Path) -> None:
    script = "node -e '" + "a;" * 3000 + "'"
    _agent(root, _contract_doc("node -e *a*a*a*a*a*a*a*b*", script))


def many_blocks(root: Path) -> None:
    _agent(root, AGENT + "```bash\necho x\n```\n" * 5000)


def unclosed_fence(root: Path) -> None:
    _agent(root, AGENT + "```bash\necho x\n")


def unclosed_frontmatter(root: Path) -> None:
    _agent(root, "---\nname: a\n")


def binary_document(root: Path) -> None:
    (_pack(root) / "agents" / "bin.md").write_bytes(b"\x00\xff\xfe" * 1000)


def nul_in_block(root: Path) -> None:
    _agent(root, AGENT + "```bash\necho \x00 x\n```\n")


def crlf_and_bom(root: Path) -> None:
    (_pack(root) / "agents" / "a.md").write_bytes(
        b"\xef\xbb\xbf---\r\nname: a\r\ndescription: d\r\n---\r\n```bash\r\necho x\r\n```\r\n"
    )


def long_line(root: Path) -> None:
    _agent(root, AGENT + "```bash\necho " + "x" * 2_000_000 + "\n```\n")


def unterminated_quote(root: Path) -> None:
    _agent(root, _contract_doc("git stash", "echo 'Don't stash the tree'\ngit stash"))


def many_unclosed_quotes(root: Path) -> None:
    block = "```bash\necho 'Don't stash the tree'\ngit stash\n```\n"
    _agent(root, _contract_doc("git stash", "true") + block * 5000)


def heredoc_unclosed(root: Path) -> None:
    _agent(root, AGENT + "```bash\ncat <<EOF\nno end\n```\n")


def unreadable_document(root: Path) -> None:
    path = _pack(root) / "agents" / "secret.md"
    path.write_text(AGENT, encoding="utf-8")
    path.chmod(0)


def manifest_not_object(root: Path) -> None:
    _pack(root, '"just a string"')


def manifest_paths_odd(root: Path) -> None:
    _pack(root, '{"name": "p", "agents": ["../../../../etc", 3, {"a": 1}], "commands": "/dev"}')


def empty_folder(root: Path) -> None:
    root.mkdir()


CASES: dict[str, Callable[[Path], None]] = {
    name: builder
    for name, builder in list(globals().items())
    if callable(builder) and not name.startswith("_") and builder.__module__ == __name__
}
