"""A real MCP client (the ``mcp`` SDK's ``Client``) against ``vfs serve``, over stdio and HTTP.

stdio: each client spawns its own ``python -m editors.cli serve`` process. HTTP: one server
process per module (``http_server`` fixture), shared by several clients at once.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS

import vfs
from editors.tools import TOOL_NAMES, definition
from tests.adapters.support import REPO, HttpServer, cli_env, error_code, ok_text, text_of
from tests.support.tiers import tiered

MOUNT = "/workspace"
DEADLINE = 120.0  # seconds for a whole scenario (server start-up included)


def stdio_params(root: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "editors.cli", "serve", "--root", root, "--mount", MOUNT, *extra],
        env={"PYTHONPATH": cli_env()["PYTHONPATH"]},
        cwd=str(REPO),
    )


@asynccontextmanager
async def stdio_client(root: Path | str, *, mode: str = "auto", extra: tuple[str, ...] = ()) -> AsyncIterator[Client]:
    async with Client(stdio_params(str(root), *extra), mode=mode, read_timeout_seconds=60) as client:
        yield client


@asynccontextmanager
async def http_client(server: HttpServer, *, mode: str = "auto") -> AsyncIterator[Client]:
    async with Client(server.url, mode=mode, read_timeout_seconds=60) as client:
        yield client


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(DEADLINE):
            await scenario()

    anyio.run(main)


async def editor(client: Client, **arguments: Any) -> Any:
    return await client.call_tool("str_replace_editor", arguments)


async def patch(client: Client, text: str) -> Any:
    return await client.call_tool("apply_patch", {"input": text})


# -- scenarios shared by both transports ----------------------------------------------------------


async def check_tool_list(client: Client) -> None:
    listed = (await client.list_tools()).tools
    assert [tool.name for tool in listed] == list(TOOL_NAMES)
    for tool in listed:
        expected = definition(tool.name, "mcp")
        assert tool.description == expected["description"]
        assert tool.input_schema == expected["inputSchema"]


async def check_every_command(client: Client, root: Path, prefix: str) -> None:
    """view / create / str_replace / insert / apply_patch, each checked on disk."""
    base = root / prefix
    base.mkdir()
    (base / "hello.txt").write_bytes(b"hello\nworld\n")
    path = f"{MOUNT}/{prefix}/hello.txt"

    listing = ok_text(await editor(client, command="view", path=f"{MOUNT}/{prefix}"))
    assert path in listing
    view = ok_text(await editor(client, command="view", path=path))
    assert "hello" in view and "world" in view and path in view

    ok_text(await editor(client, command="str_replace", path=path, old_str="hello", new_str="goodbye"))
    assert (base / "hello.txt").read_bytes() == b"goodbye\nworld\n"

    ok_text(await editor(client, command="insert", path=path, insert_line=1, new_str="middle"))
    assert (base / "hello.txt").read_bytes() == b"goodbye\nmiddle\nworld\n"

    created = f"{MOUNT}/{prefix}/new/made.py"
    text = ok_text(await editor(client, command="create", path=created, file_text="x = 1\n"))
    assert text == f"New file created successfully at: {created}"
    assert (base / "new" / "made.py").read_bytes() == b"x = 1\n"

    summary = ok_text(
        await patch(
            client,
            f"*** Begin Patch\n*** Update File: {prefix}/new/made.py\n@@\n-x = 1\n+x = 2\n"
            f"*** Add File: {prefix}/added.txt\n+added\n*** End Patch\n",
        )
    )
    assert summary.startswith("Success. Updated the following files:")
    assert (base / "new" / "made.py").read_bytes() == b"x = 2\n"
    assert (base / "added.txt").read_bytes() == b"added\n"

    # The session saw its own patch: an edit right after it needs no new view.
    ok_text(await editor(client, command="str_replace", path=created, old_str="x = 2", new_str="x = 3"))
    assert (base / "new" / "made.py").read_bytes() == b"x = 3\n"


async def check_errors(client: Client, root: Path, prefix: str) -> None:
    """Every failure is a tool error with a code; nothing changes; the server keeps serving."""
    base = root / prefix
    base.mkdir()
    (base / "a.txt").write_bytes(b"alpha\n")
    (base / "b.txt").write_bytes(b"beta\n")
    a = f"{MOUNT}/{prefix}/a.txt"

    result = await editor(client, command="str_replace", path=a, old_str="alpha", new_str="x")
    assert error_code(result) == "FS_NOT_OBSERVED"  # never viewed in this session
    assert text_of(result).startswith("Error: ")

    ok_text(await editor(client, command="view", path=a))
    result = await editor(client, command="str_replace", path=a, old_str="gamma", new_str="x")
    assert error_code(result) == "FS_EDIT_NOT_FOUND"
    assert text_of(result) == f"Error: No replacement was performed, old_str `gamma` did not appear verbatim in {a}."

    result = await editor(client, command="view", path=f"{MOUNT}/{prefix}/missing.txt")
    assert error_code(result) == "FS_NOT_FOUND"
    result = await editor(client, command="create", path=a, file_text="clobber\n")
    assert error_code(result) == "FS_EXISTS"
    result = await editor(client, command="view", path=f"{prefix}/a.txt")
    assert error_code(result) == "FS_INVALID_ARGUMENT"
    assert "is not an absolute path" in text_of(result)
    result = await editor(client, command="insert", path=a, insert_line="one", new_str="x")
    assert error_code(result) == "FS_INVALID_ARGUMENT"
    result = await editor(client, command="view", path="/etc/passwd")
    assert error_code(result) == "FS_SANDBOX_DENIED"

    result = await patch(client, "this is not a patch")
    assert error_code(result) == "PATCH_PARSE_ERROR"
    # all or nothing: the first file's hunk matches, the second's does not
    result = await patch(
        client,
        f"*** Begin Patch\n*** Update File: {prefix}/a.txt\n@@\n-alpha\n+ALPHA\n"
        f"*** Update File: {prefix}/b.txt\n@@\n-not there\n+x\n*** End Patch\n",
    )
    assert error_code(result) == "PATCH_LINES_NOT_FOUND"
    assert "not there" in text_of(result)
    result = await client.call_tool("apply_patch", {"patch_text": "x"})
    assert error_code(result) == "PATCH_INVALID_INPUT"
    assert "patch_text" in text_of(result)

    result = await client.call_tool("no_such_tool", {"path": a})
    assert error_code(result) == "FS_INVALID_ARGUMENT"
    assert "Unknown tool no_such_tool" in text_of(result)

    assert (base / "a.txt").read_bytes() == b"alpha\n"
    assert (base / "b.txt").read_bytes() == b"beta\n"
    ok_text(await editor(client, command="str_replace", path=a, old_str="alpha", new_str="omega"))
    assert (base / "a.txt").read_bytes() == b"omega\n"


async def check_separate_sessions(a: Client, b: Client, root: Path, prefix: str) -> None:
    """What client A viewed never authorizes client B's edit; racing edits are refused, not lost."""
    base = root / prefix
    base.mkdir()
    (base / "shared.txt").write_bytes(b"one\n")
    path = f"{MOUNT}/{prefix}/shared.txt"

    ok_text(await editor(a, command="view", path=path))
    result = await editor(b, command="str_replace", path=path, old_str="one", new_str="B")
    assert error_code(result) == "FS_NOT_OBSERVED"
    assert (base / "shared.txt").read_bytes() == b"one\n"

    ok_text(await editor(b, command="view", path=path))
    ok_text(await editor(a, command="str_replace", path=path, old_str="one", new_str="two"))
    result = await editor(b, command="str_replace", path=path, old_str="one", new_str="B")
    assert error_code(result) == "FS_STALE_VERSION"  # B saw "one"; A changed it since
    assert (base / "shared.txt").read_bytes() == b"two\n"

    ok_text(await editor(b, command="view", path=path))
    ok_text(await editor(b, command="str_replace", path=path, old_str="two", new_str="three"))
    assert (base / "shared.txt").read_bytes() == b"three\n"


