"""``vfs serve``: serve ``str_replace_editor`` and ``apply_patch`` over MCP (stdio or HTTP).

    vfs serve [--root ROOT] [-o KEY=VALUE] [--mount PATH] [--mode MODE]
              [--transport stdio|http] [--host 127.0.0.1] [--port N] [--token TOKEN]
              [--enable-undo] [--max-output-chars N]

stdio (default): an MCP client starts this process and talks over stdin/stdout; nothing else is
written to stdout. HTTP: Streamable HTTP at ``http://HOST:PORT/mcp``, on 127.0.0.1 unless
``--host`` says otherwise; the URL is printed on stderr once the server accepts connections.
Beyond loopback every request must carry ``Authorization: Bearer TOKEN`` (``--token`` or
``VFS_SERVE_TOKEN``); without a token such a bind is refused. On loopback a token is optional,
and enforced when given.

Exit status: 0 after a clean shutdown (SIGTERM, or the client closing stdin), 130 after Ctrl-C,
1 if the workspace cannot be opened or the port is taken, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

import vfs
from editors.adapters.cli.common import add_workspace_args, open_workspace
from editors.adapters.cli.errors import EXIT_OK, CliError, UsageError

if TYPE_CHECKING:
    import socket

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV = "VFS_SERVE_TOKEN"

EXAMPLES = """examples:
  vfs serve --root /path/to/repo                       stdio, for an MCP client that starts it
  vfs serve --root memory://scratch --transport http   http://127.0.0.1:8765/mcp
  vfs serve --root s3://bucket/ws -o endpoint_url=http://127.0.0.1:9000 --transport http --port 9100
  VFS_SERVE_TOKEN=... vfs serve --root /repo --transport http --host 0.0.0.0   clients send the bearer token

  an MCP client config (Claude Desktop, Cursor, ...):
    {"mcpServers": {"vfs": {"command": "vfs", "args": ["serve", "--root", "/path/to/repo"]}}}
"""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: expected an integer from 0 to 65535") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {port}: expected an integer from 0 to 65535")
    return port


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def add_editor_args(parser: argparse.ArgumentParser, *, output: bool = True) -> None:
    """The str_replace_editor options that change what the model sees (``output``: its view size)."""
    parser.add_argument("--enable-undo", action="store_true", help="offer str_replace_editor's undo_edit command")
    if not output:
        return
    parser.add_argument(
        "--max-output-chars",
        type=_positive,
        default=None,
        metavar="N",
        help="clip str_replace_editor views longer than N characters (default 16000)",
    )


def editor_config(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {"enable_undo": bool(args.enable_undo)}
    if getattr(args, "max_output_chars", None) is not None:
        config["max_output_chars"] = args.max_output_chars
    return config


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.description = (
        "Serve the str_replace_editor and apply_patch tools over MCP, on any workspace root. "
        "Each client connection gets its own observation session."
    )
    parser.epilog = EXAMPLES
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_workspace_args(parser)
    parser.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or Streamable HTTP"
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"HTTP address to bind (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    parser.add_argument(
        "--token",
        default=None,
        help=f"bearer token every HTTP request must carry (default: ${TOKEN_ENV}); required beyond loopback",
    )
    add_editor_args(parser)


def is_loopback(host: str) -> bool:
    """Whether ``host`` binds only this machine (any other name or address may reach the network)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token of an HTTP server (flag, then environment); ``UsageError`` if one is needed
    and missing: serving the workspace to the network without one lets anyone edit it."""
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if args.transport != "http":
        if args.token:
            raise UsageError("--token applies to --transport http only")
        return None
    if token is None and not is_loopback(args.host):
        raise UsageError(
            f"--host {args.host} serves beyond this machine: set a bearer token with --token or {TOKEN_ENV}"
        )
    return token


class _Terminated(Exception):
    """SIGTERM: a graceful shutdown, exit status 0 (Ctrl-C is a KeyboardInterrupt: exit 130)."""


def _stop_on_sigterm() -> None:
    def stop(signum: int, frame: Any) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, stop)


def _checked(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    """The editor config and the bearer token, checked before anything starts (``UsageError``)."""
    from editors.adapters.cli.common import parse_storage_options
    from editors.str_replace_editor.config import make_config

    try:
        parse_storage_options(args.storage_option)
        config = editor_config(args)
        make_config(config)
    except vfs.InvalidArgument as exc:  # ConfigError included
        raise UsageError(exc.message) from None
    return config, _token(args)


def _bind(args: argparse.Namespace) -> socket.socket | None:
    """The HTTP server's listening socket, bound before the workspace opens (a taken port fails fast)."""
    if args.transport != "http":
        return None
    from editors.adapters.mcp import bind

    try:
        return bind(args.host, args.port)
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    config, token = _checked(args)
    try:
        from editors.adapters import mcp as mcp_server
    except ImportError as exc:
        raise CliError(f"the MCP SDK is not installed ({exc}); pip install 'vfs[mcp]'") from None
    sock = _bind(args)
    try:
        ws = open_workspace(args)  # a root that is missing or not a directory: FS_BAD_ROOT
    except BaseException:  # a failed start (Ctrl-C included) must not leave the port held
        if sock is not None:
            sock.close()
        raise
    try:
        if sock is None:
            _serve_stdio(ws, config)
        else:
            _stop_on_sigterm()
            mcp_server.serve_http(ws, sock, config=config, token=token, announce=mcp_server.announce_stderr)
    except _Terminated:
        pass
    finally:
        if sock is not None:
            sock.close()
        ws.close()
    return EXIT_OK


def _serve_stdio(ws: vfs.Workspace, config: dict[str, Any]) -> None:
    if sys.stdin.isatty():
        print(
            "vfs serve: speaking MCP on stdin/stdout, for an MCP client that starts this process "
            "(Ctrl-C to stop; --transport http to serve over HTTP)",
            file=sys.stderr,
        )
    from editors.adapters.cli import interrupted
    from editors.adapters.mcp import serve_stdio

    serve_stdio(ws, config=config, interrupted=interrupted)
