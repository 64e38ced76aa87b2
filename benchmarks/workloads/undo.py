"""Undo cost on local disk: undoing a patch of many small files against applying it.

Series (same files, same patch; both durable, both on settled files, the history emptied first):

- ``apply``: ``editors.apply_patch.tool.apply_patch`` of a patch updating ``files`` small files;
- ``undo``: ``workspace.undo()`` of that very patch (applied untimed just before, then settled).

The target is the ratio undo / apply, both measured in the same run, in alternation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.context import Context, check_files, reset_history, restore
from benchmarks.core import Series, Target, Workload, timed

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"files": 2000, "dirs": 20, "lines": 20},
    "quick": {"files": 500, "dirs": 10, "lines": 20},
    "tiny": {"files": 10, "dirs": 2, "lines": 5},
}


def _patch(names: list[str]) -> str:
    lines = ["*** Begin Patch"]
    for i, name in enumerate(names):
        lines += [f"*** Update File: {name}", "@@", f"-line 1 of file {i}", f"+LINE 1 of file {i}"]
    return "\n".join([*lines, "*** End Patch"]) + "\n"


def build(ctx: Context) -> Workload:
    p = ctx.params("undo", DEFAULTS)
    root = ctx.workdir("undo")
    names = [f"dir{i % p['dirs']}/file_{i:05d}.py" for i in range(p["files"])]
    originals = {
        root / name: "".join(f"line {j} of file {i}\n" for j in range(p["lines"])).encode()
        for i, name in enumerate(names)
    }
    patched = {path: data.replace(b"line 1 of", b"LINE 1 of", 1) for path, data in originals.items()}
    patch = _patch(names)
    paths: list[Path] = list(originals)

    import vfs
    from editors.apply_patch.tool import apply_patch

    workspace = vfs.open_workspace(str(root))

    def fresh_start() -> None:
        restore(originals)
        reset_history(root)
        ctx.settle(*paths)

    def applied() -> None:
        fresh_start()
        result = apply_patch(workspace, patch)
        assert not getattr(result, "is_error", False), result
        ctx.settle(*paths)

    def apply() -> float:
        return timed(lambda: apply_patch(workspace, patch))

    def undo() -> float:
        return timed(workspace.undo)

    series = [
        Series("apply", f"apply_patch of {len(names)} small files (durable)", "baseline", apply, fresh_start,
               lambda: check_files(patched, "apply")),
        Series("undo", f"undo of that {len(names)}-file patch (durable)", "ours", undo, applied,
               lambda: check_files(originals, "undo")),
    ]  # fmt: skip
    targets = [
        Target(
            f"undo of a {len(names)}-file patch <= 1.1x applying it",
            "undo",
            1.1,
            denominator="apply",
            note="see docs/benchmarks.md: both are one journaled transaction writing every file once (fsync each).",
        )
    ]
    return Workload(
        "undo",
        f"undo vs apply of a {len(names)}-file patch (local disk)",
        p,
        series,
        targets,
        teardown=workspace.close,
        repeat=1,
    )
