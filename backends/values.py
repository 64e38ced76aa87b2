"""The one system of value classes of ``backends``, ``vfs`` and ``editors``: :func:`value`.

``@value`` / ``@value(frozen=True, slots=True)`` and :func:`field` are written and read as
``@dataclass`` and ``dataclasses.field`` are (type checkers treat them as such, PEP 681), and
:func:`replace` is ``dataclasses.replace``. What a class gets: an ``__init__`` over its annotated
fields in order (defaults, ``field(default_factory=...)``), ``__repr__``, ``__eq__`` by fields
(``__hash__ = None``, as a mutable dataclass), ``__match_args__``; ``frozen=True`` refuses
assignment (``AttributeError``) and hashes by fields; ``slots=True`` gives ``__slots__``.

Why a hand-written replacement of :mod:`dataclasses` (issue 13 item 7: only where a benchmark
shows that it earns its place): start-up. ``vfs apply`` defines ~38 value classes while it imports;
``@dataclass`` compiles up to six methods per class from source (~4.5 M instructions per frozen
class, CPython 3.11) and ``import dataclasses`` loads ``inspect`` with ``ast``, ``dis`` and
``tokenize`` (~42 M). Replacing them took a small ``vfs apply`` from 337 M instructions to 198 M
(the bare interpreter, ``python -c pass``: 90 M; counted by valgrind, steadier than time here;
in time: ``python -m benchmarks.startup``, ``apply_small``). Here the other methods are shared
functions and ``__init__`` binds its arguments in one shared function until a class has made
``_COMPILE_AT`` instances, then is compiled from source (~0.4 M each: a small ``vfs apply`` made
instances of 21 classes, 1-4 of most).
It lives in the lowest layer so that every layer can use it.

For the same reason (issue 20) nothing on the path of ``vfs apply`` imports :mod:`typing` at run
time (~11 M instructions: its classes and their ``__getitem__`` caches), as with ``TYPE_CHECKING =
False`` (which type checkers read as ``typing.TYPE_CHECKING``) annotations are strings that never
run: each module imports its typing names under ``if TYPE_CHECKING:``. What has to exist at run
time comes from here: :class:`Protocol` and :func:`runtime_checkable` (the type checker's are
typing's; at run time a protocol is a plain class whose ``isinstance`` checks its members, as
``runtime_checkable`` does) and ``dataclass_transform`` (a hint for type checkers: nothing at
run time); :func:`value`'s overloads are declared for the type checker only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see the module)
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform, overload
    from typing import Protocol as Protocol
    from typing import runtime_checkable as runtime_checkable

    T = TypeVar("T")
else:

    def runtime_checkable(cls):  # (every run-time Protocol below checks its members)
        return cls

    def dataclass_transform(**_):  # PEP 681's hint to type checkers: the class as it is
        return runtime_checkable

    class _ProtocolType(type):
        def __instancecheck__(cls, instance):
            if type.__instancecheck__(cls, instance):
                return True
            members = cls.__dict__.get("_protocol_members")  # (a subclass that is not a protocol: by class)
            return members is not None and all(hasattr(instance, name) for name in members)

    class Protocol(metaclass=_ProtocolType):
        """typing.Protocol at run time: a class (``class P(Protocol)``) whose ``isinstance``
        checks that the instance has every member P declares (methods, annotated attributes)."""

        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            if Protocol in cls.__bases__:
                declared = {*cls.__dict__, *cls.__dict__.get("__annotations__", {})}  # noqa: RUF063 - see _make
                inherited = (name for base in cls.__mro__[1:] for name in base.__dict__.get("_protocol_members", ()))
                own = {name for name in declared if not name.startswith("__") or name in _DUNDER_MEMBERS}
                cls._protocol_members = frozenset((*own, *inherited))

    # Protocol members with a dunder name: typing counts every dunder a protocol defines but its own
    # bookkeeping; ours define none but these.
    _DUNDER_MEMBERS = frozenset(("__enter__", "__exit__", "__iter__", "__len__", "__call__", "__getitem__"))


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


class _Field:
    __slots__ = ("default", "default_factory", "repr")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None, repr: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.repr = repr


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, repr: bool = True) -> Any:
    """A field's default (``default=``) or the maker of a fresh one per instance (``default_factory=``);
    ``repr=False`` leaves it out of the class's ``repr`` (a large payload)."""
    return _Field(default, default_factory, repr)


