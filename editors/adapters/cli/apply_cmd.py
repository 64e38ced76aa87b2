"""``vfs apply``: a drop-in for Codex's ``apply_patch`` binary, atomic on any vfs backend.

The patch is the single argument (Codex's form), or the file it names (``git apply``'s form: an
argument that names an existing file and does not start with ``*** Begin Patch``), or stdin when
there is none or it is ``-``. Success: Codex's summary on stdout, exit 0. Failure: Codex's error
text on stderr (on a terminal: ``vfs apply: TEXT [CODE]``), exit 1, and nothing changed. Usage
errors: exit 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace

import vfs
from editors.adapters.cli.common import add_workspace_args, open_workspace, read_stdin
from editors.adapters.cli.errors import EXIT_OK, CodexError, CodexUsage, write
from editors.apply_patch.errors import ApplyPatchError
from editors.apply_patch.tool import ApplyResult, apply_patch

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    import argparse

USAGE = "Usage: vfs apply 'PATCH'\n       echo 'PATCH' | vfs apply"
BEGIN = "*** Begin Patch"
WAITING = "vfs apply: reading the patch from stdin (*** Begin Patch ... *** End Patch; or give a file: vfs apply FILE)"
COLORS = ("auto", "always", "never")


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.description = (
        "Apply a Codex-style patch (*** Begin Patch ... *** End Patch) as one transaction: every "
        "file changes, or none does. The patch is read from the file PATCH names, or is PATCH itself "
        "(the text, as Codex's apply_patch takes it), or stdin (no PATCH, or -)."
    )
    add_workspace_args(parser)
    parser.add_argument("--diff", action="store_true", help="also print a unified diff of the changes")
    parser.add_argument("--dry-run", action="store_true", help="check the patch and show its diff, but change nothing")
    parser.add_argument(
        "--json", action="store_true", help="print the structured result (summary, diff card per file) as JSON"
    )
    parser.add_argument(
        "--color",
        choices=COLORS,
        default="auto",
        help="colour the diff (auto: when stdout is a terminal and NO_COLOR is unset)",
    )
    parser.add_argument(
        "patch",
        nargs="?",
        metavar="PATCH",
        help="a patch file (read when it exists and the argument does not start with '*** Begin Patch'), "
        "the patch text itself, or - for stdin (default: stdin)",
    )


# parse_quick: the options it parses itself -> (namespace attribute, allowed values or None).
_VALUED = {
    "--root": ("root", None),
    "--storage-option": ("storage_option", None),
    "-o": ("storage_option", None),
    "--mount": ("mount", None),
    "--mode": ("mode", vfs.MODES),
    "--color": ("color", COLORS),
}
_FLAGS = {"--diff": "diff", "--dry-run": "dry_run", "--json": "json"}


def parse_quick(argv: Sequence[str]) -> SimpleNamespace | None:
    """The arguments after ``apply`` as argparse would parse them (with :func:`configure`), without
    argparse; ``None`` unless every argument is a plain form: ``--diff``, ``--dry-run``, ``-o VALUE``,
    ``--OPTION VALUE`` or ``--OPTION=VALUE`` spelled in full (a separate value not starting with
    ``-``, a valid choice), and at most one PATCH not starting with ``-``. Everything else (help,
    abbreviations, ``--``, usage errors) is left to argparse.
    """
    values: dict[str, object] = {
        "verb": "apply",
        "root": None,
        "storage_option": [],
        "mount": None,
        "mode": "workspace-write",
        "diff": False,
        "dry_run": False,
        "json": False,
        "color": "auto",
        "patch": None,
    }
    options: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if not arg.startswith("-"):
            if values["patch"] is not None:
                return None
            values["patch"] = arg
            continue
        if arg in _FLAGS:
            values[_FLAGS[arg]] = True
            continue
        name, equals, value = arg.partition("=")
        if equals and not name.startswith("--"):
            return None  # -o=VALUE: argparse's business
        if not equals:
            if index == len(argv) or argv[index].startswith("-"):
                return None
            value = argv[index]
            index += 1
        spec = _VALUED.get(name)
        if spec is None:
            return None
        attribute, allowed = spec
        if allowed is not None and value not in allowed:
            return None
        if attribute == "storage_option":
            options.append(value)
        else:
            values[attribute] = value
    values["storage_option"] = options
    return SimpleNamespace(**values)


ANSI = {"+": "\x1b[32m", "-": "\x1b[31m", "@": "\x1b[36m", "header": "\x1b[1m", "reset": "\x1b[0m"}


def _use_color(choice: str, stream: object) -> bool:
    if choice != "auto":
        return choice == "always"
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def colorize(diff: str) -> str:
    """ANSI colours for a unified diff: headers bold, additions green, removals red, hunks cyan."""
    out = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            color = ANSI["header"]
        elif line[:1] in ("+", "-", "@"):
            color = ANSI[line[:1]]
        else:
            out.append(line)
            continue
        body = line.rstrip("\r\n")
        out.append(f"{color}{body}{ANSI['reset']}{line[len(body) :]}")
    return "".join(out)


def _progress(message: str) -> None:
    """A transient status line on a terminal (large patches, slow remote stores); silent otherwise.
    Cut to the terminal's width: a line that wrapped could not be erased whole."""
    if _stderr_is_terminal():
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        if len(message) >= width:
            message = message[: max(width - 4, 0)] + "..."
        sys.stderr.write(f"\r\x1b[2K{message}" if message else "\r\x1b[2K")
        sys.stderr.flush()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (OSError, ValueError):
        return False


