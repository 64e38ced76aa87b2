"""Azurite (Microsoft's Azure Blob Storage emulator, npm ``azurite``) on loopback for the tests.

Modelled on :mod:`tests.support.s3_servers`' SeaweedFS fixture: :func:`azurite_endpoint` starts
``azurite-blob`` on a free 127.0.0.1 port with a data folder of its own, waits until a real
PUT/GET/DELETE round trip succeeds, and stops it by PID (then removes the folder). A conftest
turns it into a session fixture::

    @pytest.fixture(scope="session")
    def azurite():
        if not azurite.available():
            pytest.skip(azurite.MISSING)
        with azurite.azurite_endpoint() as ep:
            yield ep

The binary is looked up in ``$VFS_AZURITE``, then ``~/.cache/vfs-azurite`` (where ``.ci/run``
installs it: ``npm install --prefix ~/.cache/vfs-azurite azurite``), then ``PATH``.
The account is Azurite's documented development account; nothing here mocks the SDK.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.support.s3_servers import _free_ports, _stop_process

MISSING = (
    "Azurite not installed (npm install --prefix ~/.cache/vfs-azurite azurite; needs node) "
    "or azure-storage-blob missing (pip install 'vfs[azure]')"
)

#: Azurite's well-known development account (public, documented by Microsoft; not a secret).
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

_CACHE_BIN = os.path.expanduser("~/.cache/vfs-azurite/node_modules/.bin/azurite-blob")


def azurite_binary() -> str | None:
    for candidate in (os.environ.get("VFS_AZURITE"), _CACHE_BIN, shutil.which("azurite-blob")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def available() -> bool:
    try:
        import azure.storage.blob  # noqa: F401
    except ImportError:
        return False
    return azurite_binary() is not None and shutil.which("node") is not None


class AzuriteStartError(RuntimeError):
    pass


@dataclass(frozen=True)
class AzuriteEndpoint:
    blob_url: str  # http://127.0.0.1:PORT/devstoreaccount1
    connection_string: str
    pid: int | None = None
    startup_seconds: float = 0.0
    storage_options: dict[str, Any] = field(default_factory=dict)

    def service(self) -> Any:
        """A plain SDK client for setting up and inspecting behind the backend's back."""
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(self.connection_string)


def connection_string_for(blob_url: str) -> str:
    return f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};BlobEndpoint={blob_url};"


def container_name(label: str) -> str:
    """A valid, unique container name (3-63 chars, lowercase letters, digits, single hyphens)."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:40].strip("-") or "c"
    digest = hashlib.blake2b(f"{label}:{time.time_ns()}:{os.getpid()}".encode(), digest_size=6).hexdigest()
    return f"vfs-{slug}-{digest}"


def account_sas(hours: float = 48.0) -> str:
    """An account SAS of the development account (read, write, delete, list, create on containers
    and blobs), valid for ``hours``: a credential without the key, as a user holding a token has."""
    import datetime

    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

    token: str = generate_account_sas(
        ACCOUNT,
        ACCOUNT_KEY,
        ResourceTypes(container=True, object=True),
        AccountSasPermissions(read=True, write=True, delete=True, list=True, create=True),
        expiry=datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=hours),
    )
    return token


def make_container(ep: AzuriteEndpoint, label: str) -> str:
    name = container_name(label)
    ep.service().create_container(name)
    return name


def _probe(connection_string: str) -> bool:
    """Ready when a blob round trip on a scratch container succeeds (the port alone can be open
    before the blob service answers)."""
    from azure.storage.blob import BlobServiceClient

    try:
        service = BlobServiceClient.from_connection_string(connection_string, retry_total=0)
        container = service.get_container_client("vfs-probe")
        with contextlib.suppress(Exception):
            container.create_container()
        blob = container.get_blob_client("probe")
        blob.upload_blob(b"ok", overwrite=True)
        ok: bool = blob.download_blob().readall() == b"ok"
        blob.delete_blob()
        return ok
    except Exception:  # noqa: BLE001 - any failure just means "not ready yet"
        return False


@contextlib.contextmanager
def azurite_endpoint(*, ready_timeout: float = 60.0, attempts: int = 3) -> Iterator[AzuriteEndpoint]:
    """An ``azurite-blob`` server on a free loopback port, its data in a temp folder removed
    afterwards. Raises :class:`AzuriteStartError` (with the log tail) if it does not come up."""
    binary = azurite_binary()
    if binary is None:
        raise AzuriteStartError(MISSING)
    last_log = ""
    for _attempt in range(attempts):
        data_dir = tempfile.mkdtemp(prefix="vfs-azurite-")
        (port,) = _free_ports(1)
        blob_url = f"http://127.0.0.1:{port}/{ACCOUNT}"
        conn = connection_string_for(blob_url)
        log_path = os.path.join(data_dir, "azurite.log")
        cmd = [binary, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", data_dir]
        cmd += ["--silent", "--skipApiVersionCheck", "--loose"]
        started = time.monotonic()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            deadline = started + ready_timeout
            ready = False
            while time.monotonic() < deadline and proc.poll() is None:
                if _probe(conn):
                    ready = True
                    break
                time.sleep(0.2)
            if not ready:
                with open(log_path, "rb") as f:
                    last_log = f.read()[-4000:].decode(errors="replace")
                continue
            yield AzuriteEndpoint(
                blob_url=blob_url,
                connection_string=conn,
                pid=proc.pid,
                startup_seconds=time.monotonic() - started,
                storage_options={"connection_string": conn},
            )
            return
        finally:
            _stop_process(proc)
            shutil.rmtree(data_dir, ignore_errors=True)
    raise AzuriteStartError(f"azurite-blob did not become ready ({attempts} attempts). Log tail:\n{last_log}")


_SHARED: dict[str, AzuriteEndpoint] = {}
_SHARED_STACK = contextlib.ExitStack()


def shared_endpoint() -> AzuriteEndpoint:
    """One Azurite for the whole test process (for factories that are not fixtures), stopped at exit."""
    if "azurite" not in _SHARED:
        atexit.register(_SHARED_STACK.close)
        _SHARED["azurite"] = _SHARED_STACK.enter_context(azurite_endpoint())
    return _SHARED["azurite"]


def fresh_azure_backend(label: str, endpoint: AzuriteEndpoint | None = None, **tuning: Any) -> Any:
    """A new, empty :class:`backends.azure.AzureBackend` on its own container."""
    from backends.azure import AzureBackend

    ep = endpoint if endpoint is not None else shared_endpoint()
    container = make_container(ep, label)
    opts = dict(ep.storage_options)
    opts.update({f"vfs_{k}": v for k, v in tuning.items()})
    return AzureBackend.from_url(f"az://{container}/ws", opts)


if __name__ == "__main__":  # manual check: python -m tests.support.azurite
    with azurite_endpoint() as e:
        print("azurite", e.blob_url, f"pid={e.pid}", f"{e.startup_seconds:.2f}s")
