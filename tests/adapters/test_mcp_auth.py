"""``vfs serve --transport http`` with a bearer token: a real MCP client, with and without it.

Beyond loopback the server refuses to start without a token (anyone on the network could edit
the workspace otherwise); on loopback a token is optional and enforced once given. The servers
here serve memory workspaces.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from editors.adapters.cli.serve_cmd import is_loopback
from tests.adapters.support import REPO, HttpServer, cli_env, ok_text, run_cli, start_http_server, wait_for_announcement

TOKEN = "correct-horse-battery-staple"
MOUNT = "/workspace"
DEADLINE = 120.0


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A loopback server given its token through the environment."""
    logs = tmp_path_factory.mktemp("token-logs")
    server = start_http_server("memory://token", logs, "--mount", MOUNT, env={"VFS_SERVE_TOKEN": TOKEN})
    try:
        yield server
    finally:
        assert server.stop() == 0, server.stderr()
        assert "Traceback" not in server.stderr(), server.stderr()


@asynccontextmanager
async def client_with(url: str, statuses: list[int], headers: dict[str, str]) -> AsyncIterator[Client]:
    """A real MCP client over Streamable HTTP sending ``headers``; every HTTP status lands in ``statuses``."""

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    http = httpx2.AsyncClient(headers=headers, timeout=30.0, event_hooks={"response": [record]})
    async with http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def run(scenario: object) -> None:
    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            await scenario()  # type: ignore[operator]

    anyio.run(main)


def refused(url: str, headers: dict[str, str]) -> set[int]:
    """Connect with ``headers``; the client must fail. The HTTP statuses it saw (at least one)."""
    statuses: list[int] = []

    async def scenario() -> None:
        with pytest.raises(BaseExceptionGroup) as caught:  # the SDK's MCPError, inside its task groups
            async with client_with(url, statuses, headers):
                pass
        assert caught.group_contains(MCPError)

    run(scenario)
    assert statuses
    return set(statuses)


def test_no_token_is_401(token_server: HttpServer) -> None:
    assert refused(token_server.url, {}) == {401}


@pytest.mark.parametrize("sent", ["wrong", TOKEN + "x", TOKEN[:-1], f"{TOKEN} {TOKEN}"])
def test_wrong_token_is_401(token_server: HttpServer, sent: str) -> None:
    assert refused(token_server.url, bearer(sent)) == {401}


def test_token_in_another_scheme_is_401(token_server: HttpServer) -> None:
    assert refused(token_server.url, {"Authorization": f"Basic {TOKEN}"}) == {401}


def test_the_right_token_works(token_server: HttpServer) -> None:
    statuses: list[int] = []

    async def scenario() -> None:
        async with client_with(token_server.url, statuses, bearer(TOKEN)) as client:
            path = f"{MOUNT}/hello.txt"
            done = await client.call_tool(
                "str_replace_editor", {"command": "create", "path": path, "file_text": "hi\n"}
            )
            assert ok_text(done) == f"New file created successfully at: {path}"
            view = ok_text(await client.call_tool("str_replace_editor", {"command": "view", "path": path}))
            assert "hi" in view

    run(scenario)
    assert statuses and 401 not in statuses


def test_401_names_the_scheme(token_server: HttpServer) -> None:
    """The plain HTTP answer: status 401 and a ``WWW-Authenticate: Bearer`` challenge."""

    async def scenario() -> None:
        async with httpx2.AsyncClient(timeout=30.0) as http:
            response = await http.post(token_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")

    run(scenario)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.com"])
def test_beyond_loopback_without_a_token_refuses_to_start(host: str) -> None:
    env = cli_env()
    env.pop("VFS_SERVE_TOKEN", None)
    serve = ["serve", "--root", "memory://open", "--transport", "http", "--host", host, "--port", "0"]
    done = subprocess.run(
        [sys.executable, "-m", "editors.cli", *serve],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"vfs serve: --host {host} serves beyond this machine: set a bearer token")


def test_an_empty_token_counts_as_none() -> None:
    done = run_cli(
        "serve", "--root", "memory://open", "--transport", "http", "--host", "0.0.0.0", "--port", "0",
        env={"VFS_SERVE_TOKEN": ""},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert b"set a bearer token" in done.stderr


def test_token_with_stdio_is_a_usage_error() -> None:
    done = run_cli("serve", "--root", "memory://x", "--token", TOKEN)
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.decode().strip() == "vfs serve: --token applies to --transport http only (see 'vfs serve --help')"
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.5.5.5", True), ("::1", True), ("localhost", True), ("0.0.0.0", False),
     ("::", False), ("10.0.0.1", False), ("example.com", False), ("localhost.example.com", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# -- the README's command, as written -------------------------------------------------------------


def readme_token_block() -> str:
    """The shell block of the README's MCP section that serves beyond loopback."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    found = [block for block in blocks if "VFS_SERVE_TOKEN" in block and "--host 0.0.0.0" in block]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow  # bash and a server process; test_a_token_flag_on_loopback_is_enforced is the fast twin
def test_readme_command_serves_with_a_token(tmp_path: Path) -> None:
    """The README's block, run by bash with ``vfs`` on PATH: it starts, and refuses a token-less client."""
    shim = tmp_path / "bin" / "vfs"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m editors.cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = cli_env(PATH=f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("VFS_SERVE_TOKEN", None)
    stderr_path = tmp_path / "serve.stderr"
    with open(stderr_path, "wb") as err:
        process = subprocess.Popen(
            ["bash", "-e", "-c", readme_token_block()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            cwd=tmp_path,
            start_new_session=True,
        )
    server = wait_for_announcement(process, stderr_path, "memory://scratch")
    try:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        assert refused(f"http://127.0.0.1:{port}/mcp", {}) == {401}
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_a_token_flag_on_loopback_is_enforced(tmp_path: Path) -> None:
    server = start_http_server("memory://flag", tmp_path, "--token", TOKEN)
    try:
        assert refused(server.url, bearer("guess")) == {401}
    finally:
        assert server.stop() == 0, server.stderr()
