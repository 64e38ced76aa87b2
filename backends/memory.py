"""In-memory backend: an isolated store per workspace, with real compare-and-swap.

``memory://name`` opens the store called ``name`` (shared by every workspace of this process that
opens the same name, like fsspec's memory filesystem); ``memory://`` alone opens a fresh anonymous
store. Versions come from a generation counter owned by the store, bumped on every write, so a
rewrite with identical bytes still changes the version (fsspec's own memory store mutates in place
without changing ``ukey``/``checksum``, which is why this backend does not build on it).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from backends.base import (
    Capabilities,
    DeleteItem,
    FileInfo,
    TooBig,
    WriteItem,
    check_precondition,
    iter_parents,
    joined,
    parent_of,
)
from backends.values import field, value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any, ClassVar

DEFAULT_FILE_MODE = 0o644


@value
class _Entry:
    data: bytes | None  # None for a directory
    mode: int
    generation: int
    mtime: float


@value
class MemoryStore:
    """The bytes of one named store. Thread-safe through ``guard``."""

    entries: dict[str, _Entry] = field(default_factory=dict)
    guard: threading.RLock = field(default_factory=threading.RLock)
    locks: dict[str, threading.Lock] = field(default_factory=dict)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    #: The prefix index: directory key -> its direct children's keys (a dict: insertion order), so
    #: listing a folder or emptying one costs its own children, never the whole store. Kept by
    #: :meth:`put` and :meth:`remove`, the only writers of ``entries``.
    children: dict[str, dict[str, None]] = field(default_factory=dict)

    def next_generation(self) -> int:
        return next(self._counter)

    def put(self, key: str, entry: _Entry) -> None:
        if key not in self.entries:
            self.children.setdefault(parent_of(key), {})[key] = None
        self.entries[key] = entry

    def remove(self, key: str) -> None:
        del self.entries[key]
        siblings = self.children.get(parent_of(key))
        if siblings is not None:
            siblings.pop(key, None)
        self.children.pop(key, None)  # a directory is removed empty (rmdir checks)

    def child_keys(self, key: str) -> list[str]:
        return list(self.children.get(key, ()))


_STORES: dict[str, MemoryStore] = {}
_STORES_GUARD = threading.Lock()


def named_store(name: str) -> MemoryStore:
    with _STORES_GUARD:
        return _STORES.setdefault(name, MemoryStore())


def forget_store(name: str) -> None:
    """Drop a named store (tests use it to start clean)."""
    with _STORES_GUARD:
        _STORES.pop(name, None)


class MemoryBackend:
    name: ClassVar[str] = "memory"
    capabilities = Capabilities(
        atomic_replace=True,
        conditional_write=True,
        exclusive_create=True,
        durable=False,
        cross_process_lock=False,
        real_directories=True,
        real_mtime=True,
        modes=True,
        symlinks=False,
        notes=("Lives in this process only: nothing survives the process, no other process sees it.",),
    )

    def __init__(self, store: MemoryStore | None = None, *, label: str = "") -> None:
        self.store = store if store is not None else MemoryStore()
        self.label = label

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> MemoryBackend:
        name = url.partition("://")[2].strip("/")
        if not name:
            return cls(label="memory://")
        return cls(named_store(name), label=f"memory://{name}")

    def describe(self) -> str:
        return self.label or "memory://"

    def check_root(self) -> None:
        """Nothing to check: a memory root exists as soon as it is named."""

    # -- primitives ---------------------------------------------------------------------------

    def _info(self, key: str, entry: _Entry) -> FileInfo:
        if entry.data is None:
            return FileInfo(key, "directory", 0, entry.mode, None, entry.mtime)
        return FileInfo(key, "file", len(entry.data), entry.mode, f"g{entry.generation}", entry.mtime)

    def stat(self, key: str) -> FileInfo | None:
        if key == "":
            return FileInfo("", "directory", 0, 0o755)
        with self.store.guard:
            entry = self.store.entries.get(key)
            return None if entry is None else self._info(key, entry)

    def _require_parent(self, key: str) -> None:
        parent = parent_of(key)
        if parent == "":
            return
        entry = self.store.entries.get(parent)
        if entry is None:
            raise FileNotFoundError(f"No such directory: {parent}")
        if entry.data is not None:
            raise NotADirectoryError(f"Not a directory: {parent}")

    def read(self, key: str, *, limit: int | None = None) -> tuple[bytes, FileInfo]:
        with self.store.guard:
            entry = self.store.entries.get(key)
            if entry is None:
                for parent in iter_parents(key):
                    p = self.store.entries.get(parent)
                    if p is not None and p.data is not None:
                        raise NotADirectoryError(f"Not a directory: {parent}")
                raise FileNotFoundError(f"No such file: {key}")
            if entry.data is None:
                raise IsADirectoryError(f"Is a directory: {key}")
            if limit is not None and len(entry.data) > limit:
                raise TooBig(key, len(entry.data), limit)
            return entry.data, self._info(key, entry)

    def write(self, item: WriteItem) -> FileInfo:
        key = item.key
        with self.store.guard:
            self._require_parent(key)
            current = self.store.entries.get(key)
            if current is not None and current.data is None:
                raise IsADirectoryError(f"Is a directory: {key}")
            check_precondition(item, None if current is None else self._info(key, current), lambda: False)
            mode = item.mode
            if mode is None:
                mode = current.mode if current is not None else DEFAULT_FILE_MODE
            entry = _Entry(bytes(joined(item.data)), mode, self.store.next_generation(), time.time())
            self.store.put(key, entry)
            return self._info(key, entry)

    def delete(self, item: DeleteItem) -> None:
        key = item.key
        with self.store.guard:
            current = self.store.entries.get(key)
            if current is not None and current.data is None:
                raise IsADirectoryError(f"Is a directory: {key}")
            check_precondition(item, None if current is None else self._info(key, current), lambda: False)
            if current is None:
                raise FileNotFoundError(f"No such file: {key}")
            self.store.remove(key)

    def list(self, key: str) -> list[FileInfo]:
        with self.store.guard:
            if key:
                entry = self.store.entries.get(key)
                if entry is None:
                    raise FileNotFoundError(f"No such directory: {key}")
                if entry.data is not None:
                    raise NotADirectoryError(f"Not a directory: {key}")
            return [self._info(k, self.store.entries[k]) for k in self.store.child_keys(key)]

    def mkdir(self, key: str) -> None:
        with self.store.guard:
            self._require_parent(key)
            if key in self.store.entries:
                raise FileExistsError(f"Exists: {key}")
            self.store.put(key, _Entry(None, 0o755, self.store.next_generation(), time.time()))

    def rmdir(self, key: str) -> None:
        with self.store.guard:
            entry = self.store.entries.get(key)
            if entry is None:
                raise FileNotFoundError(f"No such directory: {key}")
            if entry.data is not None:
                raise NotADirectoryError(f"Not a directory: {key}")
            if self.store.children.get(key):
                raise OSError(39, f"Directory not empty: {key}")
            self.store.remove(key)

    def matches(self, key: str, version: str | None) -> bool:
        info = self.stat(key)
        if version is None:
            return info is None
        return info is not None and info.version == version

    def resolve(self, key: str) -> str:
        return key

    def lock(self, key: str, *, timeout: float) -> AbstractContextManager[None]:
        with self.store.guard:
            lock = self.store.locks.setdefault(key, threading.Lock())
        return _hold(lock, timeout, key)

    def close(self) -> None:
        return None


@contextmanager
def _hold(lock: threading.Lock, timeout: float, key: str) -> Iterator[None]:
    if not lock.acquire(timeout=timeout):
        raise TimeoutError(f"could not acquire the commit lock {key} within {timeout} s")
    try:
        yield
    finally:
        lock.release()
