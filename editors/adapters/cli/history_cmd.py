"""``vfs log``, ``undo``, ``redo``, ``checkpoint``, ``rewind``, ``prune`` and ``recover``: the
workspace's history and crash recovery."""

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
    if verb == "checkpoint":
        parser.add_argument("name", help="letters, digits, '.', '_' and '-' (at most 64)")
    if verb == "rewind":
        parser.add_argument("to", help="a checkpoint name or a txid (see `vfs log`)")
        parser.add_argument("--dry-run", action="store_true", help="show the combined diff, change nothing")
    if verb in ("log", "undo", "rewind"):
        parser.add_argument(
            "--session",
            default=None,
            metavar="ID",
            help="only that session's (conversation's) transactions; others committed since stay",
        )
    if verb == "prune":
        parser.add_argument("--keep", type=int, default=None, metavar="N", help="keep the newest N records (default 50)")
        parser.add_argument(
            "--max-bytes",
            type=_byte_count,
            default=None,
            metavar="B",
            help="and at most B bytes of records, e.g. 500M (K, M, G: powers of 1024)",
        )
        parser.add_argument("--dry-run", action="store_true", help="say what would be dropped, drop nothing")
    if verb == "recover":
        parser.add_argument(
            "--discard",
            action="append",
            default=[],
            metavar="TXID",
            help="set aside a damaged record once you have checked its files (repeatable)",
        )
    if verb != "log":  # every verb reports as JSON on request (log's --json is above)
        parser.add_argument(
            "--json", action="store_true", help='machine-readable output (a failure: {"code", "is_error", "text"})'
        )


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def run(args: argparse.Namespace) -> int:
    """A vfs error goes up to the entry point, which shows it (``vfs log: ... [CODE]``, exit 1)."""
    # `recover` reports what it did, so it must not let opening recover silently first
    ws = open_workspace(args, recover_on_open=args.verb != "recover")
    try:
        if args.verb == "log":
            return _log(ws, args)
        handlers = {"undo": _undo, "redo": _redo, "checkpoint": _checkpoint, "rewind": _rewind, "prune": _prune}
        handler = handlers.get(args.verb)
        if handler is not None:
            return handler(ws, args)
        return _recover(ws, args)
    finally:
        ws.close()


