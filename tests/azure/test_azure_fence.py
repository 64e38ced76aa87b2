"""The store fences a paused lease holder on Azure: a change that reaches the store after the
validity of the lease it was sent under is refused by the store itself (backends/azure/fence.py).

The pause is simulated exactly where the client-side check cannot help: vfs's last check before
the send has passed (the fenced client's hook ran), then the request waits (as a SIGSTOPped
process would) past the lease's end before it leaves. Azurite enforces a SAS's expiry, as Azure
Storage does.
"""

from __future__ import annotations

import datetime
import math
import socket
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import pytest

from backends.azure import backend as azure_backend
from backends.azure import connect, fence
from backends.base import DeleteItem, PreconditionFailed, WriteItem
from backends.fence import FENCE, INLINE_BODY, RESOLUTION
from backends.lease import LeaseLost
from tests.azure.conftest import BackendMaker
from tests.support import azurite
from tests.support.azurite import AzuriteEndpoint

pytestmark = pytest.mark.azurite

TTL = 3


def _signer() -> fence.SasSigner:
    return fence.SasSigner(azurite.ACCOUNT, azurite.ACCOUNT_KEY, "c")


def test_the_sas_expires_at_the_validity_rounded_up_to_the_second() -> None:
    query = urllib.parse.parse_qs(_signer().query(100.2))
    assert query["se"] == [datetime.datetime.fromtimestamp(101, tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert query["sp"] == ["cwd"] and query["sr"] == ["c"]  # create, write, delete; never read


def test_the_changes_of_one_second_share_a_sas_and_no_lease_has_none() -> None:
    signer = _signer()
    assert signer.query(100.2) is signer.query(100.9)
    assert signer.query(101.5) != signer.query(100.9)
    with pytest.raises(RuntimeError):
        signer.query(math.inf)


def test_a_takeover_waits_the_stores_resolution_too(make_backend: BackendMaker) -> None:
    be = make_backend(lease_ttl=30)
    assert be.fenced
    assert be.lock(".vfs/lock", timeout=1).resolution == RESOLUTION


def _makes_visible(request: Any) -> bool:
    """A change a reader sees: Put Blob, Put Block List, Delete Blob (not Put Block)."""
    http = request.http_request
    return http.method == "DELETE" or (http.method == "PUT" and "comp=block&" not in f"{http.url}&")


def _body_size(request: Any) -> int:
    body = request.http_request.body
    if isinstance(body, bytes | bytearray):
        return len(body)
    return int(request.http_request.headers.get("Content-Length") or 0)


def _refence(be: Any, after_signing: Callable[[Any], None]) -> None:
    """Give ``be`` a fenced client whose hook signs as shipped, then runs ``after_signing``."""
    sign = fence.fenced_hook(fence.signer_for(be.container))  # type: ignore[arg-type]

    def hook(request: Any) -> None:
        sign(request)
        after_signing(request)

    be._fenced = connect.fenced_client(be.container, {"raw_request_hook": hook, "retry_total": 0})


def _pause_past_the_lease(be: Any) -> None:
    for lease in list(be._held._held):
        lease._stop.set()  # the renewal thread stops with the process
    time.sleep(TTL + RESOLUTION + 0.5)


def _raw(ep: AzuriteEndpoint, be: Any, key: str) -> bytes | None:
    blob = ep.service().get_blob_client(be.container.container_name, be._name(key))
    try:
        data: bytes = blob.download_blob().readall()
    except Exception:  # noqa: BLE001 - a missing blob
        return None
    return data


LATE_CHANGES = {
    "inline": lambda be, version: be.write(WriteItem("f.txt", b"late\n", if_version=version)),
    "in blocks": lambda be, version: be.write(WriteItem("f.txt", b"late body\n" * 10_000, if_version=version)),
    "delete": lambda be, version: be.delete(DeleteItem("f.txt", if_version=version)),
}


def _makes_visible_line(line: bytes) -> bool:
    """The request line of a change a reader sees (not a block's Put Block)."""
    return line.startswith(b"DELETE ") or (line.startswith(b"PUT ") and b"comp=block&" not in line + b"&")


@pytest.fixture
def pause_on_the_wire(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any], list[bytes]]:
    """``arm(be)``: the first request that makes a change of ``f.txt`` visible waits, at the very
    write that hands its bytes to the kernel (after every check vfs makes), until the lease has run
    out, as a process stopped there would; returns the request lines of the requests so held, and
    ``b"expired"`` after each one the lease had run out for when its bytes left."""

    def arm(be: Any) -> list[bytes]:
        held: list[bytes] = []
        real = socket.socket.sendall
        name = be._name("f.txt").encode()

        def sendall(sock: socket.socket, data: Any, *args: Any) -> Any:
            line = bytes(data[:4096]).split(b"\r\n", 1)[0]
            if not held and name in line and _makes_visible_line(line):
                held.append(line)
                _pause_past_the_lease(be)
                try:
                    be._held.require_valid()
                except LeaseLost:
                    held.append(b"expired")
            return real(sock, data, *args)

        monkeypatch.setattr(socket.socket, "sendall", sendall)
        return held

    return arm


@pytest.mark.parametrize("change", list(LATE_CHANGES))
def test_a_change_that_arrives_after_the_lease_is_refused_by_the_store(
    make_backend: BackendMaker,
    azurite_ep: AzuriteEndpoint,
    pause_on_the_wire: Callable[[Any], list[bytes]],
    change: str,
) -> None:
    be = make_backend(lease_ttl=TTL, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version
    held = pause_on_the_wire(be)
    lease = be.lock(".vfs/lock", timeout=5)
    with pytest.raises(TimeoutError) as refused, lease:
        LATE_CHANGES[change](be, version)
    assert held[1:] == [b"expired"] and b"se=" in held[0] and b"sig=" in held[0]  # sent late, signed to expire
    assert lease.lost  # and the store, not vfs, said no: nothing of it landed
    assert _raw(azurite_ep, be, "f.txt") == b"one\n"
    assert "lock expired" in str(refused.value) or "refused" in str(refused.value)


def _unfenced(be: Any, ep: AzuriteEndpoint, hook: Callable[[Any], None] = connect.check_before_send) -> None:
    """``be`` sends its changes as a client with no key to sign a fence with (a SAS token, Azure
    AD) does: the shipped transport, ``hook`` as the SDK's last hook."""
    be._fenced = None
    loc = connect.parse_url(f"az://{be.container.container_name}")
    _, sdk_transport = azure_backend._transport(4)
    kwargs = {"raw_request_hook": hook, "retry_total": 0, "transport": sdk_transport}
    be.container = connect.container_client(loc, ep.storage_options, kwargs)


def test_without_the_fence_the_same_late_change_lands(
    make_backend: BackendMaker, azurite_ep: AzuriteEndpoint, pause_on_the_wire: Callable[[Any], list[bytes]]
) -> None:
    """What the fence closes: a client with no key checks its lease before sending only, and a
    stop after the last check lands the change late."""
    be = make_backend(lease_ttl=TTL, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version
    _unfenced(be, azurite_ep)
    held = pause_on_the_wire(be)
    written = []
    with pytest.raises(LeaseLost), be.lock(".vfs/lock", timeout=5):  # (found lost when let go)
        written.append(be.write(WriteItem("f.txt", b"late\n", if_version=version)))
    assert held[1:] == [b"expired"] and b"sig=" not in held[0]
    assert written and _raw(azurite_ep, be, "f.txt") == b"late\n"  # it landed after the lease ran out


def test_a_lease_lost_before_the_bytes_leave_stops_the_change_in_the_process(
    make_backend: BackendMaker, azurite_ep: AzuriteEndpoint
) -> None:
    """Without a fence, the last check is made in the connection, right before the request's
    bytes are written: a stop anywhere before it (here: in the SDK's last hook, after its own
    check) sends nothing."""
    be = make_backend(lease_ttl=TTL, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version

    def pause(request: Any) -> None:
        connect.check_before_send(request)
        if request.http_request.method == "PUT" and be._name("f.txt") in request.http_request.url:
            _pause_past_the_lease(be)

    _unfenced(be, azurite_ep, pause)
    with pytest.raises(LeaseLost), be.lock(".vfs/lock", timeout=5):
        be.write(WriteItem("f.txt", b"late\n", if_version=version))
    assert _raw(azurite_ep, be, "f.txt") == b"one\n"


def test_a_change_in_time_lands_signed_the_same_way(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend(lease_ttl=TTL, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version
    fenced: list[tuple[str, str]] = []  # (method, url) of each request the fenced client sent
    _refence(be, lambda request: fenced.append((request.http_request.method, request.http_request.url)))
    with be.lock(".vfs/lock", timeout=5):
        be.write(WriteItem("f.txt", b"two\n", if_version=version))
        be.mkdir("d")
        be.rmdir("d")
        be.delete(DeleteItem("f.txt", if_version=be.stat("f.txt").version))
    assert be.stat("f.txt") is None
    assert [method for method, _ in fenced] == ["PUT", "PUT", "DELETE", "DELETE"]
    assert all("se=" in url and "sig=" in url for _, url in fenced)
    assert not any(".vfs/lock" in url for _, url in fenced)  # the lease's own CAS is not fenced
    assert FENCE.get() is None  # nothing of it leaks out of the change


def test_a_fenced_request_carries_a_small_body_whatever_the_file_size(make_backend: BackendMaker) -> None:
    """The store checks a SAS's expiry when the request's head arrives: a body still on its way
    when the sender stops would land late. So the request that makes a big file's bytes the blob
    is a small one (the bytes went up before, in blocks no one sees)."""
    be = make_backend(lease_ttl=TTL, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version
    big = b"0123456789abcdef" * 4096  # 64 KiB
    seen: list[tuple[bool, int]] = []  # (makes it visible, body size) per fenced request
    _refence(be, lambda request: seen.append((_makes_visible(request), _body_size(request))))
    with be.lock(".vfs/lock", timeout=5):
        be.write(WriteItem("f.txt", big, if_version=version))
    assert be.read("f.txt")[0] == big
    assert len(seen) == 1 and seen[0][0] and seen[0][1] <= INLINE_BODY  # the Put Block List alone


def test_a_big_fenced_change_keeps_its_condition(make_backend: BackendMaker) -> None:
    """Sent in blocks, the write is still conditional: a stale version is refused, nothing lands."""
    be = make_backend(lease_ttl=TTL, clock_skew=0)
    stale = be.write(WriteItem("f.txt", b"one\n")).version
    be.write(WriteItem("f.txt", b"two\n"))
    with be.lock(".vfs/lock", timeout=5), pytest.raises(PreconditionFailed):
        be.write(WriteItem("f.txt", b"x" * 100_000, if_version=stale))
    assert be.read("f.txt")[0] == b"two\n"


def test_with_a_sas_token_there_is_no_key_to_fence_with(azurite_ep: AzuriteEndpoint) -> None:
    """A workspace opened with a SAS token works, its changes checked against the lease before
    each send only: the backend says it is not fenced."""
    from backends.azure import AzureBackend

    name = azurite.make_container(azurite_ep, "sas-token")
    options = {"account_url": azurite_ep.blob_url, "sas_token": azurite.account_sas(hours=1)}
    be = AzureBackend.from_url(f"az://{name}/ws", options)
    try:
        assert not be.fenced
        assert be.lock(".vfs/lock", timeout=1).resolution == 0.0
        with be.lock(".vfs/lock", timeout=5):
            be.write(WriteItem("f.txt", b"under the lease\n", if_absent=True))
        assert be.read("f.txt")[0] == b"under the lease\n"
    finally:
        be.close()
