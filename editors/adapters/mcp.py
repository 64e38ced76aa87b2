"""``vfs serve``: the tools as an MCP server (the ``mcp`` SDK's low-level server), stdio or HTTP.

Each client gets its own observation session (a :class:`editors.tools.Toolset`): what one client
viewed never authorizes another client's edit.

- stdio: the process serves the one client that started it: one session for its lifetime.
- HTTP (Streamable HTTP, ``/mcp``): one session per MCP session (``Mcp-Session-Id``), dropped
  once the SDK ends the session (idle timeout). The server answers ``server/discover`` with
  "method not found", so clients negotiate the handshake era, whose connections carry that id.
  A request without one (a client pinned to the sessionless 2026 era) gets a fresh session per
  call: views and creates work, and edits are refused with ``FS_NOT_OBSERVED`` and a hint.

Every call answers with the text the model reads as content and :meth:`ToolResult.to_dict` as
structured content (``outputSchema`` on both tools): on success the diff cards and locations of
:mod:`editors.diffcard` under ``data``; a failed call is an MCP tool error (``isError``) whose
text is ``Error: ...`` (Codex's text for ``apply_patch``) and structured content
``{"code", "is_error", "text"}``. Nothing a client sends crashes the server. Calls run in a worker thread, one at a time
(the workspace is shared by every client; its transactions keep concurrent writers apart).
"""

from __future__ import annotations

import hmac
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

import vfs
from editors.result import ToolResult, unexpected_result
from editors.tools import Toolset, definitions

SERVER_NAME = "vfs"
HTTP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
SESSION_IDLE_TIMEOUT = 30 * 60.0  # seconds; the SDK's default for stateful HTTP sessions
MAX_SESSIONS = 1000
NO_SESSION_HINT = (
    " (This HTTP request carried no Mcp-Session-Id, so the server cannot remember what you viewed "
    "before: connect with the initialize handshake to keep a session.)"
)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("vfs")
    except Exception:  # noqa: BLE001 - not installed (running from a checkout)
        return "0"


def instructions(workspace: vfs.Workspace) -> str:
    return (
        f"Files of this workspace live under {workspace.mount}. Give str_replace_editor absolute paths "
        f"(e.g. {workspace.mount.rstrip('/')}/README.md); view a file before editing it. apply_patch takes "
        "a whole patch (*** Begin Patch ... *** End Patch) and applies all of it or nothing; its paths "
        "are relative to the workspace."
    )


