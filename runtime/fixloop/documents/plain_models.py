"""Declarations a user writes (the contract language, the settings) as plain classes; pydantic only
to word their problems.

A one-document check in a pre-commit hook pays for every class it defines: pydantic's model
classes, and the pydantic machinery that defining one imports, were a good part of `fixloop
check`'s start. So the declared data is frozen records (records.py), each field saying what pydantic
would be told (`keyed(alias=…, ge=…)`, `Annotated[str, MinLength(1)]`, `StrictInt`), and `built`
turns data into one of them:

- most declarations are plainly valid (text where text is expected, lists of text, real booleans
  and whole numbers, known keys): they are read directly, in pydantic's strict terms;
- anything else (a value pydantic would coerce, a wrong type, an unknown key, a field spelt by
  its name instead of its alias, a broken constraint, the class's own `problem()`, an
  annotation this reader does not know) goes to pydantic, through a model made from the same
  fields on first need (`twin`): its verdict and its messages stand, and what it accepts is
  copied back into the plain class. So the result is what pydantic would build, or its refusal.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

from fixloop import records
from fixloop.diagnostics import Diagnostic
from fixloop.documents.located_yaml import KeyPath

# pydantic is imported only where data is not plainly valid (`twin`): here for the type checker.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

T = TypeVar("T")
Reader = Callable[[Any], Any]  # a value → itself as the annotation holds it, or _Unfit
_SCALARS = (str, int, bool, float)  # the values a Literal or an enum member can equal, hashable
_FIELD = "fixloop.declared"  # the field metadata key of what pydantic is told


# Records, not NamedTuples: a NamedTuple compiles its constructor when it is defined, and every
# check imports this module.
@records.record(frozen=True)
class MinLength:
    """`Annotated[str, MinLength(1)]`: pydantic's `Field(min_length=…)` inside an annotation."""

    min_length: int


@records.record(frozen=True)
class _Strict:
    """pydantic's `Strict()`: the value is taken only in its exact type, never coerced."""


StrictInt = Annotated[int, _Strict()]


def keyed(
    *,
    default: Any = dataclasses.MISSING,
    default_factory: Callable[[], Any] | None = None,
    alias: str | None = None,
    ge: int | float | None = None,
    refused: str | None = None,
) -> Any:
    """A declared field: its default, the key it is written as, its bound, and (`refused`) the
    message for a key that may not be given at all."""
    said = {"alias": alias, "ge": ge, "refused": refused}
    metadata = {_FIELD: {name: value for name, value in said.items() if value is not None}}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


class Refused(Exception):
    """pydantic's verdict on data that is not plainly valid."""

    def __init__(self, model: type[Any], data: Any, error: ValidationError) -> None:
        super().__init__(str(error))
        self.model, self.data, self.error = model, data, error

    def errors(self) -> list[Any]:
        return list(self.error.errors())

    def diagnostics(
        self, *, display: str, rule: str, key_lines: Mapping[KeyPath, int], prefix: KeyPath = ()
    ) -> list[Diagnostic]:
        """One located line per problem, in the words of the file's author (spec_errors.py)."""
        from fixloop.documents.spec_errors import spec_diagnostics

        return spec_diagnostics(
            self.error,
            model=twin(self.model),
            data=self.data,
            display=display,
            rule=rule,
            key_lines=key_lines,
            prefix=prefix,
        )


def built(model: type[T], data: Any) -> T:
    """`model` made from `data` as pydantic would validate it; `Refused` when pydantic refuses."""
    made = construct(model, data)
    if made is not None:
        return made
    from pydantic import ValidationError

    try:
        validated = twin(model).model_validate(data)
    except ValidationError as exc:
        raise Refused(model, data, exc) from None
    plain: T = _from_twin(validated)
    return plain


class _Unfit(Exception):
    """The data is not plainly valid: pydantic decides."""


def construct(model: type[T], data: Any) -> T | None:
    """`model` built from `data` as pydantic would validate it, or None when pydantic must."""
    try:
        made: T = _model(model, data)
        return made
    except _Unfit:
        return None


@records.record(frozen=True)
class _Field:
    name: str
    annotation: Any  # with its Annotated extras
    said: dict[str, Any]  # what pydantic is told besides the annotation (see `keyed`)
    default: Any  # dataclasses.MISSING when none
    factory: Any  # dataclasses.MISSING when none


