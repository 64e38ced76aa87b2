"""The names vfs reads from ``.vfs/`` (txids, digests, sessions, checkpoints, temp files) are
checked without ``re`` (start-up, issue 20): the checks accept exactly what the patterns they
replaced accept, ASCII digits only."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from backends.base import is_temp_name, temp_name
from vfs.txlog import _is_txid, new_txid, valid_checkpoint_name, valid_session_id

TXID = re.compile(r"[0-9]{20}-[0-9a-f]{8}")
SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
CHECKPOINT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TEMP = re.compile(r"\.vfs-tmp-[0-9a-f]{32}")

CHARS = st.sampled_from("0123456789abcdefxyzABCXYZ-._: \n\u0663\u00e9/")


def _near(real: str) -> st.SearchStrategy[str]:
    """Strings near a real name: cut, extended, one character changed."""
    return st.tuples(st.integers(0, len(real)), st.text(CHARS, max_size=3), st.text(CHARS, max_size=2)).map(
        lambda t: real[: t[0]] + t[1] + real[t[0] + len(t[1]) :] + t[2]
    )


@settings(max_examples=2000, deadline=None)
@given(st.text(CHARS, max_size=70) | _near(new_txid()) | _near(temp_name()))
def test_the_checks_accept_what_the_patterns_accept(text: str) -> None:
    assert _is_txid(text) == bool(TXID.fullmatch(text))
    assert valid_session_id(text) == bool(SESSION.fullmatch(text))
    assert valid_checkpoint_name(text) == bool(CHECKPOINT.fullmatch(text))
    assert is_temp_name(text) == bool(TEMP.fullmatch(text))


def test_what_vfs_makes_passes_and_other_digits_do_not() -> None:
    assert _is_txid(new_txid()) and is_temp_name(temp_name())
    assert not _is_txid("\u0663" * 20 + "-0123abcd")  # \d would have taken Arabic-Indic digits
    assert valid_session_id("s-1:2") and not valid_checkpoint_name("s-1:2")
    assert valid_checkpoint_name("a" * 64) and not valid_checkpoint_name("a" * 65)
