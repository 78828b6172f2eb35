"""Declared data read without pydantic: what pydantic would build, or pydantic's own verdict."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ValidationError

from fixloop import records
from fixloop.checker.language import (
    CheckerSpec,
    ContractFile,
    ContractSpec,
    ScopeSpec,
    load_contracts,
)
from fixloop.documents import plain_models
from fixloop.documents.config import OpenAISettings, Settings, find_config
from fixloop.documents.plain_models import Refused, built, construct, twin
from fixloop.documents.source import load_document

ROOT = Path(__file__).resolve().parents[2]
MODELS: list[type[Any]] = [ContractFile, ContractSpec, CheckerSpec, Settings]


def same(plain: Any, validated: BaseModel) -> None:
    """The plain object holds pydantic's values, of the same types all the way down."""
    assert type(plain).__name__ == type(validated).__name__
    assert twin(type(plain)) is type(validated)
    for name in records.field_names(type(plain)):
        mine, theirs = getattr(plain, name), getattr(validated, name)
        if isinstance(theirs, BaseModel):
            same(mine, theirs)
        elif isinstance(theirs, list) and any(isinstance(t, BaseModel) for t in theirs):
            assert len(mine) == len(theirs), name
            for one, other in zip(mine, theirs, strict=True):
                same(one, other)
        else:
            assert type(mine) is type(theirs), name
            assert mine == theirs, name


def declarations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[type[Any], Any, Any]]:
    """Every (model, data, result) the contract language and the settings built from this
    repository's own declarations: every workflow's contracts and every fixloop.toml."""
    seen: list[tuple[type[Any], Any, Any]] = []
    real = plain_models.construct

    def recording(model: type[Any], data: Any) -> Any:
        made = real(model, data)
        seen.append((model, data, made))
        return made

    monkeypatch.setattr(plain_models, "construct", recording)
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
    for model, data, made in seen:
        assert made is not None, (model.__name__, data)  # plain data: no pydantic needed
        same(made, twin(model).model_validate(data))


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
        made = construct(model, changed)
        try:
            validated = twin(model).model_validate(changed)
        except ValidationError:
            assert made is None, (model.__name__, changed)
            with pytest.raises(Refused):
                built(model, changed)
            refused += 1
            continue
        same(built(model, changed), validated)  # pydantic's coercions too, in the plain class
        if made is not None:
            same(made, validated)
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
        # A key that may not be given at all (where the user's key goes) is pydantic's to word.
        (Settings, {"openai": {"base-url": "https://elsewhere.example"}}),
        (Settings, {"openai": {"api-key-env": "MINE"}}),
        (Settings, {"select": "x"}),
    ],
)
def test_what_pydantic_would_coerce_or_refuse_is_left_to_it(
    model: type[Any], data: dict[str, Any]
) -> None:
    assert construct(model, data) is None


def test_what_pydantic_coerces_is_kept_in_the_plain_classes() -> None:
    data = {"id": "a", "order": ["x", "y"], "strict": "false", "in": {"block": 2}}
    spec = built(ContractSpec, data)
    assert type(spec) is ContractSpec and type(spec.scope) is ScopeSpec
    assert spec.strict is False and spec.scope.block == 2
    openai = built(Settings, {"openai": {"model": "gpt", "price-input": 1}}).openai
    assert type(openai) is OpenAISettings and openai.price_input == 1


def test_a_refusal_is_worded_by_the_model_made_from_the_same_fields() -> None:
    with pytest.raises(Refused) as caught:
        built(ContractSpec, {"id": "a", "required": "x", "wen": "success", "exactly": "3"})
    lines = {("contracts", 0): 4, ("contracts", 0, "wen"): 5, ("contracts", 0, "exactly"): 6}
    problems = caught.value.diagnostics(
        display="x.yaml", rule="contract-spec", key_lines=lines, prefix=("contracts", 0)
    )
    assert [(d.line, d.message) for d in problems] == [
        (6, "contracts[0].exactly: expected a whole number, got text '3'"),
        (5, "contracts[0]: unknown key 'wen' (did you mean 'when'?)"),
    ]


def test_a_check_of_plain_declarations_imports_no_pydantic(tmp_path: Path) -> None:
    # In a fresh interpreter: the first use of a model in this one may have built it already.
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from fixloop.checker.checking import check_paths
        result = check_paths([Path(sys.argv[1])], None)
        assert result.documents, "nothing checked"
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core")))
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
    assert done.stdout.split("\n")[:1] == ["[]"]


@records.record(frozen=True)
class _Base:
    name: str | None = None


@records.record(frozen=True)
class _Derived(_Base):
    # Fields inherited and own, a Literal, None: what `typing.get_type_hints` converts or keeps.
    count: int = 0
    sizes: list[int] | None = None
    choice: Literal["a", "b"] = "a"
    nothing: None = None


def test_the_fields_types_are_what_typing_reads_from_the_annotations() -> None:
    import typing

    from fixloop.checker import language
    from fixloop.documents import config

    declared = [
        value
        for module in (language, config, plain_models)
        for value in vars(module).values()
        if records.is_record(value)
    ]
    assert set(MODELS) <= set(declared)
    for model in [*declared, _Base, _Derived]:
        assert plain_models._hints(model) == typing.get_type_hints(model, include_extras=True)


def test_a_reader_is_made_once_per_annotation_and_for_an_unhashable_one_too() -> None:
    from typing import Annotated

    assert plain_models._reader(list[str]) is plain_models._reader(list[str])
    assert plain_models._reader(list[str])(["a"]) == ["a"]
    odd = Annotated[str, ["an unhashable constraint"]]
    with pytest.raises(TypeError):
        hash(odd)
    with pytest.raises(plain_models._Unfit):  # a constraint the reader does not know: pydantic's
        plain_models._reader(odd)("a")
