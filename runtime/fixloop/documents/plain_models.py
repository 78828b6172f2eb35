"""Plain data → a pydantic model without building the model's validator, when the data plainly fits.

pydantic builds a model's validator on its first use: for the contract language and the settings
that was a good part of `fixloop check`'s start (the core schemas, and pydantic's scan of every
installed distribution for plugins), paid by every one-document check in a pre-commit hook. Most
declarations are plain: text where text is expected, lists of text, real booleans and whole
numbers, known keys. `construct` builds those directly from the model's own fields (annotation,
alias, constraints, default), as pydantic's strict mode reads them, and runs the model's `after`
validators on the result. Anything else (a value pydantic would coerce, a wrong type, an unknown
key, a field spelt by its name instead of its alias, a broken constraint, a validator's refusal,
an annotation this reader does not know) gives None, and the caller validates with pydantic,
whose verdict and messages stand. So the result is the model pydantic would build, or no answer.
"""

from __future__ import annotations

import copy
import enum
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple, TypeVar

from annotated_types import Ge, Gt, MinLen
from pydantic import BaseModel, Strict
from pydantic.fields import FieldInfo

ModelT = TypeVar("ModelT", bound=BaseModel)
Reader = Callable[[Any], Any]  # a value → itself as the annotation holds it, or _Unfit
_SCALARS = (str, int, bool, float)  # the values a Literal or an enum member can equal, hashable
_IMMUTABLE = (type(None), str, int, float, bool, tuple, frozenset, enum.Enum)


class _Unfit(Exception):
    """The data is not plainly valid: pydantic decides."""


def construct(model: type[ModelT], data: Any) -> ModelT | None:
    """`model` built from `data` as pydantic would validate it, or None when pydantic must."""
    try:
        return _model(model, data)
    except _Unfit:
        return None


class _Plan(NamedTuple):
    """How to read one model, worked out once: its keys, their readers, defaults, validators."""

    keys: dict[str, tuple[str, Reader]]  # key as written (the alias, if any) → field, reader
    required: frozenset[str]
    constants: dict[str, Any]  # the defaults no instance could change (`None`, a text)
    # The others, made afresh for each instance as pydantic makes them (`list`, a nested model).
    # Made here: `model_construct` inspects each factory's signature at every call.
    factories: dict[str, Callable[[], Any]]
    validators: list[Callable[[Any], Any]]


@cache
def _plan(model: type[BaseModel]) -> _Plan | None:
    decorators = model.__pydantic_decorators__
    if (
        model.model_config.get("extra") != "forbid"
        or decorators.field_validators
        or decorators.root_validators
        or decorators.validators
        or any(d.info.mode != "after" for d in decorators.model_validators.values())
    ):
        return None
    fields = model.model_fields
    # Only the alias where there is one: a field given by its name is pydantic's to judge.
    keys = {info.alias or name: (name, _field_reader(info)) for name, info in fields.items()}
    required = frozenset(name for name, info in fields.items() if info.is_required())
    constants: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    for name, info in fields.items():
        if name in required:
            continue
        made = _default(info)
        if made is None:
            return None
        if made[0]:
            factories[name] = made[1]
        else:
            constants[name] = made[1]
    validators = [d.func for d in decorators.model_validators.values()]
    return _Plan(keys, required, constants, factories, validators)


def _default(info: FieldInfo) -> tuple[bool, Any] | None:
    """(True, a maker of the default) or (False, the default itself); None: pydantic's to make."""
    factory = info.default_factory
    if factory is None:
        default = info.default
        if isinstance(default, _IMMUTABLE):
            return False, default
        return True, lambda: copy.deepcopy(default)
    if isinstance(factory, type) and issubclass(factory, BaseModel):
        model = factory
        return True, lambda: _model(model, {})  # calling the class would build its validator
    if info.default_factory_takes_validated_data:
        return None
    return True, factory


