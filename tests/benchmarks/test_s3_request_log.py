"""The S3 benchmark's request log: the span of a commit's wave of PUTs (``RequestLog.span``)."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.s3_latency_proxy import RequestLog
from tests.support import s3_servers


def test_the_span_covers_only_the_requests_asked_for() -> None:
    log = RequestLog()
    log.spans += [
        ("put_object", ".vfs/lock", 0.0, 0.02),  # not a file of the commit
        ("put_object", "a.py", 0.10, 0.13),
        ("head_object", "b.py", 0.05, 0.30),  # not a PUT
        ("put_object", "b.py", 0.11, 0.21),
        ("put_object", "c.py", 0.40, 0.45),  # not asked for
    ]
    span = log.span("put_object", {"a.py", "b.py"})
    assert span is not None and abs(span - 0.11) < 1e-9  # 0.10 (a.py sent) to 0.21 (b.py answered)
    assert log.span("put_object", {"zzz.py"}) is None
    assert log.span("delete_object", {"a.py"}) is None


@pytest.mark.slow  # starts SeaweedFS
def test_guarded_puts_carry_the_condition_and_the_fence_of_a_commits_puts() -> None:
    """The S3 workload's "as a commit sends them" baseline: each PUT has If-None-Match: * and goes
    out while the workspace's lease is held (so the backend fences it); the plain one has neither."""
    if not s3_servers.weed_available():
        pytest.skip(s3_servers.WEED_MISSING)
    from benchmarks.workloads import s3

    bench = s3._Bench(dict(s3.DEFAULTS["tiny"]))
    bench.start()
    try:
        backend = bench.ws.backend
        seen: list[tuple[bool, bool]] = []
        real = backend._call

        async def call(op: str, key: str, **kw: Any) -> Any:
            if op == "put_object" and "/src/mod_" in key:
                seen.append(("IfNoneMatch" in kw, backend._under_lease(key)))
            return await real(op, key, **kw)

        backend._call = call
        for guarded in (False, True):
            seen.clear()
            prepare, measure, verify = bench.bare_puts(f"g{int(guarded)}", 3, guarded=guarded)
            prepare()
            measure()
            verify()
            assert seen == [(guarded, guarded)] * 3
    finally:
        bench.close()
