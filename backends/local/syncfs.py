"""Flushing many files at once: ``syncfs(2)`` on the filesystems that hold them.

On ext4 (and most journaling filesystems) each ``fsync`` of a new file commits the journal on its
own: a commit of 2,000 files cost 2,000 journal commits, each a cache flush of the disk. One
``syncfs`` writes every dirty page and inode of the filesystem and flushes once. Used only where
it says when that failed (Linux >= 5.8 reports writeback errors from ``syncfs``; before, it
returned 0 regardless) and only for batches large enough to pay for flushing whatever else is
dirty on the filesystem.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence

from backends.local import libc

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")


#: Durable writes in one batch from which the files are flushed with syncfs.
BATCH_MIN = 16
#: Directories of one batch from which their entries are flushed with syncfs.
DIRECTORIES_MIN = 4


@functools.lru_cache(maxsize=1)
def _syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    except ValueError:
        return None
    return libc.function("syncfs") if (major, minor) >= (5, 8) else None


def available() -> bool:
    return _syncfs() is not None


def sync_all(fds: Iterable[int]) -> None:
    """``syncfs`` once per filesystem among the files open as ``fds``; ``OSError`` if one fails."""
    call = _syncfs()
    assert call is not None
    by_device: dict[int, int] = {}
    for fd in fds:
        by_device.setdefault(os.fstat(fd).st_dev, fd)
    for fd in by_device.values():
        if call(fd) != 0:
            code = libc.last_errno()
            raise OSError(code, f"syncfs: {os.strerror(code)}")


def _open_budget() -> int:
    """How many staged files a chunk may hold open (two descriptors each: the temp file and the
    file it replaces), well under the process's limit."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):
        soft = 1024
    if soft == getattr(resource, "RLIM_INFINITY", -1):
        soft = 1 << 16
    return max(16, min(1024, (soft - 256) // 2))


def chunks(items: Sequence[T], folder_of: Callable[[T], str], max_directories: int) -> Iterator[Sequence[T]]:
    """``items`` in order, cut so that each chunk holds at most the open budget and touches at
    most ``max_directories`` folders (the batch's directory handles must stay open until the
    chunk is in place)."""
    budget = _open_budget()
    start, parents = 0, set[str]()
    for index, item in enumerate(items):
        parent = folder_of(item)
        if index - start >= budget or (parent not in parents and len(parents) >= max_directories):
            yield items[start:index]
            start, parents = index, set()
        parents.add(parent)
    if start < len(items):
        yield items[start:]
