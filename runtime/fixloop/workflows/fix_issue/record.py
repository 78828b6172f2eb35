"""The run's record beside its result: what ran (at the start), and what it left (at the end).

- `snapshot.json`, written when the run starts: the fixloop version, the options as given (the
  issue, tests, sandbox, image, budgets), the pack's root and the digest of its documents
  (`documents.digest`), and who played the fixer: the backend, the role's model, and for an
  OpenAI-compatible server its provider, address and model name (never a key).
- `artifacts.json`, written when the run is over (also when it failed): the SHA-256 and size of
  every file in the run's folder and its acceptance run's folder, so a report can be checked
  against what the run wrote. The lock and the manifest itself are left out.

Both are masked like every trace: an option or a path can quote a secret.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixloop import __version__
from fixloop.agents.backend import Backend
from fixloop.documents.pack import Pack
from fixloop.masking import dumps_masked
from fixloop.workflows.fix_issue.plan import FixIssueOptions

SNAPSHOT = "snapshot.json"
ARTIFACTS = "artifacts.json"
_NOT_ARTIFACTS = frozenset({"lock", ARTIFACTS})
_NOT_OPTIONS = frozenset({"open_sandbox", "hidden"})  # code and hidden tests: not settings


def _write(path: Path, data: Mapping[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(dumps_masked(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    temporary.replace(path)


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def model_of(backend: Backend, role_model: str) -> dict[str, Any]:
    """Who plays the role: the backend and the model it asks for (looking through wrappers)."""
    inner: Any = backend
    while hasattr(inner, "inner"):  # a budget's wrapper, or two
        inner = inner.inner
    played: dict[str, Any] = {"backend": inner.name, "role_model": role_model}
    target = getattr(inner, "target", None)
    model_for = getattr(target, "model_for", None)
    if callable(model_for):
        played |= {
            "provider": getattr(target, "provider", ""),
            "base_url": getattr(target, "base_url", ""),
            "model": model_for(role_model),
        }
    return played


def write_snapshot(
    run_dir: Path,
    options: FixIssueOptions,
    pack: Pack,
    backend: Backend,
    *,
    role: str,
    models: Mapping[str, str],
) -> None:
    """`models`: the run's choice of model per role (`--model`, `--model-profile`), over the
    role document's `model:`."""
    spec = pack.agent(role).spec
    given = {
        f.name: _plain(getattr(options, f.name))
        for f in fields(options)
        if f.name not in _NOT_OPTIONS
    }
    given["hidden_tests"] = options.hidden is not None
    _write(
        run_dir / SNAPSHOT,
        {
            "fixloop_version": __version__,
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "options": given,
            "pack": {"root": str(pack.root), "digest": pack.digest},
            "fixer": model_of(backend, models.get(spec.name) or spec.model),
        },
    )


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_artifacts(run_dir: Path, others: Iterable[Path] = ()) -> Path:
    """`artifacts.json` of `run_dir` and the `others` (its acceptance run's folder), by path
    relative to the runs folder."""
    runs = run_dir.parent
    listed: dict[str, dict[str, Any]] = {}
    for folder in (run_dir, *others):
        if not folder.is_dir():
            continue
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
            if path.name in _NOT_ARTIFACTS or path.name.startswith("."):
                continue
            listed[path.relative_to(runs).as_posix()] = {
                "sha256": file_digest(path),
                "bytes": path.stat().st_size,
            }
    target = run_dir / ARTIFACTS
    _write(
        target,
        {"written_at": datetime.now(UTC).isoformat(timespec="seconds"), "files": listed},
    )
    return target


__all__ = ["ARTIFACTS", "SNAPSHOT", "model_of", "write_artifacts", "write_snapshot"]
