"""Transaction cost on local disk: a durable vfs commit vs bare durable atomic writes.

The baseline is the least a durable replace of a file can cost: a temp file in the same directory,
``write``, ``fsync``, ``os.replace``, ``fsync`` of the directory (no journal, no version checks,
no history, no lock). Ours is ``with workspace.transaction() as tx: tx.write(...)``.

- 1 file: ``inner`` successive commits (each a new content of the same 4 KB file) per measured
  run, reported per commit;
- N files (default 100, spread over 4 directories): one transaction writing all of them vs N bare
  durable writes.

The workspace's history is full from the start (steady state: each commit also prunes one record).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from benchmarks import inputs
from benchmarks.context import Context, check_files, restore
from benchmarks.core import Series, Target, Workload, timed

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"files": 100, "file_bytes": 4096, "inner": 20, "dirs": 4},
    "quick": {"files": 100, "file_bytes": 4096, "inner": 10, "dirs": 4},
    "tiny": {"files": 4, "file_bytes": 256, "inner": 2, "dirs": 2},
}


def durable_write(path: str, data: bytes) -> None:
    """The bare durable atomic write: temp + fsync + replace + directory fsync."""
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.bench-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _content(size: int, seed: int) -> bytes:
    data = inputs.source(size=size, seed=seed).data
    return data[:size].rsplit(b"\n", 1)[0] + b"\n"


def _history_limit(workspace: Any) -> int:
    history = getattr(workspace, "_history", None)
    return int(getattr(history, "limit", 50))


def build(ctx: Context) -> Workload:
    p = ctx.params("transaction", DEFAULTS)
    root = ctx.workdir("transaction")
    n, size, inner = p["files"], p["file_bytes"], p["inner"]
    paths = [root / f"dir{i % p['dirs']}" / f"file_{i:03d}.py" for i in range(n)]
    originals = {path: _content(size, seed=i) for i, path in enumerate(paths)}
    new = {path: data.replace(b"value", b"VALUE", 1) + b"# edited\n" for path, data in originals.items()}
    single = paths[0]
    single_versions = [originals[single] + f"# commit {k}\n".encode() for k in range(inner)]
    single_expected = {single: single_versions[-1]}
    many_expected = new

    import vfs

    workspace = vfs.open_workspace(str(root))
    restore(originals)
    # Steady state: the history is full, so every measured commit also prunes the oldest record
    # (as in a long agent session); it is not emptied between runs.
    for k in range(_history_limit(workspace) + 1):
        with workspace.transaction(label="fill history") as tx:
            tx.write(str(paths[-1]), originals[paths[-1]] + f"# fill {k}\n".encode())

    def prepare() -> None:
        restore(originals)

    def ours_single() -> float:
        path = str(single)

        def commits() -> None:
            for data in single_versions:
                with workspace.transaction(label="bench") as tx:
                    tx.write(path, data)

        return timed(commits) / inner

    def bare_single() -> float:
        path = str(single)

        def writes() -> None:
            for data in single_versions:
                durable_write(path, data)

        return timed(writes) / inner

    def ours_many() -> float:
        items = [(str(path), data) for path, data in new.items()]

        def commit() -> None:
            with workspace.transaction(label="bench") as tx:
                for path, data in items:
                    tx.write(path, data)

        return timed(commit)

    def bare_many() -> float:
        items = [(str(path), data) for path, data in new.items()]

        def writes() -> None:
            for path, data in items:
                durable_write(path, data)

        return timed(writes)

    def verify(expected: dict[Path, bytes], who: str) -> Any:
        return lambda: check_files(expected, who)

    series = [
        Series("ours.1", "vfs commit, 1 file (durable)", "ours", ours_single, prepare,
               verify(single_expected, "ours.1")),
        Series("bare.1", "bare durable atomic write, 1 file", "baseline", bare_single, prepare,
               verify(single_expected, "bare.1")),
        Series(f"ours.{n}", f"vfs commit, {n} files in one transaction", "ours", ours_many, prepare,
               verify(many_expected, f"ours.{n}")),
        Series(f"bare.{n}", f"{n} bare durable atomic writes", "baseline", bare_many, prepare,
               verify(many_expected, f"bare.{n}")),
    ]  # fmt: skip
    targets = [
        Target(
            "durable 1-file commit <= 2.5x a bare durable write",
            "ours.1",
            2.5,
            denominator="bare.1",
            note=(
                "per steady-state commit (counted with benchmarks.profile.IOCounter): 2 fsyncs, like the "
                "baseline (pruning the history deletes a batch of records with one directory fsync every ~12 "
                "commits), 3 renames (the target, then its two unflushed history records), ~13 opens, ~30 stat "
                "calls, one content hash of the new bytes plus the racy target's version. The lock is flock(2) "
                "on an fd (filelock cost ~1 ms per acquire). Without fsync a commit costs ~2.1 ms against ~0.5 "
                "ms for the bare write: on this disk the ratio swings with fsync latency (1.7x - 5x between "
                "repetitions; ~1.6x in a quiet separate run). To close: one directory handle for both history "
                "records, and fewer stats per commit."
            ),
        ),
        Target(
            f"{n}-file commit <= 1.5x {n} bare durable writes",
            f"ours.{n}",
            1.5,
            denominator=f"bare.{n}",
            note=(
                "100 files: 108 fsyncs against the baseline's 200: every file is flushed before its rename, "
                "then one directory fsync per directory (4) after the batch, plus the journal and the mark (the "
                "files of a commit are applied as one batch on local disk). Blind writes read each target once "
                "under the lock (the pre-image read is also its version check)."
            ),
        ),
    ]
    return Workload(
        "transaction",
        f"transaction cost: durable commit vs bare durable atomic writes ({size:,}-byte files)",
        p,
        series,
        targets,
        teardown=workspace.close,
        repeat=1 if ctx.profile == "tiny" else 3,
    )
