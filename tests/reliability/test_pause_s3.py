"""A committer SIGSTOPped inside a multi-file commit on S3 until its lease has expired, while
another client recovers and commits; then SIGCONTed. Slow (fresh interpreters and a pause of two
lease times per trial): a handful of trials here, the campaigns are ``python -m
benchmarks.reliability pause-s3`` (moto) and ``pause-s3-weed`` (SeaweedFS)."""

from __future__ import annotations

import pytest

pytest.importorskip("moto")
pytest.importorskip("s3fs")

from benchmarks.reliability import pause as pause_s3
from tests.support import s3_servers

pytestmark = [pytest.mark.s3, pytest.mark.slow]


def _no_violation(report: pause_s3.Report, trials: int) -> None:
    if report.trials != trials:
        raise RuntimeError(f"the harness stopped early:\n{report.render()}")
    assert all(report.counts[name] == 0 for name in pause_s3.VIOLATIONS), report.render()
    assert report.failures == [], report.render()


@pytest.mark.seaweedfs
def test_paused_committer_breaks_no_promise_where_the_store_fences_it():
    if not s3_servers.weed_available():
        pytest.skip(s3_servers.WEED_MISSING)
    _no_violation(pause_s3.run_seaweedfs(4, seed=11), 4)


def test_paused_committer_on_moto_breaks_no_promise():
    """moto as the suite runs it refuses an expired signed request as S3 does (the fence's ground)."""
    _no_violation(pause_s3.run(4, seed=11), 4)


def test_every_violation_class_is_reported_even_at_zero():
    """The figures always carry each class, so a clean run is told apart from an unchecked one."""
    report = pause_s3.run(1, seed=0)
    assert report.trials == 1, report.render()
    assert set(pause_s3.VIOLATIONS) <= set(report.counts)
    assert sum(v for k, v in report.counts.items() if k.startswith("paused ")) == 1


def _judged(**changes: object) -> set[str]:
    """The violation classes of a made-up trial: a clean one (the committer was fenced and said
    so; the second client found A and committed B), with ``changes`` applied."""
    tree = {path: b"x" for path in pause_s3.KEPT} | {"mv/dst.sh": b"s"}
    fields: dict[str, object] = {
        "where": "t",
        "seen_by_second": "A",
        "second_committed": "B",
        "committer": {"committed": False, "code": "FS_STALE_VERSION"},
        "final": "B",
        "final_tree": tree,
    }
    fields.update(changes)
    return {name for name, _ in pause_s3._violations(pause_s3.Trial(**fields))}  # type: ignore[arg-type]


def test_checks_name_each_violation_class():
    tree = {path: b"x" for path in pause_s3.KEPT} | {"mv/dst.sh": b"s"}
    assert _judged() == set()
    assert _judged(final_tree={k: v for k, v in tree.items() if k != "keep.txt"}) == {"files lost"}
    assert _judged(final_tree=tree | {"mv/src.sh": b"s"}) == {"files lost"}
    assert _judged(final="mixed") == {"mixed tree", "second client's commit undone"}
    assert _judged(final="A") == {"second client's commit undone"}
    assert _judged(second_error="TimeoutError", second_committed=None, final="A") == set()  # a true refusal
    assert _judged(second_error="TimeoutError", second_committed=None, final="B") == {"second client's commit undone"}
    assert _judged(committer={"committed": True, "state": "B"}) == {"untrue report"}
    assert _judged(seen_by_second="B", second_committed="A", final="A") == {"untrue report"}
    assert _judged(committer=None) == {"untrue report"}
    assert _judged(seen_by_second="B", second_committed="A", final="A", committer={"committed": True}) == set()
