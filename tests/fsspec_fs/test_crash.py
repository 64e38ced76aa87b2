"""A commit cut short mid-way, then recovery through the fsspec interface: opening the vfs
filesystem again finishes the interrupted commit, and the tree is all-old or all-new.

Memory cannot outlive its process, so there the "crash" is the store dying mid-commit (every
later write and delete fails, the rollback too: the journal stays); on a local folder and on S3
the committing process is SIGKILLed at a commit step (vfs's test hook ``VFS_TEST_CRASH_AT``).
"""

from __future__ import annotations

import errno
import json
import signal
import subprocess
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import fsspec
import pytest

import backends
import vfs
from backends.base import DeleteItem, FileInfo, WriteItem
from backends.memory import MemoryBackend, forget_store, named_store
from tests.fsspec_fs.conftest import Target
from tests.fsspec_fs.support import PYTHON, subprocess_env

OLD = {"a.txt": b"old a", "c.txt": b"old c"}
NEW = {"a.txt": b"new a", "b.txt": b"new b"}


class DyingMemory(MemoryBackend):
    """vfs's memory store that dies once ``survive`` files of a commit have landed: from then on
    every write and delete fails, as if the process holding the store had gone (a fake)."""

    name: ClassVar[str] = "memory"
    survive: ClassVar[int] = 1
    landed: ClassVar[int] = 0

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> DyingMemory:
        store = url.partition("://")[2].strip("/")
        return cls(named_store(store), label=f"dyingmem://{store}")

    def _dead(self, key: str) -> bool:
        return not key.startswith(".vfs") and DyingMemory.landed >= DyingMemory.survive

    def write(self, item: WriteItem) -> FileInfo:
        if self._dead(item.key):
            raise OSError(errno.EIO, "the store is gone", item.key)
        info = super().write(item)
        if not item.key.startswith(".vfs"):
            DyingMemory.landed += 1
        return info

    def delete(self, item: DeleteItem) -> None:
        if self._dead(item.key):
            raise OSError(errno.EIO, "the store is gone", item.key)
        super().delete(item)


def _change(fs: Any, root: str) -> None:
    """The interrupted commit: modify a, add b, delete c, in one transaction."""
    with fs.transaction:
        fs.pipe(f"{root}/a.txt", b"new a")
        fs.pipe(f"{root}/b.txt", b"new b")
        fs.rm(f"{root}/c.txt")


def _tree(fs: Any, root: str) -> dict[str, bytes]:
    return {p[len(root) + 1 :]: fs.cat(p) for p in fs.find(root)}


def test_a_store_dying_mid_commit_is_rolled_back_when_the_filesystem_is_opened_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        backends.REGISTRY, "dyingmem", backends.BackendEntry("dyingmem", f"{__name__}:DyingMemory", ("dyingmem",))
    )
    store = "fsspecfs-dying"
    forget_store(store)
    fsspec.filesystem("vfs", target=f"memory://{store}").pipe({f"/{store}/{k}": v for k, v in OLD.items()})
    monkeypatch.setattr(DyingMemory, "landed", 0)
    dying = fsspec.filesystem("vfs", target=f"dyingmem://{store}")
    with pytest.raises(vfs.RollbackFailed):
        _change(dying, store)
    assert DyingMemory.landed == 1  # one file of the commit had landed: the tree was mixed
    again = fsspec.filesystem("vfs", target=f"memory://{store}", skip_instance_cache=True)
    assert again.workspace.last_recovery is not None and again.workspace.last_recovery.rolled_back
    assert _tree(again, f"/{store}") == OLD
    forget_store(store)


CHILD = textwrap.dedent(
    """
    import json, sys, fsspec
    fs = fsspec.filesystem("vfs", target=sys.argv[1], target_options=json.loads(sys.argv[2]))
    with fs.transaction:
        fs.pipe(f"{sys.argv[3]}/a.txt", b"new a")
        fs.pipe(f"{sys.argv[3]}/b.txt", b"new b")
        fs.rm(f"{sys.argv[3]}/c.txt")
    print("committed")
    """
)


@pytest.mark.parametrize("step", ["journaled", "applied-writes", "before-mark"])
# S3: a SIGKILLed process on moto, ~3 s a case (the full suite); local disk in the fast tier
@pytest.mark.parametrize(
    "target", ["local", pytest.param("s3", marks=[pytest.mark.s3, pytest.mark.slow])], indirect=True
)
def test_a_process_killed_mid_commit_is_rolled_back_when_the_filesystem_is_opened_again(
    target: Target, step: str, tmp_path: Path
) -> None:
    # a lease left by the killed process expires quickly on S3 (ignored elsewhere)
    options = {**target.options, "vfs_lease_ttl": 1.0, "vfs_clock_skew": 0.2} if target.name == "s3" else {}
    target.make_fs(target_options=options).pipe({f"{target.path}/{k}": v for k, v in OLD.items()})
    env = subprocess_env(tmp_path / "meta", VFS_TEST_CRASH_AT=step)
    done = subprocess.run(
        [PYTHON, "-c", CHILD, target.url, json.dumps(options), target.path],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "committed" not in done.stdout
    again = fsspec.filesystem("vfs", target=target.url, target_options=options, skip_instance_cache=True)
    report = again.workspace.last_recovery
    assert report is not None
    # Where the lock can expire (S3) the journal holds the new bytes too, and whoever recovers
    # finishes the commit; elsewhere it is rolled back. Never a mix.
    if again.workspace.capabilities.lock_can_expire:
        assert report.rolled_forward and _tree(again, target.path) == NEW
    else:
        assert report.rolled_back and _tree(again, target.path) == OLD
    assert again.workspace.pending() == []
