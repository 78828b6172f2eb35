"""`fixloop validate`, `fixloop agents list`, `fixloop render`, `fixloop schema`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fixloop.cli.arguments import Subparsers, add_format_option, add_pack_options, parse_pairs
from fixloop.cli.envelope import diagnostic_items, emit
from fixloop.diagnostics import Diagnostic, FixloopError, Severity, display_path
from fixloop.documents.config import Profile, find_config
from fixloop.documents.discovery import (
    NOT_A_PACK,
    bundled_pack_root,
    is_pack_root,
    pack_root_or_fail,
)
from fixloop.documents.inputs import InputError, coerce_inputs
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.documents.render import render_template
from fixloop.documents.validate import validate_pack
from fixloop.schemas import registry

__all__ = ["Subparsers", "add_json_option", "load_valid_pack", "register"]


def register(subparsers: Subparsers) -> None:
    validate = subparsers.add_parser(
        "validate", help="validate a pack's documents (frontmatter, references, inputs, manifest)"
    )
    validate.add_argument(
        "pack",
        nargs="?",
        type=Path,
        help="pack root (default: the pack the current directory is in)",
    )
    add_format_option(validate, "json", "sarif")
    add_pack_options(validate)
    validate.set_defaults(handler=run_validate)

    agents = subparsers.add_parser("agents", help="inspect the pack's agent roles")
    agents_sub = agents.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    listing = agents_sub.add_parser("list", help="list agents with their tools and models")
    listing.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    add_format_option(listing, "json")
    listing.set_defaults(handler=run_agents_list)

    render = subparsers.add_parser("render", help="render an agent's prompt with its inputs")
    render.add_argument("agent", help="agent name (e.g. fixer or fixloop:fixer)")
    render.add_argument("--pack", type=Path, help="pack root (default: the bundled pack)")
    source = render.add_mutually_exclusive_group()
    source.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an input value; lists and objects as JSON (repeatable)",
    )
    source.add_argument("--vars", type=Path, metavar="FILE.json", help="all inputs as JSON")
    add_json_option(render)
    render.set_defaults(handler=run_render)

    schema = subparsers.add_parser("schema", help="print the JSON Schema of a result type")
    schema.add_argument("name", nargs="?", help=f"one of: {', '.join(registry.SCHEMAS)}")
    add_json_option(schema)
    schema.set_defaults(handler=run_schema)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """`--json`: the one envelope (`envelope.py`) instead of text, on every command."""
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def load_valid_pack(root: Path | None) -> Pack:
    """The pack at `root`, or a FixloopError (exit 2) listing the documents that do not load.

    Only loading problems block here; cross-document findings are `fixloop validate`'s business,
    so one broken command does not stop anyone from rendering a healthy agent.
    """
    pack, diagnostics = load_pack(root or default_pack_root())
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        raise FixloopError(errors, exit_code=2)
    return pack


def run_validate(args: argparse.Namespace) -> int:
    if args.bundled:
        root = bundled_pack_root()
    elif args.pack is not None:
        root = args.pack
    else:
        root = find_config(Path.cwd()).pack or pack_root_or_fail(Path.cwd())
    if not root.is_dir():
        raise FixloopError(Diagnostic(str(root), 1, 1, "usage", "no such pack directory"))
    if not is_pack_root(root):  # an empty or wrong folder is not a pack that passes
        raise FixloopError(Diagnostic(display_path(root), 1, 1, "usage", NOT_A_PACK))
    config = find_config(root)
    profile = Profile(args.profile) if args.profile else None
    pack, found = validate_pack(root, known_outputs=registry.is_known, profile=profile)
    diagnostics = [d for d in found if config.wanted(d)]
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if args.format == "json":
        sizes = {
            "agents": len(pack.agents),
            "commands": len(pack.commands),
            "skills": len(pack.skills),
            "workflows": len(pack.workflows),
        }
        result = {"pack": str(root), "profile": str(pack.profile), **sizes}
        items = diagnostic_items(diagnostics)
        return emit("validate", 1 if errors else 0, items=items, result=result)
    if args.format == "sarif":
        from fixloop.checker.report import sarif
        from fixloop.documents.pack_rules import PACK_RULES

        sys.stdout.write(sarif(diagnostics, PACK_RULES))
    else:
        for diagnostic in diagnostics:
            print(diagnostic.format(), file=sys.stderr if diagnostic in errors else sys.stdout)
        counts = (
            f"{len(pack.agents)} agents, {len(pack.commands)} commands, "
            f"{len(pack.skills)} skills, {len(pack.workflows)} workflows"
        )
        verdict = f"{len(errors)} error(s)" if errors else "ok"
        folded = f"; {pack.folded} follow-on problem(s) not shown" if pack.folded else ""
        print(f"{display_path(root)} ({pack.profile} profile): {counts}: {verdict}{folded}")
    return 1 if errors else 0


def run_agents_list(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    agents = sorted(pack.agents.values(), key=lambda a: a.name)
    if args.format != "json":
        width = max((len(a.name) for a in agents), default=4)
        indent = " " * (width + 2)
        for agent in agents:
            tools = ", ".join(agent.spec.tools) or "(all)"
            inputs = agent.spec.fixloop.inputs
            declared = ", ".join(
                f"{name} ({spec.type}{'' if spec.required else ', optional'})"
                for name, spec in inputs.items()
            )
            print(f"{agent.name:<{width}}  model: {agent.spec.model}  tools: {tools}")
            print(f"{indent}inputs: {declared or '(none)'}")
            print(f"{indent}output: {agent.spec.fixloop.output or '(free text)'}")
        return 0
    rows = [
        {
            "id": agent.name,
            "status": "loaded",
            "name": agent.name,
            "qualified_name": f"{pack.name}:{agent.name}",
            "description": agent.spec.description,
            "tools": agent.spec.tools,
            "model": agent.spec.model,
            "color": agent.spec.color,
            "inputs": {k: v.type for k, v in agent.spec.fixloop.inputs.items()},
            "output": agent.spec.fixloop.output,
            "path": agent.source.display,
        }
        for agent in agents
    ]
    return emit("agents list", 0, items=rows, result={"pack": pack.name})


def _load_vars_file(path: Path) -> dict[str, Any]:
    shown = display_path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FixloopError(Diagnostic(shown, 1, 1, "usage", exc.strerror or str(exc))) from None
    except json.JSONDecodeError as exc:
        raise FixloopError(
            Diagnostic(shown, exc.lineno, exc.colno, "usage", f"invalid JSON: {exc.msg}")
        ) from None
    if not isinstance(data, dict):
        raise FixloopError(Diagnostic(shown, 1, 1, "usage", "expected a JSON object of inputs"))
    return data


def run_render(args: argparse.Namespace) -> int:
    pack = load_valid_pack(args.pack)
    agent = pack.agent(args.agent)
    from_text = args.vars is None
    raw: dict[str, Any] = (
        parse_pairs(args.var, "--var") if from_text else _load_vars_file(args.vars)
    )
    try:
        values = coerce_inputs(agent.spec.fixloop.inputs, raw, from_text=from_text)
    except InputError as exc:
        where = display_path(args.vars) if args.vars else "--var"
        raise FixloopError(Diagnostic(where, 1, 1, "input", str(exc))) from None
    prompt = render_template(agent.source, values)
    if args.json:
        return emit("render", 0, result={"agent": agent.name, "prompt": prompt})
    sys.stdout.write(prompt)
    return 0


def run_schema(args: argparse.Namespace) -> int:
    if args.name is None:
        if args.json:
            return emit("schema", 0, items=[{"id": n, "status": "known"} for n in registry.SCHEMAS])
        print("\n".join(registry.SCHEMAS))
        return 0
    name = registry.spelled(args.name)  # `finding`, `fixer-result`: what a person types
    if name is None:
        raise FixloopError(
            Diagnostic(
                "schema",
                1,
                1,
                "usage",
                f"no schema named {args.name!r} (known: {', '.join(registry.SCHEMAS)})",
            )
        )
    schema = registry.json_schema(name)
    if args.json:
        return emit("schema", 0, result={"name": name, "schema": schema})
    print(json.dumps(schema, indent=2))
    return 0
