"""str_replace on a large file, in-process: ours (durable, one vfs transaction) vs the OpenHands editor.

- ``ours``: ``StrReplaceEditor(workspace, session=False).run({...})``: read, unique-match, replace,
  write with a version check, temp file + fsync + rename + directory fsync;
- ``openhands``: ``OHEditor()(command="str_replace", ...)`` from ``openhands-aci`` (plain
  ``open(path, "w")``, not durable; it also keeps its own undo history on disk and reads a
  snippet back, which is part of what it does per call);
- ``ours.fresh``: ours on a file written just before (informative; content hashed into the version);
- ``floor``: the least any durable editor with undo does, in Python, with nothing checked: read
  the file, ``bytes.replace`` once, a bare durable atomic write of the result (temp + fsync +
  rename + directory fsync) and the pre-image kept (the replaced file itself, by a hard link made
  before the replace: no byte copied, as vfs keeps a large one).

Both editors are created once and reused, like a tool server serving an agent.
"""

from __future__ import annotations

import math
import os
from typing import Any

from benchmarks import inputs
from benchmarks.context import Context, check_files, reset_history, restore
from benchmarks.core import Series, Target, VerificationError, Workload, timed
from benchmarks.workloads.transaction import durable_write

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"bytes": 10_000_000},
    "quick": {"bytes": 1_000_000},
    "tiny": {"bytes": 20_000},
}

FILE = "big_module.py"


def build(ctx: Context) -> Workload:
    p = ctx.params("str_replace", DEFAULTS)
    root = ctx.workdir("str_replace")
    case = inputs.str_replace_case(p["bytes"])
    target = root / FILE
    originals = {target: case.data}
    expected = {target: case.expected}

    import vfs
    from editors.str_replace_editor.tool import StrReplaceEditor

    workspace = vfs.open_workspace(str(root))
    ours_editor = StrReplaceEditor(workspace, session=False)
    ours_args = {"command": "str_replace", "path": str(target), "old_str": case.old_str, "new_str": case.new_str}

    peer = ctx.openhands
    oh_editor: Any = None
    if peer.available:
        from benchmarks.peers import load_openhands_editor

        oh_editor = load_openhands_editor(peer.path if peer.path != "site-packages" else None)(max_file_size_mb=64)
    last: dict[str, Any] = {}

    def settled() -> None:
        restore(originals)
        reset_history(root)
        ctx.settle(target)

    def fresh() -> None:
        restore(originals)
        reset_history(root)

    def ours() -> float:
        def call() -> None:
            last["ours"] = ours_editor.run(ours_args)

        return timed(call)

    def openhands() -> float:
        def call() -> None:
            last["openhands"] = oh_editor(
                command="str_replace", path=str(target), old_str=case.old_str, new_str=case.new_str
            )

        return timed(call)

    old_bytes, new_bytes = case.old_str.encode(), case.new_str.encode()
    kept = root / ".floor-pre-image"

    def floor() -> float:
        kept.unlink(missing_ok=True)  # (untimed: the last run's)

        def call() -> None:
            fd = os.open(target, os.O_RDONLY)
            try:
                data = os.read(fd, os.fstat(fd).st_size + 1)
            finally:
                os.close(fd)
            os.link(target, kept)  # the pre-image, for undo: the replaced file itself, no byte copied
            durable_write(str(target), data.replace(old_bytes, new_bytes, 1))

        return timed(call)

    def verify_ours() -> None:
        result = last["ours"]
        if result.is_error:
            raise VerificationError(f"ours: {result.text}")
        check_files(expected, "ours")

    def verify_openhands() -> None:
        result = last["openhands"]
        if getattr(result, "error", None):
            raise VerificationError(f"openhands: {result.error}")
        check_files(expected, "openhands")

    series = [
        Series("ours", "vfs str_replace_editor, in-process (durable)", "ours", ours, settled, verify_ours),
        Series("openhands", "OpenHands OHEditor, in-process (not durable)", "peer", openhands, settled,
               verify_openhands, missing=peer.missing),
        Series("ours.fresh", "vfs str_replace_editor, file written just before", "ours", ours, fresh, verify_ours),
        Series("floor", "read + bytes.replace + bare durable atomic write + the pre-image kept (the floor)",
               "baseline", floor, settled, lambda: check_files(expected, "floor")),
    ]  # fmt: skip
    targets = [
        Target(
            "str_replace, in-process durable <= 0.3x OpenHands",
            "ours",
            0.3,
            denominator="openhands",
            earlier=0.5,
            note=(
                "met since session 12 (0.26x, 0.22-0.28x over the run; 0.32x before in the published run): the "
                "content hash is BLAKE3, ~5x BLAKE2b here, so its two 10 MB passes take ~3 ms each instead of "
                "~12. Earlier profile (`python -m benchmarks.profile str_replace`): ~71 ms of CPU on 10 MB (was ~267 ms: the "
                "check for the same lines at another indentation keyed every line of the file; it now finds its "
                "candidates with str.find). Read 10 MB (one os.read); an ASCII file's text is read in place from the "
                "bytes, not decoded into a str (editors/str_replace_editor/source.py: one isascii pass; a 10 MB "
                "buffer less, so ~4,870 fresh-page faults a call -> ~20 in a warm process, main-thread CPU ~33 -> "
                "~23 ms; another file is decoded, strict UTF-8); the unique match and its "
                "refusal checks (C-level scans), the edited bytes spliced from the bytes read (one copy; no text "
                "built, then encoded), two blake2b passes then (the post-image, reused as the written file's version; the "
                "pre-image, for the history record): ~28 ms one after the other, now side by side on two cores "
                "(vfs.txlog.hash_beside: 38 -> 19 ms of wall for 2 x 10 MB, quiet; 0.38x -> 0.34x in a run at load "
                "~1), 10 MB written (the target; since session 22 the replaced file itself is the history's "
                "pre-image, moved to .vfs/tx by the swap, where 10 MB more were written into the record), 2 "
                "fsyncs; the diff card reads only the edited region (it counted every line of the file three "
                "times). The hashes, the write and the fsyncs are the rest: durability and undo, which the "
                "peer does not do. A file written moments before (the 'file written just before' series) costs "
                "one more hash: its version must hash its content (git's racy-clean rule)."
            ),
        ),
        Target(
            "the floor (read + replace + durable write + pre-image kept) / OpenHands (informative)",
            "floor",
            math.inf,
            denominator="openhands",
            note=FLOOR_NOTE,
        ),
        Target(
            "str_replace, in-process durable / the floor (informative)",
            "ours",
            math.inf,
            denominator="floor",
            note=FLOOR_NOTE,
        ),
    ]
    return Workload(
        "str_replace",
        f"str_replace_editor: str_replace on a {len(case.data) / 1e6:.1f} MB file, in-process",
        {**p, "file_bytes": len(case.data)},
        series,
        targets,
        teardown=workspace.close,
    )


FLOOR_NOTE = (
    "the floor is what any durable str_replace with undo does at the least, in Python with nothing "
    "checked: one read, bytes.replace, a bare durable atomic write of 10 MB (in 1 MiB slices, its "
    "writeback started between them, as the local backend writes a file to be flushed since session 14: "
    "the floor 65 -> 25 ms on the AMD machine of 2026-12-06) and the 10 MB pre-image kept (a hard link to the replaced file); ours "
    "/ floor is what vfs adds (UTF-8 check, hashes, the checks, the card). Written whole and flushed, a "
    "10 MB write into the page cache took 2.5 ms or, at random, 40-95 ms on the earlier machines (the VM's "
    "writeback throttling, measured with a bare os.write)."
)
