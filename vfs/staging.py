"""The staging overlay of a transaction: what it first saw at each key (its base, checked at
commit) and what it staged there (read-your-writes)."""

from __future__ import annotations

from typing import Literal

from backends.base import FileInfo
from backends.values import value

State = Literal["file", "absent", "directory", "other", "symlink"]


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
    data: bytes | None = None
    mode: int | None = None


def state_of(info: FileInfo | None) -> State:
    return "absent" if info is None else info.kind


class Overlay:
    """``seen`` and ``staged`` by key; ``targets()`` are the keys a commit changes."""

    def __init__(self) -> None:
        self.seen: dict[str, Seen] = {}
        self.staged: dict[str, Staged] = {}

    def targets(self) -> list[str]:
        return [k for k, s in self.staged.items() if not (s.state == "absent" and self.seen[k].state == "absent")]
