"""One apply_patch patch touching many small files, local disk, durable (issue 20).

The patch updates most of ``files`` small files (one hunk each), adds ``adds`` new files and
deletes ``deletes`` (spread over ``dirs`` folders). Series, on the same patch bytes and the same
files, every output checked against the generator's reference:

- ``ours.cli``: ``python -m editors.cli apply`` as a whole process, the patch on stdin (durable:
  the journal, every file and every folder flushed);
- ``codex``: Codex's ``apply_patch`` binary as a whole process (not durable);
- ``ours.cli.nofsync``: ours with ``fsync=false`` (informative: what is fsync);
- ``ours.inproc``: ``editors.apply_patch.tool.apply_patch`` in this process (durable);
- ``undo``: ``workspace.undo()`` of that patch in this process, applied untimed just before and
  settled (durable); the target compares it with ``ours.inproc``, the apply it reverts;
- ``fsync``: the floor: ``files`` fsyncs of a 4 KB file each (measured in the same run);
- ``atomic``: the patch's result written by bare atomic replaces in this process (a temp file
  created, written and renamed over each file, no fsync; the deleted ones unlinked): what creating
  an inode per file costs, which an atomic replace cannot avoid and Codex's in-place rewrite does not
  pay (informative).

Every run starts from the original files (added ones removed), settled past the racy window, with
the history emptied.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from benchmarks.context import Context, check_files, check_process, reset_history, restore
from benchmarks.core import Measured, Series, Target, Workload, timed
from benchmarks.workloads.transaction import fsync_floor


def atomic_replaces(files: dict[Path, bytes], deleted: list[Path]) -> None:
    """Each file replaced by a temp file renamed over it (atomic, not durable); ``deleted`` removed."""
    for path, data in files.items():
        tmp = path.with_name(f".{path.name}.atomic")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    for path in deleted:
        path.unlink()


DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"files": 2000, "adds": 60, "deletes": 20, "dirs": 20, "lines": 30},
    "quick": {"files": 500, "adds": 15, "deletes": 5, "dirs": 10, "lines": 30},
    "tiny": {"files": 12, "adds": 2, "deletes": 2, "dirs": 3, "lines": 8},
}


def _text(i: int, lines: int) -> str:
    return "".join(f"line {j} of file {i}: value = {i * 31 + j}\n" for j in range(lines))


def make_case(p: dict[str, Any]) -> tuple[dict[str, bytes], dict[str, bytes], str]:
    """(original files, expected files, patch) by relative name; deleted files are absent from
    the expected ones. The first ``deletes`` files are deleted, the others updated (line 1)."""
    n, lines = p["files"], p["lines"]
    names = [f"pkg{i % p['dirs']}/mod_{i:05d}.py" for i in range(n)]
    originals = {name: _text(i, lines).encode() for i, name in enumerate(names)}
    expected: dict[str, bytes] = {}
    patch = ["*** Begin Patch"]
    for i, name in enumerate(names):
        if i < p["deletes"]:
            patch.append(f"*** Delete File: {name}")
            continue
        old, new = f"line 1 of file {i}: value = {i * 31 + 1}", f"line 1 of file {i}: value = {i * 31 + 1} + 1"
        patch += [f"*** Update File: {name}", "@@", f" line 0 of file {i}: value = {i * 31}", f"-{old}", f"+{new}"]
        expected[name] = originals[name].replace(old.encode(), new.encode(), 1)
    for k in range(p["adds"]):
        name = f"pkg{k % p['dirs']}/new_{k:05d}.py"
        body = [f"added file {k}", f"value = {k}"]
        patch += [f"*** Add File: {name}", *(f"+{line}" for line in body)]
        expected[name] = ("\n".join(body) + "\n").encode()
    patch.append("*** End Patch")
    return originals, expected, "\n".join(patch) + "\n"


def build(ctx: Context) -> Workload:
    p = ctx.params("patch_many", DEFAULTS)
    root = ctx.workdir("patch_many")
    originals_rel, expected_rel, patch = make_case(p)
    originals = {root / k: v for k, v in originals_rel.items()}
    expected = {root / k: v for k, v in expected_rel.items()}
    added = [root / k for k in expected_rel if k not in originals_rel]
    deleted = [root / k for k in originals_rel if k not in expected_rel]
    patch_bytes = patch.encode()
    probe_dir = ctx.workdir("patch_many.fsync")

    import vfs
    from editors.apply_patch.tool import apply_patch

    workspace = vfs.open_workspace(str(root))

    def settled() -> None:
        for path in added:
            path.unlink(missing_ok=True)
        restore(originals)
        reset_history(root)
        ctx.settle(*originals)

    def applied() -> None:
        settled()
        result = apply_patch(workspace, patch)
        assert not getattr(result, "is_error", False), result
        ctx.settle(*expected)

    last: dict[Any, Any] = {}

    def cli(*options: str) -> Any:
        def run() -> Measured:
            last[options] = result = ctx.run(ctx.vfs_cli("apply", *options), stdin=patch_bytes, cwd=root)
            return result.time()

        return run

    def codex() -> Measured:
        assert ctx.codex.path is not None
        last["codex"] = result = ctx.run([ctx.codex.path], stdin=patch_bytes, cwd=root)
        return result.time()

    def verify(who: str, reference: dict[Path, bytes], absent: list[Path], process: Any = None) -> Any:
        def check() -> None:
            if process is not None:
                check_process(last[process], who)
            check_files(reference, who)
            there = [path.name for path in absent if path.exists()]
            if there:
                raise AssertionError(f"{who}: {there[:3]} should not exist after the run")

        return check

    nofsync = ("--storage-option", "fsync=false")
    after, before = (expected, deleted), (originals, added)
    series = [
        Series("ours.cli", "vfs apply, whole process (durable)", "ours", cli(), settled,
               verify("ours.cli", *after, process=())),
        Series("codex", "Codex apply_patch, whole process", "peer", codex, settled,
               verify("codex", *after, process="codex"), missing=ctx.codex.missing),
        Series("ours.cli.nofsync", "vfs apply, whole process, fsync off (informative)", "ours", cli(*nofsync),
               settled, verify("ours.cli.nofsync", *after, process=nofsync)),
        Series("ours.inproc", "vfs apply_patch in-process (durable)", "ours",
               lambda: timed(lambda: apply_patch(workspace, patch)), settled, verify("ours.inproc", *after)),
        Series("undo", "undo of that patch, in-process (durable)", "ours", lambda: timed(workspace.undo), applied,
               verify("undo", *before)),
        Series("fsync", f"the floor: {p['files']:,} fsyncs of a 4 KB file", "baseline",
               lambda: fsync_floor(probe_dir, p["files"])),
        Series("atomic", "the result by bare atomic replaces in-process (temp + rename, no fsync)", "baseline",
               lambda: timed(lambda: atomic_replaces(expected, deleted)), settled, verify("atomic", *after)),
    ]  # fmt: skip
    n = p["files"]
    targets = [
        Target(
            f"`vfs apply` of a patch touching {n:,} files, durable <= 1.5x Codex",
            "ours.cli",
            1.5,
            denominator="codex",
            note=PROFILE_NOTE,
        ),
        Target(
            "bare atomic replaces of the result, in-process, no fsync / Codex (informative: the floor of any atomic "
            "patch here)",
            "atomic",
            math.inf,
            denominator="codex",
        ),
        Target(
            f"`vfs apply` of the {n:,}-file patch / those bare atomic replaces (informative)",
            "ours.cli",
            math.inf,
            denominator="atomic",
        ),
        Target(
            f"undo of that {n:,}-file patch <= 1.1x its apply",
            "undo",
            1.1,
            denominator="ours.inproc",
            note=UNDO_NOTE,
        ),
    ]
    params = {**p, "patch_bytes": len(patch_bytes)}
    return Workload(
        "patch_many",
        f"one patch touching {n:,} small files (update {n - p['deletes']:,}, add {p['adds']}, delete "
        f"{p['deletes']}), durable",
        params,
        series,
        targets,
        teardown=workspace.close,
    )


PROFILE_NOTE = (
    "The floor of any atomic patch here is the `atomic` series, in the same run (the two informative "
    "rows after this one): the patch's result written by bare atomic replaces in this process (a temp "
    "file created, written and renamed over each file; no fsync, no check, no history): 1.66-2.1x Codex "
    "in the runs of sessions 13 to 15, over the bound by itself. An atomic replace creates an inode per "
    "file and frees the one it replaces, "
    "0.8-1.1 ms per file here (ext4 mounted with discard); Codex rewrites each file in place (truncate + "
    "write: not atomic, no inode created). The rest (ours over that floor: 1.2-1.3x), in process (os calls "
    "timed one by one, load 2-4): 2,043 temp files created 0.26-0.5 s, the 1,980 replaced files freed "
    "0.47-1.8 s (when the handle on the set-aside file closes: since session 18 on the local backend's "
    "closer thread, beside the next files' work on the other core: the in-process apply 2,490 -> 2,254 "
    "ms at the median of 10 alternated applies), 4 syncfs + 6 fsyncs ~0.1 s (files staged "
    "unflushed, flushed with one syncfs per filesystem before their renames, their folders with one more; "
    "fsync off changes nothing measurable), user CPU 0.7-1.2 s (patch parsing and planning ~0.5 s under cProfile, "
    "~45 system calls per file in the backend), start-up ~0.2 s. Cut here: one key resolution per file "
    "instead of three (a transaction keeps a key's resolution once it holds its state: 6,180 -> 2,080 "
    "per patch) and no list scanned per key in the commit (~90 ms under cProfile). Not taken: the "
    "replaced inodes kept in the history instead of freed (a rename, 20-30 us against a 160-210 us "
    "free) would move the 1,980 frees to the pruning of this record at a later commit, the same count "
    "(measured on the 1-file commit: slower in steady state), and the journal still needs the pre-images "
    "before the first file changes."
)
UNDO_NOTE = (
    "both one journaled transaction over the same 2,000 files with the same flushes (2 syncfs + a few "
    "fsyncs since the batch flush; before, ~2,050 fsyncs each, so the ratio swung with fsync latency); "
    "the undo reads the journal (2,000 pre-images, each digest checked) and each file once "
    "(content-guarded), then writes them back."
)
