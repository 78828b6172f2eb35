"""Plain data built into a model without pydantic's validator: the same model, or no answer."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from fixloop.checker import language
from fixloop.checker.language import CheckerSpec, ContractFile, ContractSpec, load_contracts
from fixloop.documents import config
from fixloop.documents.config import Settings, find_config
from fixloop.documents.plain_models import construct
from fixloop.documents.source import load_document

ROOT = Path(__file__).resolve().parents[2]
MODELS: list[type[BaseModel]] = [ContractFile, ContractSpec, CheckerSpec, Settings]


def same(built: BaseModel, validated: BaseModel) -> None:
    """Equal values, of the same types all the way down, with the same keys counted as set."""
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    for name in type(built).model_fields:
        mine, theirs = getattr(built, name), getattr(validated, name)
        assert type(mine) is type(theirs), name
        if isinstance(mine, BaseModel):
            same(mine, theirs)


def declarations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[type[BaseModel], Any, Any]]:
    """Every (model, data, result) the contract language and the settings built from this
    repository's own declarations: every workflow's contracts and every fixloop.toml."""
    seen: list[tuple[type[BaseModel], Any, Any]] = []

    def recording(model: type[BaseModel], data: Any) -> Any:
        built = construct(model, data)
        seen.append((model, data, built))
        return built

    monkeypatch.setattr(language, "construct", recording)
    monkeypatch.setattr(config, "construct", recording)
    for path in sorted(ROOT.glob("workflows/*.md")):
        _, problems = load_contracts(load_document(path, ROOT), ROOT)
        assert problems == []
    for path in [ROOT / "fixloop.toml", *sorted(ROOT.glob("tests/**/fixloop.toml"))]:
        find_config(path.parent)
    return seen


def test_this_repositorys_declarations_are_built_as_pydantic_builds_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = declarations(monkeypatch)
    assert {model for model, _, _ in seen} == set(MODELS)
    for model, data, built in seen:
        assert built is not None, (model.__name__, data)  # plain data: no validator needed
        same(built, model.model_validate(data))


# Values a hand might write where another was meant: each is either taken as it is by both,
# coerced by pydantic (`'3'`, `1` for a flag, `'true'`), or refused.
ODD: list[Any] = [
    None,
    "",
    "3",
    "true",
    "x",
    3,
    0,
    -1,
    1.5,
    True,
    False,
    [],
    ["x"],
    ["x", ""],
    [["a", "b"]],
    [3],
    {},
    {"step": "a"},
    {"steps": ["a"]},
    {"block": 0},
    {"block": "2"},
    {"wen": 1},
    "document",
    "briefs",
    "success",
    "always",
    "claude",
    "fixloop",
]
EXTRA_KEYS = ["scope", "finally_", "per_file_ignores", "wen", "in", "finally", "when"]


def mutations(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    changed = dict(data)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.5 and changed:
            changed[rng.choice(sorted(changed))] = rng.choice(ODD)
        elif choice < 0.7 and changed:
            del changed[rng.choice(sorted(changed))]
        else:
            changed[rng.choice(EXTRA_KEYS)] = rng.choice(ODD)
    return changed


def test_odd_declarations_get_pydantics_verdict_or_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(24)
    seeds = [(m, d) for m, d, _ in declarations(monkeypatch) if isinstance(d, dict)]
    seeds += [(ContractSpec, {"id": "a", "count": "x", "exactly": 2})]
    seeds += [(CheckerSpec, {"finally": {"steps": ["x"]}, "scoped": [{"in": {"block": 1}}]})]
    taken = refused = 0
    for _ in range(3000):
        model, data = rng.choice(seeds)
        changed = mutations(data, rng)
        built = construct(model, changed)
        try:
            validated = model.model_validate(changed)
        except ValidationError:
            assert built is None, (model.__name__, changed)
            refused += 1
            continue
        if built is not None:
            same(built, validated)
            taken += 1
    assert taken > 100 and refused > 100  # both sides of the verdict were exercised


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (ContractSpec, {"id": "a", "count": "x", "exactly": "3"}),  # text, not a count
        (ContractSpec, {"id": "a", "required": "x", "strict": "false"}),
        (ContractSpec, {"id": "a", "required": "x", "scope": "document"}),  # its name, not `in`
        (ContractSpec, {"id": "a", "required": "x", "in": {"block": True}}),
        (ContractSpec, {"id": "", "required": "x"}),
        (ContractSpec, {"id": "a", "required": "x", "forbidden": "y"}),  # the model's validator
        (CheckerSpec, {"errexit": 1}),
        (Settings, {"profile": "strict"}),
        # A model with field validators (here: where the key may go) is always pydantic's.
        (Settings, {"openai": {"base-url": "https://elsewhere.example"}}),
        (Settings, {"openai": {"model": "gpt"}}),
        (Settings, {"select": "x"}),
    ],
)
def test_what_pydantic_would_coerce_or_refuse_is_left_to_it(
    model: type[BaseModel], data: dict[str, Any]
) -> None:
    assert construct(model, data) is None


def test_a_check_of_plain_declarations_builds_no_pydantic_validator(tmp_path: Path) -> None:
    # In a fresh interpreter: the first use of a model in this one may have built it already.
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from fixloop.checker.checking import check_paths
        from fixloop.checker.language import CheckerSpec, ContractFile, ContractSpec
        from fixloop.documents.config import Settings
        result = check_paths([Path(sys.argv[1])], None)
        assert result.documents, "nothing checked"
        models = (ContractFile, ContractSpec, CheckerSpec, Settings)
        print(sorted(m.__name__ for m in models if m.__pydantic_complete__))
        print("pydantic.plugin._loader" in sys.modules)
        """
    )
    document = ROOT / "workflows" / "fix-findings.md"
    done = subprocess.run(
        [sys.executable, "-c", script, str(document)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "False"]
