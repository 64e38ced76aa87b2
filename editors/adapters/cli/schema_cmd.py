"""``vfs schema``: the tool definitions as JSON, for OpenAI, Anthropic or MCP.

    vfs schema [--format openai|openai-function|anthropic|mcp] [--tool NAME] [--enable-undo]

Prints a JSON array of every tool's definition (with ``--tool``: that tool's definition, one
object), keys sorted: the same bytes in every run, so a provider's prompt cache stays valid.
``openai`` is the Responses API set (``apply_patch`` as a custom tool with its Lark grammar);
``openai-function`` makes every tool a JSON function tool.
"""

from __future__ import annotations

import argparse
import sys

from editors.adapters.cli.errors import EXIT_OK, UsageError
from editors.adapters.cli.serve_cmd import add_editor_args, editor_config

FORMATS = ("openai", "openai-function", "anthropic", "mcp")  # = editors.tools.FORMATS (kept import-free)
TOOLS = ("str_replace_editor", "apply_patch")  # = editors.tools.TOOL_NAMES

EXAMPLES = """examples:
  vfs schema --format openai > tools.json               client.responses.create(tools=..., ...)
  vfs schema --format anthropic                         client.messages.create(tools=..., ...)
  vfs schema --format mcp --tool apply_patch
"""


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.description = "Print the tool definitions as JSON (sorted keys: byte-stable across runs)."
    parser.epilog = EXAMPLES
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="openai",
        help="openai (Responses API: apply_patch as a grammar-constrained custom tool; the default), "
        "openai-function (JSON function tools), anthropic, mcp",
    )
    parser.add_argument("--tool", choices=TOOLS, default=None, help="only this tool (printed as one object)")
    add_editor_args(parser, output=False)


def run(args: argparse.Namespace) -> int:
    from editors.result import dumps
    from editors.str_replace_editor.config import ConfigError
    from editors.tools import definition, definitions

    try:
        config = editor_config(args)
        value = (
            definition(args.tool, args.format, config=config) if args.tool else definitions(args.format, config=config)
        )
    except ConfigError as exc:
        raise UsageError(exc.message) from None
    data = dumps(value).encode("utf-8")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return EXIT_OK
