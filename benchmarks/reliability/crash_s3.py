"""Crash campaign on S3 (moto server on 127.0.0.1): the child flips ``s3://bucket/ws`` between the
trees A and B of :mod:`benchmarks.reliability.crash` with multi-file transactions and is SIGKILLed
after a random delay; the parent reopens the workspace (recovery, taking over the dead holder's
lease once it expires: the lease TTL is 1 s here) and checks: the tree is exactly A or B, no
uncommitted journal object is left, a lease object left by the dead holder does not block the
next commit, and the workspace still commits.

Each trial starts a fresh interpreter (s3fs's event-loop thread must not be forked).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from typing import Any

from benchmarks.reliability import Report
from benchmarks.reliability.crash import REPO, TREE_A, _precise_sleep, flip

LEASE_OPTIONS = {"vfs_lease_ttl": 1.0, "vfs_clock_skew": 0.2}


def _open(url: str, options: dict[str, Any]) -> Any:
    import vfs

    return vfs.open_workspace(url, storage_options=options)


def child(url: str, options_json: str) -> None:
    ws = _open(url, json.loads(options_json))
    sys.stdout.write("r\n")
    sys.stdout.flush()
    while True:
        flip(ws)


def _populate(ws: Any) -> None:
    from tests.support.trees import populate

    populate(ws.backend, {rel: None if v is None else v[0] for rel, v in TREE_A.items()})


def _pending(ws: Any) -> list[str]:
    try:
        names = {i.name for i in ws.backend.list(ws.txlog.tx_key)}
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(".journal") and n[: -len(".journal")] + ".done" not in names)


def run(trials: int = 200, *, seed: int = 0, endpoint: Any = None) -> Report:
    import time

    from tests.support import s3_servers
    from tests.support.trees import snapshot_tree

    report = Report("crash-s3-moto")
    rng = random.Random(seed)
    ep = endpoint if endpoint is not None else s3_servers.shared_moto_endpoint()
    options = {**ep.storage_options, **LEASE_OPTIONS}
    bucket = s3_servers.make_bucket(ep, "crash")
    url = f"s3://{bucket}/ws"
    ws = _open(url, options)
    _populate(ws)
    trees = {"A": snapshot_tree(ws)}
    scratch = _open(f"s3://{bucket}/scratch", options)
    _populate(scratch)
    flip(scratch)
    trees["B"] = snapshot_tree(scratch)
    started = time.perf_counter()
    for _ in range(4):
        flip(scratch)
    cycle = (time.perf_counter() - started) / 4
    span = 2 * cycle
    report.notes.append(
        f"one flip on moto takes {cycle * 1000:.1f} ms; kill delays uniform over [0, {span * 1000:.0f} ms]"
    )
    env = {**os.environ, "PYTHONPATH": REPO}
    for trial in range(trials):
        delay = rng.uniform(0, span)
        proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.reliability.crash_s3", "--child", url, json.dumps(options)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        if proc.stdout.readline() != b"r\n":
            proc.kill()
            proc.wait()
            proc.stdout.close()
            report.fail(f"trial {trial}: the child did not start")
            break
        _precise_sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        report.trials += 1
        where = f"trial {trial} (delay {delay * 1000:.1f} ms)"
        if proc.returncode != -signal.SIGKILL:
            report.fail(f"{where}: the child exited with {proc.returncode} before it was killed (a flip failed)")
        raw = snapshot_tree(ws)
        pending = _pending(ws)
        report.count("killed with a pending journal (inside a commit)" if pending else "killed outside a commit")
        if raw not in trees.values():
            report.count("tree mixed in the store before recovery")
        if ws.backend.stat(ws.lock_key) is not None:
            report.count("dead holder's lease left before recovery")
        try:
            healthy = _open(url, options)  # recovers (waits out the dead holder's lease)
        except Exception as exc:  # noqa: BLE001
            report.fail(f"{where}: reopening raised {type(exc).__name__}: {exc}")
            break
        if healthy.last_recovery is not None and healthy.last_recovery.rolled_back:
            report.count("recovery rolled back")
        after = snapshot_tree(healthy)
        state = next((name for name, tree in trees.items() if tree == after), None)
        if state is None:
            report.fail(f"{where}: the tree is neither A nor B after recovery")
            break
        report.count(f"ended in {state}")
        if _pending(healthy):
            report.fail(f"{where}: an uncommitted journal is left after recovery")
        if healthy.backend.stat(healthy.lock_key) is not None:
            # killed after the commit mark, holding the lease: nothing to recover, so the dead
            # holder's lease object stays until the next commit takes it over (it has expired)
            report.count("dead holder's expired lease left (no recovery needed; taken over next)")
            try:
                flip(healthy)
                flip(healthy)  # and back: the next trial starts from the same tree
                report.count("next commit took the dead holder's lease over")
            except Exception as exc:  # noqa: BLE001
                report.fail(f"{where}: a commit after the crash could not take the lease over: {exc}")
        healthy.close()
    final = flip(_open(url, options))
    if snapshot_tree(ws) != trees[final]:
        report.fail("the commit after the campaign did not produce the expected tree")
    return report.finish()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
