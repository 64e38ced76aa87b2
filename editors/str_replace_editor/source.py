"""The text an edit is worked out on: the file decoded, or an ASCII file's bytes read in place.

An ASCII file's characters are its bytes, so the scans an exact match needs (the match itself, the
lines above it, the same lines at another indentation) run on the bytes read, with the same
offsets and the same results as on the decoded text: the 10 MB file is not copied into a str
(~1 ms of decoding and ~4 ms of fresh pages for the copy). Whatever needs the whole text as a str
(a regular expression, the tolerant rules, a rebase) asks for it with ``str()``.
"""

from __future__ import annotations

import vfs


class AsciiText:
    """The text of an ASCII file without a NUL (valid UTF-8: what decoding would give, offset for
    offset), read in place. The str methods the exact match uses; a slice is decoded (a ``str``)."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __str__(self) -> str:
        return self._data.decode("ascii")

    def __getitem__(self, span: slice) -> str:
        return self._data[span].decode("ascii")

    def __contains__(self, sub: str) -> bool:
        return _encoded(sub) in self._data

    def find(self, sub: str, start: int | None = None, end: int | None = None) -> int:
        return self._data.find(_encoded(sub), start, end)

    def rfind(self, sub: str, start: int | None = None, end: int | None = None) -> int:
        return self._data.rfind(_encoded(sub), start, end)

    def count(self, sub: str, start: int | None = None, end: int | None = None) -> int:
        return self._data.count(_encoded(sub), start, end)

    def startswith(self, prefix: str, start: int | None = None) -> bool:
        return self._data.startswith(_encoded(prefix), start)


#: The text an edit works on.
Source = str | AsciiText


def _encoded(text: str) -> bytes:
    """``text`` as the bytes it would be in the file. A non-ASCII character (a lone surrogate
    too) becomes bytes above 0x7F, which an ASCII file never holds: not found, as in the text."""
    return text.encode("utf-8", "surrogatepass")


def source_of(data: bytes, path: str) -> Source:
    """The file's text to edit: read in place when ASCII without a NUL, else decoded by
    :func:`vfs.decode_text` (which refuses binary and invalid UTF-8)."""
    if data.isascii() and b"\x00" not in data:
        return AsciiText(data)
    return vfs.decode_text(data, path)
