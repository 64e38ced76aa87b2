"""Crash campaign: SIGKILL a process at a random instant while it commits multi-file transactions.

A child process flips a local workspace between two trees, A and B, with one multi-file
transaction per flip (adds in new nested directories, updates of a small and a 512 KiB file,
deletes, a move that keeps mode 0755, and on the way back directory removals), each flip led by
a single-file commit of ``solo.txt`` (150 KiB: its history keeps the replaced file itself as the
pre-image, moved into ``.vfs/tx``), which holds either of its two versions. The parent kills
it with SIGKILL after a random delay drawn uniformly over several flip cycles, so the instant
lands anywhere in a commit (inside a temp-file write, between two renames, between fsyncs), not
only at the step boundaries ``VFS_TEST_CRASH_AT`` offers. The parent then inspects the raw disk
(pending journal? temp files? a mixed tree?), reopens the workspace (which recovers) and checks:

* the tree is exactly A or B, byte for byte, modes and directories included, and ``solo.txt``
  exactly one of its versions;
* no uncommitted journal, no kept pre-image without its record, no temp file anywhere under the
  root once the next holder of the lock has been (a killed single-file commit's temp file is
  named by the lock, not by a journal: the next commit or `vfs recover` sweeps it), the commit
  lock is free;
* the workspace still commits (the next trial starts from what recovery left).

``spawn="fork"`` forks the child from this process (fast: vfs is already imported);
``spawn="exec"`` starts a fresh interpreter per trial (slower, nothing inherited).

``history=True`` kills history at work instead: the child goes from A to B by ``rewind`` to a
checkpoint and ``redo`` (each one journaled transaction over every file of the flip), with now and
then a new checkpoint and a plain flip (without the one-file commit of ``solo.txt``), so the kills
land inside rewinds and redos.
"""

from __future__ import annotations

import fcntl
import os
import random
import select
import signal
import subprocess
import sys
import time
from typing import Any

from backends.base import TEMP_MARKER
from backends.local import LocalBackend
from benchmarks.reliability import Report

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BIG_A = b"".join(b"line %06d of a file big enough to take a while to write\n" % i for i in range(9000))
BIG_B = BIG_A[: 300 * 1024] + b"changed in B\n" + BIG_A[300 * 1024 :]
#: the file each flip first writes alone (a single-target commit), over RECORD_INLINE_MAX
SOLO = "solo.txt"
SOLO_VERSIONS = (BIG_A[: 150 * 1024], BIG_A[: 100 * 1024] + b"solo\n" + BIG_A[100 * 1024 : 150 * 1024])

#: relative path -> (bytes, mode) for files, None for directories
TREE_A: dict[str, Any] = {
    "keep.txt": (b"keep\r\n", 0o644),
    "update.txt": (b"one\ntwo\n", 0o644),
    "big.txt": (BIG_A, 0o644),
    "delete.txt": (b"bye\n", 0o600),
    "mv": None,
    "mv/src.sh": (b"#!/bin/sh\necho moving\n", 0o755),
}
TREE_B: dict[str, Any] = {
    "keep.txt": (b"keep\r\n", 0o644),
    "update.txt": (b"one\nTWO\n", 0o644),
    "big.txt": (BIG_B, 0o644),
    "mv": None,
    "mv/dst.sh": (b"#!/bin/sh\necho moving\n", 0o755),
    "new": None,
    "new/nested": None,
    "new/nested/deep": None,
    "new/nested/deep/added.txt": (b"added\n", 0o644),
    "new/nested/other.txt": (b"other\r\n", 0o644),
}


def populate_local(root: str, tree: dict[str, Any]) -> None:
    """``tree``, and ``solo.txt`` in its first version."""
    with open(os.path.join(root, SOLO), "wb") as handle:
        handle.write(SOLO_VERSIONS[0])
    for rel in sorted(tree):
        path = os.path.join(root, rel)
        if tree[rel] is None:
            os.makedirs(path, exist_ok=True)
            continue
        data, mode = tree[rel]
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, mode)


