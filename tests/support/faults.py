"""A fault-injecting backend wrapper: fail the N-th primitive call (a fake, not a mock)."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

from backends.base import Backend

PRIMITIVES = ("stat", "read", "write", "delete", "list", "mkdir", "rmdir", "matches", "resolve", "lock")
# A batch is counted item by item, and a failing item is returned in its slot (the others still
# run), exactly as a real batching backend reports a partial failure.
BATCHES = ("stat_many", "read_many", "write_many", "delete_many", "matches_many")


def eio(name: str, n: int) -> BaseException:
    return OSError(errno.EIO, f"injected I/O error in call {n} ({name})")


class FaultyBackend:
    """Delegates to ``inner``; call number ``fail_at`` (1-based, counting every primitive) raises.

    ``persistent=True`` makes every call from ``fail_at`` on fail (a dead disk or network), which
    is how rollback failure is provoked. ``calls`` records the primitive names in order.
    """

    def __init__(
        self,
        inner: Backend,
        *,
        fail_at: int | None = None,
        persistent: bool = False,
        error: Callable[[str, int], BaseException] = eio,
        only: tuple[str, ...] | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self.fail_at = fail_at
        self.persistent = persistent
        self.error = error
        self.only = only
        self.count = 0
        self.calls: list[str] = []
        self.failed = False

    def _tick(self, name: str) -> None:
        if self.only is not None and name not in self.only:
            return
        self.count += 1
        self.calls.append(name)
        if self.fail_at is None:
            return
        if self.count == self.fail_at or (self.persistent and self.count > self.fail_at):
            self.failed = True
            raise self.error(name, self.count)

    def describe(self) -> str:
        return f"faulty({self.inner.describe()})"

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in BATCHES:
            return self._batch(name)
        if name not in PRIMITIVES:
            return attr

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self._tick(name)
            return attr(*args, **kwargs)

        return wrapped

    def _batch(self, name: str) -> Callable[[Any], list[Any]]:
        single = name.removesuffix("_many")

        def run_one(item: Any, options: dict[str, Any]) -> Any:
            self._tick(single)
            inner = getattr(self.inner, single)
            if single == "matches":
                return inner(*item)
            return inner(item, **options)

        def batch(items: Any, **options: Any) -> list[Any]:
            out: list[Any] = []
            for item in items:
                try:
                    out.append(run_one(item, options))
                except Exception as exc:  # noqa: BLE001 - reported in its slot, as the batch contract says
                    out.append(exc)
            return out

        return batch
