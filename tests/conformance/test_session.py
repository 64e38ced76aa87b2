"""Sessions and the observation policy (the peer harness's model)."""

from __future__ import annotations

import pytest

import vfs
from tests.support.trees import write_external


def test_stock_policy_intents(make_workspace):
    ws = make_workspace({"seen.txt": b"s"})
    m = ws.mount
    s = ws.session()
    with pytest.raises(vfs.NotObserved) as info:
        s.intent_for(f"{m}/seen.txt", "edit")
    assert info.value.message == f'edit requires reading "{m}/seen.txt" first'
    version = s.read(f"{m}/seen.txt").version
    assert s.intent_for(f"{m}/seen.txt", "edit") == vfs.replace_if_version(version)
    with pytest.raises(vfs.NotFound):
        s.read(f"{m}/absent.txt")
    assert s.observation(f"{m}/absent.txt") == vfs.Observation("absent")
    with pytest.raises(vfs.NotFound) as info:
        s.intent_for(f"{m}/absent.txt", "edit")
    assert info.value.message == f'cannot edit "{m}/absent.txt": not found'
    assert s.intent_for(f"{m}/absent.txt", "create") == vfs.CREATE_IF_ABSENT
    assert s.intent_for(f"{m}/never.txt", "write") == vfs.CREATE_IF_ABSENT
    assert s.intent_for(f"{m}/seen.txt", "write") == vfs.replace_if_version(version)


def test_policy_off_is_unconditional(make_workspace):
    ws = make_workspace({"a.txt": b"a"})
    s = ws.session(policy=None)
    assert s.intent_for(f"{ws.mount}/a.txt", "edit") == vfs.UNCONDITIONAL
    assert s.intent_for(f"{ws.mount}/a.txt", "create") == vfs.CREATE_IF_ABSENT


def test_observed_version_guards_the_write(make_workspace):
    ws = make_workspace({"a.txt": b"mine"})
    p = f"{ws.mount}/a.txt"
    s = ws.session()
    s.read(p)
    write_external(ws.backend, "a.txt", b"theirs")
    with pytest.raises(vfs.StaleVersion) as info, ws.transaction() as tx:
        tx.read(p)
        tx.write(p, b"edited", intent=s.intent_for(p, "edit"))
    assert info.value.message == f'cannot write "{p}": file changed since it was read'
    assert ws.read_bytes(p) == b"theirs"


def test_custom_policy_hook(make_workspace):
    class DenyAll:
        def intent(self, path, observation, operation):
            raise vfs.SandboxDenied(f"policy refuses {operation} of {path}", path=path)

    ws = make_workspace({"a.txt": b"a"})
    s = ws.session(policy=DenyAll())
    with pytest.raises(vfs.SandboxDenied, match="policy refuses edit"):
        s.intent_for(f"{ws.mount}/a.txt", "edit")
