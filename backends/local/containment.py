"""Containment: every access stays below the root, even against symlinks swapped in meanwhile.

Mutations act through a handle on their parent directory (``dir_fd``), reached from the root one
level at a time with ``O_NOFOLLOW``: a symlink swapped into the path after the walk cannot redirect
them, the handle still names the directory that was checked. Where the platform has no ``dir_fd``
(Windows), the check is by path, immediately before the call. ``resolve`` follows symlinks with
``realpath`` and refuses a target outside the root.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module

from backends.base import EscapesRoot, Kind, parent_of

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def kind_of(mode: int) -> Kind:
    if stat_module.S_ISREG(mode):
        return "file"
    if stat_module.S_ISDIR(mode):
        return "directory"
    if stat_module.S_ISLNK(mode):
        return "symlink"
    return "other"


def has_dir_fd() -> bool:
    """Whether this platform's ``os`` takes ``dir_fd`` for every call a mutation makes."""
    calls = (os.open, os.stat, os.unlink, os.rename, os.link, os.mkdir, os.rmdir, os.chown)
    return all(call in os.supports_dir_fd for call in calls)


class Directory:
    """A directory that mutations act in: through an open handle (``fd``) when the platform has
    ``dir_fd``, else by path."""

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd
        self._device: int | None = None

    def device(self) -> int:
        """The device the directory is on (asked once: a batch writes many files through one handle)."""
        if self._device is None:
            self._device = os.fstat(self.fd).st_dev if self.fd is not None else os.stat(self.path).st_dev
        return self._device

    def join(self, name: str) -> str:
        return os.path.join(self.path, name)

    def _at(self, name: str) -> tuple[str, dict[str, Any]]:
        return (name, {"dir_fd": self.fd}) if self.fd is not None else (self.join(name), {})

    def lstat(self, name: str) -> os.stat_result:
        target, kw = self._at(name)
        return os.stat(target, follow_symlinks=False, **kw)

    def open(self, name: str, flags: int, mode: int) -> int:
        target, kw = self._at(name)
        return os.open(target, flags, mode, **kw)

    def unlink(self, name: str) -> None:
        target, kw = self._at(name)
        os.unlink(target, **kw)

    def mkdir(self, name: str) -> None:
        target, kw = self._at(name)
        os.mkdir(target, 0o777, **kw)

    def rmdir(self, name: str) -> None:
        target, kw = self._at(name)
        os.rmdir(target, **kw)

    def chown(self, name: str, uid: int, gid: int) -> None:
        target, kw = self._at(name)
        os.chown(target, uid, gid, follow_symlinks=False, **kw)

    def replace(self, src: str, dst: str) -> None:
        if self.fd is None:
            os.replace(self.join(src), self.join(dst))
        else:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def move_to(self, src: str, into: Directory, dst: str) -> None:
        """Rename ``src`` here to ``dst`` in the directory ``into`` (replacing what is there; on
        another filesystem: ``OSError`` EXDEV)."""
        if self.fd is None or into.fd is None:
            os.replace(self.join(src), into.join(dst))
        else:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=into.fd)

    def link(self, src: str, dst: str) -> None:
        if self.fd is None:
            os.link(self.join(src), self.join(dst))
        else:
            os.link(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Root:
    """The backend's root directory and the rules for staying inside it."""

    def __init__(self, root: str, *, dir_fd: bool) -> None:
        self.path = os.path.realpath(os.path.abspath(root))
        self.dir_fd = dir_fd
        # what a key is appended to (os.path.join's result for a relative key, without its call)
        self._prefix = self.path if self.path.endswith(os.sep) else self.path + os.sep

    def path_of(self, key: str) -> str:
        return self._prefix + key if key else self.path

    def inside(self, real: str) -> bool:
        return real == self.path or real.startswith(self.path.rstrip(os.sep) + os.sep)

    def resolve(self, key: str) -> str:
        if self._no_symlink_below(key):
            return key  # what realpath would return, with a stat per component below the root only
        real = os.path.realpath(self.path_of(key))
        if not self.inside(real):
            raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
        rel = os.path.relpath(real, self.path)
        return "" if rel == "." else rel.replace(os.sep, "/")

    def _no_symlink_below(self, key: str) -> bool:
        """Whether no component of ``key`` is a symlink (up to the first that does not exist:
        nothing below it can be one). The root's own path was resolved when it was opened, so
        realpath's stat of every folder above it (10 on a typical path) is not repeated per key."""
        parts = key.split("/")
        if os.sep != "/" or not key or any(part in ("", ".", "..") for part in parts):
            return False
        below = ""
        for part in parts:
            below = f"{below}/{part}" if below else part
            try:
                mode = os.lstat(self._prefix + below).st_mode
            except OSError:
                return True  # realpath keeps the rest as written, too
            if stat_module.S_ISLNK(mode):
                return False
        return True

    def parent(self, key: str) -> Directory:
        """The parent directory of ``key``, reached without following any symlink. vfs resolves
        keys before it mutates them, so a symlink met here was swapped in: ``EscapesRoot``."""
        parent_rel = parent_of(key)
        parts = parent_rel.split("/") if parent_rel else []
        if not self.dir_fd:
            return Directory(self._parent_by_path(key, parts), None)
        fd = os.open(self.path, _DIR_FLAGS)
        try:
            for part in parts:
                child = self._step(fd, part, key)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return Directory(self.path_of(parent_rel), fd)

    @staticmethod
    def _step(fd: int, part: str, key: str) -> int:
        try:
            return os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            # O_NOFOLLOW|O_DIRECTORY on a symlink fails with ELOOP or ENOTDIR
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat_module.S_ISLNK(
                os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
            ):
                raise EscapesRoot(errno.EACCES, f"{key}: a symlink appeared in its path", key) from exc
            raise

    def _parent_by_path(self, key: str, parts: list[str]) -> str:
        path = self.path
        for part in parts:
            path = os.path.join(path, part)
            try:
                is_link = stat_module.S_ISLNK(os.lstat(path).st_mode)
            except FileNotFoundError:
                break  # the operation itself will fail with FileNotFoundError
            if is_link:
                real = os.path.realpath(os.path.join(self.path, *parts))
                if not self.inside(real):
                    raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
                return real
        return os.path.join(self.path, *parts) if parts else self.path

    def recheck(self, directory: Directory, key: str) -> None:
        """Without handles, re-check the path right before a rename (a symlink swapped in since)."""
        if directory.fd is None:
            self._parent_by_path(key, key.split("/")[:-1])
