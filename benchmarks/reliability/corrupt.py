"""Corrupt-metadata campaign: truncate or flip the records under ``.vfs/tx`` (an interrupted
commit's journal, and the journals and decisions of multi-file and single-file history, and on
local disk the replaced file a single-file commit keeps as its pre-image), then reopen, recover,
log, undo and commit.

Checked on every trial:

* no exception but a coded ``VfsError`` reaches the caller (no traceback);
* no wrong bytes: the tree is always one the transactions really produced (before any of them,
  after each, or mid-commit while the interrupted one is unresolved), never one built from a
  damaged pre-image;
* nothing outside the root: every key the store holds is a workspace key or metadata.
"""

from __future__ import annotations

import random
import tempfile
from typing import Any

import vfs
from backends.base import DeleteItem, WriteItem
from backends.local import LocalBackend
from backends.memory import MemoryBackend, MemoryStore
from benchmarks.reliability import Report
from tests.support.trees import snapshot_tree
from vfs.paths import PathMapper

#: b.txt starts over 64 KiB: on local disk its single-file commit keeps the replaced file as its
#: history's pre-image (``.pre``), a record of its own that the campaign damages too
T0 = {"a.txt": b"A1\n", "b.txt": b"B1\n" * 24_000, "sub/c.txt": b"C1\n"}
T1 = {**T0, "a.txt": b"A2\n", "d.txt": b"D\n"}  # multi-file commit
T2 = {**T1, "b.txt": b"B2\n"}  # single-file commit
T3 = {**T2, "a.txt": b"A3\n", "sub/c.txt": b"C3\n"}  # interrupted (its decision never landed)
STATES = [T0, T1, T2, T3]


def _prepare(backend: Any) -> list[str]:
    """The four states on ``backend``; the record files, with the interrupted journal first."""
    ws = vfs.Workspace(backend)
    m = ws.mount
    with ws.transaction(label="seed") as tx:
        for name, data in T0.items():
            tx.write(f"{m}/{name}", data)
    ws.txlog.forget(*[e.txid for e in ws.log()])
    with ws.transaction(label="t1") as tx:
        tx.write(f"{m}/a.txt", T1["a.txt"])
        tx.create(f"{m}/d.txt", T1["d.txt"])
    ws.write_bytes(f"{m}/b.txt", T2["b.txt"])
    with ws.transaction(label="t3") as tx:
        tx.write(f"{m}/a.txt", T3["a.txt"])
        tx.write(f"{m}/sub/c.txt", T3["sub/c.txt"])
    assert tx.result is not None and tx.result.txid is not None
    backend.delete(DeleteItem(f".vfs/tx/{tx.result.txid}.done"))
    names = sorted(i.name for i in backend.list(".vfs/tx"))
    return [f".vfs/tx/{n}" for n in sorted(names, key=lambda n: n != f"{tx.result.txid}.journal")]


def _mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    offset = rng.randrange(len(data))
    if rng.random() < 0.5:
        return "truncated", data[:offset]
    return "flipped", data[:offset] + bytes([data[offset] ^ rng.randint(1, 255)]) + data[offset + 1 :]


def _exercise(ws: vfs.Workspace, report: Report) -> None:
    m = ws.mount
    steps = [
        ("recover", lambda: ws.recover()),
        ("log", lambda: ws.log()),
        ("undo", lambda: ws.undo()),
        ("undo", lambda: ws.undo()),
        ("read", lambda: ws.read(f"{m}/a.txt")),
        ("commit", lambda: ws.write_bytes(f"{m}/e.txt", b"E\n")),
    ]
    for name, step in steps:
        try:
            step()
            report.count(f"{name} ok")
        except vfs.VfsError as exc:
            report.count(f"{name} {exc.code}")


def _check(backend: Any, mapper: PathMapper, report: Report, where: str) -> None:
    ws = vfs.Workspace(backend, recover_on_open=False)  # looks, changes nothing
    keys = _all_keys(backend, "")
    bad = [k for k in keys if not (k.startswith(".vfs/") or k == ".vfs" or mapper.key_ok(k))]
    if bad:
        report.fail(f"{where}: keys outside the workspace: {bad}")
    tree = {k: v for k, v in snapshot_tree(ws).items() if k != "e.txt" and v is not None}
    if tree not in STATES:
        report.fail(f"{where}: a tree no transaction produced: {tree}")


def _all_keys(backend: Any, key: str) -> list[str]:
    out = []
    for info in backend.list(key):
        out.append(info.key)
        if info.kind == "directory":
            out.extend(_all_keys(backend, info.key))
    return out


def _backend(kind: str, workdir: str) -> Any:
    if kind == "memory":
        return MemoryBackend(MemoryStore())
    return LocalBackend(tempfile.mkdtemp(dir=workdir))


def run(trials: int = 10_000, *, seed: int = 0, kinds: tuple[str, ...] = ("memory", "local")) -> Report:
    report = Report("corrupt")
    rng = random.Random(seed)
    mapper = PathMapper("/workspace", "workspace-write")
    with tempfile.TemporaryDirectory() as workdir:
        for trial in range(trials):
            kind = kinds[trial % len(kinds)]
            backend = _backend(kind, workdir)
            records = _prepare(backend)
            target = records[0] if rng.random() < 0.4 else rng.choice(records)
            data, _ = backend.read(target)
            how, bad = _mutate(rng, data)
            backend.write(WriteItem(target, bad))
            report.count(f"{how} {'interrupted journal' if target == records[0] else target.rsplit('.', 1)[-1]}")
            where = f"trial {trial} ({kind}, {how} {target})"
            try:
                _exercise(vfs.Workspace(backend), report)
            except Exception as exc:  # noqa: BLE001 - the promise under test: none escapes
                report.fail(f"{where}: uncaught {type(exc).__name__}: {exc}")
            _check(backend, mapper, report, where)
            report.trials += 1
    return report.finish()
