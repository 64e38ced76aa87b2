"""The Azure commit lease (the shared CasLease on a lease blob) on Azurite: the shipped lease
contract (acquire, exclusion, renewal, expiry, takeover, loss) against Azure's If-Match /
If-None-Match."""

from __future__ import annotations

from typing import Any

import pytest

from backends.testing import LeaseContract
from tests.azure.conftest import BackendMaker

pytestmark = pytest.mark.azurite


class TestAzureLease(LeaseContract):
    @pytest.fixture
    def make_client(self, make_backend: BackendMaker) -> Any:
        def make(same_as: Any = None, **tuning: Any) -> Any:
            if same_as is None:
                return make_backend(**tuning)
            return make_backend(container=same_as.container.container_name, prefix=same_as.prefix, **tuning)

        return make
