"""Writers that bypass vfs (an editor saving by rename, a logger appending) race vfs's conditional
writes on one local file. A write landing between vfs's check and its publish is never
overwritten (deterministic tests); the campaign (``python -m benchmarks.reliability
races-external``) counts what the remaining POSIX residues still lose under load."""

from __future__ import annotations

import os

import pytest

from backends.base import DeleteItem, PreconditionFailed, WriteItem
from backends.local import LocalBackend
from backends.local import setaside as setaside_module
from benchmarks.reliability import races

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")


def _needs_exchange(root: str) -> None:
    backend = LocalBackend(root)
    directory = backend._check_parent("x")
    try:
        if not setaside_module.exchange_works(directory):
            pytest.skip("no renameat2(RENAME_EXCHANGE) here: the declared check-then-rename window applies")
    finally:
        directory.close()


def _check(report: races.Report, external_writes: int) -> None:
    """Everything but the lost count must hold every time: no writer died, no temp file left, every
    external write accounted for, and the race was real (vfs both won and was refused).

    Lost external writes are reported, not asserted zero: under heavy load the campaign still
    loses about 1 in 2,500 to 6,000 of them through the two residues POSIX leaves (an append
    through a handle opened before the swap and written after the old file was dropped; an
    external read-modify-write that read a refused write during its microseconds of visibility).
    The deterministic tests below pin what the protocol does guarantee."""
    others = [f for f in report.failures if "LOST external write" not in f]
    assert others == [], report.render()
    counts = report.counts
    assert counts["external writes"] == external_writes
    accounted = external_writes - counts.get("external writes kept in a .vfs-kept-* file", 0)
    assert 0 <= counts["external writes lost"] <= accounted, report.render()
    assert counts["vfs conditional writes won"] > 0, report.render()
    assert counts["vfs conditional writes refused (stale)"] > 0, report.render()


def test_external_replace_and_append_writers_round(tmp_path):
    _needs_exchange(str(tmp_path))
    report = races.run_external(1, seed=2, appenders=1, replacers=1, vfs_writers=2, writes=150)
    _check(report, 300)


@pytest.mark.slow
def test_external_writers_campaign_2400_writes(tmp_path):
    _needs_exchange(str(tmp_path))
    report = races.run_external(3, seed=7, appenders=1, replacers=1, vfs_writers=2, writes=400)
    _check(report, 2400)


# -- the protocol's decisions, one at a time (deterministic) -------------------------------------


class WriteInTheWindow(LocalBackend):
    """Runs ``meddle`` (a write that bypasses vfs) after the conditional write's own check and
    staging, immediately before it publishes: the window the set-aside protocol closes."""

    meddle = staticmethod(lambda: None)

    def _publish(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.meddle()
        return super()._publish(*args, **kwargs)


def _bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _append(path: str, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def _replace(path: str, data: bytes) -> None:
    with open(path + ".ext", "wb") as handle:
        handle.write(data)
    os.replace(path + ".ext", path)


@pytest.mark.parametrize("how", ["append", "replace"])
def test_a_write_landing_just_before_the_publish_survives(tmp_path, how):
    _needs_exchange(str(tmp_path))
    path = str(tmp_path / "f.txt")
    backend = WriteInTheWindow(str(tmp_path))
    version = backend.write(WriteItem("f.txt", b"one\n")).version
    backend.meddle = (lambda: _append(path, b"theirs\n")) if how == "append" else (lambda: _replace(path, b"theirs\n"))
    with pytest.raises(PreconditionFailed):
        backend.write(WriteItem("f.txt", b"mine\n", if_version=version))
    expected = b"one\ntheirs\n" if how == "append" else b"theirs\n"
    assert _bytes(path) == expected
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]  # nothing set aside is left behind


def test_the_swap_check_itself_refuses_a_change_the_early_check_missed(tmp_path, monkeypatch):
    """The early refusal is skipped: the write swaps in, finds the old file changed, swaps back."""
    _needs_exchange(str(tmp_path))
    monkeypatch.setattr(setaside_module, "_still_there", lambda *args: None)
    path = str(tmp_path / "f.txt")
    backend = WriteInTheWindow(str(tmp_path))
    version = backend.write(WriteItem("f.txt", b"one\n")).version
    backend.meddle = lambda: _append(path, b"theirs\n")
    with pytest.raises(PreconditionFailed):
        backend.write(WriteItem("f.txt", b"mine\n", if_version=version))
    assert _bytes(path) == b"one\ntheirs\n"
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]


class WriteAfterTheRecheck(LocalBackend):
    """Without the protocol, the last check is by path right before the rename: meddle after it."""

    meddle = staticmethod(lambda: None)

    def _recheck(self, item):  # type: ignore[no-untyped-def]
        super()._recheck(item)
        self.meddle()


def test_without_the_protocol_the_window_loses_the_write(tmp_path):
    """What the protocol closes: with ``set_aside=False`` a write between the last check and the
    rename is overwritten."""
    path = str(tmp_path / "f.txt")
    backend = WriteAfterTheRecheck(str(tmp_path), set_aside=False)
    version = backend.write(WriteItem("f.txt", b"one\n")).version
    backend.meddle = lambda: _append(path, b"theirs\n")
    backend.write(WriteItem("f.txt", b"mine\n", if_version=version))
    assert _bytes(path) == b"mine\n"


class DeleteInTheWindow(LocalBackend):
    meddle = staticmethod(lambda: None)

    def _delete_checked(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.meddle()
        return super()._delete_checked(*args, **kwargs)


def test_a_conditional_delete_keeps_a_write_landing_before_it(tmp_path, monkeypatch):
    _needs_exchange(str(tmp_path))
    path = str(tmp_path / "f.txt")
    backend = DeleteInTheWindow(str(tmp_path))
    version = backend.write(WriteItem("f.txt", b"one\n")).version
    backend.meddle = lambda: _append(path, b"theirs\n")
    with pytest.raises(PreconditionFailed):
        backend.delete(DeleteItem("f.txt", if_version=version))
    assert _bytes(path) == b"one\ntheirs\n"
    assert sorted(os.listdir(tmp_path)) == ["f.txt"]
