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

import enum
import types
import typing
from typing import Any, TypeVar

from annotated_types import Ge, Gt, MinLen
from pydantic import BaseModel, Strict
from pydantic.fields import FieldInfo

ModelT = TypeVar("ModelT", bound=BaseModel)


class _Unfit(Exception):
    """The data is not plainly valid: pydantic decides."""


def construct(model: type[ModelT], data: Any) -> ModelT | None:
    """`model` built from `data` as pydantic would validate it, or None when pydantic must."""
    try:
        return _model(model, data)
    except _Unfit:
        return None


def _model(model: type[ModelT], data: Any) -> ModelT:
    decorators = model.__pydantic_decorators__
    if (
        type(data) is not dict
        or model.model_config.get("extra") != "forbid"
        or decorators.field_validators
        or decorators.root_validators
        or decorators.validators
        or any(d.info.mode != "after" for d in decorators.model_validators.values())
    ):
        raise _Unfit
    by_key = {info.alias or name: name for name, info in model.model_fields.items()}
    if any(key not in by_key for key in data):
        raise _Unfit  # an unknown key, or a field given by name where it has an alias
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = by_key[key]
        info = model.model_fields[name]
        values[name] = _field(info, value)
    for name, info in model.model_fields.items():
        if name in values:
            continue
        if info.is_required():
            raise _Unfit
        factory = info.default_factory
        if isinstance(factory, type) and issubclass(factory, BaseModel):
            values[name] = _model(factory, {})  # calling it would build its validator
    # Only the keys given count as set, as after pydantic's validation.
    built = model.model_construct({by_key[key] for key in data}, **values)
    for decorator in decorators.model_validators.values():
        try:
            decorator.func(built)
        except (ValueError, AssertionError):
            raise _Unfit from None
    return built


def _field(info: FieldInfo, value: Any) -> Any:
    converted = _value(info.annotation, value)
    if value is not None:
        _constrain(info.metadata, converted)
    return converted


def _constrain(metadata: list[Any], value: Any) -> None:
    for item in metadata:
        if isinstance(item, FieldInfo):
            _constrain(item.metadata, value)
        elif isinstance(item, Strict):
            continue  # every value here is taken only in its exact type already
        elif isinstance(item, MinLen):
            if not isinstance(value, str | list | dict) or len(value) < item.min_length:
                raise _Unfit
        elif isinstance(item, Ge | Gt):
            if type(value) is not int:
                raise _Unfit
            if isinstance(item, Ge) and not value >= item.ge:  # type: ignore[operator]
                raise _Unfit
            if isinstance(item, Gt) and not value > item.gt:  # type: ignore[operator]
                raise _Unfit
        else:
            raise _Unfit


def _value(annotation: Any, value: Any) -> Any:
    """`value` as `annotation` holds it, taken only in its exact type (no coercion)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *metadata = typing.get_args(annotation)
        converted = _value(inner, value)
        _constrain(metadata, converted)
        return converted
    if origin is typing.Union or origin is types.UnionType:
        fits = []
        for member in typing.get_args(annotation):
            try:
                fits.append(_value(member, value))
            except _Unfit:
                continue
        if len(fits) != 1:  # none, or a value two members take: pydantic's union rules decide
            raise _Unfit
        return fits[0]
    if origin is list and type(value) is list:
        (item,) = typing.get_args(annotation)
        return [_value(item, v) for v in value]
    if origin is dict and type(value) is dict:
        key, item = typing.get_args(annotation)
        return {_value(key, k): _value(item, v) for k, v in value.items()}
    if origin is None:
        return _plain(annotation, value)
    if origin is typing.Literal and any(
        type(value) is type(choice) and value == choice for choice in annotation.__args__
    ):
        return value
    raise _Unfit


def _plain(annotation: Any, value: Any) -> Any:
    """`value` as a type that is not generic holds it: Any, None, text, flags, numbers, models."""
    if annotation is Any:
        return value
    if annotation is None or annotation is type(None):
        if value is None:
            return None
    elif annotation in (str, bool, int):
        if type(value) is annotation:
            return value
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model(annotation, value)
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        for member in annotation:
            if type(value) is type(member.value) and value == member.value:
                return member
    raise _Unfit
