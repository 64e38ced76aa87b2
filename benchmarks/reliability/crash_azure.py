"""Crash campaign on Azure Blob Storage (Azurite on 127.0.0.1): the S3 crash campaign
(:mod:`benchmarks.reliability.crash_s3`) on ``az://container/ws``. The child flips the tree between
A and B with multi-file transactions and is SIGKILLed after a random delay; the parent reopens
(recovery, taking over the dead holder's lease once it expires: 1 s here) and checks: exactly A or
B, no uncommitted journal left, the dead holder's lease never blocks the next commit.

``python -m benchmarks.reliability crash-azure [--trials N]`` starts its own Azurite.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from typing import Any

from benchmarks.reliability import Report
from benchmarks.reliability.crash import REPO, _precise_sleep, flip
from benchmarks.reliability.crash_s3 import LEASE_OPTIONS, _open, _pending, _populate


def _kill_one(url: str, options: dict[str, Any], delay: float) -> int | None:
    """Start a flipping child, SIGKILL it after ``delay``; its exit status (None: never started)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.reliability.crash_s3", "--child", url, json.dumps(options)],
        env={**os.environ, "PYTHONPATH": REPO},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    started = proc.stdout.readline() == b"r\n"
    if started:
        _precise_sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    return proc.returncode if started else None


def _check_after(report: Report, where: str, ws: Any, url: str, options: dict[str, Any], trees: dict[str, Any]) -> bool:
    """Reopen (recovery), then the promises; False when the campaign must stop."""
    from tests.support.trees import snapshot_tree

    report.count("killed with a pending journal (inside a commit)" if _pending(ws) else "killed outside a commit")
    if snapshot_tree(ws) not in trees.values():
        report.count("tree mixed in the store before recovery")
    try:
        healthy = _open(url, options)  # recovers (waits out the dead holder's lease)
    except Exception as exc:  # noqa: BLE001 - a finding, reported
        report.fail(f"{where}: reopening raised {type(exc).__name__}: {exc}")
        return False
    state = next((name for name, tree in trees.items() if tree == snapshot_tree(healthy)), None)
    if state is None:
        report.fail(f"{where}: the tree is neither A nor B after recovery")
        return False
    report.count(f"ended in {state}")
    if _pending(healthy):
        report.fail(f"{where}: an uncommitted journal is left after recovery")
    if healthy.backend.stat(healthy.lock_key) is not None:
        report.count("dead holder's expired lease left (no recovery needed; taken over next)")
        try:
            flip(healthy)
            flip(healthy)
            report.count("next commit took the dead holder's lease over")
        except Exception as exc:  # noqa: BLE001 - a finding, reported
            report.fail(f"{where}: a commit after the crash could not take the lease over: {exc}")
    healthy.close()
    return True


def run(trials: int = 200, *, seed: int = 0, endpoint: Any = None) -> Report:
    import time

    from tests.support import azurite
    from tests.support.trees import snapshot_tree

    report = Report("crash-azure-azurite")
    rng = random.Random(seed)
    with contextlib.ExitStack() as stack:
        ep = endpoint if endpoint is not None else stack.enter_context(azurite.azurite_endpoint())
        options = {**ep.storage_options, **LEASE_OPTIONS}
        container = azurite.make_container(ep, "crash")
        url = f"az://{container}/ws"
        ws = _open(url, options)
        _populate(ws)
        trees = {"A": snapshot_tree(ws)}
        scratch = _open(f"az://{container}/scratch", options)
        _populate(scratch)
        flip(scratch)
        trees["B"] = snapshot_tree(scratch)
        started = time.perf_counter()
        for _ in range(4):
            flip(scratch)
        span = 2 * (time.perf_counter() - started) / 4
        report.notes.append(
            f"one flip on Azurite takes {span * 500:.1f} ms; kill delays uniform over [0, {span * 1000:.0f} ms]"
        )
        for trial in range(trials):
            delay = rng.uniform(0, span)
            where = f"trial {trial} (delay {delay * 1000:.1f} ms)"
            code = _kill_one(url, options, delay)
            if code is None:
                report.fail(f"trial {trial}: the child did not start")
                break
            report.trials += 1
            if code != -signal.SIGKILL:
                report.fail(f"{where}: the child exited with {code} before it was killed (a flip failed)")
            if not _check_after(report, where, ws, url, options, trees):
                break
        final = flip(_open(url, options))
        if snapshot_tree(ws) != trees[final]:
            report.fail("the commit after the campaign did not produce the expected tree")
    return report.finish()
