"""Fixtures of the adapter tests (helpers in :mod:`tests.adapters.support`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.adapters.support import HttpServer, start_http_server


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One HTTP server per test module, on a fresh local root."""
    root = tmp_path_factory.mktemp("http-root")
    logs = tmp_path_factory.mktemp("http-logs")
    server = start_http_server(root, logs, "--mount", "/workspace")
    try:
        yield server
    finally:
        status = server.stop()
        # Shut down by SIGTERM: a clean exit, and nothing a client sent crashed it.
        assert status == 0, server.stderr()
        assert "Traceback" not in server.stderr(), server.stderr()
