"""backends.local.libc: libc's functions through _ctypes behave as ctypes.CDLL(None, use_errno=True)'s."""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from pathlib import Path

import pytest

from backends.local import libc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's libc")


def test_a_failed_call_returns_what_ctypes_returns_and_keeps_errno(tmp_path: Path) -> None:
    ours = libc.function("renameat2")
    theirs = ctypes.CDLL(None, use_errno=True).renameat2
    assert ours is not None
    missing_a, missing_b = os.fsencode(tmp_path / "a"), os.fsencode(tmp_path / "b")
    assert ours(-100, missing_a, -100, missing_b, 2) == theirs(-100, missing_a, -100, missing_b, 2) == -1
    assert libc.last_errno() == ctypes.get_errno() == errno.ENOENT


def test_a_call_does_what_it_says(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("A")
    (tmp_path / "b").write_text("B")
    exchange = libc.function("renameat2")
    assert exchange is not None
    assert exchange(-100, os.fsencode(tmp_path / "a"), -100, os.fsencode(tmp_path / "b"), 2) == 0  # RENAME_EXCHANGE
    assert ((tmp_path / "a").read_text(), (tmp_path / "b").read_text()) == ("B", "A")


def test_a_symbol_the_process_lacks_is_none() -> None:
    assert libc.function("vfs_no_such_function") is None