# -- stdio ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", tiered(["auto", "legacy"]))
def test_stdio_lists_tools_and_runs_every_command(tmp_path: Path, mode: str) -> None:
    async def scenario() -> None:
        async with stdio_client(tmp_path, mode=mode) as client:
            eras = MODERN_PROTOCOL_VERSIONS if mode == "auto" else HANDSHAKE_PROTOCOL_VERSIONS
            assert client.protocol_version in eras
            await check_tool_list(client)
            await check_every_command(client, tmp_path, "cmds")
            await check_errors(client, tmp_path, "errs")

    run(scenario)


@pytest.mark.slow  # two server processes; test_http_clients_get_separate_sessions is the fast twin
def test_stdio_clients_get_separate_sessions(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_client(tmp_path) as a, stdio_client(tmp_path, mode="legacy") as b:
            await check_separate_sessions(a, b, tmp_path, "two")

    run(scenario)


def test_stdio_editor_options_reach_the_tools(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(200)))

    async def scenario() -> None:
        async with stdio_client(tmp_path, extra=("--enable-undo", "--max-output-chars", "300")) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            schema = listed["str_replace_editor"].input_schema
            assert schema == definition("str_replace_editor", "mcp", config={"enable_undo": True})["inputSchema"]
            assert "undo_edit" in schema["properties"]["command"]["enum"]
            view = ok_text(await editor(client, command="view", path=f"{MOUNT}/big.txt"))
            assert "<response clipped>" in view
            ok_text(
                await editor(client, command="str_replace", path=f"{MOUNT}/big.txt", old_str="line 7\n", new_str="")
            )
            ok_text(await editor(client, command="undo_edit", path=f"{MOUNT}/big.txt"))
            assert (tmp_path / "big.txt").read_text().count("line 7\n") == 1

    run(scenario)


