"""``vfs apply --root az://...`` and ``vfs serve --root az://...`` as subprocesses, and
``open_workspace("az://...")`` with the usual storage options, all on Azurite."""

from __future__ import annotations

import pytest

import vfs
from tests.adapters.support import run_cli
from tests.support import azurite
from tests.support.azurite import AzuriteEndpoint

pytestmark = pytest.mark.azurite

ADD = "*** Begin Patch\n*** Add File: pkg/a.py\n+A = 1\n*** End Patch\n"
UPDATE = "*** Begin Patch\n*** Update File: pkg/a.py\n@@\n-A = 1\n+A = 2\n*** End Patch\n"


def _key_options(ep: AzuriteEndpoint) -> dict[str, str]:
    return {"account_name": azurite.ACCOUNT, "account_key": azurite.ACCOUNT_KEY, "account_url": ep.blob_url}


def _flags(options: dict[str, str]) -> list[str]:
    return [arg for key, value in options.items() for arg in ("--storage-option", f"{key}={value}")]


def test_vfs_apply_on_azure(azurite_ep: AzuriteEndpoint) -> None:
    url = f"az://{azurite.make_container(azurite_ep, 'cli-apply')}/ws"
    flags = _flags({"connection_string": azurite_ep.connection_string})
    done = run_cli("apply", "--root", url, *flags, input=ADD.encode())
    assert done.returncode == 0, done.stderr
    done = run_cli("apply", "--root", url, *flags, UPDATE)  # the patch as the argument, as Codex passes it
    assert done.returncode == 0, done.stderr
    ws = vfs.open_workspace(url, storage_options={"connection_string": azurite_ep.connection_string})
    assert ws.read_bytes("/workspace/pkg/a.py") == b"A = 2\n"
    # the same update again no longer matches: refused, nothing changed
    done = run_cli("apply", "--root", url, *flags, UPDATE)
    assert done.returncode != 0
    assert ws.read_bytes("/workspace/pkg/a.py") == b"A = 2\n"


def test_open_workspace_with_account_key_options(azurite_ep: AzuriteEndpoint) -> None:
    container = azurite.make_container(azurite_ep, "open-ws")
    ws = vfs.open_workspace(f"az://{container}/ws", storage_options=_key_options(azurite_ep))
    ws.write_bytes("/workspace/x.txt", b"hello")
    other = vfs.open_workspace(f"abfs://{container}/ws", storage_options=_key_options(azurite_ep))
    assert other.read_bytes("/workspace/x.txt") == b"hello"
    assert ws.backend.name == "azure" and ws.backend.capabilities.conditional_write


@pytest.mark.slow  # an MCP server process on Azurite; test_vfs_apply_on_azure is the fast twin
def test_vfs_serve_stdio_on_azure(azurite_ep: AzuriteEndpoint) -> None:
    pytest.importorskip("mcp")
    from tests.adapters.test_mcp import MOUNT, editor, error_code, ok_text, patch, run, stdio_client

    url = f"az://{azurite.make_container(azurite_ep, 'mcp-serve')}/ws"
    flags = tuple(arg for key, value in _key_options(azurite_ep).items() for arg in ("-o", f"{key}={value}"))

    async def scenario() -> None:
        async with stdio_client(url, extra=flags) as client:
            path = f"{MOUNT}/pkg/mod.py"
            ok_text(await editor(client, command="create", path=path, file_text="A = 1\n"))
            ok_text(await editor(client, command="str_replace", path=path, old_str="A = 1", new_str="A = 2"))
            ok_text(await patch(client, "*** Begin Patch\n*** Add File: pkg/other.py\n+B = 1\n*** End Patch"))
            result = await editor(client, command="str_replace", path=path, old_str="A = 1", new_str="A = 3")
            assert error_code(result) == "FS_EDIT_NOT_FOUND"

    run(scenario)
    ws = vfs.open_workspace(url, storage_options=_key_options(azurite_ep))
    assert ws.read_bytes(f"{MOUNT}/pkg/mod.py") == b"A = 2\n"
    assert ws.read_bytes(f"{MOUNT}/pkg/other.py") == b"B = 1\n"