def _log(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    entries = ws.log(args.limit, session=args.session)
    if args.json:
        from editors.result import dumps

        sys.stdout.write(dumps([_entry_json(e) for e in entries]))
        return EXIT_OK
    marks = {c.txid: c.name for c in ws.checkpoints()}
    if not entries:
        print("No transactions yet.")
    for entry in entries:
        label = f"  {entry.label}" if entry.label else ""
        label += f"  [session {entry.session}]" if entry.session else ""
        if entry.txid in marks:
            print(f"--- checkpoint {marks[entry.txid]}")
        print(f"{entry.txid}  {_when(entry.timestamp)}{label}")
        _print_changes(entry)
    if None in marks:
        print(f"--- checkpoint {marks[None]} (the beginning of history)")
    count, size = ws.history_usage()
    print(f"History: {count} record(s), {_size(size)} (`vfs prune` forgets the oldest).")
    return EXIT_OK


def _prune(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    before, size = ws.history_usage()
    report = ws.prune_report(keep=args.keep, max_bytes=args.max_bytes, dry_run=args.dry_run)
    if args.json:
        return _print_json({"records_before": before, "bytes_before": size, **vars(report)})
    print(f"History: {before} record(s), {_size(size)}.")
    verb = "Would drop" if args.dry_run else "Dropped"
    print(f"{verb} {len(report.dropped)} record(s), {_size(report.freed_bytes)}.")
    for txid in report.dropped:
        print(f"    {txid}")
    if report.held:
        names = ", ".join(c.name for c in ws.checkpoints())
        print(f"Kept {len(report.held)} record(s) beyond the limits: a rewind to a checkpoint needs them ({names}).")
    print(f"{'Would keep' if args.dry_run else 'Kept'} {report.kept} record(s), {_size(report.kept_bytes)}.")
    return EXIT_OK


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20}
_UNITS.update({"G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30})


def _byte_count(text: str) -> int:
    """``500``, ``64K``, ``500M``, ``2G`` (powers of 1024) -> bytes."""
    digits = text.strip().rstrip("BbIiKkMmGg")
    unit = text.strip()[len(digits) :].upper()
    if not digits.isdigit() or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"expected a byte count such as 500M, got {text!r}")
    return int(digits) * _UNITS[unit]


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _redo(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    entry = ws.redo()
    if args.json:
        return _print_json({"redone": _entry_json(entry)})
    print(f"Redid: took back {entry.txid}{' (' + entry.label + ')' if entry.label else ''}.")
    return EXIT_OK


def _checkpoint(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    mark = ws.checkpoint(args.name)
    if args.json:
        return _print_json({"checkpoint": {"name": mark.name, "txid": mark.txid, "created": mark.created}})
    print(f"Checkpoint {mark.name} at {mark.txid or 'the beginning of history'}.")
    return EXIT_OK


def _rewind(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    import difflib

    plan = ws.rewind(args.to, dry_run=args.dry_run, session=args.session)
    if args.json:
        return _print_json(
            {
                "dry_run": bool(args.dry_run),
                "reverted": [_entry_json(e) for e in plan.reverted],
                "changes": [{"path": c.path, "undone": _undone(c.before, c.after)} for c in plan.changes],
            }
        )
    if not plan.reverted:
        print(f"Nothing to rewind: no transaction after {args.to}.")
        return EXIT_OK
    if args.dry_run:
        for change in plan.changes:
            before = (change.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
            after = (change.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
            old = f"a{change.path}" if change.before is not None else "/dev/null"
            new = f"b{change.path}" if change.after is not None else "/dev/null"
            sys.stdout.writelines(difflib.unified_diff(before, after, old, new))
    verb = "Would revert" if args.dry_run else "Reverted"
    print(f"{verb} {len(plan.reverted)} transaction(s):")
    for entry in plan.reverted:
        print(f"    {entry.txid}  {entry.label}")
    return EXIT_OK


def _undo(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    entry = ws.undo(session=args.session)
    if args.json:
        undone = [
            {"path": c.path, "action": c.action, "undone": UNDONE.get(c.action, "reverted")} for c in entry.changes
        ]
        return _print_json({"undone": {**_entry_json(entry), "changes": undone}})
    print(f"Undid {entry.txid}{' (' + entry.label + ')' if entry.label else ''}:")
    for change in entry.changes:  # what undo did to each file, not what the transaction had done
        print(f"    {UNDONE.get(change.action, 'reverted'):<8} {change.path}")
    return EXIT_OK


# What undoing each action of a transaction does to its path.
UNDONE = {"add": "removed", "modify": "restored", "delete": "restored", "mkdir": "removed", "rmdir": "restored"}


def _undone(before: bytes | None, after: bytes | None) -> str:
    """What a rewind does to a file (``before``: its bytes now, ``after``: once rewound)."""
    return "removed" if after is None else "restored"


def _print_json(value: object) -> int:
    from editors.result import dumps

    sys.stdout.write(dumps(value))
    return EXIT_OK


def _print_changes(entry: vfs.HistoryEntry) -> None:
    for change in entry.changes:
        print(f"    {change.action:<6} {change.path}")


def _recover(ws: vfs.Workspace, args: argparse.Namespace) -> int:
    report = ws.recover(discard=args.discard)
    if args.json:
        _print_json(
            {
                "clean": report.clean,
                "rolled_back": report.rolled_back,
                "rolled_forward": report.rolled_forward,
                "finished": report.finished,
                "conflicts": report.conflicts,
            }
        )
        return EXIT_OK if report.clean else EXIT_FAILURE
    print(
        f"Recovery: rolled back {len(report.rolled_back)} interrupted commit(s), "
        f"finished {len(report.rolled_forward)}, cleaned up {len(report.finished)} leftover record(s)."
    )
    for problem in report.conflicts:
        print(f"    left in place: {problem}")
    return EXIT_OK if report.clean else EXIT_FAILURE


def _entry_json(entry: vfs.HistoryEntry) -> dict[str, object]:
    return {
        "txid": entry.txid,
        "timestamp": entry.timestamp,
        "label": entry.label,
        "session": entry.session,
        "changes": [{"path": c.path, "action": c.action} for c in entry.changes],
    }
