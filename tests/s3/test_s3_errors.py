"""backends.s3.errors: botocore failures classified and translated (real botocore exception types,
built the way botocore builds them from a response)."""

from __future__ import annotations

import errno

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from backends.base import PreconditionFailed
from backends.s3 import errors


def _client_error(status: int, code: str, retries: int = 0) -> ClientError:
    response = {
        "Error": {"Code": code, "Message": "m"},
        "ResponseMetadata": {"HTTPStatusCode": status, "RetryAttempts": retries},
    }
    return ClientError(response, "PutObject")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "code", "expected", "err"),
    [
        (412, "PreconditionFailed", PreconditionFailed, errno.ESTALE),
        (409, "ConditionalRequestConflict", PreconditionFailed, errno.ESTALE),
        (404, "NoSuchKey", FileNotFoundError, errno.ENOENT),
        (403, "AccessDenied", PermissionError, errno.EACCES),
        (400, "EntityTooLarge", OSError, errno.EFBIG),
        (500, "InternalError", OSError, errno.EIO),
    ],
)
def test_client_errors_become_builtin_errors(status: int, code: str, expected: type, err: int) -> None:
    translated = errors.translate(_client_error(status, code), "k")
    assert type(translated) is expected and translated.errno == err  # type: ignore[attr-defined]


def test_a_bare_412_without_condition_is_a_precondition() -> None:
    # SeaweedFS: status only, no "Condition" field (s3fs would not recognise it)
    parts = errors.error_parts(_client_error(412, "412", retries=2))
    assert parts is not None and errors.is_precondition(parts) and parts.retries == 2


def test_transport_errors_are_io_errors_and_others_pass_through() -> None:
    translated = errors.translate(EndpointConnectionError(endpoint_url="http://x"), "k")
    assert isinstance(translated, OSError) and translated.errno == errno.EIO
    value_error = ValueError("not S3's")
    assert errors.translate(value_error, "k") is value_error