def test_stdio_memory_workspace() -> None:
    async def scenario() -> None:
        async with stdio_client("memory://mcp-test") as client:
            path = f"{MOUNT}/notes/todo.md"
            ok_text(await editor(client, command="create", path=path, file_text="- write tests\n"))
            ok_text(
                await patch(
                    client,
                    "*** Begin Patch\n*** Update File: notes/todo.md\n@@\n-- write tests\n+- done\n*** End Patch",
                )
            )
            assert "- done" in ok_text(await editor(client, command="view", path=path))

    run(scenario)


def test_stdio_read_only_mode(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_bytes(b"keep\n")

    async def scenario() -> None:
        async with stdio_client(tmp_path, extra=("--mode", "read-only")) as client:
            path = f"{MOUNT}/keep.txt"
            assert "keep" in ok_text(await editor(client, command="view", path=path))
            result = await editor(client, command="str_replace", path=path, old_str="keep", new_str="lose")
            assert error_code(result) == "FS_SANDBOX_DENIED"
            result = await patch(client, "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch")
            assert error_code(result) == "FS_SANDBOX_DENIED"

    run(scenario)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".vfs") == ["keep.txt"]
    assert (tmp_path / "keep.txt").read_bytes() == b"keep\n"


@pytest.mark.s3
@pytest.mark.slow  # a server process on S3 (moto); test_stdio_memory_workspace is the fast twin
def test_stdio_s3_workspace() -> None:
    """The same tools on S3 (moto on loopback): the server gets the bucket through -o options."""
    from tests.support import s3_servers

    endpoint = s3_servers.shared_moto_endpoint()
    bucket = s3_servers.make_bucket(endpoint, "mcp-serve")
    options = {"endpoint_url": endpoint.endpoint_url, "key": s3_servers.TEST_KEY, "secret": s3_servers.TEST_SECRET}
    flags = tuple(arg for key, value in options.items() for arg in ("-o", f"{key}={value}"))

    async def scenario() -> None:
        async with stdio_client(f"s3://{bucket}/ws", extra=flags) as client:
            path = f"{MOUNT}/pkg/mod.py"
            ok_text(await editor(client, command="create", path=path, file_text="A = 1\n"))
            ok_text(await editor(client, command="view", path=path))
            ok_text(await editor(client, command="str_replace", path=path, old_str="A = 1", new_str="A = 2"))
            patch_text = "*** Begin Patch\n*** Add File: pkg/other.py\n+B = 1\n*** End Patch"
            ok_text(await patch(client, patch_text))
            result = await editor(client, command="str_replace", path=path, old_str="A = 1", new_str="A = 3")
            assert error_code(result) == "FS_EDIT_NOT_FOUND"

    run(scenario)
    ws = vfs.open_workspace(f"s3://{bucket}/ws", storage_options=options)
    assert ws.read_bytes(f"{MOUNT}/pkg/mod.py") == b"A = 2\n"
    assert ws.read_bytes(f"{MOUNT}/pkg/other.py") == b"B = 1\n"


# -- HTTP -----------------------------------------------------------------------------------------


def test_http_binds_loopback_by_default(http_server: HttpServer) -> None:
    assert http_server.url.startswith("http://127.0.0.1:")
    assert http_server.url.endswith("/mcp")


def test_http_lists_tools_and_runs_every_command(http_server: HttpServer) -> None:
    async def scenario() -> None:
        async with http_client(http_server) as client:
            # sessions live in the handshake era: the server steers "auto" clients there
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            await check_tool_list(client)
            await check_every_command(client, http_server.root, "http-cmds")
            await check_errors(client, http_server.root, "http-errs")

    run(scenario)


def test_http_clients_get_separate_sessions(http_server: HttpServer) -> None:
    async def scenario() -> None:
        async with http_client(http_server) as a, http_client(http_server) as b:
            await check_separate_sessions(a, b, http_server.root, "http-two")

    run(scenario)


def test_http_session_ends_with_the_connection(http_server: HttpServer) -> None:
    """A new connection of the same client program starts with nothing observed."""
    (http_server.root / "reconnect.txt").write_bytes(b"v1\n")
    path = f"{MOUNT}/reconnect.txt"

    async def scenario() -> None:
        async with http_client(http_server) as first:
            ok_text(await editor(first, command="view", path=path))
        async with http_client(http_server) as second:
            result = await editor(second, command="str_replace", path=path, old_str="v1", new_str="v2")
            assert error_code(result) == "FS_NOT_OBSERVED"

    run(scenario)


def test_http_sessionless_client_is_told_why_edits_fail(http_server: HttpServer) -> None:
    (http_server.root / "modern.txt").write_bytes(b"m\n")
    path = f"{MOUNT}/modern.txt"

    async def scenario() -> None:
        async with http_client(http_server, mode=LATEST_MODERN_VERSION) as client:
            assert "m" in ok_text(await editor(client, command="view", path=path))
            result = await editor(client, command="str_replace", path=path, old_str="m", new_str="n")
            assert error_code(result) == "FS_NOT_OBSERVED"
            assert "Mcp-Session-Id" in text_of(result)
            ok_text(await patch(client, "*** Begin Patch\n*** Update File: modern.txt\n@@\n-m\n+n\n*** End Patch"))
        assert (http_server.root / "modern.txt").read_bytes() == b"n\n"

    run(scenario)