# Worked out once per class (a dict, not functools.cache: mypy holds a type unhashable).
_FIELDS: dict[type[Any], tuple[_Field, ...]] = {}
_PLANS: dict[type[Any], dict[str, tuple[str, Reader]]] = {}
_TWINS: dict[type[Any], type[BaseModel]] = {}
_PLAIN_OF: dict[type[Any], type[Any]] = {}  # twin → its plain class


def _fields(model: type[Any]) -> tuple[_Field, ...]:
    found = _FIELDS.get(model)
    if found is None:
        hints = _hints(model)
        found = _FIELDS[model] = tuple(
            _Field(name, hints[name], dict(said.get(_FIELD, {})), default, factory)
            for name, said, default, factory in records.declared(model)
        )
    return found


# Annotation text → its compiled expression, shared by every class that writes it: the fields of
# the declarations say `str | None` or `list[str]` again and again, and compiling each text anew
# (`typing.get_type_hints` does, through `ForwardRef`) was most of the cost of reading them.
_COMPILED: dict[str, types.CodeType] = {}


def _hints(model: type[Any]) -> dict[str, Any]:
    """`typing.get_type_hints(model, include_extras=True)`, each annotation text compiled once.

    Evaluated as it does: base classes first, in the class's namespace and then its module's
    (the module's names first), `None` read as `NoneType`.
    """
    hints: dict[str, Any] = {}
    for base in reversed(model.__mro__):
        module = sys.modules.get(base.__module__)
        module_names = getattr(module, "__dict__", {})
        class_names = dict(vars(base))
        for name, annotation in inspect.get_annotations(base).items():
            value = annotation
            if isinstance(annotation, str):
                code = _COMPILED.get(annotation)
                if code is None:
                    code = _COMPILED[annotation] = compile(annotation, "<annotation>", "eval")
                value = eval(code, class_names, module_names)  # noqa: S307 - the class's own text
            hints[name] = type(None) if value is None else value
    return hints


def _plan(model: type[Any]) -> dict[str, tuple[str, Reader]]:
    """Key as written (the alias, if any) → the field and the reader of its values."""
    keys = _PLANS.get(model)
    if keys is None:
        keys = {}
        for field in _fields(model):
            reader = _unfit if "refused" in field.said else _field_reader(field)
            # Only the alias where there is one: a field given by its name is pydantic's.
            keys[field.said.get("alias", field.name)] = (field.name, reader)
        _PLANS[model] = keys
    return keys


def _model(model: type[T], data: Any) -> T:
    plan = _plan(model)
    if type(data) is not dict:
        raise _Unfit
    values: dict[str, Any] = {}
    for given, value in data.items():
        entry = plan.get(given)
        if entry is None:
            raise _Unfit  # an unknown key, or a field given by name where it has an alias
        name, read = entry
        values[name] = read(value)
    try:
        made = model(**values)
    except TypeError:  # a required key is missing
        raise _Unfit from None
    problem = getattr(made, "problem", None)
    if problem is not None and problem() is not None:
        raise _Unfit
    return made


def _field_reader(field: _Field) -> Reader:
    read = _reader(field.annotation)
    bound = field.said.get("ge")
    if bound is None:
        return read

    def bounded(value: Any) -> Any:
        converted = read(value)
        if value is not None and not (type(converted) is int and converted >= bound):
            raise _Unfit
        return converted

    return bounded


def _unfit(_: Any) -> Any:
    raise _Unfit


# Annotation → its reader, shared by every field that has it: the declarations' fields say `str`,
# `list[str]` or `str | None` again and again (38 annotations for 164 readers in a check).
_READERS: dict[Any, Reader] = {}


def _reader(annotation: Any) -> Reader:
    """A reader of `annotation`'s values, taken only in their exact type (no coercion)."""
    try:
        return _READERS[annotation]
    except KeyError:
        made = _READERS[annotation] = _new_reader(annotation)
        return made
    except TypeError:  # an annotation that holds something unhashable
        return _new_reader(annotation)


