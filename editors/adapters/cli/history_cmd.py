"""``vfs log``, ``vfs undo`` and ``vfs recover``: the workspace's history and crash recovery."""

from __future__ import annotations

import argparse
import datetime
import sys

import vfs
from editors.adapters.cli.common import add_workspace_args, open_workspace
from editors.adapters.cli.errors import EXIT_FAILURE, EXIT_OK


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    add_workspace_args(parser, mode=False)
    if verb == "log":
        parser.add_argument("-n", "--limit", type=int, default=20, help="how many transactions (default 20)")
        parser.add_argument("--json", action="store_true", help="machine-readable output")


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def run(args: argparse.Namespace) -> int:
    """A vfs error goes up to the entry point, which shows it (``vfs log: ... (CODE)``, exit 1)."""
    # `recover` reports what it did, so it must not let opening recover silently first
    ws = open_workspace(args, recover_on_open=args.verb != "recover")
    try:
        if args.verb == "log":
            return _log(ws, args)
        if args.verb == "undo":
            return _undo(ws)
        return _recover(ws)
    finally:
        ws.close()


def _log(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    entries = ws.log(args.limit)
    if args.json:
        from editors.result import dumps

        sys.stdout.write(dumps([_entry_json(e) for e in entries]))
        return EXIT_OK
    if not entries:
        print("No transactions yet.")
    for entry in entries:
        label = f"  {entry.label}" if entry.label else ""
        print(f"{entry.txid}  {_when(entry.timestamp)}{label}")
        _print_changes(entry)
    return EXIT_OK


def _undo(ws: vfs.Workspace) -> int:
    entry = ws.undo()
    print(f"Undid {entry.txid}{' (' + entry.label + ')' if entry.label else ''}:")
    _print_changes(entry)
    return EXIT_OK


def _print_changes(entry: vfs.HistoryEntry) -> None:
    for change in entry.changes:
        print(f"    {change.action:<6} {change.path}")


def _recover(ws: vfs.Workspace) -> int:
    report = ws.recover()
    print(
        f"Recovery: rolled back {len(report.rolled_back)} interrupted commit(s), "
        f"cleaned up {len(report.finished)} leftover record(s)."
    )
    for problem in report.conflicts:
        print(f"    left in place: {problem}")
    return EXIT_OK if report.clean else EXIT_FAILURE


def _entry_json(entry: vfs.HistoryEntry) -> dict[str, object]:
    return {
        "txid": entry.txid,
        "timestamp": entry.timestamp,
        "label": entry.label,
        "changes": [{"path": c.path, "action": c.action} for c in entry.changes],
    }