class Sessions:
    """Observation sessions by client key; idle ones are dropped (their HTTP session is gone too)."""

    def __init__(
        self,
        factory: Callable[[], Toolset],
        *,
        idle_timeout: float = SESSION_IDLE_TIMEOUT,
        max_sessions: int = MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._factory = factory
        self._idle_timeout = idle_timeout
        self._max_sessions = max_sessions
        self._clock = clock
        self._lock = threading.Lock()
        self._toolsets: dict[str, tuple[Toolset, float]] = {}

    def __len__(self) -> int:
        return len(self._toolsets)

    def get(self, key: str | None) -> Toolset:
        """The toolset of client ``key`` (created on first use); ``None``: a fresh one, not kept."""
        if key is None:
            return self._factory()
        now = self._clock()
        with self._lock:
            stale = [k for k, (_, used) in self._toolsets.items() if now - used > self._idle_timeout]
            for k in stale:
                del self._toolsets[k]
            entry = self._toolsets.get(key)
            if entry is None:
                while len(self._toolsets) >= self._max_sessions:  # the least recently used goes first
                    del self._toolsets[min(self._toolsets, key=lambda k: self._toolsets[k][1])]
                toolset = self._factory()
            else:
                toolset = entry[0]
            self._toolsets[key] = (toolset, now)
            return toolset


def _client_key(ctx: Any) -> tuple[bool, str | None]:
    """``(is_http, key)`` of the client behind a request: its HTTP session id, or the stdio client."""
    request = getattr(ctx, "request", None)
    if request is None:
        return False, "stdio"
    headers = getattr(request, "headers", None)
    session_id = headers.get(SESSION_HEADER) if headers is not None else None
    return True, session_id or None


# Held while a tool call runs: a signal that stops the server waits for the call to finish.
_CALLING = threading.Lock()


def _run_call(toolset: Toolset, name: str, arguments: Any) -> ToolResult:
    with _CALLING:
        return toolset.call(name, arguments)


def _exit_when_idle(status: Callable[[], int]) -> Callable[[int, Any], None]:
    """A signal handler stopping a stdio server now, never mid-call, with exit status ``status()``.

    The process exits at once: its stdin reader thread cannot be interrupted, so unwinding (a
    ``KeyboardInterrupt``) would leave the interpreter waiting for that thread at exit.
    """

    def handler(signum: int, frame: Any) -> None:
        with _CALLING:
            os._exit(status())

    return handler


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """The MCP rendering: the model's text as content, :meth:`ToolResult.to_dict` as structured
    content (the tools' ``outputSchema``: the diff cards and locations; on failure its ``code``)."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=result.text)]
    return types.CallToolResult(content=content, structured_content=result.to_dict(), is_error=result.is_error)


def build_server(
    workspace: vfs.Workspace,
    *,
    config: Any = None,
    modern_era: bool = True,
    sessions: Sessions | None = None,
) -> Server[Any]:
    """An MCP server exposing ``str_replace_editor`` and ``apply_patch`` over ``workspace``.

    ``config``: the ``str_replace_editor`` config (checked here: ``ConfigError`` if invalid).
    ``modern_era=False`` answers ``server/discover`` with "method not found", so clients use the
    handshake era (done for HTTP, where only that era has sessions).
    """
    Toolset(workspace, session=False, config=config)  # check the config before serving anything
    registry = sessions if sessions is not None else Sessions(lambda: Toolset(workspace, config=config))
    tools = [types.Tool.model_validate(d) for d in definitions("mcp", config=config)]
    serial = anyio.Lock()

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            is_http, key = _client_key(ctx)
            toolset = registry.get(key)
            arguments = params.arguments if params.arguments is not None else {}
            async with serial:
                result = await anyio.to_thread.run_sync(_run_call, toolset, params.name, arguments)
            if is_http and key is None and result.code == vfs.NotObserved.code:
                result = ToolResult(result.text + NO_SESSION_HINT, True, result.code)
        except Exception as exc:  # noqa: BLE001 - a call must never take the server down
            result = unexpected_result(exc)
        return to_call_result(result)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=_version(),
        instructions=instructions(workspace),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    if not modern_era:

        async def no_discover(ctx: Any, params: types.RequestParams | None) -> Any:
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data="server/discover")

        server.add_request_handler("server/discover", types.RequestParams, no_discover)
    return server


# -- transports -----------------------------------------------------------------------------------


def serve_stdio(workspace: vfs.Workspace, *, config: Any = None, interrupted: Callable[[], int] = lambda: 0) -> None:
    """Serve one client over stdin/stdout until it closes stdin.

    SIGTERM exits 0; SIGINT exits with ``interrupted()`` (which may report it first).
    """
    from mcp.server.stdio import stdio_server

    server = build_server(workspace, config=config)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _exit_when_idle(interrupted))
        signal.signal(signal.SIGTERM, _exit_when_idle(lambda: 0))

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: any free port); ``OSError`` if taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class BearerAuth:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401.

    The comparison takes the same time whatever the bytes sent, so response timing tells an
    attacker nothing about the token. Lifespan events pass through untouched.
    """

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    def _authorized(self, scope: dict[str, Any]) -> bool:
        sent = [value for name, value in scope.get("headers", ()) if name.lower() == b"authorization"]
        return len(sent) == 1 and hmac.compare_digest(sent[0], self._expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        body = b"401 Unauthorized: send the server's token as 'Authorization: Bearer <token>'\n"
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="vfs"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def http_app(workspace: vfs.Workspace, *, host: str, config: Any = None, token: str | None = None) -> Any:
    """The ASGI app serving Streamable HTTP at ``/mcp``.

    The SDK turns on its Host / Origin checks (DNS rebinding) on a loopback ``host``; ``token``
    (required by ``vfs serve`` beyond loopback) makes every request carry it as a bearer token.
    """
    server = build_server(workspace, config=config, modern_era=False)
    app = server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        host=host,
        session_idle_timeout=SESSION_IDLE_TIMEOUT,
        max_sessions=MAX_SESSIONS,
    )
    return BearerAuth(app, token) if token else app


def serve_http(
    workspace: vfs.Workspace,
    sock: socket.socket,
    *,
    config: Any = None,
    token: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve Streamable HTTP on the bound ``sock`` until SIGINT/SIGTERM (``token``: see :func:`http_app`)."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    app = http_app(workspace, host=host, config=config, token=token)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}{HTTP_PATH}"

    class _Server(uvicorn.Server):
        interrupted = False

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)  # runs the app's lifespan: the MCP session manager
            if self.started and announce is not None:
                announce(url)

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.interrupted = self.interrupted or sig == signal.SIGINT
            super().handle_exit(sig, frame)

    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False))
    anyio.run(server.serve, [sock])
    if server.interrupted:  # uvicorn shut down gracefully on Ctrl-C: it still is one (exit 130)
        raise KeyboardInterrupt


def announce_stderr(url: str) -> None:
    print(f"vfs serve: MCP over HTTP at {url}", file=sys.stderr, flush=True)
