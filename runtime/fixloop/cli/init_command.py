"""`fixloop init --claude`: the permission rules the slash commands need, written into the
project's Claude Code settings after the change is shown.

Nothing is written unseen: the diff is printed first, then the file is written only when the user
says yes at the prompt, or passed `--yes` (CI, scripts). `--dry-run` shows and stops. Without a
terminal to ask and without `--yes`, nothing is written and the exit code is 1.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.cli.arguments import existing_directory
from fixloop.cli.envelope import emit
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.claude_permissions import (
    ALLOW_RULES,
    LOCAL_SETTINGS,
    SETTINGS,
    SettingsError,
    merged,
    pack_read_rule,
)
from fixloop.documents.discovery import bundled_pack_root

INIT_EPILOG = f"""\
the rules (allow, in permissions.allow):
{chr(10).join(f"  {rule.rule:32} {rule.why}" for rule in ALLOW_RULES)}

  and, when Claude Code loads the plugin from a folder outside ~/.claude/plugins (--plugin-dir,
  a directory marketplace: --plugin-root, by default the pack this fixloop runs):
  Read(//PLUGIN_ROOT/**)           the pack's workflow documents, in the folder it is loaded from

which file:
  {SETTINGS} (the default) is shared with everyone who clones the project, but Claude Code
  ignores its permission rules in a workspace you have not trusted yet (it says "this workspace
  has not been trusted"). {LOCAL_SETTINGS} (--local) is yours alone, not committed, and
  honoured in any workspace.

The rules already there, and every other setting, are kept as they are.
Exit code: 0 written or nothing to change, 1 not written (no --yes and no terminal to ask, or
the answer was no), 2 bad input (a settings file that is not JSON).

examples:
  fixloop init --claude --dry-run
  fixloop init --claude --local
  fixloop init --claude --yes --repo ../project
"""


def register(subparsers: Any) -> None:
    import argparse

    init = subparsers.add_parser(
        "init",
        help="set a project up for fixloop (--claude: the permission rules its commands need)",
        description="Write the Claude Code permission rules fixloop's slash commands need into "
        "the project's settings, after showing the change.",
        epilog=INIT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument(
        "--claude", action="store_true", required=True, help="Claude Code's permission rules"
    )
    init.add_argument("--repo", type=Path, default=Path(), help="the project (default .)")
    init.add_argument("--local", action="store_true", help=f"write {LOCAL_SETTINGS} instead")
    init.add_argument(
        "--plugin-root",
        type=Path,
        help="the folder Claude Code loads the plugin from, when it is not under "
        "~/.claude/plugins (default: the pack this fixloop runs)",
    )
    init.add_argument("--yes", action="store_true", help="write without asking (after showing)")
    init.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    init.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON (never asks: without --yes nothing is written)",
    )
    init.set_defaults(handler=run_init)


def run_init(args: Any) -> int:
    root = existing_directory(args.repo)
    target = root / (LOCAL_SETTINGS if args.local else SETTINGS)
    shown = display_path(target)
    try:
        before = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise FixloopError(Diagnostic(shown, 1, 1, "settings", f"cannot read: {exc}")) from None
    try:
        extra = pack_read_rule(args.plugin_root or bundled_pack_root())
        after, added = merged(before, ALLOW_RULES if extra is None else (*ALLOW_RULES, extra))
    except SettingsError as exc:
        line, _, message = str(exc).partition(": ")
        number = int(line.removeprefix("line ")) if line.startswith("line ") else 1
        text = message if line.startswith("line ") else str(exc)
        raise FixloopError(Diagnostic(shown, number, 1, "settings", text)) from None
    if not added:
        if args.json:
            return emit("init", 0, result={"file": shown, "written": False, "diff": ""})
        print(f"{shown}: every rule fixloop's commands need is already there")
        return 0
    old = (before or "").splitlines(keepends=True)
    if old and not old[-1].endswith("\n"):
        old[-1] += "\n"  # the diff's lines are whole lines; the new file ends with one anyway
    diff = difflib.unified_diff(
        old,
        after.splitlines(keepends=True),
        fromfile=shown if before is not None else "/dev/null",
        tofile=shown,
    )
    shown_diff = "".join(diff)
    exclude = _exclude_file(root) if args.local else None
    if args.json:  # no question: stdout is the envelope's, and --yes is the answer
        write = args.yes and not args.dry_run
        if write:
            _write(target, after, exclude)
        code = 0 if write or args.dry_run else 1
        rows = [{"id": rule, "status": "added" if write else "missing"} for rule in added]
        shown_exclude = display_path(exclude) if exclude is not None else ""
        details = {"file": shown, "written": write, "diff": shown_diff, "exclude": shown_exclude}
        return emit("init", code, items=rows, result=details)
    sys.stdout.write(shown_diff)
    if exclude is not None:
        # Personal settings are never committed; an untracked file would also make the
        # workflows that need a clean tree (fix-issue) refuse the repository.
        print(f"{display_path(exclude)}: + /{LOCAL_SETTINGS}")
    if args.dry_run:
        print(f"(dry run: {shown} not written)")
        return 0
    if not args.yes and not _confirmed(shown):
        return 1
    _write(target, after, exclude)
    print(f"{shown}: added {len(added)} rule(s): {', '.join(added)}")
    return 0


def _write(target: Path, text: str, exclude: Path | None) -> None:
    """The settings, whole (a temporary file, then a rename); then the exclude line."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".fixloop-tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(target)
    if exclude is not None:
        exclude.parent.mkdir(exist_ok=True)
        held = exclude.read_bytes() if exclude.exists() else b""
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write(
                ("\n" if held and not held.endswith(b"\n") else "") + f"/{LOCAL_SETTINGS}\n"
            )


def _exclude_file(root: Path) -> Path | None:
    """The repository's `info/exclude` when it does not hide the local settings yet (None
    outside a repository, or when it already does)."""
    try:
        exclude = gitrepo.state_dir_of(root).parent / "info" / "exclude"
    except FixloopError:
        return None
    try:
        lines = exclude.read_text(encoding="utf-8").splitlines() if exclude.exists() else []
    except (OSError, UnicodeDecodeError):
        return None
    if f"/{LOCAL_SETTINGS}" in lines or exclude.parent.is_symlink():
        return None
    return exclude


def _confirmed(shown: str) -> bool:
    if not sys.stdin.isatty():
        print(f"not written: no terminal to ask; pass --yes to write {shown}", file=sys.stderr)
        return False
    answer = input(f"Write {shown}? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        print(f"not written: {shown} is unchanged", file=sys.stderr)
        return False
    return True


__all__ = ["register", "run_init"]
