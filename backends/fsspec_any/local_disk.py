"""Local disk through fsspec's ``LocalFileSystem``: what plain fsspec calls cannot do there
(publish a write atomically and durably, create a lock file exclusively, keep keys inside the root
through symlinks), done with ``os`` calls."""

from __future__ import annotations

import contextlib
import errno
import os

from backends.base import EscapesRoot, PreconditionFailed, temp_name


def publish(key: str, path: str, data: bytes, *, if_absent: bool, durable: bool) -> None:
    """Write ``data`` to a temp file beside ``path`` (flushed when ``durable``) and publish it:
    ``os.link`` for a create (fails if something is there), ``os.replace`` otherwise."""
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, temp_name())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if if_absent:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise PreconditionFailed(errno.EEXIST, "already exists", key) from None
        else:
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    if not durable:
        return
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def create_exclusive(path: str, body: bytes) -> bool:
    """Create ``path`` holding ``body``, flushed; False if it exists already."""
    try:
        with open(path, "xb") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
    except FileExistsError:
        return False
    return True


def resolve(root: str, path: str, key: str) -> str:
    """The key of ``path``'s real location below ``root``; ``EscapesRoot`` if it is outside."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
    return os.path.relpath(real, real_root).replace(os.sep, "/") if real != real_root else ""