def _model(model: type[ModelT], data: Any) -> ModelT:
    plan = _plan(model)
    if plan is None or type(data) is not dict:
        raise _Unfit
    values = dict(plan.constants)
    given: set[str] = set()  # only the keys given count as set, as after pydantic's validation
    for key, value in data.items():
        entry = plan.keys.get(key)
        if entry is None:
            raise _Unfit  # an unknown key, or a field given by name where it has an alias
        name, read = entry
        values[name] = read(value)
        given.add(name)
    if not plan.required <= given:
        raise _Unfit
    for name, make in plan.factories.items():
        if name not in given:
            values[name] = make()
    built = model.model_construct(given, **values)
    for validator in plan.validators:
        try:
            validator(built)
        except (ValueError, AssertionError):
            raise _Unfit from None
    return built


def _field_reader(info: FieldInfo) -> Reader:
    read = _reader(info.annotation)
    check = _constraints(info.metadata)

    def field(value: Any) -> Any:
        converted = read(value)
        if value is not None:
            check(converted)
        return converted

    return field


def _unfit(_: Any) -> Any:
    raise _Unfit


def _constraints(metadata: list[Any]) -> Callable[[Any], None]:
    checks = [_constraint(item) for item in metadata]

    def check(value: Any) -> None:
        if not all(c(value) for c in checks):
            raise _Unfit

    return check


def _constraint(item: Any) -> Callable[[Any], bool]:
    if isinstance(item, FieldInfo):
        inner = _constraints(item.metadata)
        return lambda v: inner(v) is None
    if isinstance(item, Strict):
        return lambda v: True  # every value here is taken only in its exact type already
    if isinstance(item, MinLen):
        least: int = item.min_length
        return lambda v: isinstance(v, str | list | dict) and len(v) >= least
    if isinstance(item, Ge | Gt):
        bound: int = item.ge if isinstance(item, Ge) else item.gt  # type: ignore[assignment]
        if isinstance(item, Ge):
            return lambda v: type(v) is int and v >= bound
        return lambda v: type(v) is int and v > bound
    return lambda v: False  # a constraint this reader does not know


def _reader(annotation: Any) -> Reader:
    """A reader of `annotation`'s values, taken only in their exact type (no coercion)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner, check = _reader(args[0]), _constraints(list(annotation.__metadata__))
        return lambda v: _checked(inner(v), check)
    if origin is typing.Union or origin is types.UnionType:
        return _union([_reader(member) for member in args])
    if origin is list:
        item = _reader(args[0])
        return lambda v: [item(i) for i in v] if type(v) is list else _unfit(v)
    if origin is dict:
        key, item = _reader(args[0]), _reader(args[1])
        return lambda v: {key(k): item(i) for k, i in v.items()} if type(v) is dict else _unfit(v)
    if origin is typing.Literal:
        choices = {(type(a), a) for a in args}
        return lambda v: v if type(v) in _SCALARS and (type(v), v) in choices else _unfit(v)
    if origin is None:
        return _plain(annotation)
    return _unfit


def _checked(value: Any, check: Callable[[Any], None]) -> Any:
    check(value)
    return value


def _union(members: list[Reader]) -> Reader:
    def read(value: Any) -> Any:
        fits = []
        for member in members:
            try:
                fits.append(member(value))
            except _Unfit:
                continue
        if len(fits) != 1:  # none, or a value two members take: pydantic's union rules decide
            raise _Unfit
        return fits[0]

    return read


def _plain(annotation: Any) -> Reader:
    """A reader of a type that is not generic: Any, None, text, flags, numbers, models, enums."""
    if annotation is Any:
        return lambda v: v
    if annotation is None or annotation is type(None):
        return lambda v: None if v is None else _unfit(v)
    if annotation in (str, bool, int):
        return lambda v: v if type(v) is annotation else _unfit(v)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return lambda v: _model(annotation, v)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = {(type(m.value), m.value): m for m in annotation}
        return lambda v: (
            members[(type(v), v)] if type(v) in _SCALARS and (type(v), v) in members else _unfit(v)
        )
    return _unfit
