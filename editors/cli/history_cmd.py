"""``vfs log``, ``vfs undo`` and ``vfs recover``: the workspace's history and crash recovery."""

from __future__ import annotations

import argparse
import datetime
import json

import vfs
from editors.cli.common import EXIT_FAILURE, EXIT_OK, add_workspace_args, open_workspace, report_error


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    add_workspace_args(parser, mode=False)
    if verb == "log":
        parser.add_argument("-n", "--limit", type=int, default=20, help="how many transactions (default 20)")
        parser.add_argument("--json", action="store_true", help="machine-readable output")


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def run(args: argparse.Namespace) -> int:
    try:
        # `recover` reports what it did, so it must not let opening recover silently first
        ws = open_workspace(args, recover_on_open=args.verb != "recover")
        if args.verb == "log":
            entries = ws.log(args.limit)
            if args.json:
                print(json.dumps([_entry_json(e) for e in entries], indent=2))
                return EXIT_OK
            if not entries:
                print("No transactions yet.")
            for entry in entries:
                label = f"  {entry.label}" if entry.label else ""
                print(f"{entry.txid}  {_when(entry.timestamp)}{label}")
                for change in entry.changes:
                    print(f"    {change.action:<6} {change.path}")
            return EXIT_OK
        if args.verb == "undo":
            entry = ws.undo()
            print(f"Undid {entry.txid}{' (' + entry.label + ')' if entry.label else ''}:")
            for change in entry.changes:
                print(f"    {change.action:<6} {change.path}")
            return EXIT_OK
        report = ws.recover()
        print(
            f"Recovery: rolled back {len(report.rolled_back)} interrupted commit(s), "
            f"cleaned up {len(report.finished)} leftover record(s)."
        )
        for problem in report.conflicts:
            print(f"    left in place: {problem}")
        return EXIT_OK if report.clean else EXIT_FAILURE
    except vfs.VfsError as exc:
        return report_error(exc)


def _entry_json(entry: vfs.HistoryEntry) -> dict[str, object]:
    return {
        "txid": entry.txid,
        "timestamp": entry.timestamp,
        "label": entry.label,
        "changes": [{"path": c.path, "action": c.action} for c in entry.changes],
    }
