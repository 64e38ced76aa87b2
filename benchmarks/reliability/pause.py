"""Pause campaign on a store whose commit lock is a lease (S3 on moto or SeaweedFS, Azure on
Azurite, each on 127.0.0.1): a committer that stalls inside its commit, loses its lease, and wakes
up after another client has committed.

Each trial, on a fresh prefix holding the tree A of :mod:`benchmarks.reliability.crash`:

1. the *committer* (a fresh interpreter) runs one multi-file transaction A -> B (writes, a move, a
   delete, new folders) and is SIGSTOPped at a random instant after it took the commit lock
   (within the time an unpaused commit holds it), with a short lease TTL
   (``vfs_lease_ttl``, 1 s here), so its lease renewal thread stops with it;
2. once its lease has expired, a *second client* opens the workspace (its recovery takes the lease
   over and settles a pending journal) and commits the opposite flip of what it then sees;
3. the committer is SIGCONTed and reports how its transaction ended (committed, or the error
   code);
4. a fresh client opens the workspace (recovery again) and the checks run.

Violations, each counted under its own name (``report.counts``) and listed in
``report.failures``:

``files lost``
    a file both trees hold is missing, or the moved file is at neither end of the move;
``mixed tree``
    what a client sees after recovery is neither A nor B (a transaction half applied);
``second client's commit undone``
    the final tree is not the one the second client committed (the paused committer's late writes
    landed over it: there is no legitimate later commit, as the committer's conditions were taken
    on A and the second client always moves the tree away from what it found); a second client
    that could not commit is one only if the final tree is not the one it found (its own error is
    a true report when nothing of its commit shows: under load its 1 s lease can run out, and it
    is counted as ``second client refused, nothing of it visible``);
``untrue report``
    the committer said "committed" but the second client did not find its transaction applied, or
    said it failed while its transaction was applied (by itself or by a recovery rolling it
    forward); a hung committer counts here too.

``run_seaweedfs`` runs it on a real SeaweedFS server, which refuses a request that arrives after
the expiry it was signed with: the store-side fence (``backends.s3.fence``) that closes the one
window a client-side check leaves (a pause between the check and the send). moto does not enforce
that expiry by itself; the test suite's moto server adds S3's check (``tests.support.s3_servers``),
so both runs have the fence. Without it (moto as shipped) that window stays open: the ABA case,
counted as a mixed tree (8 of 300 trials when last measured).

``run_azurite`` runs it on Azurite, which refuses a SAS that has expired: the Azure backend's
fence (``backends.azure.fence``), whose account key the campaign's connection string carries.

Each trial starts a fresh interpreter (s3fs's event-loop thread must not be forked).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.reliability import Report
from benchmarks.reliability.crash import REPO, TREE_A, TREE_B, _precise_sleep, flip
from benchmarks.reliability.crash_s3 import _pending

LEASE_TTL = 1.0
CLOCK_SKEW = 0.2
LEASE_OPTIONS = {"vfs_lease_ttl": LEASE_TTL, "vfs_clock_skew": CLOCK_SKEW}
#: How long the committer stays stopped: past its lease's expiry by the waiters' rules (a lease
#: unchanged for a whole TTL, or past its expiry plus the skew, each plus the store's resolution:
#: ``backends.s3.fence``), with room for the takeover.
PAUSE = 2 * LEASE_TTL + CLOCK_SKEW + 1.0
#: How long a resumed committer may take to report before it counts as hung.
REPORT_TIMEOUT = 60.0

VIOLATIONS = ("files lost", "mixed tree", "second client's commit undone", "untrue report")

#: Paths both trees hold (a transaction may rewrite them, never remove them).
KEPT = sorted(set(TREE_A) & set(TREE_B))
MOVED = ("mv/src.sh", "mv/dst.sh")


def _open(url: str, options: dict[str, Any]) -> Any:
    import vfs

    return vfs.open_workspace(url, storage_options=options)


# -- the committer (child process) ------------------------------------------------------------


class _TimedLock:
    """The backend's commit lock, saying "c" on stdout once taken and noting how long it was held,
    so the parent aims its pauses at the commit rather than at the reads before it."""

    def __init__(self, inner: Any, marks: dict[str, float]) -> None:
        self.inner, self.marks = inner, marks
        self.t0 = 0.0

    def __enter__(self) -> None:
        self.inner.__enter__()
        self.t0 = time.perf_counter()
        sys.stdout.write("c\n")
        sys.stdout.flush()

    def __exit__(self, *exc: Any) -> Any:
        try:
            return self.inner.__exit__(*exc)
        finally:
            self.marks["held"] = time.perf_counter() - self.t0


def committer(url: str, options_json: str) -> None:
    """One flip A -> B; prints "r" once open, "c" once it holds the commit lock, then one JSON
    line saying how the commit ended (and how long it held the lock)."""
    from vfs.errors import code_of

    ws = _open(url, json.loads(options_json))
    backend, marks = ws.backend, {}
    real_lock = backend.lock
    # through the public seam (Backend.lock), so the harness survives changes in vfs core
    backend.lock = lambda key, *, timeout: _TimedLock(real_lock(key, timeout=timeout), marks)
    sys.stdout.write("r\n")
    sys.stdout.flush()
    try:
        outcome: dict[str, Any] = {"committed": True, "state": flip(ws)}
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which judges it
        outcome = {"committed": False, "code": code_of(exc), "message": str(exc)[:300]}
    sys.stdout.write(json.dumps({**outcome, **marks}) + "\n")
    sys.stdout.flush()
    ws.close()


# -- one trial --------------------------------------------------------------------------------


@dataclass
class Trial:
    """What one trial saw; the checks read only this."""

    where: str
    paused: str = ""  # where the pause fell, from the store's point of view
    seen_by_second: str = "?"  # "A", "B" or "mixed": the tree the second client found
    second_committed: str | None = None  # the state the second client committed, if it did
    second_error: str | None = None
    committer: dict[str, Any] | None = None  # its JSON report; None: it never reported
    final: str = "?"
    final_tree: dict[str, Any] | None = None
    expected_tree: dict[str, Any] | None = None  # the tree the second client committed


def _state(tree: dict[str, Any], trees: dict[str, dict[str, Any]]) -> str:
    return next((name for name, t in trees.items() if t == tree), "mixed")


def _where_paused(probe: Any) -> str:
    """Where the stopped committer stands, as the store shows it."""
    if _pending(probe):
        return "paused inside a commit (journal pending)"
    if probe.backend.stat(probe.lock_key) is not None:
        return "paused holding the lease (no pending journal)"
    return "paused outside the commit lock"


def _read_line(stream: Any, timeout: float) -> bytes | None:
    ready, _, _ = select.select([stream], [], [], timeout)
    return stream.readline() if ready else None


def _second_client(url: str, options: dict[str, Any], trees: dict[str, dict[str, Any]], trial: Trial) -> None:
    from tests.support.trees import snapshot_tree

    try:
        ws = _open(url, options)  # recovery: takes the expired lease over if a journal is pending
        trial.seen_by_second = _state(snapshot_tree(ws), trees)
        trial.second_committed = flip(ws)
        trial.expected_tree = trees.get(trial.second_committed)
        ws.close()
    except Exception as exc:  # noqa: BLE001 - counted below
        trial.second_error = f"{type(exc).__name__}: {exc}"[:300]


def _run_trial(url: str, options: dict[str, Any], delay: float, trees: dict[str, dict[str, Any]], trial: Trial) -> None:
    from tests.support.trees import snapshot_tree

    probe = _open(url, options)  # opened before the committer: never runs a recovery of its own
    proc = _spawn_committer(url, options)
    assert proc.stdout is not None
    try:
        if _read_line(proc.stdout, REPORT_TIMEOUT) != b"r\n":
            raise RuntimeError("the committer did not start")
        locked = _read_line(proc.stdout, REPORT_TIMEOUT)
        if locked != b"c\n":
            raise RuntimeError(f"the committer ended before taking the commit lock: {locked!r}")
        _precise_sleep(delay)
        proc.send_signal(signal.SIGSTOP)
        trial.paused = _where_paused(probe)
        time.sleep(PAUSE)  # the renewal thread is stopped too: the lease runs out
        _second_client(url, options, trees, trial)
        proc.send_signal(signal.SIGCONT)
        line = _read_line(proc.stdout, REPORT_TIMEOUT)
        trial.committer = json.loads(line) if line else None
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        proc.wait()
        proc.stdout.close()
    final = _open(url, options)  # recovery once more, as the next user would
    trial.final_tree = snapshot_tree(final)
    trial.final = _state(trial.final_tree, trees)
    final.close()
    probe.close()


# -- checks -----------------------------------------------------------------------------------


def _check(trial: Trial, report: Report) -> None:
    report.count(trial.paused or "pause not reached")
    if trial.second_error is not None:
        report.count(
            "second client refused, nothing of it visible"
            if trial.final == trial.seen_by_second
            else "second client failed"
        )
    for name, problem in _violations(trial):
        report.count(name)
        report.fail(f"{trial.where}: {name}: {problem}")


def _violations(trial: Trial) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    tree = trial.final_tree or {}
    missing = [p for p in KEPT if p not in tree]
    if missing or sum(p in tree for p in MOVED) != 1:
        found.append(("files lost", f"missing {missing}, moved file at {[p for p in MOVED if p in tree]}"))
    if "mixed" in (trial.seen_by_second, trial.final):
        found.append(("mixed tree", f"second client saw {trial.seen_by_second}, final {trial.final}{_unlike(trial)}"))
    if trial.second_error is not None:
        if trial.final != trial.seen_by_second:
            found.append(
                (
                    "second client's commit undone",
                    f"it could not commit ({trial.second_error}), and the tree it found is gone: final {trial.final}",
                )
            )
    elif trial.final != trial.second_committed:
        found.append(("second client's commit undone", f"it committed {trial.second_committed}, final {trial.final}"))
    untrue = _untrue_report(trial)
    if untrue:
        found.append(("untrue report", untrue))
    return found


def _unlike(trial: Trial) -> str:
    """Which paths of the final tree are not as the second client committed them (for the log)."""
    expected, tree = trial.expected_tree or {}, trial.final_tree or {}
    paths = sorted(p for p in set(tree) | set(expected) if tree.get(p) != expected.get(p))
    return f"; paths unlike {trial.second_committed}: {paths[:8]}; committer said {trial.committer}"


def _untrue_report(trial: Trial) -> str | None:
    """The committer's word against what the second client found (its transaction was A -> B)."""
    report = trial.committer
    if report is None:
        return "the committer never reported (hung or died after SIGCONT)"
    applied = trial.seen_by_second == "B"
    if report.get("committed") and not applied:
        return f"said committed, but the second client found {trial.seen_by_second}"
    if not report.get("committed") and applied:
        return f"said it failed ({report.get('code')}: {report.get('message')}), but its transaction was applied"
    return None


