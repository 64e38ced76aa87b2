"""What a version of a local file is: the stat tuple, plus a content hash for "racy" files.

A version is ``dev:ino:size:mtime_ns:ctime_ns`` from ``lstat``/``fstat``, followed by
``#<content digest>`` when the file was modified within ``RACY_WINDOW_NS`` of the moment it was
looked at: its mtime cannot prove it was not changed again within the same timestamp tick (git's
rule). Where ctime is not trustworthy (``trust_ctime=False``: a filesystem on which opening a file
moves its ctime), the ctime field is 0 and the hash of racy files still catches same-tick rewrites.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from backends.base import content_digest, has_digest
from backends.values import value

#: A file modified less than this long before it was read gets its content hashed into its version.
RACY_WINDOW_NS = 2_000_000_000


@value(frozen=True)
class Versions:
    """The version rule of one backend (whether its filesystem's ctime can be trusted)."""

    trust_ctime: bool = True

    def stat_part(self, st: os.stat_result) -> str:
        ctime = st.st_ctime_ns if self.trust_ctime else 0
        return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{ctime}"

    def is_racy(self, st: os.stat_result, now_ns: int) -> bool:
        window = now_ns - RACY_WINDOW_NS
        return st.st_mtime_ns >= window or st.st_ctime_ns >= window

    def of(
        self, st: os.stat_result, content: Callable[[], bytes], digest: str | None = None, *, part: str | None = None
    ) -> str:
        """The version of the file ``st`` describes; ``content`` is called only for a racy one
        whose ``digest`` the caller does not have (``part``: ``stat_part(st)``, if the caller has it)."""
        part = part if part is not None else self.stat_part(st)
        if not self.is_racy(st, time.time_ns()):
            return part
        return f"{part}#{digest if digest is not None else content_digest(content())}"

    def matches(self, st: os.stat_result, version: str, content: Callable[[], bytes]) -> bool:
        """Whether the file ``st`` describes still holds ``version`` (``content`` read only when
        the version carries a hash)."""
        stat_part, _, digest = version.partition("#")
        if stat_part != self.stat_part(st):
            return False
        return not digest or has_digest(content(), digest)

    @staticmethod
    def matches_renamed(st: os.stat_result, version: str, content: Callable[[], bytes]) -> bool:
        """``matches`` for a file that was renamed since (rename moves ctime, so ctime cannot
        count). Still sound: any write after ``version`` was taken moved the mtime to a later
        tick, unless it happened within the same tick, and then the version is racy and carries a
        hash, which is compared."""
        stat_part, _, digest = version.partition("#")
        fields = stat_part.split(":")
        if len(fields) != 5:
            return False
        mine = [str(st.st_dev), str(st.st_ino), str(st.st_size), str(st.st_mtime_ns)]
        if fields[:4] != mine:
            return False
        return not digest or has_digest(content(), digest)
