"""JSON of the records in ``.vfs/`` (journals, decisions, checkpoints): written without :mod:`json`.

``import json`` compiles the regular expressions of its decoder and encoder (~7 M instructions,
a fifth of what vfs itself costs ``vfs apply``'s start-up: issue 20), and a commit only writes
records. So a record is encoded by json's own C encoder (``_json``), set up as ``json.dumps(obj,
sort_keys=True)`` sets it up, which gives the same text; :mod:`json` is imported when a record is
read (recovery, ``log``, ``undo``: never on a commit's path when no one left anything behind).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any


def _unserializable(obj: object) -> object:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _c_encoder() -> Any:
    """json's C encoder as ``json.dumps(sort_keys=True)`` sets it up; ``None`` where the
    interpreter has none (not CPython) or sets it up otherwise: then :mod:`json` itself."""
    try:
        from _json import encode_basestring_ascii, make_encoder  # json's C half

        # (markers: None skips the check for cycles, which records, built of fresh dicts and lists, never have)
        return make_encoder(None, _unserializable, encode_basestring_ascii, None, ": ", ", ", True, False, True)
    except (ImportError, TypeError):  # pragma: no cover - CPython 3.11-3.13 have it as above
        return None


_ENCODE = _c_encoder()


def dumps(obj: Any) -> bytes:
    """``json.dumps(obj, sort_keys=True).encode()``: keys sorted, ASCII, the default separators."""
    if _ENCODE is None:  # pragma: no cover - see _c_encoder
        import json

        return json.dumps(obj, sort_keys=True).encode()
    text: str = "".join(_ENCODE(obj, 0))
    return text.encode()


def loads(data: bytes) -> Any:
    """``json.loads``: ``ValueError`` (``UnicodeDecodeError`` included) on anything but JSON."""
    import json

    return json.loads(data)
