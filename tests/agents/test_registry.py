"""Backends by short name or `module:Class`, with one clear line when one cannot be had."""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path

import pytest

from fixloop.agents.backend import AgentOutcome, AgentRequest, StopReason
from fixloop.agents.registry import load_backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import FixloopError


def test_short_names(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("fixer/1: {fail: crash}\n", encoding="utf-8")
    assert isinstance(load_backend("scripted", script=script), ScriptedBackend)
    assert load_backend("claude").name == "claude"


def test_a_backend_of_your_own_by_module_and_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_backends.py").write_text(
        "from fixloop.agents.backend import AgentOutcome, StopReason\n"
        "class Refuser:\n"
        "    name = 'refuser'\n"
        "    def dispatch(self, request):\n"
        "        return AgentOutcome.inconclusive(StopReason.BACKEND_ERROR, 'no')\n"
        "class Nameless:\n"
        "    def dispatch(self, request):\n"
        "        return None\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    backend = load_backend("my_backends:Refuser")
    request = AgentRequest("fixer", "prompt", "task", (), "opus", None, tmp_path)
    outcome: AgentOutcome = backend.dispatch(request)
    assert backend.name == "refuser" and outcome.reason is StopReason.BACKEND_ERROR
    with pytest.raises(FixloopError, match="needs a `name` and a `dispatch"):
        load_backend("my_backends:Nameless")
    sys.modules.pop("my_backends", None)


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("gpt", "unknown backend 'gpt': use scripted, claude, openai, or module:Class"),
        ("no_such_module_here:X", "cannot import no_such_module_here"),
        ("fixloop.agents.registry:Missing", "has no class Missing"),
        ("scripted", "--backend scripted needs --script FILE"),
    ],
)
def test_a_backend_that_cannot_be_had_is_one_line(spec: str, problem: str) -> None:
    with pytest.raises(FixloopError) as caught:
        load_backend(spec, where="review-fix")
    (diagnostic,) = caught.value.diagnostics
    assert caught.value.exit_code == 2
    assert problem in diagnostic.message and diagnostic.path == "review-fix"


def test_the_openai_backend_without_its_package_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class NoOpenAI(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "openai" or name.startswith("openai."):
                raise ModuleNotFoundError(f"No module named {name!r}")

    for name in [n for n in sys.modules if n.split(".")[0] == "openai"]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("fixloop.agents.openai_backend", "fixloop.agents.openai_errors"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoOpenAI(), *sys.meta_path])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghijkl")
    with pytest.raises(FixloopError) as caught:
        load_backend("openai", where="review-fix")
    assert str(caught.value) == (
        "review-fix:1:1: usage: --backend openai needs the openai package: "
        "pip install 'fixloop[openai]'"
    )