def fields_of(cls_or_obj: Any) -> tuple[str, ...]:
    """The field names of a value class (or instance), in order."""
    names: tuple[str, ...] = cls_or_obj.__value_fields__
    return names


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes`` (``dataclasses.replace``); an unknown name is a ``TypeError``."""
    current = {name: getattr(obj, name) for name in fields_of(obj)}
    return type(obj)(**{**current, **changes})


def _values(self: Any) -> tuple[Any, ...]:
    return tuple([getattr(self, name) for name in self.__value_fields__])


def _repr(self: Any) -> str:
    shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in self.__value_repr_fields__])
    return f"{type(self).__qualname__}({shown})"


def _eq(self: object, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented  # type: ignore[no-any-return]  # mypy allows it only in a method named __eq__
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__qualname__}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__qualname__}")


def _setstate(self: Any, state: Any) -> None:
    """Unpickling and ``copy`` of a frozen class with slots (its ``__setattr__`` refuses)."""
    slots = state[1] if isinstance(state, tuple) else state
    for name, item in (slots or {}).items():
        object.__setattr__(self, name, item)


def _is_classvar(annotation: object) -> bool:
    if isinstance(annotation, str):  # `from __future__ import annotations`
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    typing = sys.modules.get("typing")  # (an annotation that is typing's ClassVar comes with typing loaded)
    if typing is None:
        return False
    return annotation is typing.ClassVar or getattr(annotation, "__origin__", None) is typing.ClassVar


def _init_source(cls: type, names: list[str], frozen: bool, namespace: dict[str, Any]) -> str:
    """The source of ``__init__``; the defaults and factories it refers to go into ``namespace``."""
    params, body = [], []
    for name in names:
        default = cls.__dict__.get(name, _MISSING)
        argument = name
        if isinstance(default, _Field) and default.default_factory is not None:
            namespace[f"_factory_{name}"] = default.default_factory
            params.append(f"{name}=_MISSING")
            argument = f"_factory_{name}() if {name} is _MISSING else {name}"
        elif default is not _MISSING:
            namespace[f"_default_{name}"] = default.default if isinstance(default, _Field) else default
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
        body.append(f"    _set(self, {name!r}, {argument})" if frozen else f"    self.{name} = {argument}")
    return f"def __init__(self, {', '.join(params)}) -> None:\n" + ("\n".join(body) or "    pass") + "\n"


_COMPILE_AT = 16  # the instance of a class that compiles its __init__ (see _make)


def _defaults_of(cls: type, names: list[str]) -> dict[str, tuple[bool, Any]]:
    """Per field with a default: (whether it is a factory, the default or the factory)."""
    found: dict[str, tuple[bool, Any]] = {}
    for name in names:
        default = cls.__dict__.get(name, _MISSING)
        if isinstance(default, _Field) and default.default_factory is not None:
            found[name] = (True, default.default_factory)
        elif default is not _MISSING:
            found[name] = (False, default.default if isinstance(default, _Field) else default)
    return found


def _bind(
    self: Any,
    names: list[str],
    defaults: dict[str, tuple[bool, Any]],
    frozen: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """What the compiled ``__init__`` does, for any class: the same values, the same TypeErrors."""
    function = f"{type(self).__qualname__}.__init__()"
    if len(args) > len(names):
        required = len(names) - len(defaults) + 1
        takes = f"from {required} to {len(names) + 1}" if defaults else str(len(names) + 1)
        raise TypeError(f"{function} takes {takes} positional arguments but {len(args) + 1} were given")
    given = dict(zip(names, args, strict=False))  # (fewer arguments than fields: the rest by name or default)
    for name, item in kwargs.items():
        if name not in names:
            raise TypeError(f"{function} got an unexpected keyword argument {name!r}")
        if name in given:
            raise TypeError(f"{function} got multiple values for argument {name!r}")
        given[name] = item
    missing = [repr(name) for name in names if name not in given and name not in defaults]
    if missing:
        listed = (
            missing[0]
            if len(missing) == 1
            else ", ".join(missing[:-1]) + f"{',' if len(missing) > 2 else ''} and {missing[-1]}"
        )
        plural = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(f"{function} missing {len(missing)} required positional {plural}: {listed}")
    set_field = object.__setattr__ if frozen else setattr
    for name in names:
        if name in given:
            set_field(self, name, given[name])
        else:
            is_factory, default = defaults[name]
            set_field(self, name, default() if is_factory else default)


def _make(cls: type, frozen: bool, slots: bool) -> type:
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - not inspect: see the module
    names = [name for name, annotation in annotations.items() if not _is_classvar(annotation)]
    shown = tuple(n for n in names if not (isinstance(cls.__dict__.get(n), _Field) and not cls.__dict__[n].repr))
    namespace: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    source = _init_source(cls, names, frozen, namespace)
    defaults = _defaults_of(cls, names)
    for name in names:  # the defaults live in __init__ now (a class attribute would clash with a slot)
        if isinstance(cls.__dict__.get(name), _Field) or (slots and name in cls.__dict__):
            delattr(cls, name)
    if slots:
        body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
        body["__slots__"] = tuple(names)
        cls = type(cls)(cls.__name__, cls.__bases__, body)
    made = cls

    made_count = [0]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # Most value classes make a few instances per command (a small `vfs apply` makes 1-4 of
        # about half of them): compiling ``__init__`` from source costs ~0.4 M instructions, binding
        # the arguments here ~20 k. A class that keeps making instances gets the compiled one.
        made_count[0] += 1
        if made_count[0] < _COMPILE_AT:
            _bind(self, names, defaults, frozen, args, kwargs)
            return
        exec(source, namespace)
        init = namespace["__init__"]
        init.__qualname__ = f"{made.__qualname__}.__init__"
        init.__module__ = made.__module__
        type.__setattr__(made, "__init__", init)
        init(self, *args, **kwargs)

    methods: dict[str, Any] = {
        "__init__": __init__,
        "__repr__": _repr,
        "__eq__": _eq,
        "__hash__": _hash if frozen else None,
        "__match_args__": tuple(names),
        "__value_fields__": tuple(names),
        "__value_repr_fields__": shown,
    }
    if frozen:
        methods.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
        if slots:
            methods["__setstate__"] = _setstate
    for name, method in methods.items():
        setattr(cls, name, method)
    return cls


if TYPE_CHECKING:  # (typing's overload: for the type checker only)

    @overload
    def value(cls: type[T], /) -> type[T]: ...

    @overload
    def value(*, frozen: bool = False, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(field,))
def value(cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """Make ``cls`` a value class (``@value``, ``@value(frozen=True, slots=True)``): see the module."""

    def wrap(cls: type[T]) -> type[T]:
        made: type[T] = _make(cls, frozen, slots)
        return made

    return wrap if cls is None else wrap(cls)
