"""``vfs tool``: run one model tool call from a shell (a harness's bridge, or a human checking).

    vfs tool str_replace_editor [--root ROOT] [--mount PATH] [-o KEY=VALUE] ARGS_JSON
    vfs tool apply_patch [--root ROOT] '{"input": "*** Begin Patch ..."}'

``ARGS_JSON`` is the call's arguments as a JSON object, given as the argument or on stdin when
absent. Success: the tool's result text on stdout (a newline added only if it lacks one), exit 0.
Failure: ``Error: <message>`` on stdout (apply_patch: its own result text), ``vfs tool: call
failed [CODE]`` on stderr, exit 1 (:class:`~editors.adapters.cli.errors.ToolFailed`). Usage errors: exit 2.
``--json``: the whole result (``{"code", "is_error", "text", "data"}``, ``data`` the diff cards
and locations of :mod:`editors.diffcard`) as JSON on stdout, exit 0, or 1 on a failed call. Each call
is one-shot (a :class:`~editors.tools.Toolset` without a session): nothing is kept between calls.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import vfs
from editors.adapters.cli.common import add_workspace_args, open_workspace, read_stdin
from editors.adapters.cli.errors import EXIT_FAILURE, EXIT_OK, CliError, ToolFailed, UsageError, write

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
    _add_json(editor)
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
    _add_json(patch)
    patch.add_argument("arguments", nargs="?", metavar="ARGS_JSON", help="the call's arguments (default: stdin)")


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help='print the whole result as JSON ({"code", "is_error", "text", "data"}: the diff cards), failures too',
    )


def _read_arguments(args: argparse.Namespace) -> str:
    if args.arguments is not None:
        return str(args.arguments)
    try:
        data = read_stdin(f"vfs tool {args.tool}: reading ARGS_JSON (a JSON object) from stdin")
    except OSError as exc:
        raise CliError(f"cannot read ARGS_JSON from stdin: {exc}") from None
    if not data.strip():
        raise UsageError("ARGS_JSON is missing: give it as the last argument or on stdin")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError("ARGS_JSON on stdin is not valid UTF-8") from None


def _config(args: argparse.Namespace) -> dict[str, Any]:
    """The editor config of the options, checked before storage is touched: a bad one is a usage error."""
    from editors.str_replace_editor.config import ConfigError, make_config

    if args.tool != "str_replace_editor":
        return {}
    config: dict[str, Any] = {"enable_undo": bool(args.enable_undo)}
    if args.max_output_chars is not None:
        config["max_output_chars"] = args.max_output_chars
    try:
        make_config(**config)
    except ConfigError as exc:
        raise UsageError(exc.message) from None
    return config


def run(args: argparse.Namespace) -> int:
    from editors.result import error_result
    from editors.tools import Toolset

    text = _read_arguments(args)
    config = _config(args)
    try:
        ws = open_workspace(args)
    except vfs.VfsError as exc:
        raise ToolFailed(error_result(exc)) from None
    try:
        result = Toolset(ws, session=False, config=config).call(args.tool, text)
    finally:
        ws.close()
    if args.json:
        from editors.result import dumps

        write(sys.stdout, dumps(result.to_dict()))
        return EXIT_FAILURE if result.is_error else EXIT_OK
    if result.is_error:
        raise ToolFailed(result)
    write(sys.stdout, result.text if result.text.endswith("\n") else result.text + "\n")
    return EXIT_OK
