"""The libc functions the local backend calls that :mod:`os` lacks (``renameat2``, ``syncfs``).

Through ``_ctypes``, the C half of :mod:`ctypes`: ``import ctypes`` defines some 60 classes in
Python and loads ``struct`` (~8 M instructions of every ``vfs apply``'s start-up, issue 20), of
which a call with int and bytes arguments and an int result needs one, the C int. The function
object is ctypes' own (``CFuncPtr``, found with ``dlsym`` in the running process, errno kept as
``use_errno=True`` keeps it), so a call behaves as ``ctypes.CDLL(None, use_errno=True).NAME``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from collections.abc import Callable

try:
    import _ctypes
except ImportError:  # pragma: no cover - an interpreter built without ctypes
    _LOADED = False
else:
    _LOADED = True

    class _CInt(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_int
        _type_ = "i"

    class _Function(_ctypes.CFuncPtr):  # the class of ctypes.CFUNCTYPE(c_int, use_errno=True)
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = _CInt

    class _Process:
        """What ``CFuncPtr((name, library))`` reads: a library's handle, here the process's own
        symbols (``dlopen(NULL)``), as ``ctypes.CDLL(None)``."""

        def __init__(self) -> None:
            self._handle = _ctypes.dlopen(None, os.RTLD_LOCAL)  # type: ignore[arg-type]  # NULL: the process


def function(name: str) -> Callable[..., int] | None:
    """libc's ``name`` taking ints and ``bytes`` (as ``char *``) and returning a C int; None off
    Linux or where the process has no such symbol. After a call that failed: :func:`last_errno`."""
    if not _LOADED or not sys.platform.startswith("linux"):
        return None
    try:
        found: Callable[..., int] = _Function((name, _Process()))  # type: ignore[arg-type]  # CDLL's part of it
    except (AttributeError, OSError, TypeError):  # dlsym found nothing (TypeError: another ctypes)
        return None
    return found


def last_errno() -> int:
    """The ``errno`` the last failed call of a function of this module's left (ctypes' copy)."""
    code: int = _ctypes.get_errno()
    return code
