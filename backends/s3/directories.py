"""Directories on S3, which has none: a directory is a key prefix.

``mkdir`` writes an empty *marker* object ``<key>/`` (created with ``If-None-Match: *``), so an
empty directory made by vfs is listable; ``rmdir`` removes the marker (``ENOTEMPTY`` if anything
else is below it). A prefix with children is a directory whether or not it has a marker, and it
vanishes when its last child is deleted, unless it has a marker. If both an object ``k`` and a
prefix ``k/`` exist, ``k`` is reported as the file. Misses are explained here too, as a
filesystem would (``IsADirectoryError``, ``NotADirectoryError``), since that takes listing.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Sequence
from typing import Any, TypeVar

from backends.base import FileInfo, iter_parents, miss_verdict, parent_of
from backends.s3 import errors, versions
from backends.s3.client import S3Requests

T = TypeVar("T")


class PrefixDirectories(S3Requests):
    """Stat, list, mkdir, rmdir and the explanation of misses, over key prefixes."""

    #: MaxKeys per listing page (None: the server's default); tests make pages small.
    _list_page_size: int | None = None

    async def _has_children(self, key: str) -> bool:
        out = await self._calls("list_objects_v2", key, Prefix=self._dir_prefix(key), MaxKeys=1)
        return bool(out.get("KeyCount") or out.get("Contents") or out.get("CommonPrefixes"))

    async def _stat(self, key: str) -> FileInfo | None:
        if key == "":
            return FileInfo("", "directory")
        head, is_dir = await asyncio.gather(self._head(key), self._has_children(key))
        if head is not None:
            return head
        return FileInfo(key, "directory") if is_dir else None

    async def _missing(self, key: str, *, want: str) -> OSError:
        """Why there is no ``want`` ("file" or "directory") at ``key``, as a filesystem would say.

        One round trip, on misses only: the prefix, the object itself and every ancestor at once.
        """
        ancestors = list(iter_parents(key))
        is_dir, here, *heads = await asyncio.gather(
            self._has_children(key), self._head(key), *(self._head(a) for a in ancestors)
        )
        return miss_verdict(key, want, bool(is_dir), here, heads)

    async def _entries(self, key: str, max_pages: int = 4) -> tuple[set[str], set[str]] | None:
        """Keys of the objects and of the "subdirectories" directly under ``key`` (``None``: more
        than ``max_pages`` pages to list)."""
        prefix = self._dir_prefix(key)
        files: set[str] = set()
        dirs: set[str] = set()
        token: str | None = None
        for _ in range(max_pages):
            kw: dict[str, Any] = {"Prefix": prefix, "Delimiter": "/"}
            if token:
                kw["ContinuationToken"] = token
            page = await self._calls("list_objects_v2", key, **kw)
            for found, entries, field in (
                (files, page.get("Contents"), "Key"),
                (dirs, page.get("CommonPrefixes"), "Prefix"),
            ):
                for entry in entries or []:
                    name = str(entry[field])[len(prefix) :].rstrip("/")
                    if name and "/" not in name:
                        found.add(f"{key}/{name}" if key else name)
            if not page.get("IsTruncated"):
                return files, dirs
            token = page.get("NextContinuationToken")
        return None

    async def _child_prefixes(self, key: str, max_pages: int = 4) -> set[str] | None:
        """Keys of the "subdirectories" directly under ``key`` (``None``: too many to list)."""
        entries = await self._entries(key, max_pages)
        return None if entries is None else entries[1]

    async def _list(self, key: str) -> list[FileInfo]:
        prefix = self._dir_prefix(key)
        files: dict[str, FileInfo] = {}
        dirs: dict[str, FileInfo] = {}
        seen_anything = False
        token: str | None = None
        while True:
            kw: dict[str, Any] = {"Prefix": prefix, "Delimiter": "/"}
            if self._list_page_size:
                kw["MaxKeys"] = self._list_page_size
            if token:
                kw["ContinuationToken"] = token
            page = await self._calls("list_objects_v2", key, **kw)
            for obj in page.get("Contents", []) or []:
                seen_anything = True
                name = str(obj["Key"])[len(prefix) :]
                if not name or "/" in name:  # the directory's own marker (or a malformed key)
                    continue
                child = f"{key}/{name}" if key else name
                files[child] = FileInfo(
                    child, "file", int(obj.get("Size", 0)), None, obj.get("ETag"), versions.mtime(obj)
                )
            for cp in page.get("CommonPrefixes", []) or []:
                seen_anything = True
                name = str(cp["Prefix"])[len(prefix) :].rstrip("/")
                if not name or "/" in name:
                    continue
                child = f"{key}/{name}" if key else name
                dirs[child] = FileInfo(child, "directory")
            if not page.get("IsTruncated"):
                break
            token = page.get("NextContinuationToken")
        if not seen_anything and key != "":
            raise await self._missing(key, want="directory")
        if files and await self._versioning() is not False:
            # Listings carry no VersionId: on a versioned (or unknown) bucket ask each object.
            heads = await self._gather([self._head(k) for k in files])
            for k, h in zip(list(files), heads, strict=True):
                if isinstance(h, BaseException):
                    raise h
                if h is None:  # deleted meanwhile
                    del files[k]
                else:
                    files[k] = h
        for k in files:
            dirs.pop(k, None)  # object "k" and prefix "k/" both exist: report the file
        return [*files.values(), *dirs.values()]

    async def _mkdir(self, key: str) -> None:
        if key == "":
            raise FileExistsError(errno.EEXIST, "File exists", key)
        parent = parent_of(key)
        here, up = await asyncio.gather(self._stat(key), self._stat(parent))
        if here is not None:
            raise FileExistsError(errno.EEXIST, "File exists", key)
        if up is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", parent)
        if up.kind != "directory":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
        try:
            await self._call("put_object", key, Key=self._dir_prefix(key), Body=b"", IfNoneMatch="*")
        except Exception as exc:
            if not errors.is_precondition(errors.error_parts(exc)):
                raise errors.translate(exc, key) from exc
            if await self._stat(key) is not None:
                raise FileExistsError(errno.EEXIST, "File exists", key) from None
            # SeaweedFS keeps an emptied implicit directory in its filer: invisible to listings,
            # but it fails If-None-Match on "<dir>/". Nothing is visible there, and a marker is
            # empty, so an unconditional marker write loses nothing.
            await self._calls("put_object", key, Key=self._dir_prefix(key), Body=b"")

    async def _rmdir(self, key: str) -> None:
        if key == "":
            raise OSError(errno.EBUSY, "cannot remove the root", key)
        marker = self._dir_prefix(key)
        out = await self._calls("list_objects_v2", key, Prefix=marker, MaxKeys=2)
        keys = [str(o["Key"]) for o in out.get("Contents", []) or []]
        if not keys and not out.get("CommonPrefixes"):
            if await self._head(key) is not None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
            # Nothing below it: gone with its last file, as prefixes go. A server with a real
            # directory tree (SeaweedFS's filer) still lists the emptied folder in its parent until
            # the folder's own key is deleted: delete it (on others, a delete of nothing).
            await self._calls("delete_object", key, Key=marker)
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", key)
        if any(k != marker for k in keys) or out.get("CommonPrefixes"):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", key)
        await self._calls("delete_object", key, Key=marker)

    async def _explain_misses(self, keys: Sequence[str], results: list[T | BaseException]) -> None:
        """Tell the plain misses of a batch (``FileNotFoundError`` in ``results``) apart from
        directories, in place: one LIST of the parent for a folder with several misses (new files
        usually share one), one LIST per key otherwise."""
        misses: dict[str, list[int]] = {}
        for index, (key, result) in enumerate(zip(keys, results, strict=True)):
            if isinstance(result, FileNotFoundError):
                misses.setdefault(parent_of(key), []).append(index)
        shared = [p for p, indexes in misses.items() if len(indexes) > 1]
        listings = dict(zip(shared, await self._gather([self._child_prefixes(p) for p in shared]), strict=True))
        single = [i for p, indexes in misses.items() for i in indexes if not isinstance(listings.get(p), set)]
        verdicts = dict(zip(single, await self._gather([self._has_children(keys[i]) for i in single]), strict=True))
        for parent, indexes in misses.items():
            for index in indexes:
                listing = listings.get(parent)
                is_dir = keys[index] in listing if isinstance(listing, set) else verdicts[index]
                if isinstance(is_dir, BaseException):
                    results[index] = is_dir
                elif is_dir:
                    results[index] = IsADirectoryError(errno.EISDIR, "Is a directory", keys[index])
