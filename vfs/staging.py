"""The staging overlay of a transaction: what it first saw at each key (its base, checked at
commit) and what it staged there (read-your-writes)."""

from __future__ import annotations

from backends.base import FileInfo, WriteData
from backends.values import value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Literal

    State = Literal["file", "absent", "directory", "other", "symlink"]
else:
    State = str  # (vfs.transaction imports the name; annotations alone use it)


@value
class Seen:
    """What the transaction first saw at a key (the base its commit is checked against)."""

    state: State
    version: str | None = None
    mode: int | None = None
    data: bytes | None = None  # the bytes read, reused as the pre-image

    @classmethod
    def of(cls, info: FileInfo | None) -> Seen:
        """What a stat saw (``None``: nothing there)."""
        return cls(state_of(info), info.version if info else None, info.mode if info else None)


@value
class Staged:
    state: Literal["file", "absent", "directory"]
    #: bytes, or pieces (bytes and views of bytes) written back to back and joined only if read
    data: WriteData | None = None
    mode: int | None = None


def frozen(data: object) -> WriteData:
    """``data`` as the transaction keeps it: bytes (copied from a mutable buffer), or a list of
    pieces kept as they are when they cannot change (bytes, views of bytes), else copied."""
    if isinstance(data, list):
        return [p if isinstance(p, bytes) or (isinstance(p, memoryview) and isinstance(p.obj, bytes)) else _bytes(p)
                for p in data]  # fmt: skip
    return _bytes(data)


def _bytes(data: object) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("data must be bytes (or a list of bytes-like pieces)")
    return bytes(data)


def state_of(info: FileInfo | None) -> State:
    return "absent" if info is None else info.kind


class Overlay:
    """``seen`` and ``staged`` by key; ``targets()`` are the keys a commit changes."""

    def __init__(self) -> None:
        self.seen: dict[str, Seen] = {}
        self.staged: dict[str, Staged] = {}

    def targets(self) -> list[str]:
        return [k for k, s in self.staged.items() if not (s.state == "absent" and self.seen[k].state == "absent")]
