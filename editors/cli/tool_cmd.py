"""``vfs tool``: run one model tool call from a shell (a harness's bridge, or a human checking).

    vfs tool str_replace_editor [--root ROOT] [--mount PATH] [-o KEY=VALUE] ARGS_JSON
    vfs tool apply_patch [--root ROOT] '{"input": "*** Begin Patch ..."}'

``ARGS_JSON`` is the call's arguments as a JSON object, given as the argument or on stdin when
absent. Success: the tool's result text on stdout (a newline added only if it lacks one), exit 0.
Failure: ``Error: <message>`` on stdout (apply_patch: its own result text), ``code: FS_...`` on
stderr, exit 1. Usage errors: exit 2. Each call is one-shot: no session is kept between calls.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import vfs
from editors.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, add_workspace_args, open_workspace

TOOLS = ("str_replace_editor", "apply_patch")


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.description = (
        "Run one model tool call against the workspace and print what the model would get back. "
        "ARGS_JSON is the call's arguments (a JSON object); read from stdin when absent."
    )
    tools = parser.add_subparsers(dest="tool", metavar="TOOL", required=True)
    editor = tools.add_parser(
        "str_replace_editor", help="view, create and edit files (Anthropic / DSH text editor tool)"
    )
    add_workspace_args(editor)
    editor.add_argument(
        "--max-output-chars",
        type=int,
        default=None,
        metavar="N",
        help="clip view output longer than N characters (default 16000)",
    )
    editor.add_argument("--enable-undo", action="store_true", help="accept the undo_edit command")
    editor.add_argument("arguments", nargs="?", metavar="ARGS_JSON", help="the call's arguments (default: stdin)")
    patch = tools.add_parser("apply_patch", help='apply a Codex-style patch given as {"input": PATCH}')
    add_workspace_args(patch)
    patch.add_argument("arguments", nargs="?", metavar="ARGS_JSON", help="the call's arguments (default: stdin)")


def _write(stream: Any, text: str) -> None:
    """UTF-8 whatever the locale says, then flush."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        buffer.write(text.encode("utf-8", "surrogateescape"))
        buffer.flush()
    else:  # a text stream without a buffer (tests capturing output)
        stream.write(text)
        stream.flush()


def _fail(message: str, code: str) -> int:
    _write(sys.stdout, message if message.endswith("\n") else message + "\n")
    _write(sys.stderr, f"code: {code}\n")
    return EXIT_FAILURE


def _read_arguments(args: argparse.Namespace) -> tuple[str | None, int]:
    if args.arguments is not None:
        return args.arguments, EXIT_OK
    stdin = getattr(sys.stdin, "buffer", None)
    try:
        data = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8")
    except OSError as exc:
        _write(sys.stderr, f"vfs tool: cannot read ARGS_JSON from stdin: {exc}\n")
        return None, EXIT_FAILURE
    if not data.strip():
        _write(sys.stderr, f"usage: vfs tool {args.tool} [options] ARGS_JSON (or the JSON on stdin)\n")
        return None, EXIT_USAGE
    try:
        return data.decode("utf-8"), EXIT_OK
    except UnicodeDecodeError:
        _write(sys.stderr, "vfs tool: ARGS_JSON on stdin is not valid UTF-8\n")
        return None, EXIT_FAILURE


def _run_str_replace_editor(ws: vfs.Workspace, text: str, args: argparse.Namespace) -> int:
    from editors.str_replace_editor.tool import StrReplaceEditor

    try:
        call = json.loads(text)
    except json.JSONDecodeError as exc:
        return _fail(f"Error: ARGS_JSON is not valid JSON: {exc}", vfs.InvalidArgument.code)
    config: dict[str, Any] = {"enable_undo": bool(args.enable_undo)}
    if args.max_output_chars is not None:
        config["max_output_chars"] = args.max_output_chars
    editor = StrReplaceEditor(ws, config=config, session=False)
    result = editor.run(call)
    if result.is_error:
        return _fail(result.text, result.code or vfs.IOFailure.code)
    _write(sys.stdout, result.text if result.text.endswith("\n") else result.text + "\n")
    return EXIT_OK


def _run_apply_patch(ws: vfs.Workspace, text: str) -> int:
    from editors.apply_patch.tool import call_tool  # another engineer's module: imported only here

    output = call_tool(ws, text)
    if not output.ok:
        return _fail(output.output, output.code or vfs.IOFailure.code)
    _write(sys.stdout, output.output if output.output.endswith("\n") else output.output + "\n")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    text, status = _read_arguments(args)
    if text is None:
        return status
    if args.tool == "str_replace_editor":
        # Validate the tool config before touching storage: a bad option is a usage error.
        from editors.str_replace_editor.config import ConfigError, make_config

        overrides: dict[str, Any] = {"enable_undo": bool(args.enable_undo)}
        if args.max_output_chars is not None:
            overrides["max_output_chars"] = args.max_output_chars
        try:
            make_config(**overrides)
        except ConfigError as exc:
            _write(sys.stderr, f"vfs tool: {exc.message}\n")
            return EXIT_USAGE
    try:
        ws = open_workspace(args)
    except vfs.VfsError as exc:
        return _fail(f"Error: {exc.message}", exc.code)
    try:
        if args.tool == "str_replace_editor":
            return _run_str_replace_editor(ws, text, args)
        return _run_apply_patch(ws, text)
    finally:
        ws.close()
