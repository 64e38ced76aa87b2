"""``UPath("vfs::...")``: the universal_pathlib class of the ``vfs`` protocol.

Registered through the package's ``universal_pathlib.implementations`` entry point, so that
universal_pathlib uses it instead of warning that ``vfs`` is not one it knows. It adds nothing to
UPath: every operation goes through :class:`vfs.filesystem.VfsFileSystem`.
"""

from __future__ import annotations

from upath import UPath


class VfsPath(UPath):
    __slots__ = ()


__all__ = ["VfsPath"]
