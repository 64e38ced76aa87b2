"""Fault campaign: random transactions on random trees, one backend call failing at a random index
with a random kind of error (disk full, permission denied, EIO, timeout), sometimes for good (a
dead disk: every later call fails too).

Checked on every trial:

* the commit raised  -> the tree is exactly the old one (after a ``FS_ROLLBACK_FAILED``, once a
  healthy client reopens the workspace, which recovers);
* the commit returned -> the tree is exactly the new one (a fault after the commit point, in
  best-effort history bookkeeping, must not undo or half-undo a landed change);
* the error's code and text name the cause (``no space left``, ``Permission denied``, the EIO
  text, ``Timed out``), and a rolled-back commit says so;
* no uncommitted journal is left once the workspace is healthy again.
"""

from __future__ import annotations

import errno
import os
import random
import tempfile
from collections.abc import Callable
from typing import Any

import vfs
from backends.local import LocalBackend
from backends.memory import MemoryBackend, MemoryStore
from benchmarks.reliability import Report
from tests.support.faults import FaultyBackend
from tests.support.trees import populate, snapshot_tree

#: kind -> (error factory, expected code, words the message must contain)
KINDS: dict[str, tuple[Callable[[str, int], BaseException], str, str]] = {
    "ENOSPC": (lambda n, i: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "FS_IO_ERROR", "no space left"),
    "EACCES": (
        lambda n, i: PermissionError(errno.EACCES, os.strerror(errno.EACCES)),
        "FS_PERMISSION_DENIED",
        "ermission denied",
    ),
    "EIO": (lambda n, i: OSError(errno.EIO, os.strerror(errno.EIO)), "FS_IO_ERROR", os.strerror(errno.EIO)),
    "timeout": (lambda n, i: TimeoutError("the store did not answer within 30 s"), "FS_IO_ERROR", "Timed out"),
}

WORDS = ["alpha", "beta", "gamma", "delta", "eps"]


def random_tree(rng: random.Random) -> dict[str, bytes | None]:
    tree: dict[str, bytes | None] = {}
    for _ in range(rng.randint(2, 7)):
        depth = rng.randint(0, 2)
        parts = [rng.choice(WORDS) for _ in range(depth)] + [f"{rng.choice(WORDS)}{rng.randint(0, 9)}.txt"]
        path = "/".join(parts)
        if any(p in tree and tree[p] is not None for p in ("/".join(parts[:i]) for i in range(1, len(parts)))):
            continue  # a file already sits where a directory would go
        if any(k.startswith(path + "/") for k in tree):
            continue
        tree[path] = rng.randbytes(rng.randint(0, 40)) if rng.random() < 0.2 else f"{path}\r\n{rng.random()}\n".encode()
    return tree


def random_change(rng: random.Random, tree: dict[str, bytes | None]) -> Callable[[vfs.Transaction, str], None]:
    """A replayable multi-operation change (adds in new dirs, updates, deletes, moves, mkdir)."""
    files = sorted(k for k, v in tree.items() if v is not None)
    plan: list[tuple[str, ...]] = []
    used: set[str] = set()
    for _ in range(rng.randint(1, 5)):
        op = rng.choice(["add", "update", "delete", "move", "mkdir"])
        free = [f for f in files if f not in used]
        if op == "add":
            plan.append(("write", f"new{rng.randint(0, 99)}/{rng.choice(WORDS)}/n{rng.randint(0, 9)}.txt", "added"))
        elif op == "update" and free:
            f = rng.choice(free)
            used.add(f)
            plan.append(("write", f, f"updated {rng.random()}"))
        elif op == "delete" and free:
            f = rng.choice(free)
            used.add(f)
            plan.append(("delete", f))
        elif op == "move" and free:
            f = rng.choice(free)
            used.add(f)
            plan.append(("move", f, f"moved{rng.randint(0, 99)}/{f.rsplit('/', 1)[-1]}"))
        elif op == "mkdir":
            plan.append(("mkdir", f"made{rng.randint(0, 99)}/sub"))

    def change(tx: vfs.Transaction, m: str) -> None:
        for step in plan:
            try:
                if step[0] == "write":
                    tx.write(f"{m}/{step[1]}", step[2].encode())
                elif step[0] == "delete":
                    tx.delete(f"{m}/{step[1]}")
                elif step[0] == "move":
                    tx.move(f"{m}/{step[1]}", f"{m}/{step[2]}")
                else:
                    tx.mkdir(f"{m}/{step[1]}")
            except (vfs.Exists, vfs.NotFound, vfs.NotADirectory, vfs.IsADirectory):
                continue  # a random plan may collide with itself: skip that step in every replay

    return change


