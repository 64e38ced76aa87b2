"""``python -m benchmarks.reliability <campaign> [--trials N] [--seed S] [--json]``: run one campaign
at its full count (or ``N``) and print its figures. Exit status 1 if any trial broke a promise."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

#: campaign -> (module, function, default trials, help)
CAMPAIGNS: dict[str, tuple[str, str, int, str]] = {
    "crash": ("benchmarks.reliability.crash", "run", 1000, "SIGKILL at a random instant, local disk (forked child)"),
    "crash-exec": (
        "benchmarks.reliability.crash",
        "run_exec",
        100,
        "SIGKILL at a random instant, local disk (fresh interpreter per trial)",
    ),
    "crash-history": (
        "benchmarks.reliability.crash",
        "run_history",
        1000,
        "SIGKILL at a random instant of rewinds and redos, local disk (forked child)",
    ),
    "fuzz": ("benchmarks.reliability.fuzz", "run", 100_000, "hypothesis over parser, applier, editor args, CLI argv"),
    "faults": ("benchmarks.reliability.faults", "run", 5000, "a backend call failing at a random index (4 kinds)"),
    "races": ("benchmarks.reliability.races", "run", 20, "rounds of 3 editor + 3 apply_patch + 1 external processes"),
    "races-external": (
        "benchmarks.reliability.races",
        "run_external",
        10,
        "rounds of 1 appender + 1 replacer (no vfs) + 2 vfs conditional writers x 500 writes",
    ),
    "races-s3": ("benchmarks.reliability.races_s3", "run", 5, "3 editor + 3 apply_patch + 1 external, SeaweedFS"),
    "crash-s3": ("benchmarks.reliability.crash_s3", "run", 200, "SIGKILL at a random instant, S3 on moto"),
    "corrupt": (
        "benchmarks.reliability.corrupt",
        "run",
        10_000,
        "truncate or flip .vfs records, then use the workspace",
    ),
    "pause-s3": (
        "benchmarks.reliability.pause",
        "run",
        50,
        "SIGSTOP a committer past its lease on S3 (moto) while another client commits",
    ),
    "pause-s3-weed": (
        "benchmarks.reliability.pause",
        "run_seaweedfs",
        50,
        "SIGSTOP a committer past its lease on S3 (SeaweedFS, which enforces signed expiry)",
    ),
    "pause-azure": (
        "benchmarks.reliability.pause",
        "run_azurite",
        50,
        "SIGSTOP a committer past its lease on Azure (Azurite, which enforces a SAS's expiry)",
    ),
    "pause-azure-sas": (
        "benchmarks.reliability.pause",
        "run_azurite_sas",
        50,
        "the same, the workspace opened with a SAS token (no key to fence with: checked before each send)",
    ),
    "races-azure": ("benchmarks.reliability.races_azure", "run", 5, "3 editor + 3 apply_patch + 1 external, Azurite"),
    "crash-azure": ("benchmarks.reliability.crash_azure", "run", 200, "SIGKILL at a random instant, Azure on Azurite"),
    "differential": ("benchmarks.reliability.differential", "run", 10_000, "against Codex's apply_patch binary"),
    "differential-derived": (
        "benchmarks.reliability.differential",
        "run_derived",
        10_000,
        "against Codex's apply_patch binary, patches cut from the files they edit",
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reliability", description=__doc__)
    parser.add_argument("campaign", choices=sorted(CAMPAIGNS))
    parser.add_argument("--trials", type=int, default=None, help="how many trials/cases (default: the full count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    module_name, function, default, _ = CAMPAIGNS[args.campaign]
    run = getattr(importlib.import_module(module_name), function)
    report = run(args.trials if args.trials is not None else default, seed=args.seed)
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.render())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
