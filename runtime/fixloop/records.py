"""Records: dataclasses whose methods are shared functions, not code compiled for each class.

`@dataclass` writes `__init__`, `__repr__`, `__eq__` (and `__setattr__`, `__delattr__`,
`__hash__` when frozen) as source text and compiles each at import: about half a millisecond a
class on an idle machine, a fifth of what `fixloop check` spent importing its own modules. A
record declares its fields the same way (annotations, `dataclasses.field(default=…,
default_factory=…, compare=False)`), type-checks the same way (`dataclass_transform`), and
behaves the same for what the checker and the documents use: positional and keyword
construction, defaults, equality, hashing of frozen records, ordering, `repr`, refused
assignment to a frozen one (`replace` makes a changed copy). Construction is a loop over the
fields instead of compiled code, so records are for values made by the dozen or hundred, not for
a syntax tree's nodes.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")
_MISSING = dataclasses.MISSING


class _Field:
    __slots__ = ("compare", "default", "factory", "keyword", "metadata", "name")

    def __init__(self, name: str, value: Any, keyword: bool) -> None:
        self.name, self.keyword = name, keyword
        self.default: Any = _MISSING
        self.factory: Any = _MISSING
        self.metadata: Any = {}
        self.compare = True
        if isinstance(value, dataclasses.Field):
            self.default, self.factory = value.default, value.default_factory
            self.metadata = value.metadata
            self.compare = value.compare
            self.keyword = keyword or value.kw_only is True
        else:
            self.default = value


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(
    cls: type[T] | None = None,
    /,
    *,
    frozen: bool = False,
    order: bool = False,
    kw_only: bool = False,
) -> Any:
    """`@dataclass` (with these of its options), without compiling anything."""

    def make(cls: type[T]) -> type[T]:
        return _make(cls, frozen=frozen, order=order, kw_only=kw_only)

    return make if cls is None else make(cls)


def _make(cls: type[T], *, frozen: bool, order: bool, kw_only: bool) -> type[T]:
    target: Any = cls  # its methods are set here, which the type checker would refuse
    inherited: list[_Field] = [
        f for base in reversed(cls.__mro__[1:]) for f in base.__dict__.get("__record_fields__", ())
    ]
    own: list[_Field] = []
    for name, annotation in inspect.get_annotations(cls).items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, _MISSING)
        made = _Field(name, value, kw_only)
        if isinstance(value, dataclasses.Field):
            if made.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, made.default)
        own.append(made)
    names = {f.name for f in own}
    fields = (*(f for f in inherited if f.name not in names), *own)
    target.__record_fields__ = fields
    target.__record_plan__ = _Plan(fields)
    target.__init__ = _init
    target.__repr__ = _repr
    target.__eq__ = _eq
    if frozen:
        target.__setattr__ = _refuse_set
        target.__delattr__ = _refuse_delete
        target.__hash__ = _hash
    else:
        target.__hash__ = None  # as a dataclass's: equal yet mutable
    if order:
        target.__lt__ = _lt
        target.__le__ = _le
        target.__gt__ = _gt
        target.__ge__ = _ge
    return cls


def is_record(value: Any) -> bool:
    """Is `value` a record class?"""
    return isinstance(value, type) and "__record_fields__" in value.__dict__


def field_names(cls: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in cls.__record_fields__)


def declared(cls: type[Any]) -> tuple[tuple[str, Any, Any, Any], ...]:
    """Each field's name, `dataclasses.field(metadata=…)`, default and default factory (these two
    `dataclasses.MISSING` when it has none), in order."""
    return tuple((f.name, f.metadata, f.default, f.factory) for f in cls.__record_fields__)


def replace(value: T, **changes: Any) -> T:
    """A copy of the record `value` with these fields changed (`dataclasses.replace`)."""
    kind: Any = type(value)
    current = {f.name: value.__dict__[f.name] for f in kind.__record_fields__}
    made: T = kind(**{**current, **changes})
    return made


def _values(self: Any) -> tuple[Any, ...]:
    """The fields equality, hashing and ordering look at (not those made `compare=False`)."""
    own = self.__dict__
    return tuple([own[name] for name in type(self).__record_plan__.compared])


class _Plan:
    """How a record class is constructed, worked out once."""

    __slots__ = (
        "all_positional",
        "compared",
        "known",
        "names",
        "optional",
        "positional",
        "required",
    )

    def __init__(self, fields: tuple[_Field, ...]) -> None:
        names: list[str] = []
        compared: list[str] = []
        positional: list[str] = []
        required: list[str] = []
        optional: list[tuple[str, Any, Any]] = []
        for f in fields:  # one loop: a plan is made for every record class at import
            names.append(f.name)
            if f.compare:
                compared.append(f.name)
            if not f.keyword:
                positional.append(f.name)
            if f.default is _MISSING and f.factory is _MISSING:
                required.append(f.name)
            else:
                optional.append((f.name, f.default, f.factory))
        self.names, self.compared = tuple(names), tuple(compared)
        self.known = frozenset(names)
        self.positional = tuple(positional)
        # The number of arguments that are every field, in order (-1: no such call).
        self.all_positional = len(names) if len(positional) == len(names) else -1
        self.required, self.optional = tuple(required), tuple(optional)


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    plan: _Plan = type(self).__record_plan__
    if not kwargs and len(args) == plan.all_positional:
        self.__dict__.update(zip(plan.names, args, strict=False))  # every field, in order
        return
    if len(args) > len(plan.positional):
        name = type(self).__qualname__
        raise TypeError(f"{name}() takes {len(plan.positional)} positional arguments")
    values = dict(zip(plan.positional, args, strict=False))
    if kwargs:
        if not plan.known.issuperset(kwargs) or not values.keys().isdisjoint(kwargs):
            _refuse_keywords(type(self).__qualname__, plan, values, kwargs)
        values.update(kwargs)
    if len(values) < len(plan.names):
        for field in plan.required:
            if field not in values:
                name = type(self).__qualname__
                raise TypeError(f"{name}() missing required argument: {field!r}")
        for field, default, factory in plan.optional:
            if field not in values:
                values[field] = default if factory is _MISSING else factory()
    self.__dict__.update(values)


def _refuse_keywords(
    name: str, plan: _Plan, values: dict[str, Any], kwargs: dict[str, Any]
) -> None:
    """The error of the first keyword argument that is given twice or names no field."""
    for key in kwargs:
        if key in values:
            raise TypeError(f"{name}() got multiple values for argument {key!r}")
        if key not in plan.known:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")


def _repr(self: Any) -> str:
    own = self.__dict__
    shown = ", ".join(f"{name}={own[name]!r}" for name in type(self).__record_plan__.names)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if type(other) is not type(self):
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _lt(self: Any, other: Any) -> Any:
    return _values(self) < _values(other) if type(other) is type(self) else NotImplemented


def _le(self: Any, other: Any) -> Any:
    return _values(self) <= _values(other) if type(other) is type(self) else NotImplemented


def _gt(self: Any, other: Any) -> Any:
    return _values(self) > _values(other) if type(other) is type(self) else NotImplemented


def _ge(self: Any, other: Any) -> Any:
    return _values(self) >= _values(other) if type(other) is type(self) else NotImplemented
