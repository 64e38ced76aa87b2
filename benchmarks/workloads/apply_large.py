"""apply_patch, many hunks on one large file, local disk.

Series (same patch bytes, same file bytes, same result bytes for all):

- ``ours.inproc``: ``editors.apply_patch.tool.apply_patch`` on an open local workspace (durable:
  fsync of the file and its directory), the patch text already in memory;
- ``ours.cli``: ``python -m editors.cli apply`` as a whole process, the patch on stdin;
- ``codex``: Codex's ``apply_patch`` binary as a whole process, the patch on stdin (not durable);
- ``ours.inproc.fresh``: as ``ours.inproc`` but on a file written just before (informative: its
  stat tuple cannot vouch for it, so vfs hashes its content);
- ``floor``: what any durable patch tool with undo does at the least once the result is known, in
  this process: read the file, a bare durable atomic write of the (precomputed) result, the
  pre-image kept in a file (unflushed): no parsing, no matching, no hashing, no check.

Every series starts from the original file, restored and then left to settle past the local
backend's racy window (untimed, the same for every tool), with the workspace history emptied.
"""

from __future__ import annotations

import math
import os
from typing import Any

from benchmarks import inputs
from benchmarks.context import (
    Context,
    check_files,
    check_process,
    reset_history,
    restore,
)
from benchmarks.core import Measured, Series, Target, Workload, timed
from benchmarks.workloads.transaction import durable_write

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"lines": 200_000, "hunks": 1_000},
    "quick": {"lines": 20_000, "hunks": 100},
    "tiny": {"lines": 400, "hunks": 5},
}

FILE = "module.py"