def disk_tree(root: str) -> dict[str, Any]:
    """The tree as the disk holds it (``.vfs`` and ``solo.txt`` left out, temp files included)."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != ".vfs"]
            filenames = [f for f in filenames if f != SOLO]
            rel_dir = ""
        for d in dirnames:
            out[os.path.join(rel_dir, d)] = None
        for f in filenames:
            path = os.path.join(dirpath, f)
            with open(path, "rb") as handle:
                out[os.path.join(rel_dir, f)] = (handle.read(), os.lstat(path).st_mode & 0o7777)
    return out


def solo_is_whole(root: str) -> bool:
    """Whether ``solo.txt`` holds exactly one of its versions, with its mode."""
    path = os.path.join(root, SOLO)
    with open(path, "rb") as handle:
        data = handle.read()
    return data in SOLO_VERSIONS and os.lstat(path).st_mode & 0o7777 == 0o644


def lone_kept_pre_images(root: str) -> list[str]:
    """Kept pre-images (``.pre``) in ``.vfs/tx`` without their history record."""
    return _without_partner(root, ".pre", ".record")


def temp_files(root: str) -> list[str]:
    found = []
    for dirpath, _dirs, files in os.walk(root):
        found += [os.path.join(dirpath, f) for f in files if TEMP_MARKER in f]
    return found


def pending_journals(root: str) -> list[str]:
    return _without_partner(root, ".journal", ".done")


def _without_partner(root: str, suffix: str, partner: str) -> list[str]:
    """The names in ``.vfs/tx`` ending in ``suffix`` whose txid has no file ending in ``partner``."""
    try:
        names = set(os.listdir(os.path.join(root, ".vfs", "tx")))
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(suffix) and n[: -len(suffix)] + partner not in names)


def lock_is_free(root: str) -> bool:
    path = os.path.join(root, ".vfs", "lock")
    if not os.path.exists(path):
        return True
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def flip(ws: Any) -> str:
    """One multi-file transaction taking the tree from A to B or back; returns the state reached."""
    m = ws.mount
    to_b = ws.exists(f"{m}/delete.txt")
    with ws.transaction(label="to B" if to_b else "to A") as tx:
        if to_b:
            tx.write(f"{m}/new/nested/deep/added.txt", b"added\n")
            tx.write(f"{m}/new/nested/other.txt", b"other\r\n")
            tx.write(f"{m}/update.txt", b"one\nTWO\n")
            tx.write(f"{m}/big.txt", BIG_B)
            tx.delete(f"{m}/delete.txt")
            tx.move(f"{m}/mv/src.sh", f"{m}/mv/dst.sh")
        else:
            tx.delete(f"{m}/new/nested/deep/added.txt")
            tx.delete(f"{m}/new/nested/other.txt")
            tx.rmdir(f"{m}/new/nested/deep")
            tx.rmdir(f"{m}/new/nested")
            tx.rmdir(f"{m}/new")
            tx.write(f"{m}/update.txt", b"one\ntwo\n")
            tx.write(f"{m}/big.txt", BIG_A)
            tx.write(f"{m}/delete.txt", b"bye\n", mode=0o600)
            tx.move(f"{m}/mv/dst.sh", f"{m}/mv/src.sh")
    return "B" if to_b else "A"


def solo_and_flip(ws: Any) -> str:
    """This campaign's flip (local disk): a one-file commit of ``solo.txt`` to its other version,
    then :func:`flip` (shared with the S3, Azure and pause campaigns, whose trees have no solo)."""
    solo = ws.read_bytes(f"{ws.mount}/{SOLO}")
    ws.write_bytes(f"{ws.mount}/{SOLO}", SOLO_VERSIONS[solo == SOLO_VERSIONS[0]])
    return flip(ws)


def history_step(ws: Any, rng: random.Random) -> str:
    """From B, rewind to the checkpoint ``start`` (A); from A, redo that rewind (B), or now and
    then a new checkpoint and a plain flip. Returns the state reached."""
    import vfs

    if not ws.exists(f"{ws.mount}/delete.txt"):  # in B
        ws.rewind("start")
        return "A"
    if rng.random() < 0.75:
        try:
            ws.redo()
            return "B"
        except vfs.NotFound:
            pass  # nothing to redo (a fresh workspace, or the last step was a flip)
    ws.checkpoint("start")
    # (no one-file commit here: one killed between its rename and its history record landed
    # without a record, and a rewind across it is refused as stale, which this loop cannot take)
    return flip(ws)


def child_loop(root: str, ready_fd: int | None, history: bool = False) -> None:
    """Flip forever (until killed). Signals readiness once the workspace is open."""
    import vfs

    ws = vfs.Workspace(LocalBackend(root), mount=root)
    rng = random.Random(os.getpid())
    if ready_fd is None:
        sys.stdout.write("r\n")
        sys.stdout.flush()
    else:
        os.write(ready_fd, b"r")
    while True:
        history_step(ws, rng) if history else solo_and_flip(ws)


def _fork_child(root: str, history: bool = False) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into the caller (pytest, the harness)
        code = 0
        try:
            os.close(read_fd)
            child_loop(root, write_fd, history)
        except BaseException:  # noqa: BLE001 - the parent sees the exit status
            code = 70
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _wait_ready(fd: int, timeout: float) -> bool:
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready) and os.read(fd, 1) == b"r"


def _precise_sleep(seconds: float) -> None:
    end = time.perf_counter() + seconds
    if seconds > 0.002:
        time.sleep(seconds - 0.002)
    while time.perf_counter() < end:
        pass


def calibrate(workdir: str, flips: int = 6, history: bool = False) -> float:
    """Seconds per flip (one multi-file durable commit plus its staging), measured here."""
    import vfs

    root = os.path.join(workdir, "calibrate")
    os.makedirs(root)
    populate_local(root, TREE_A)
    ws = vfs.Workspace(LocalBackend(root), mount=root)
    rng = random.Random(0)
    step = (lambda: history_step(ws, rng)) if history else (lambda: solo_and_flip(ws))
    step()
    started = time.perf_counter()
    for _ in range(flips):
        step()
    return (time.perf_counter() - started) / flips


def _kill_once(root: str, delay: float, spawn: str, history: bool = False) -> int:
    if spawn == "fork":
        pid, fd = _fork_child(root, history)
        try:
            if not _wait_ready(fd, 30):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise RuntimeError("the crash child did not start")
            _precise_sleep(delay)
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        finally:
            os.close(fd)
        return os.waitstatus_to_exitcode(status)
    env = {**os.environ, "PYTHONPATH": REPO}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.reliability.crash", "--child", root, *(["history"] if history else [])],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    if proc.stdout.readline() != b"r\n":
        proc.kill()
        proc.wait()
        raise RuntimeError("the crash child did not start")
    _precise_sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    return proc.returncode


def run(
    trials: int = 1000, *, seed: int = 0, workdir: str | None = None, spawn: str = "fork", history: bool = False
) -> Report:
    """``trials`` kills on one workspace (each trial starts from what recovery left)."""
    import tempfile

    import vfs

    report = Report(f"crash-local-{spawn}" + ("-history" if history else ""))
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        cycle = calibrate(tmp, history=history)
        span = 4 * cycle
        report.notes.append(f"one flip (multi-file durable commit) takes {cycle * 1000:.1f} ms here")
        report.notes.append(f"kill delays uniform over [0, {span * 1000:.1f} ms] after the child is ready")
        root = os.path.join(tmp, "ws")
        os.makedirs(root)
        populate_local(root, TREE_A)
        trees = {"A": disk_tree(root)}
        scratch = os.path.join(tmp, "b")
        os.makedirs(scratch)
        populate_local(scratch, TREE_A)
        solo_and_flip(vfs.Workspace(LocalBackend(scratch), mount=scratch))
        trees["B"] = disk_tree(scratch)
        for trial in range(trials):
            delay = rng.uniform(0, span)
            status = _kill_once(root, delay, spawn, history)
            report.trials += 1
            where = f"trial {trial} (delay {delay * 1000:.2f} ms)"
            if status != -signal.SIGKILL:
                report.fail(f"{where}: the child exited with {status} instead of being killed")
                continue
            raw = disk_tree(root)
            raw_state = next((name for name, tree in trees.items() if tree == raw), None)
            pending = pending_journals(root)
            expected_old, kind = _old_state(root, pending)
            if pending:
                report.count(f"killed inside a {kind}")
            temps = temp_files(root)
            report.count("killed with a pending journal (inside a commit)" if pending else "killed outside a commit")
            if raw_state is None:
                report.count("tree mixed on disk before recovery")
            if temps:
                report.count("temp files on disk before recovery")
            try:
                ws = vfs.Workspace(LocalBackend(root), mount=root)  # opening recovers
            except Exception as exc:  # noqa: BLE001 - a campaign reports, it does not stop
                report.fail(f"{where}: reopening raised {type(exc).__name__}: {exc}")
                break
            recovery = ws.last_recovery
            if recovery is not None and recovery.rolled_back:
                report.count("recovery rolled back")
            if recovery is not None and recovery.finished:
                report.count("recovery finished a committed record")
            if recovery is not None and recovery.conflicts:
                report.fail(f"{where}: recovery reported conflicts {recovery.conflicts}")
            if left := pending_journals(root):
                report.fail(f"{where}: uncommitted journals left after opening: {left}")
            if any(os.path.dirname(t) == root for t in temp_files(root)):
                report.count("a killed single-file commit's temp file, swept by the next holder of the lock")
            ws.recover()  # as the next commit (or `vfs recover`) does first
            after = disk_tree(root)
            state = next((name for name, tree in trees.items() if tree == after), None)
            if state is None:
                diff = sorted(set(after) ^ set(trees["A"]) ^ set(trees["B"]))
                report.fail(f"{where}: tree is neither A nor B after recovery (differing paths {diff[:6]})")
                break
            report.count(f"ended in {state}")
            if pending and state != expected_old:  # killed before the commit mark: the old tree is back
                report.fail(f"{where}: an uncommitted flip was recovered to {state}, not the old {expected_old}")
            left = temp_files(root)
            aside = [t for t in left if os.path.dirname(t) == os.path.join(root, ".vfs", "checkpoints")]
            if aside:  # nothing pending, so opening did not recover: the next checkpoint or recovery sweeps it
                report.count("a killed checkpoint write's temp file, left for the next checkpoint")
            if left := [t for t in left if t not in aside]:
                report.fail(f"{where}: temp files left after recovery: {left}")
            if left := pending_journals(root):
                report.fail(f"{where}: uncommitted journals left after recovery: {left}")
            if left := lone_kept_pre_images(root):
                report.fail(f"{where}: kept pre-images without their record left after recovery: {left}")
            if not solo_is_whole(root):
                report.fail(f"{where}: {SOLO} holds neither of its versions after recovery")
            if not lock_is_free(root):
                report.fail(f"{where}: the commit lock is still held")
            if ws.pending():
                report.fail(f"{where}: the workspace still needs recovery")
        # the workspace is still usable: one more commit lands, and a recovery leaves no temp file
        try:
            ws = vfs.Workspace(LocalBackend(root), mount=root)
            final = solo_and_flip(ws)
            if disk_tree(root) != trees[final]:
                report.fail("the commit after the campaign did not produce the expected tree")
            solo = ws.read_bytes(f"{root}/{SOLO}")
            ws.write_bytes(f"{root}/{SOLO}", b"last")
            ws.undo()  # its pre-image is the replaced file kept in the history
            if ws.read_bytes(f"{root}/{SOLO}") != solo:
                report.fail(f"undo of the last {SOLO} commit did not restore it")
            ws.recover()
            if left := temp_files(root):
                report.fail(f"temp files left after a last recovery: {left}")
        except Exception as exc:  # noqa: BLE001
            report.fail(f"the commit after the campaign raised {type(exc).__name__}: {exc}")
    return report.finish()


def _old_state(root: str, pending: list[str]) -> tuple[str | None, str]:
    """The tree an uncommitted transaction started from (a flip's label says where it was going; a
    rewind goes from B to A, a redo of it from A to B), and its kind."""
    import vfs  # the child processes import it themselves, after the fork

    log = vfs.Workspace(LocalBackend(root), mount=root, recover_on_open=False).txlog
    journals = [log.read_journal(name.removesuffix(".journal")) for name in pending]
    kinds = {j.kind for j in journals}
    olds = {
        {"to B": "A", "to A": "B"}.get(j.label) if j.kind == "commit" else {"rewind": "B", "redo": "A"}.get(j.kind)
        for j in journals
    }
    if len(olds) != 1 or len(kinds) != 1:
        return None, "/".join(sorted(kinds))
    return olds.pop(), kinds.pop()


def run_exec(trials: int = 100, *, seed: int = 0, workdir: str | None = None, history: bool = False) -> Report:
    return run(trials, seed=seed, workdir=workdir, spawn="exec", history=history)


def run_history(trials: int = 1000, *, seed: int = 0, workdir: str | None = None) -> Report:
    """The campaign over rewinds and redos (see the module docstring)."""
    return run(trials, seed=seed, workdir=workdir, history=True)


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--child":
        child_loop(sys.argv[2], None, sys.argv[3:] == ["history"])