def _read_patch(args: argparse.Namespace | SimpleNamespace) -> str:
    """The patch: the file the argument names, the argument, or stdin. Failures in Codex's words
    (``CodexError``)."""
    if args.patch is not None and args.patch != "-":
        try:
            args.patch.encode("utf-8")  # undecodable argv bytes arrive as lone surrogates
        except UnicodeEncodeError:
            raise CodexError("Error: apply_patch requires a UTF-8 PATCH argument.") from None
        if _names_a_file(args.patch):
            return _read_file(args.patch)
        return str(args.patch)
    try:
        data = read_stdin(WAITING)
    except OSError as exc:
        raise CodexError(f"Error: Failed to read PATCH from stdin.\n{exc}") from None
    if not data:
        raise CodexUsage(USAGE)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CodexError("Error: Failed to read PATCH from stdin.\nstream did not contain valid UTF-8") from None


def _names_a_file(argument: str) -> bool:
    """``git apply FILE``'s form: not a patch's text (Codex's form always wins), and an existing file."""
    if argument.lstrip().startswith(BEGIN) or "\n" in argument:
        return False
    return os.path.isfile(argument)


def _read_file(name: str) -> str:
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise CodexError(
            f"Error: Failed to read PATCH from {name}.\n{exc.strerror or exc}", code="FS_IO_ERROR"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CodexError(
            f"Error: Failed to read PATCH from {name}.\nfile did not contain valid UTF-8", code="FS_NOT_TEXT"
        ) from None


def _apply(args: argparse.Namespace | SimpleNamespace, patch: str) -> ApplyResult:
    try:
        workspace = open_workspace(args)
    except vfs.VfsError as exc:
        raise CodexError(exc.message, code=exc.code) from None
    _progress(f"applying patch to {workspace.root} ...")
    failed = True
    try:
        diff = (args.diff or args.dry_run) and not getattr(args, "json", False)
        result = apply_patch(workspace, patch, diff=diff, dry_run=args.dry_run)
        failed = False
        return result
    except ApplyPatchError as exc:
        raise CodexError(exc.cli_message, code=exc.code) from None
    except vfs.VfsError as exc:
        raise CodexError(exc.message, code=exc.code) from None
    finally:
        if failed and _stderr_is_terminal():
            sys.stderr.write("\n")  # the status line ends: the error starts a line of its own
            sys.stderr.flush()
        else:
            _progress("")
        workspace.close()


def run(args: argparse.Namespace | SimpleNamespace) -> int:
    result = _apply(args, _read_patch(args))
    summary = result.summary
    if args.dry_run:  # Codex's summary, reworded so nobody mistakes it for a change made
        lines = summary.split("\n", 1)
        summary = "Dry run: nothing was changed. The patch would update:\n" + (lines[1] if len(lines) > 1 else "")
    if getattr(args, "json", False):
        from editors.result import ToolResult, dumps

        write(sys.stdout, dumps(ToolResult(summary, data=result.data()).to_dict()))
        return EXIT_OK
    write(sys.stdout, summary)
    if result.diff:
        write(sys.stdout, colorize(result.diff) if _use_color(args.color, sys.stdout) else result.diff)
    return EXIT_OK
