"""The client's request tuning (backends/s3/client.py): what it keeps of botocore's checks and
what it skips. Every test talks HTTP to a real server (moto, SeaweedFS)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from backends.base import WriteItem
from backends.s3 import lean
from tests.s3.conftest import BackendMaker

MARK = b"vfs-integrity-probe:"


def _corrupt_after_signing(request: Any = None, **_: Any) -> None:
    """Flip the first byte of a probe body after it was signed (a body damaged in transit)."""
    body = request.body.getvalue() if hasattr(request.body, "getvalue") else request.body
    if isinstance(body, bytes) and body.startswith(MARK):
        request.body = io.BytesIO(b"V" + body[1:])


@pytest.mark.parametrize("fenced", [False, True], ids=["plain", "fenced"])
def test_a_body_damaged_after_signing_is_never_taken_for_the_bytes_written(
    make_backend: BackendMaker, fenced: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every PUT carries a checksum of its body (botocore's CRC32, kept on: neither moto nor
    SeaweedFS checks the signed payload hash alone, and a fenced request's query signature does
    not cover the body at all). SeaweedFS refuses a damaged body; moto stores it with the
    checksum sent, and the read's validation of that checksum (kept on too) refuses it. Either
    way, damaged bytes are never returned as the file's. The probe's PUT goes the lean path
    (backends/s3/lean.py), which emits the same last event with the prepared request."""
    lean_puts: list[bytes] = []
    real_put = lean.LeanPut.put

    async def put(self: lean.LeanPut, kwargs: dict[str, Any], *, fenced: bool) -> Any:
        lean_puts.append(kwargs["Body"])
        return await real_put(self, kwargs, fenced=fenced)

    monkeypatch.setattr(lean.LeanPut, "put", put)
    backend = make_backend()
    backend.write(WriteItem("warm", b"x"))  # the client exists
    client = backend._run(lambda: backend.fs.get_s3(backend.bucket))
    client.meta.events.register_first("before-send.s3.PutObject", _corrupt_after_signing, unique_id="vfs-test-damage")
    try:
        if fenced:
            with backend.lock(".vfs/lock", timeout=5):
                written = _try_write(backend, "f", MARK + b"payload" * 10)
        else:
            written = _try_write(backend, "f", MARK + b"payload" * 10)
    finally:
        client.meta.events.unregister("before-send.s3.PutObject", unique_id="vfs-test-damage")
    assert any(body.startswith(MARK) for body in lean_puts)
    if not written:
        assert backend.stat("f") is None
    else:
        with pytest.raises(OSError, match=r"(?i)checksum"):
            backend.read("f")


def _try_write(backend: Any, key: str, data: bytes) -> bool:
    try:
        backend.write(WriteItem(key, data))
    except OSError:
        return False
    return True


def test_the_user_agent_is_built_once_per_feature_set_and_as_botocore_builds_it(make_backend: BackendMaker) -> None:
    backend = make_backend()
    backend.write(WriteItem("a", b"1"))
    backend.write(WriteItem("b", b"2"))
    client = backend._run(lambda: backend.fs.get_s3(backend.bucket))
    creator = client._user_agent_creator
    assert "to_string" in vars(creator)  # memoized on this client
    assert creator.to_string() is creator.to_string()
    assert creator.to_string() == type(creator).to_string(creator)
