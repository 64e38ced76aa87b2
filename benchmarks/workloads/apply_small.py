"""apply_patch, a small patch (3 files, a few hunks each), whole process: the startup cost.

Series: ``python -m editors.cli apply`` (ours), Codex's ``apply_patch`` binary, and the floor of
any Python command on this machine: ``python -c pass``, the same interpreter with the same
environment and no flags, as the ``vfs`` console script starts it (``#!.../python``, then
``from editors.adapters.cli import run``; the script costs what ``-m editors.cli`` costs, see
``python -m benchmarks.startup``). The target is a ratio to that floor, measured in the same run
(issue 20: <= 1.6x); the earlier absolute bound (< 0.1 s) stays as a row of its own.

Two more baselines split the rest, in the same run: ``python -m`` of an empty module (what the
``-m`` launcher costs before any code of ours: runpy and the importlib modules it loads), and
``python -m`` of a module that imports exactly what ``vfs apply`` imports and then ends as the
command does (loading our code, no work). ``vfs apply`` over that second one is the work itself:
reading the patch, the files, the commit with its fsyncs, the history record.
"""

from __future__ import annotations

from typing import Any

from benchmarks import inputs
from benchmarks.context import Context, check_files, check_process, reset_history, restore
from benchmarks.core import Measured, Series, Target, Workload

NOTE = (
    "Since session 14 both series run a venv made by `pip install .` of the tree (benchmarks/install.py), as "
    "users run vfs: 2.49x in the run of 2026-12-06 23:07 (52 ms against 21 ms), missed. Until then they ran "
    "the development venv, whose editable finder (a .pth importing pathlib, importlib.util and more) and "
    "test extras made the bare interpreter 40-43 ms: 1.21-1.55x there, flattered, since vfs needs much of "
    "what the finder had loaded. The ~31 ms over the bare interpreter are the next profile to take (fsync "
    "off takes the same time: not the flushes). Earlier, in the development venv, "
    "counted in instructions (valgrind; steadier than time on a shared machine), on this machine's venv: "
    "`python -c pass` 89 M, `vfs apply` 125 M, 1.41x (169 M at the start of issue 20's third round; 205 M before "
    "the second; 337 M before the value classes left dataclasses, see backends/values.py). The third round: "
    "renameat2 and syncfs through _ctypes, not ctypes' Python half (backends/local/libc.py: 169 -> 150 M "
    "together with the next); a value class binds its first 15 instances' arguments in one shared function and "
    "compiles its __init__ only then (a small apply made 1-4 instances of 21 classes, each compile ~0.4 M); "
    "records written by json's C encoder, json imported only to read one (vfs/recordjson.py: ~5 M); names in "
    ".vfs/ checked without re (~1.6 M); the program ends without the interpreter's teardown when no exit "
    "handler and no other thread is left (editors.adapters.cli.run, as mypy's hard_exit: ~19 M here, ~10 ms "
    "on a 5 MB apply). Gone earlier: typing (~11.5 M), a NamedTuple (~12 M), threading (~4 M), signal (~3 M), "
    "the card modules without --diff (~2 M). Left over the floor (36 M): our ~45 modules' own code (unmarshalling, "
    "~170 class bodies, 26 exception classes) and the run, with a durable 3-file commit: 7 fsyncs, 0.3-3 ms each "
    "on this disk (`fsync=false` series). The floor is the venv's: its .pth files (setuptools' editable finder "
    "imports pathlib, re, importlib.util, urllib.parse) are ~2/3 of `python -c pass` (`python -S -c pass`: "
    "28 M); installed from a wheel, the interpreter starts faster and vfs apply imports none of those (nor re). "
    "`python -m benchmarks.startup` shows where the time goes; the console script costs what `-m` does."
)

#: The baselines' modules, written into a folder of their own (``-m`` finds them in the working
#: directory). LOADED_MODULE imports what ``vfs apply`` imports before its work and ends as the
#: command ends (``editors.adapters.cli.run``: no teardown); a test keeps the two lists equal.
EMPTY_MODULE = "vfs_bench_empty"
LOADED_MODULE = "vfs_bench_loaded"
LOADED_SOURCE = """\
import os

import backends.local.backend
import blake3
import editors.adapters.cli
import editors.adapters.cli.apply_cmd

os._exit(0)
"""

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"files": 3, "lines": 300, "hunks": 2},
    "quick": {"files": 3, "lines": 300, "hunks": 2},
    "tiny": {"files": 3, "lines": 60, "hunks": 1},
}


