"""Text decoding and encoding shared by both editors: strict UTF-8, BOM kept aside, no NULs.

Line endings are never normalised here: editors work on the decoded string and every byte outside
the edited span comes back unchanged through :func:`encode_text`.
"""

from __future__ import annotations

from vfs.errors import NotText

BOM = b"\xef\xbb\xbf"


def has_bom(data: bytes) -> bool:
    return data.startswith(BOM)


def decode_text(data: bytes, path: str | None = None) -> str:
    """Strict UTF-8 without the BOM; ``NotText`` for binary (a NUL byte) or invalid UTF-8."""
    where = f" {path}" if path else ""
    if b"\x00" in data:
        raise NotText(f"The file{where} is binary (it contains NUL bytes); only UTF-8 text can be edited.", path=path)
    body = data[len(BOM) :] if has_bom(data) else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(
            f"The file{where} is not valid UTF-8 text (invalid byte at offset {exc.start}); "
            "only UTF-8 text can be edited.",
            path=path,
        ) from None


def encode_text(text: str, *, bom: bool = False) -> bytes:
    data = text.encode("utf-8")
    return BOM + data if bom else data


def dominant_newline(text: str) -> str:
    """The first line ending in ``text`` (``"\\r\\n"``, ``"\\r"`` or ``"\\n"``); ``"\\n"`` if none."""
    for index, char in enumerate(text):
        if char == "\n":
            return "\n"
        if char == "\r":
            return "\r\n" if text[index + 1 : index + 2] == "\n" else "\r"
    return "\n"