def _new_reader(annotation: Any) -> Reader:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = _reader(args[0])
        least = [m.min_length for m in annotation.__metadata__ if isinstance(m, MinLength)]
        if any(not isinstance(m, MinLength | _Strict) for m in annotation.__metadata__):
            return _unfit  # a constraint this reader does not know
        if not least:
            return inner  # strict: every value here is taken only in its exact type already
        return lambda v: _long_enough(inner(v), max(least))
    if origin is typing.Union or origin is types.UnionType:
        return _union([_reader(member) for member in args])
    if origin is list:
        item = _reader(args[0])
        return lambda v: [item(i) for i in v] if type(v) is list else _unfit(v)
    if origin is dict:
        key_of, item = _reader(args[0]), _reader(args[1])
        return lambda v: (
            {key_of(k): item(i) for k, i in v.items()} if type(v) is dict else _unfit(v)
        )
    if origin is typing.Literal:
        choices = {(type(a), a) for a in args}
        return lambda v: v if type(v) in _SCALARS and (type(v), v) in choices else _unfit(v)
    if origin is None:
        return _plain(annotation)
    return _unfit


def _long_enough(value: Any, least: int) -> Any:
    if not (isinstance(value, str | list | dict) and len(value) >= least):
        raise _Unfit
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
    """A reader of a type that is not generic: Any, None, text, flags, numbers, classes, enums."""
    if annotation is Any:
        return lambda v: v
    if annotation is None or annotation is type(None):
        return lambda v: None if v is None else _unfit(v)
    if annotation in (str, bool, int):
        return lambda v: v if type(v) is annotation else _unfit(v)
    if records.is_record(annotation):
        declared = annotation
        return lambda v: _model(declared, v)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = {(type(m.value), m.value): m for m in annotation}
        return lambda v: (
            members[(type(v), v)] if type(v) in _SCALARS and (type(v), v) in members else _unfit(v)
        )
    return _unfit


# pydantic's side: the same fields as a model, made on first need.


def twin(model: type[Any]) -> type[BaseModel]:
    """The pydantic model with `model`'s fields, keys, bounds, defaults and `problem()`."""
    made = _TWINS.get(model)
    if made is None:
        made = _TWINS[model] = _made_twin(model)
        _PLAIN_OF[made] = model
    return made


def _made_twin(model: type[Any]) -> type[BaseModel]:
    from pydantic import AfterValidator, ConfigDict, Field, create_model, model_validator

    fields: dict[str, Any] = {}
    for field in _fields(model):
        annotation = _twin_annotation(field.annotation)
        refused = field.said.get("refused")
        if refused is not None:
            annotation = Annotated[annotation, AfterValidator(_refusal(refused))]
        said: dict[str, Any] = {k: v for k, v in field.said.items() if k != "refused"}
        if field.factory is not dataclasses.MISSING:
            factory = field.factory
            said["default_factory"] = twin(factory) if records.is_record(factory) else factory
        elif field.default is not dataclasses.MISSING:
            said["default"] = field.default
        fields[field.name] = (annotation, Field(**said))
    validators: dict[str, Any] = {}
    if hasattr(model, "problem"):
        check = typing.cast(Callable[[Any], "str | None"], model.problem)

        def _problem(self: Any) -> Any:
            problem = check(self)
            if problem is not None:
                raise ValueError(problem)
            return self

        validators["_problem"] = model_validator(mode="after")(_problem)
    made: type[BaseModel] = create_model(
        model.__name__,
        __config__=ConfigDict(extra="forbid", frozen=True, populate_by_name=True),
        __doc__=model.__doc__,
        __module__=model.__module__,
        __validators__=validators,
        **fields,
    )
    return made


def _refusal(message: str) -> Callable[[Any], Any]:
    def refuse(value: Any) -> Any:
        raise ValueError(message)

    return refuse


def _twin_annotation(annotation: Any) -> Any:
    from pydantic import Field, Strict

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        extras = [
            Strict() if isinstance(m, _Strict) else Field(min_length=m.min_length)
            for m in annotation.__metadata__
        ]
        return Annotated[(_twin_annotation(args[0]), *extras)]
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[tuple(_twin_annotation(a) for a in args)]  # noqa: UP007
    if origin is list:
        return list[_twin_annotation(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[_twin_annotation(args[0]), _twin_annotation(args[1])]  # type: ignore[misc]
    if records.is_record(annotation):
        return twin(annotation)
    return annotation


def _from_twin(value: Any) -> Any:
    """A value pydantic validated, with each twin's instance made its plain class's."""
    plain = _PLAIN_OF.get(type(value))
    if plain is not None:
        return plain(**{f.name: _from_twin(getattr(value, f.name)) for f in _fields(plain)})
    if isinstance(value, list):
        return [_from_twin(item) for item in value]
    if isinstance(value, dict):
        return {k: _from_twin(item) for k, item in value.items()}
    return value