# -- the campaign -----------------------------------------------------------------------------


def _trees(base: str, options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The snapshots of A and B."""
    from tests.support.trees import snapshot_tree

    scratch = _fresh(f"{base}/scratch", options)
    trees = {"A": snapshot_tree(scratch)}
    flip(scratch)
    trees["B"] = snapshot_tree(scratch)
    scratch.close()
    return trees


def _spawn_committer(url: str, options: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.reliability.pause", "--committer", url, json.dumps(options)],
        env={**os.environ, "PYTHONPATH": REPO},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,  # unbuffered: select() must see every line the committer wrote
    )


def commit_time(base: str, options: dict[str, Any], runs: int = 3) -> float:
    """How long an unpaused committer holds the commit lock (the median of ``runs``: one cold run
    must not stretch the window the pauses are aimed at)."""
    held = []
    for index in range(runs):
        url = f"{base}/calibrate{index}"
        _fresh(url, options).close()
        proc = _spawn_committer(url, options)
        assert proc.stdout is not None
        lines = proc.stdout.read().splitlines()
        proc.wait()
        proc.stdout.close()
        held.append(float(json.loads(lines[-1])["held"]))
    return statistics.median(held)


def _fresh(url: str, options: dict[str, Any]) -> Any:
    """A workspace at ``url`` holding the tree A."""
    from tests.support.trees import populate

    ws = _open(url, options)
    populate(ws.backend, {rel: None if v is None else v[0] for rel, v in TREE_A.items()})
    return ws


def run_seaweedfs(trials: int = 50, *, seed: int = 0) -> Report:
    """The campaign on a real SeaweedFS server, which enforces the expiry of a signed request
    (the store-side fence of ``backends.s3.fence``; moto does not)."""
    from tests.support import s3_servers

    with s3_servers.seaweedfs_endpoint() as ep:
        return run(trials, seed=seed, endpoint=ep, server="seaweedfs")


def run_azurite(trials: int = 50, *, seed: int = 0) -> Report:
    """The campaign on Azurite, which refuses a SAS once it has expired (the store-side fence of
    ``backends.azure.fence``)."""
    from tests.support import azurite

    with azurite.azurite_endpoint() as ep:
        options = {**ep.storage_options, **LEASE_OPTIONS}
        base = f"az://{azurite.make_container(ep, 'pause')}"
        return campaign("pause-azure-azurite", base, options, trials, seed=seed)


def run_azurite_sas(trials: int = 50, *, seed: int = 0) -> Report:
    """The campaign on Azurite with the workspace opened by a SAS token: no account key to sign a
    fence with, so its changes are checked against the lease before each send only (the window a
    pause right after that check leaves is what this run measures)."""
    from tests.support import azurite

    with azurite.azurite_endpoint() as ep:
        options = {"account_url": ep.blob_url, "sas_token": azurite.account_sas(), **LEASE_OPTIONS}
        base = f"az://{azurite.make_container(ep, 'pause')}"
        return campaign("pause-azure-azurite-sas-token", base, options, trials, seed=seed)


def run(trials: int = 50, *, seed: int = 0, endpoint: Any = None, server: str = "moto") -> Report:
    from tests.support import s3_servers

    ep = endpoint if endpoint is not None else s3_servers.shared_moto_endpoint()
    options = {**ep.storage_options, **LEASE_OPTIONS}
    base = f"s3://{s3_servers.make_bucket(ep, 'pause')}"
    return campaign(f"pause-s3-{server}", base, options, trials, seed=seed)


def campaign(name: str, base: str, options: dict[str, Any], trials: int, *, seed: int) -> Report:
    """``trials`` paused commits, each on a fresh prefix of the store at the URL ``base``."""
    report = Report(name)
    rng = random.Random(seed)
    trees = _trees(base, options)
    held = commit_time(base, options)
    report.notes.append(
        f"an unpaused committer holds the commit lock for {held * 1000:.0f} ms; pauses fall uniformly over "
        f"that time after it takes the lock; lease TTL {LEASE_TTL} s, paused for {PAUSE} s"
    )
    for name in VIOLATIONS:
        report.count(name, 0)  # every class shows up in the figures, zero included
    for index in range(trials):
        delay = rng.uniform(0, held)
        url = f"{base}/t{index}"
        _fresh(url, options).close()
        trial = Trial(where=f"trial {index} (pause {delay * 1000:.1f} ms into the commit)")
        try:
            _run_trial(url, options, delay, trees, trial)
        except Exception as exc:  # noqa: BLE001 - the harness itself broke: stop here
            report.fail(f"{trial.where}: harness error {type(exc).__name__}: {exc}")
            break
        report.trials += 1
        _check(trial, report)
    return report.finish()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--committer":
        committer(sys.argv[2], sys.argv[3])
