"""Model-facing paths <-> backend keys, with containment (the sandbox) enforced here.

A model-facing path is absolute and lives under the workspace's mount (``/workspace/src/a.py``);
a relative path is taken relative to the mount. The backend sees *keys*: relative POSIX paths
below its root. ``..`` is resolved lexically first, so it can never climb out; symlinks are
checked by the backend's ``resolve`` (see ``vfs.storage``).
"""

from __future__ import annotations

import posixpath

from vfs.errors import InvalidArgument, SandboxDenied

META_DIR = ".vfs"
MODES = ("read-only", "workspace-write", "danger-full-access")


def is_meta_name(name: str) -> bool:
    """``.vfs`` in every spelling that names the same folder on a case-insensitive or
    normalising filesystem (``.VFS``, ``.Vfs``; ``.vfs.`` and ``.vfs `` on Windows)."""
    return name.rstrip(". ").casefold() == META_DIR and name[:1] == "."


def normalize_mount(mount: str) -> str:
    if not mount.startswith("/"):
        raise InvalidArgument(f"The mount point must be an absolute path, got {mount!r}")
    norm = posixpath.normpath(mount)
    return "/" if norm.startswith("//") else norm


class PathMapper:
    """Maps model-facing paths under ``mount`` to keys under ``base_key``.

    ``base_key`` is ``""`` except for ``danger-full-access`` on local disk, where the backend is
    rooted at ``/`` and the workspace root is itself a key (so paths outside it are reachable).
    """

    def __init__(self, mount: str, mode: str, *, base_key: str = "", unfenced: bool = False) -> None:
        self.mount = normalize_mount(mount)
        self.mode = mode
        self.base_key = base_key
        self.unfenced = unfenced
        self.meta_key = f"{base_key}/{META_DIR}" if base_key else META_DIR

    def to_path(self, path: str) -> str:
        """The canonical model-facing form of ``path`` (absolute, normalised, inside the mount)."""
        if not isinstance(path, str) or not path:
            raise InvalidArgument("path must be a non-empty string")
        if "\x00" in path:
            raise InvalidArgument(f"The path {path!r} contains a NUL character")
        joined = path if path.startswith("/") else posixpath.join(self.mount, path)
        norm = posixpath.normpath(joined)
        if norm.startswith("//"):
            norm = "/" + norm.lstrip("/")
        if not self.unfenced and not self._under_mount(norm):
            raise SandboxDenied(f"The path {path} is outside the workspace {self.mount}.", path=path, mode=self.mode)
        rel = self._relative(norm)
        if rel is not None and any(is_meta_name(part) for part in rel.split("/")):
            raise SandboxDenied(
                f"The path {path} names the reserved metadata folder {META_DIR} (refused at any depth).",
                path=path,
                mode=self.mode,
            )
        return norm

    def _under_mount(self, norm: str) -> bool:
        return self.mount == "/" or norm == self.mount or norm.startswith(self.mount + "/")

    def _relative(self, norm: str) -> str | None:
        if not self._under_mount(norm):
            return None
        if norm == self.mount:
            return ""
        return norm[len(self.mount) :].lstrip("/")

    def to_key(self, path: str) -> str:
        norm = self.to_path(path)
        rel = self._relative(norm)
        if rel is None:  # unfenced access outside the mount: the key is the host path
            return norm.lstrip("/")
        if not self.base_key:
            return rel
        return f"{self.base_key}/{rel}" if rel else self.base_key

    def to_display(self, key: str) -> str:
        """The model-facing path of a backend key."""
        if self.base_key:
            if key == self.base_key:
                return self.mount
            if key.startswith(self.base_key + "/"):
                rel = key[len(self.base_key) + 1 :]
            else:
                return "/" + key
        else:
            rel = key
        if not rel:
            return self.mount
        if rel.startswith("/"):  # (posixpath.join's rule, without its call: every change is displayed)
            return rel
        return self.mount + rel if self.mount.endswith("/") else f"{self.mount}/{rel}"

    def is_meta(self, key: str) -> bool:
        return key == self.meta_key or key.startswith(self.meta_key + "/")

    def key_ok(self, key: str) -> bool:
        """Whether a key read from a record is one a model path could have produced: relative,
        normalised, inside the workspace, and nowhere near a metadata folder."""
        if not key or "\x00" in key or key.startswith("/"):
            return False
        parts = key.split("/")
        if any(p in ("", ".", "..") or is_meta_name(p) for p in parts):
            return False
        if self.unfenced or not self.base_key:
            return True
        return key.startswith(self.base_key + "/")
