"""The S3 benchmark's request log: the span of a commit's wave of PUTs (``RequestLog.span``)."""

from __future__ import annotations

from benchmarks.s3_latency_proxy import RequestLog


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
