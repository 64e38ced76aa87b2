"""``vfs apply --dry-run`` against the apply itself: 1,000 hunks on a 25 MB file, local disk.

The dry run shows the whole diff and the structured result builds a card per file: both come from
where the matcher put each hunk (:mod:`editors.diffcard`), never from a diff of whole files.
Before that, ``--dry-run`` ran ``difflib`` over both versions of the file: on this input it did
not finish in 10 minutes while the apply took 4.7 s.

Series (same patch bytes, same file bytes; whole processes, the patch on stdin):

- ``ours.apply``: ``vfs apply`` (durable: it writes and commits);
- ``ours.dry_run``: ``vfs apply --dry-run`` (matches everything, writes nothing, prints the diff);
- ``ours.dry_run.json``: ``vfs apply --dry-run --json`` (the bounded structured result).
"""

from __future__ import annotations

from typing import Any

from benchmarks import inputs
from benchmarks.context import Context, check_files, check_process, reset_history, restore
from benchmarks.core import Measured, Series, Target, VerificationError, Workload

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"lines": 1_000_000, "hunks": 1_000},
    "quick": {"lines": 100_000, "hunks": 300},
    "tiny": {"lines": 400, "hunks": 5},
}

FILE = "module.py"
NOTE = (
    "the dry run's cost over the apply is the diff of 1,000 hunks: the hunks' line numbers (one count "
    "of the line breaks of the 26 MB file) and the lines around each hunk. Those lines were found by "
    "counting from the last place read, by three readers (the old lines, the context read ahead, the new "
    "lines): ~63,000 bytes.count calls over ~3 x 26 MB, 2.29-2.99x the apply in the runs of "
    "2026-12-06. Since then the count that numbers the hunks also marks where each starts in the old "
    "and the new bytes (matcher.LineHunks.marks), and the diff's readers start from the nearest mark "
    "(diffcard.Lines): 0.30 -> 0.17 s for the dry run by hand on this input (the apply: 0.15 s), the "
    "same bytes out."
)


def build(ctx: Context) -> Workload:
    p = ctx.params("dry_run", DEFAULTS)
    root = ctx.workdir("dry_run")
    case = inputs.update_patch({FILE: inputs.source(lines=p["lines"])}, p["hunks"])
    target = root / FILE
    originals = {target: case.files[FILE]}
    expected = {target: case.expected[FILE]}
    patch_bytes = case.patch.encode("utf-8")
    last: dict[str, Any] = {}

    def settled() -> None:
        restore(originals)
        reset_history(root)
        ctx.settle(target)

    def run(key: str, *flags: str) -> Any:
        def measure() -> Measured:
            last[key] = result = ctx.run(ctx.vfs_cli("apply", *flags), stdin=patch_bytes, cwd=root)
            return result.time()

        return measure

    def verify(key: str, files: dict[Any, bytes], *, hunks_shown: int | None = None) -> Any:
        def check() -> None:
            check_process(last[key], key)
            check_files(files, key)
            if hunks_shown is not None:
                shown = last[key].stdout.count(b"\n@@ ")
                if shown != hunks_shown:
                    raise VerificationError(f"{key}: the diff shows {shown} hunks, expected {hunks_shown}")

        return check

    series = [
        Series("ours.apply", "vfs apply, whole process (durable)", "ours", run("ours.apply"), settled,
               verify("ours.apply", expected)),
        Series("ours.dry_run", "vfs apply --dry-run, whole process (whole diff)", "ours",
               run("ours.dry_run", "--dry-run", "--color", "never"), settled,
               verify("ours.dry_run", originals, hunks_shown=p["hunks"])),
        Series("ours.dry_run.json", "vfs apply --dry-run --json, whole process (bounded cards)", "ours",
               run("ours.dry_run.json", "--dry-run", "--json"), settled, verify("ours.dry_run.json", originals)),
    ]  # fmt: skip
    targets = [
        Target("`vfs apply --dry-run` <= 2x `vfs apply`", "ours.dry_run", 2.0, denominator="ours.apply", note=NOTE),
        Target("`vfs apply --dry-run --json` <= 2x `vfs apply`", "ours.dry_run.json", 2.0, denominator="ours.apply"),
    ]
    params = {**p, "file_bytes": len(case.files[FILE]), "patch_bytes": len(patch_bytes), "file": "LF, local disk"}
    return Workload(
        "dry_run",
        f"apply --dry-run: {p['hunks']:,} hunks on a {p['lines']:,}-line file ({len(case.files[FILE]) / 1e6:.1f} MB)",
        params,
        series,
        targets,
    )