class _Flavour:
    def __init__(self, name: str, tmp: str) -> None:
        self.name = name
        self.tmp = tmp
        self.counter = 0

    def fresh(self, tree: dict[str, bytes | None]) -> tuple[Any, str]:
        self.counter += 1
        if self.name == "local":
            root = os.path.join(self.tmp, f"ws{self.counter}")
            os.makedirs(root)
            backend: Any = LocalBackend(root, fsync=False)
            mount = backend.root
        else:
            backend = MemoryBackend(MemoryStore(), label=f"memory://f{self.counter}")
            mount = "/workspace"
        populate(backend, tree)
        return backend, mount


def _pending(ws: vfs.Workspace) -> bool:
    return ws.pending()


def run(trials: int = 20_000, *, seed: int = 0, flavours: tuple[str, ...] = ("local", "memory")) -> Report:
    report = Report("faults")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        makers = {name: _Flavour(name, tmp) for name in flavours}
        for trial in range(trials):
            flavour = makers[flavours[trial % len(flavours)]]
            tree = random_tree(rng)
            change = random_change(rng, tree)
            # probe: how many calls the commit makes, and the new tree
            backend, mount = flavour.fresh(tree)
            probe = FaultyBackend(backend)
            ws = vfs.Workspace(probe, mount=mount)
            tx = ws.transaction()
            change(tx, mount)
            start = probe.count
            tx.commit()
            total = probe.count - start
            new_tree = snapshot_tree(vfs.Workspace(backend, mount=mount), modes=True)
            if total == 0:
                report.count("empty change (no call to fail)")
                continue
            kind = rng.choice(sorted(KINDS))
            factory, code, words = KINDS[kind]
            persistent = rng.random() < 0.2
            index = rng.randint(1, total)
            backend, mount = flavour.fresh(tree)
            old_tree = snapshot_tree(vfs.Workspace(backend, mount=mount), modes=True)
            faulty = FaultyBackend(backend, error=factory, persistent=persistent)
            ws = vfs.Workspace(faulty, mount=mount)
            tx = ws.transaction()
            change(tx, mount)
            faulty.fail_at = faulty.count + index
            report.trials += 1
            where = (
                f"trial {trial} ({flavour.name}, {kind}{' persistent' if persistent else ''} at call {index}/{total})"
            )
            try:
                tx.commit()
                raised: vfs.VfsError | None = None
            except vfs.VfsError as exc:
                raised = exc
            except Exception as exc:  # noqa: BLE001 - a foreign exception is a finding
                report.fail(f"{where}: uncaught {type(exc).__name__}: {exc}")
                continue
            failed_call = faulty.calls[faulty.fail_at - 1] if faulty.failed else None
            healthy = vfs.Workspace(backend, mount=mount)  # a healthy client: recovers on open
            after = snapshot_tree(healthy, modes=True)
            if raised is None:
                report.count("fault absorbed, commit landed")
                if after != new_tree:
                    report.fail(f"{where}: the commit returned but the tree is not the new one")
            else:
                report.count(f"raised {raised.code}")
                if after != old_tree:
                    report.fail(f"{where}: {raised.code} raised but the old tree did not survive ({failed_call})")
                expected = {code, "FS_ROLLBACK_FAILED"}
                if raised.code not in expected:
                    report.fail(f"{where}: code {raised.code}, expected {code}: {raised.message}")
                elif words.lower() not in raised.message.lower():
                    report.fail(f"{where}: the message does not name the cause ({words!r}): {raised.message}")
                if raised.code == "FS_ROLLBACK_FAILED":
                    report.count("rollback failed, recovered on reopen")
                elif "rolled back" in raised.message:
                    report.count("said it was rolled back")
            if _pending(healthy):
                report.fail(f"{where}: an uncommitted journal is left after recovery")
            report.count(f"failed call: {failed_call}")
    return report.finish()
