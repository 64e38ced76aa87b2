"""The S3 commit lease: the shipped lease contract (acquire, exclusion, renewal, expiry, takeover,
loss) on moto and SeaweedFS, and what is S3's own: the check right before a change is sent."""

from __future__ import annotations

from typing import Any

import pytest

from backends.s3 import LeaseLost
from backends.testing import LeaseContract
from tests.s3.conftest import BackendMaker
from tests.support.s3_servers import S3Endpoint

LOCK = ".vfs/lock"


class TestS3Lease(LeaseContract):
    @pytest.fixture
    def make_client(self, make_backend: BackendMaker) -> Any:
        def make(same_as: Any = None, **tuning: Any) -> Any:
            if same_as is None:
                return make_backend(**tuning)
            return make_backend(bucket=same_as.bucket, prefix=same_as.prefix, **tuning)

        return make


def test_a_change_is_checked_again_right_before_it_is_sent(make_backend: BackendMaker, server: S3Endpoint) -> None:
    """A holder paused after the first check (signing, waiting for a connection, a retry's
    back-off) must not send: botocore's last hook before the request leaves checks the lease
    again (botocore's PUT and the lean one both emit it, after signing). The pause is simulated
    by the lease running out in a hook that runs before that check."""
    from backends.base import WriteItem

    be = make_backend(lease_ttl=30)
    lease = be.lock(LOCK, timeout=5)
    with pytest.raises(LeaseLost), lease:
        be.write(WriteItem("before.txt", b"sent while valid"))
        client = be.fs.s3  # the client that request went through

        def pause_past_the_lease(**_: object) -> None:
            lease._deadline_mono = 0.0  # as if the process stopped here for longer than the TTL

        client.meta.events.register_first("before-send.s3.PutObject", pause_past_the_lease, unique_id="test-pause-2")
        try:
            be.write(WriteItem("after.txt", b"must never be sent"))
        finally:
            client.meta.events.unregister("before-send.s3.PutObject", unique_id="test-pause-2")
    names = {
        o["Key"] for o in server.client().list_objects_v2(Bucket=be.bucket, Prefix=be._obj("")).get("Contents", [])
    }
    assert be._obj("before.txt") in names
    assert be._obj("after.txt") not in names
