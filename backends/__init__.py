"""Storage backends and their registry.

Adding a backend is one module (implementing :class:`backends.base.Backend` with a classmethod
``from_url(url, storage_options)``) plus one line in ``REGISTRY``. Modules are imported lazily, so
``import backends`` (and ``import vfs``) never pulls in s3fs, boto3 or the Azure SDK.
"""

from __future__ import annotations

import importlib

from backends.base import Backend, Capabilities, EscapesRoot, FileInfo, NotRegular, PreconditionFailed
from backends.values import value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any


@value(frozen=True)
class BackendEntry:
    name: str
    target: str  # "module:Class"
    schemes: tuple[str, ...]
    install_hint: str = ""

    def load(self) -> Any:
        module_name, _, class_name = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = f" ({self.install_hint})" if self.install_hint else ""
            raise ImportError(f"backend {self.name!r} is not available: {exc}{hint}") from exc
        return getattr(module, class_name)


# One line per backend, sorted by name. "fsspec" is the catch-all for any other URL scheme.
REGISTRY: dict[str, BackendEntry] = {
    "azure": BackendEntry("azure", "backends.azure:AzureBackend", ("az", "abfs", "abfss"), "pip install 'vfs[azure]'"),
    "fsspec": BackendEntry("fsspec", "backends.fsspec_any:FsspecBackend", ("*",)),
    "local": BackendEntry("local", "backends.local:LocalBackend", ("", "file", "local")),
    "memory": BackendEntry("memory", "backends.memory:MemoryBackend", ("memory",)),
    "s3": BackendEntry("s3", "backends.s3:S3Backend", ("s3", "s3a"), "pip install 'vfs[s3]'"),
}


def scheme_of(url: str) -> str:
    """``"s3://b/p"`` -> ``"s3"``; a plain path (also ``C:\\x``) -> ``""``; a chained fsspec
    URL (``simplecache::s3://...``) -> ``"::"``, which only the generic fsspec backend serves."""
    if "::" in url:
        return "::"
    head, sep, _ = url.partition("://")
    if not sep or len(head) < 2 or not head.replace("+", "").replace("-", "").isalnum():
        return ""
    return head.lower()


def entry_for_url(url: str) -> BackendEntry:
    scheme = scheme_of(url)
    for entry in REGISTRY.values():
        if scheme in entry.schemes:
            return entry
    return REGISTRY["fsspec"]


def open_backend(url: str, storage_options: dict[str, Any] | None = None) -> Backend:
    """Instantiate the backend that serves ``url``."""
    cls = entry_for_url(url).load()
    backend: Backend = cls.from_url(url, dict(storage_options or {}))
    return backend


__all__ = [
    "REGISTRY",
    "Backend",
    "BackendEntry",
    "Capabilities",
    "EscapesRoot",
    "FileInfo",
    "NotRegular",
    "PreconditionFailed",
    "entry_for_url",
    "open_backend",
    "scheme_of",
]
