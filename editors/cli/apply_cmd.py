"""``vfs apply``: a drop-in for Codex's ``apply_patch`` binary, atomic on any vfs backend.

The patch is the single argument, or stdin when there is none. Success: Codex's summary on stdout,
exit 0. Failure: Codex's error text on stderr, exit 1, and nothing changed. Usage errors: exit 2.
"""

from __future__ import annotations

import argparse
import sys

import vfs
from editors.apply_patch.errors import ApplyPatchError
from editors.apply_patch.tool import apply_patch
from editors.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, add_workspace_args, open_workspace

USAGE = "Usage: vfs apply 'PATCH'\n       echo 'PATCH' | vfs apply"


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.description = (
        "Apply a Codex-style patch (*** Begin Patch ... *** End Patch) as one transaction: every "
        "file changes, or none does. The patch is the single argument, or read from stdin."
    )
    add_workspace_args(parser)
    parser.add_argument("--diff", action="store_true", help="also print a unified diff of the changes")
    parser.add_argument("--dry-run", action="store_true", help="check and report, but change nothing")
    parser.add_argument("patch", nargs="?", metavar="PATCH", help="the patch text (default: read stdin)")


def _write(stream: object, text: str) -> None:
    """UTF-8 whatever the locale says (as Codex prints), then flush."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        buffer.write(text.encode("utf-8"))
        buffer.flush()
    else:  # a text stream without a buffer (tests capturing output)
        stream.write(text)  # type: ignore[attr-defined]
        stream.flush()  # type: ignore[attr-defined]


def _error(text: str) -> None:
    """One message and a line break, like Rust's ``eprintln!`` (even if the text ends with one)."""
    _write(sys.stderr, text + "\n")


def _read_patch(args: argparse.Namespace) -> tuple[str | None, int]:
    if args.patch is not None:
        try:
            args.patch.encode("utf-8")  # undecodable argv bytes arrive as lone surrogates
        except UnicodeEncodeError:
            _error("Error: apply_patch requires a UTF-8 PATCH argument.")
            return None, EXIT_FAILURE
        return args.patch, EXIT_OK
    stdin = getattr(sys.stdin, "buffer", None)
    try:
        data = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8")
    except OSError as exc:
        _error(f"Error: Failed to read PATCH from stdin.\n{exc}")
        return None, EXIT_FAILURE
    if not data:
        _error(USAGE)
        return None, EXIT_USAGE
    try:
        return data.decode("utf-8"), EXIT_OK
    except UnicodeDecodeError:
        _error("Error: Failed to read PATCH from stdin.\nstream did not contain valid UTF-8")
        return None, EXIT_FAILURE


def run(args: argparse.Namespace) -> int:
    patch, status = _read_patch(args)
    if patch is None:
        return status
    try:
        workspace = open_workspace(args)
    except vfs.VfsError as exc:
        _error(exc.message)
        return EXIT_FAILURE
    try:
        result = apply_patch(workspace, patch, diff=args.diff, dry_run=args.dry_run)
    except ApplyPatchError as exc:
        _error(exc.cli_message)
        return EXIT_FAILURE
    except vfs.VfsError as exc:
        _error(exc.message)
        return EXIT_FAILURE
    finally:
        workspace.close()
    _write(sys.stdout, result.summary)
    if result.diff:
        _write(sys.stdout, result.diff)
    return EXIT_OK