def build(ctx: Context) -> Workload:
    p = ctx.params("apply_small", DEFAULTS)
    root = ctx.workdir("apply_small")
    sources = {f"pkg/mod_{i}.py": inputs.source(lines=p["lines"], seed=100 + i) for i in range(p["files"])}
    case = inputs.update_patch(sources, p["hunks"])
    originals = {root / path: data for path, data in case.files.items()}
    expected = {root / path: data for path, data in case.expected.items()}
    patch_bytes = case.patch.encode("utf-8")
    last: dict[str, Any] = {}

    def settled() -> None:
        # No wait past the racy window here: hashing a few KB costs nothing measurable.
        restore(originals)
        reset_history(root)

    def run(name: str, argv: list[str]) -> Any:
        def measure() -> Measured:
            last[name] = result = ctx.run(argv, stdin=patch_bytes, cwd=root)
            return result.time()

        return measure

    def verify(name: str) -> Any:
        def check() -> None:
            check_process(last[name], name)
            check_files(expected, name)

        return check

    def floor() -> Measured:
        last["floor"] = result = ctx.run([ctx.process_python, "-c", "pass"], cwd=root)
        return result.time()

    baselines = ctx.workdir("apply_small_baselines")
    (baselines / f"{EMPTY_MODULE}.py").write_text("")
    (baselines / f"{LOADED_MODULE}.py").write_text(LOADED_SOURCE)

    def module(name: str, module: str) -> Any:
        def measure() -> Measured:
            last[name] = result = ctx.run([ctx.process_python, "-m", module], cwd=baselines)
            return result.time()

        return measure

    series = [
        Series("ours.cli", "vfs apply, whole process (durable)", "ours", run("ours.cli", ctx.vfs_cli("apply")), settled,
               verify("ours.cli")),
        Series("codex", "Codex apply_patch, whole process", "peer", run("codex", [ctx.codex.path or "apply_patch"]),
               settled, verify("codex"), missing=ctx.codex.missing),
        Series("ours.nofsync", "vfs apply, fsync off (not durable, like Codex; informative)", "ours",
               run("ours.nofsync", ctx.vfs_cli("apply", "--storage-option", "fsync=false")), settled,
               verify("ours.nofsync")),
        Series("python", "python -c pass (the same interpreter, env and flags: the floor)", "baseline", floor,
               verify=lambda: check_process(last["floor"], "python -c pass")),
        Series("launcher", "python -m, an empty module (the -m launcher: the floor of any python -m)", "baseline",
               module("launcher", EMPTY_MODULE), verify=lambda: check_process(last["launcher"], "python -m (empty)")),
        Series("loaded", "python -m, importing what vfs apply imports, no work", "baseline",
               module("loaded", LOADED_MODULE), verify=lambda: check_process(last["loaded"], "python -m (loaded)")),
    ]  # fmt: skip
    targets = [
        Target(
            "small patch: `vfs apply` whole process <= 1.6x the bare interpreter",
            "ours.cli",
            1.6,
            denominator="python",
            note=NOTE,
        ),
        Target("small patch: `vfs apply` whole process < 0.1 s (the earlier, absolute target)", "ours.cli", 0.1),
        Target("small patch: `vfs apply` / Codex (informative)", "ours.cli", float("inf"), denominator="codex"),
        Target(
            "small patch: the -m launcher, an empty module / the bare interpreter (informative: the floor of -m)",
            "launcher",
            float("inf"),
            denominator="python",
        ),
        Target(
            "small patch: our code loaded, no work / the bare interpreter (informative)",
            "loaded",
            float("inf"),
            denominator="python",
        ),
        Target(
            "small patch: `vfs apply` / our code loaded, no work (informative: the work itself)",
            "ours.cli",
            float("inf"),
            denominator="loaded",
        ),
    ]
    params = {**p, "patch_bytes": len(patch_bytes)}
    return Workload(
        "apply_small",
        f"apply_patch: small patch ({p['files']} files, {p['hunks']} hunks each), whole process",
        params,
        series,
        targets,
    )
