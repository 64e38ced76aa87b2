"""``python -m benchmarks``: run the workloads, print the table, write JSON + PNG.

    python -m benchmarks                       every workload, full sizes (several minutes)
    python -m benchmarks --quick               small sizes, 3 repetitions (about a minute)
    python -m benchmarks -w apply_large,memory --reps 5
    python -m benchmarks --set apply_large.hunks=2000 --set memory.bytes=50e6
    python -m benchmarks --publish             also refresh docs/benchmarks.md and docs/benchmarks.png

A workload may scale the repetitions: ``transaction`` runs 3x as many (short, noisy runs), ``s3`` at
most 3 (long runs) unless ``--reps`` is given; every series table states its recorded runs.

Results go to ``benchmarks/results/`` (gitignored): ``results-<time>.json``, ``latest.json``,
``latest.md`` and ``latest.png``. Peers are found as ``benchmarks/peers.py`` describes;
``bash benchmarks/install_peers.sh`` installs them into a cache outside the repository.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import install, report, workloads
from benchmarks.context import PROFILES, REPO, Context
from benchmarks.core import Workload, WorkloadResult, run_workload

RESULTS = REPO / "benchmarks" / "results"
DOCS = REPO / "docs"

REPS = {"full": (7, 1), "quick": (3, 1), "tiny": (1, 0)}  # profile -> (repetitions, warm-up)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small sizes, 3 repetitions")
    size.add_argument("--tiny", action="store_true", help="tiny sizes, 1 run each, no warm-up (smoke test)")
    parser.add_argument(
        "-w",
        "--workloads",
        default=",".join(workloads.WORKLOADS),
        help=f"comma-separated, from: {', '.join(workloads.WORKLOADS)} (default: all)",
    )
    parser.add_argument(
        "--reps",
        type=int,
        help="measured repetitions per series (default: 7 full, 3 quick, 1 tiny; transaction runs 3x as many, "
        "s3 at most 3 unless --reps is given)",
    )
    parser.add_argument("--warmup", type=int, help="unrecorded warm-up repetitions (default: 1)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="WORKLOAD.PARAM=VALUE",
        help="override a size parameter, e.g. apply_large.lines=100000 (repeatable)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where results go (default: benchmarks/results)")
    parser.add_argument("--workdir", type=Path, help="scratch directory for the files (default: a temp dir in --out)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch files")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG")
    parser.add_argument("--no-sync", action="store_true", help="do not os.sync() before each measured run")
    parser.add_argument("--publish", action="store_true", help="also write docs/benchmarks.md and docs/benchmarks.png")
    parser.add_argument("--list", action="store_true", help="list workloads and their parameters, then exit")
    parser.add_argument(
        "--dev-interpreter",
        action="store_true",
        help="run our processes with this interpreter, not a regular install of the tree (tiny: always)",
    )
    return parser.parse_args(argv)


def _overrides(pairs: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        workload, dot, param = name.partition(".")
        if not sep or not dot or workload not in workloads.WORKLOADS:
            raise SystemExit(f"--set expects WORKLOAD.PARAM=VALUE with a known workload, got {pair!r}")
        out.setdefault(workload, {})[param] = value
    return out


def _list() -> int:
    for name in workloads.WORKLOADS:
        module = workloads.load(name)
        if module is None:
            print(f"{name}: missing (module {workloads.WORKLOADS[name]} not present)")
            continue
        doc = (module.__doc__ or "").strip().splitlines()[0]
        print(f"{name}: {doc}")
        for profile, params in getattr(module, "DEFAULTS", {}).items():
            print(f"    {profile}: {params}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        return _list()
    profile = "tiny" if args.tiny else "quick" if args.quick else "full"
    assert profile in PROFILES
    reps, warmup = REPS[profile]
    reps = args.reps if args.reps is not None else reps
    warmup = args.warmup if args.warmup is not None else warmup
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    unknown = [n for n in names if n not in workloads.WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workloads: {', '.join(unknown)} (known: {', '.join(workloads.WORKLOADS)})")

    args.out.mkdir(parents=True, exist_ok=True)
    scratch_parent = args.workdir or args.out
    scratch_parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="work-", dir=scratch_parent))
    ctx = Context(scratch, profile, _overrides(args.set), keep=args.keep)
    processes = install.DEVELOPMENT
    if profile != "tiny" and not args.dev_interpreter:
        print("installing this tree into the processes' venv (benchmarks/install.py)", file=sys.stderr, flush=True)
        ctx.process_python, processes = install.regular_install(REPO)
    command = "python -m benchmarks " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    meta: dict[str, Any] = {
        "machine": report.machine(scratch),
        "config": {
            "profile": profile,
            "reps": reps,
            "warmup": warmup,
            "command": command.strip(),
            "processes": processes,
        },
    }

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results: list[WorkloadResult] = []
    failed = False
    try:
        for name in names:
            module = workloads.load(name)
            if module is None:
                missing = f"workload module {workloads.WORKLOADS[name]} is not present"
                results.append(WorkloadResult(Workload(name, name, {}, [], missing=missing), {}, [], 0.0))
                log(f"{name}: missing ({missing})")
                continue
            log(f"{name}: building inputs ({profile})")
            workload: Workload = module.build(ctx)
            for series in workload.series:
                if not series.available:
                    log(f"  {series.label}: missing ({series.missing})")
            result = run_workload(
                workload, reps=reps, warmup=warmup, explicit=args.reps is not None, sync=not args.no_sync, log=log
            )
            if result.error:
                failed = True
                log(f"{name}: {result.error}")
            results.append(result)
            if not args.keep:
                shutil.rmtree(scratch / name, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)

    meta["machine"]["load_average_at_end"] = [round(x, 2) for x in __import__("os").getloadavg()]
    text = report.markdown(results, meta)
    report.print_terminal("\n" + text)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    document = report.to_json(results, meta)
    report.write_json(args.out / f"results-{stamp}.json", document)
    report.write_json(args.out / "latest.json", document)
    (args.out / "latest.md").write_text(text)
    written = [args.out / "latest.json", args.out / "latest.md"]
    if not args.no_plot:
        why = report.plot(results, args.out / "latest.png", meta)
        if why:
            log(f"plot: {why}")
        else:
            written.append(args.out / "latest.png")
    if args.publish:
        DOCS.mkdir(exist_ok=True)
        (DOCS / "benchmarks.md").write_text(publish_text(text))
        written.append(DOCS / "benchmarks.md")
        if (args.out / "latest.png").exists() and not args.no_plot:
            shutil.copyfile(args.out / "latest.png", DOCS / "benchmarks.png")
            written.append(DOCS / "benchmarks.png")
    log("wrote " + ", ".join(str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p) for p in written))
    return 1 if failed else 0


def publish_text(table: str) -> str:
    return (
        "# Benchmarks: vfs vs Codex apply_patch and the OpenHands editor\n\n"
        "Generated by `python -m benchmarks --publish` (see the README, section Benchmarks, for how to "
        "reproduce and what each workload measures). The plot: `docs/benchmarks.png`.\n\n"
        "![benchmarks](benchmarks.png)\n\n" + table
    )
