"""Plain value classes for the ``vfs apply`` path: what ``@dataclass`` gives, without its cost.

``import dataclasses`` takes ~12 ms (it imports ``inspect``) and each decorated class another
~1 ms (its methods are generated with ``exec``); ``vfs apply`` would pay that for ten classes at
every start. A subclass writes its own ``__init__`` and names its fields, in order, in
``__match_args__``; it gets a dataclass's ``__repr__``, ``__eq__`` (same class, field by field),
``__match_args__`` and, for a mutable record, no hash. :class:`FrozenRecord` adds immutability
(``AttributeError``, as dataclasses' ``FrozenInstanceError`` is one) and ``__hash__``; its
``__init__`` sets the fields with ``_init``.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Record:
    """A mutable record: ``__repr__`` and ``__eq__`` over the fields of ``__match_args__``; unhashable."""

    __match_args__: ClassVar[tuple[str, ...]] = ()
    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable and compared by value

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self.__match_args__])

    def __repr__(self) -> str:
        fields = ", ".join([f"{name}={getattr(self, name)!r}" for name in self.__match_args__])
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()


class FrozenRecord(Record):
    """An immutable record, hashable by its fields."""

    def _init(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())