def build(ctx: Context) -> Workload:
    p = ctx.params("apply_large", DEFAULTS)
    root = ctx.workdir("apply_large")
    case = inputs.update_patch({FILE: inputs.source(lines=p["lines"])}, p["hunks"])
    target = root / FILE
    originals = {target: case.files[FILE]}
    expected = {target: case.expected[FILE]}
    patch_bytes = case.patch.encode("utf-8")

    import vfs
    from editors.apply_patch.tool import apply_patch

    workspace = vfs.open_workspace(str(root))

    def settled() -> None:
        restore(originals)
        reset_history(root)
        ctx.settle(target)

    def fresh() -> None:
        restore(originals)
        reset_history(root)

    last: dict[str, Any] = {}

    def inproc() -> float:
        return timed(lambda: apply_patch(workspace, case.patch))

    kept = root / ".floor-pre-image"

    def floor() -> float:
        def call() -> None:
            fd = os.open(target, os.O_RDONLY)
            try:
                data = os.read(fd, os.fstat(fd).st_size + 1)
            finally:
                os.close(fd)
            durable_write(str(target), expected[target])
            with open(kept, "wb") as out:  # the pre-image, for undo
                out.write(data)

        return timed(call)

    def cli() -> Measured:
        last["cli"] = result = ctx.run(ctx.vfs_cli("apply"), stdin=patch_bytes, cwd=root)
        return result.time()

    def cli_nofsync() -> Measured:
        argv = ctx.vfs_cli("apply", "--storage-option", "fsync=false")
        last["cli_nofsync"] = result = ctx.run(argv, stdin=patch_bytes, cwd=root)
        return result.time()

    def codex() -> Measured:
        assert ctx.codex.path is not None
        last["codex"] = result = ctx.run([ctx.codex.path], stdin=patch_bytes, cwd=root)
        return result.time()

    def verify(who: str, process: str | None = None) -> Any:
        def check() -> None:
            if process is not None:
                check_process(last[process], who)
            check_files(expected, who)

        return check

    series = [
        Series("ours.inproc", "vfs apply_patch, in-process (durable)", "ours", inproc, settled, verify("ours.inproc")),
        Series("ours.cli", "vfs apply, whole process (durable)", "ours", cli, settled, verify("ours.cli", "cli")),
        Series(
            "codex",
            "Codex apply_patch, whole process",
            "peer",
            codex,
            settled,
            verify("codex", "codex"),
            missing=ctx.codex.missing,
        ),
        Series(
            "ours.cli.nofsync",
            "vfs apply, whole process, fsync off (not durable, like Codex; informative)",
            "ours",
            cli_nofsync,
            settled,
            verify("ours.cli.nofsync", "cli_nofsync"),
        ),
        Series(
            "ours.inproc.fresh",
            "vfs apply_patch, in-process, file written just before",
            "ours",
            inproc,
            fresh,
            verify("ours.inproc.fresh"),
        ),
        Series(
            "floor",
            "read + bare durable atomic write of the known result + the pre-image kept (the floor)",
            "baseline",
            floor,
            settled,
            verify("floor"),
        ),
    ]
    targets = [
        Target(
            "in-process apply <= 0.25x Codex whole process",
            "ours.inproc",
            0.25,
            denominator="codex",
            earlier=0.5,
            note=(
                "missed on the AMD machine of the published run (0.29-0.31x in four runs of 2026-12-06, 21:16 to "
                "22:12: ours 32-45 ms, Codex 111-143 ms), at the bound on the Intel Xeon of that day's earlier "
                "runs (0.25-0.31x; ours 20-31 ms, Codex 77-124 ms). Here, in the same run: the floor 13 ms "
                "(0.12x; written since session 14 as the local backend writes a file to be flushed, in 1 MiB "
                "batches with its writeback started between them, which took the target's write + fsync "
                "9.7 -> 6.9 ms inside the apply); the parse and the plan ~9 ms each at the median in the "
                "runner's order (after the settle), ~5 and ~4.4 ms in a warm loop; the history record "
                "~2.4 ms. On the Xeon: the floor 11-12 ms, 0.11-0.15x; floor + parse (~4.3 ms) + plan "
                "(~4.3 ms) ~20 ms. Session 12: the "
                "content hash is BLAKE3 (backends.base.content_digest; records of earlier versions keep their "
                "BLAKE2b digests and are still read): a 5.3 MB pass 6.0 -> 1.5 ms, so the two passes (the "
                "post-image, reused as the written file's version; the pre-image, for the history record), on "
                "other threads, no longer take the second core from the main thread: commit median 17-20 -> "
                "11-13 ms, the whole apply 33-36 -> 20-28 ms (0.35x -> 0.26x in the published runs); context "
                "lines' index pairs shared between chunks, so the parse wakes the cyclic collector 8 times, "
                "not 16. On the main thread (callgrind, session 11): parse 46.5 M instructions (the per-line "
                "loop ~11 M, what CPython 3.11 allows: C-level map/compress over one split measured slower), "
                "the plan 31.1 M (one edit per chunk; bytes.find of a needle's first 24 bytes, each hit "
                "checked in full; the UTF-8 check 4.6 M), the commit's Python ~8 M; in time the commit is its "
                "I/O: the fsync, 5.3 MB written twice (the file, the pre-image kept for undo) and the replaced "
                "inode freed at its last close (2-8 ms on this disk, mounted with discard, on another thread). "
                "Lower needs the parse and the matcher in C, not Python; the time swings 0.2-0.5x with the "
                "machine (the same run's minimum and maximum)."
            ),
        ),
        Target(
            "the floor (read + durable write of the result + pre-image kept) / Codex (informative)",
            "floor",
            math.inf,
            denominator="codex",
            note=FLOOR_NOTE,
        ),
        Target(
            "in-process apply / the floor (informative)",
            "ours.inproc",
            math.inf,
            denominator="floor",
            note=FLOOR_NOTE,
        ),
        Target(
            "`vfs apply` whole process <= 1.0x Codex",
            "ours.cli",
            1.0,
            denominator="codex",
            earlier=1.5,
            note=(
                "= process start + the in-process apply (see above) + the process's end, CPU-bound (fsync off "
                "saves ~8 ms). In instructions (valgrind): 386 M (432 M before issue 20's third round, 512 M before "
                "the second): the bare interpreter 89 M (its venv's .pth files ~2/3 of it), the imports ~36 M "
                "(apply_small's note: ctypes' Python half, json and re's compiling are off the path), the apply "
                "~260 M (the CLI runs it with gc off). The third round also ends the program without the "
                "interpreter's teardown when nothing needs it (editors.adapters.cli.run): freeing the patch's and "
                "the file's objects one by one took ~10 ms of this command. Codex's own time moves the ratio as "
                "much as ours (82-148 ms in runs of 2026-12-03)."
            ),
        ),
    ]
    params = {
        **p,
        "file_bytes": len(case.files[FILE]),
        "patch_bytes": len(patch_bytes),
        "file": "LF, Python-like, local disk",
    }
    return Workload(
        "apply_large",
        f"apply_patch: {p['hunks']:,} hunks on a {p['lines']:,}-line file ({len(case.files[FILE]) / 1e6:.1f} MB)",
        params,
        series,
        targets,
        teardown=workspace.close,
    )


FLOOR_NOTE = (
    "the floor is the I/O any durable patch tool with undo does once it knows the result (one read of "
    "5.3 MB, a durable atomic write of it in 1 MiB slices with its writeback started between them, the "
    "pre-image kept), without parsing, matching, hashing or "
    "checking; ours / floor is what the patch's Python work and vfs's guarantees add: parsing (~6-11 ms), "
    "matching and planning (~7-9 ms), two BLAKE3 passes (the post-image, reused as the written file's "
    "version; the pre-image, for the history record, on another thread), the version checks."
)
