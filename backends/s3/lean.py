"""The lean PUT: a small object's ``PutObject`` signed and sent here, past botocore's per-request
machinery (parameter validation, serializer, endpoint rules, a dozen events, its request and
header classes, the response parser), which costs ~1.2-1.4 ms of client CPU per request: most of
a 100-file commit's wave of PUTs.

What botocore decides once per client and bucket is asked of botocore once (:func:`lean_put`):
the endpoint and addressing style (its endpoint rules), the signing region, the credentials, the
HTTP session (its pool, TLS context and timeouts). Per request this module builds what a PUT
needs: the URL (the key encoded as botocore's serializer encodes it), the body's CRC32 checksum
header (botocore's default for PutObject: SeaweedFS refuses a damaged body by it, moto stores it
and a read refuses it), the condition header, and a SigV4 signature: in headers with the body's
SHA-256 signed as ``x-amz-content-sha256``, or, for a fenced request, in the query with the
lease's expiry (:mod:`backends.s3.fence`; the body then covered by its checksum alone, as
botocore's fenced request). ``tests/s3/test_s3_lean.py`` checks the signature against botocore's
signers. Before the request leaves, botocore's last event is emitted as botocore emits it,
``before-send.s3.PutObject`` with the prepared request (the lease's last check, and what tests
hook there to damage a body in transit).

Answers: 2xx is the object's ETag (and VersionId); 412, 409, 404 and 403 are definite (a failed
condition, a missing bucket, a refused or expired signature) and become the very ``ClientError``
botocore raises, parsed by botocore's parser, for ``backends.s3.errors`` to classify as for any
request. Anything else (5xx, throttling, a transport error: the request may or may not have
landed) returns :data:`UNDECIDED`, and the caller sends the request again through botocore, whose
retry policy applies from there; a ``ClientError`` of that second path then counts the lean
attempt in its ``RetryAttempts`` (:func:`count_earlier_attempt`), so a conditional PUT whose first
attempt landed is resolved as botocore's own retries are (``S3Backend._write``).

Taken only where nothing of the request depends on what this module does not do
(:meth:`LeanPut.takes`, :func:`lean_put`): SigV4 (``s3v4``) with credentials, checksums "when
supported", no proxy, no extra headers from the endpoint rules, a body under ``SMALL_BODY`` as
bytes, and no parameter but the bucket, key, body and condition; otherwise botocore sends it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import re
import time
import zlib
from typing import Any, Final
from urllib.parse import quote, urlsplit

from backends.s3 import fence

#: What :meth:`LeanPut.put` returns when the store gave no definite answer.
UNDECIDED: Final = None

#: Statuses whose answer is definite: the request was judged (and changed nothing unless 2xx).
_DEFINITE_ERRORS = frozenset({403, 404, 409, 412})

#: The parameters a lean PUT carries; any other (s3fs's ``s3_additional_kwargs``...) goes to botocore.
_PARAMS = frozenset({"Bucket", "Key", "Body", "IfNoneMatch", "IfMatch"})

#: Bucket names that are plain DNS labels (no access point ARN, nothing the endpoint rules rewrite).
_PLAIN_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")

_ALGORITHM = "AWS4-HMAC-SHA256"
_UNSIGNED = "UNSIGNED-PAYLOAD"


def _trim(value: str) -> str:
    """A header value as SigV4 signs it (outer white space dropped, inner runs made one space)."""
    return " ".join(value.split())


class Signer:
    """SigV4 for S3 on one host and region: header-signed, or query-signed for a fenced request."""

    def __init__(self, host: str, region: str, service: str = "s3") -> None:
        self.host = host
        self.region = region
        self.service = service
        self._keys: dict[tuple[str, str], bytes] = {}

    def _key(self, secret: str, day: str) -> bytes:
        key = self._keys.get((secret, day))
        if key is None:
            k = hmac.digest(f"AWS4{secret}".encode(), day.encode(), "sha256")
            for part in (self.region, self.service, "aws4_request"):
                k = hmac.digest(k, part.encode(), "sha256")
            self._keys = {(secret, day): k}  # one day, one secret at a time
            key = k
        return key

    def _signature(self, credentials: Any, stamp: str, scope: str, canonical: str) -> str:
        to_sign = f"{_ALGORITHM}\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        return hmac.new(self._key(credentials.secret_key, stamp[:8]), to_sign.encode(), "sha256").hexdigest()

    def sign_headers(self, path: str, headers: dict[str, str], body: bytes, credentials: Any, now: float) -> None:
        """Sign a PUT of ``body`` at ``path`` in its headers (``Authorization``), the body's SHA-256
        signed as ``x-amz-content-sha256``: every header of ``headers`` is signed, and ``host``."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
        headers["X-Amz-Date"] = stamp
        payload = headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        signed = {name.lower(): _trim(value) for name, value in headers.items()}
        signed["host"] = self.host
        names = sorted(signed)
        signed_names = ";".join(names)
        canonical_headers = "".join(f"{n}:{signed[n]}\n" for n in names)
        canonical = f"PUT\n{path}\n\n{canonical_headers}\n{signed_names}\n{payload}"
        scope = f"{stamp[:8]}/{self.region}/{self.service}/aws4_request"
        signature = self._signature(credentials, stamp, scope, canonical)
        headers["Authorization"] = (
            f"{_ALGORITHM} Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={signed_names}, Signature={signature}"
        )

    def sign_query(self, path: str, headers: dict[str, str], credentials: Any, now: float, expires: int) -> str:
        """The query of a PUT at ``path`` signed to expire ``expires`` seconds after ``now`` (whole
        seconds), as botocore's query signer: every header of ``headers`` and ``host`` signed, the
        payload unsigned."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
        scope = f"{stamp[:8]}/{self.region}/{self.service}/aws4_request"
        signed = {name.lower(): _trim(value) for name, value in headers.items()}
        signed["host"] = self.host
        names = sorted(signed)
        signed_names = ";".join(names)
        params = {
            "X-Amz-Algorithm": _ALGORITHM,
            "X-Amz-Credential": f"{credentials.access_key}/{scope}",
            "X-Amz-Date": stamp,
            "X-Amz-Expires": str(expires),
            "X-Amz-SignedHeaders": signed_names,
        }
        if credentials.token is not None:
            params["X-Amz-Security-Token"] = credentials.token
        query = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in params.items())
        canonical_query = "&".join(sorted(query.split("&")))
        canonical_headers = "".join(f"{n}:{signed[n]}\n" for n in names)
        canonical = f"PUT\n{path}\n{canonical_query}\n{canonical_headers}\n{signed_names}\n{_UNSIGNED}"
        return f"{query}&X-Amz-Signature={self._signature(credentials, stamp, scope, canonical)}"


class LeanPut:
    """What a small PutObject on one bucket of one client needs (resolved once: :func:`lean_put`)."""

    def __init__(self, client: Any, base_url: str, region: str, small_body: int) -> None:
        from botocore.auth import _host_from_url
        from botocore.awsrequest import AWSPreparedRequest
        from botocore.hooks import first_non_none_response
        from botocore.utils import percent_encode
        from yarl import URL

        self._client = client
        self._base_url = base_url
        self._base_path = urlsplit(base_url).path
        self.signer = Signer(_host_from_url(base_url), region)
        self._small_body = small_body
        self._encode = percent_encode
        self._url = URL
        self._prepared = AWSPreparedRequest
        self._first_response = first_non_none_response
        self._credentials = client._request_signer._credentials
        self._http = client._endpoint.http_session
        self._emit = client.meta.events.emit
        self._user_agent = client._user_agent_creator.to_string
        self._parser: Any = None

    def takes(self, kwargs: dict[str, Any]) -> bool:
        """Whether this request is one the lean path sends as botocore would."""
        body = kwargs.get("Body")
        return kwargs.keys() <= _PARAMS and isinstance(body, bytes) and len(body) < self._small_body

    async def put(self, kwargs: dict[str, Any], *, fenced: bool) -> dict[str, Any] | None:
        """Send the PUT; its botocore-shaped result, a raised ``ClientError`` for a definite
        refusal, or :data:`UNDECIDED`. ``fenced``: signed to expire with the lease."""
        body: bytes = kwargs["Body"]
        headers = {
            "x-amz-checksum-crc32": base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode(),
            "x-amz-sdk-checksum-algorithm": "CRC32",
        }
        if "IfNoneMatch" in kwargs:
            headers["If-None-Match"] = kwargs["IfNoneMatch"]
        if "IfMatch" in kwargs:
            headers["If-Match"] = kwargs["IfMatch"]
        key_path = self._encode(kwargs["Key"], safe="/~")
        path = f"{self._base_path}/{key_path}"
        url = f"{self._base_url}/{key_path}"
        credentials = self._credentials.get_frozen_credentials()
        if asyncio.iscoroutine(credentials):  # aiobotocore's (refreshable) credentials
            credentials = await credentials
        now = time.time()
        if fenced:
            expires = fence.expires_for(int(now))
            url = f"{url}?{self.signer.sign_query(path, headers, credentials, now, expires)}"
        else:
            self.signer.sign_headers(path, headers, body, credentials, now)
        headers["User-Agent"] = self._user_agent()  # unsigned, as botocore leaves it
        request = self._prepared("PUT", url, headers, body, False)
        stubbed = self._first_response(await self._emit("before-send.s3.PutObject", request=request))
        if stubbed is not None:
            return await self._answer(stubbed.status_code, stubbed.headers, lambda: stubbed.content)
        try:
            session = await self._http._get_session(None)
            async with session.request(
                "PUT",
                self._url(request.url, encoded=True),
                headers={**request.headers, "Accept-Encoding": "identity"},
                data=request.body,
            ) as response:
                status = response.status
                answer = {k.lower(): v for k, v in response.headers.items()}
                content = await response.read()  # read to its end: the connection goes back to the pool
        except (TimeoutError, OSError):
            return UNDECIDED  # the request may or may not have landed
        except Exception as exc:
            if type(exc).__module__.startswith(("aiohttp", "botocore", "aiobotocore")):
                return UNDECIDED  # a transport error, as above
            raise
        return await self._answer(status, answer, lambda: content)

    async def _answer(self, status: int, headers: dict[str, str], content: Any) -> dict[str, Any] | None:
        if status in _DEFINITE_ERRORS:
            body = content()
            if asyncio.iscoroutine(body):
                body = await body
            raise await self._error(status, headers, body)
        if not 200 <= status < 300:
            return UNDECIDED
        out: dict[str, Any] = {
            "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": headers, "RetryAttempts": 0},
            "ETag": headers.get("etag"),
        }
        if "x-amz-version-id" in headers:
            out["VersionId"] = headers["x-amz-version-id"]
        return out

    async def _error(self, status: int, headers: dict[str, str], body: bytes) -> Exception:
        """The ``ClientError`` botocore raises for this answer, parsed by botocore's parser."""
        if self._parser is None:
            self._parser = self._client._endpoint._response_parser_factory.create_parser("rest-xml")
        operation = self._client._service_model.operation_model("PutObject")
        parsed: Any = self._parser.parse(
            {"headers": headers, "status_code": status, "body": body, "context": {"operation_name": "PutObject"}},
            operation.output_shape,
        )
        if asyncio.iscoroutine(parsed):  # aiobotocore's parsers
            parsed = await parsed
        parsed.setdefault("ResponseMetadata", {})["RetryAttempts"] = 0
        code = parsed.get("Error", {}).get("Code")
        error: Exception = self._client.exceptions.from_code(code)(parsed, "PutObject")
        return error


def count_earlier_attempt(exc: BaseException) -> None:
    """Count a lean attempt that may have landed in the ``RetryAttempts`` of the error of the
    request sent again through botocore (what ``S3Backend._write`` reads to look again)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        meta = response.setdefault("ResponseMetadata", {})
        meta["RetryAttempts"] = int(meta.get("RetryAttempts") or 0) + 1


async def lean_put(client: Any, bucket: str, small_body: int) -> LeanPut | None:
    """The lean PUT for ``bucket`` on ``client``, or None where a PUT must go through botocore
    (cached on the client, per bucket)."""
    cache: dict[str, LeanPut | None] | None = getattr(client, "_vfs_lean", None)
    if cache is None:
        cache = {}
        client._vfs_lean = cache
    if bucket not in cache:
        cache[bucket] = await _resolve(client, bucket, small_body)
    return cache[bucket]


async def _resolve(client: Any, bucket: str, small_body: int) -> LeanPut | None:
    config = client.meta.config
    signer = getattr(client, "_request_signer", None)
    http: Any = getattr(getattr(client, "_endpoint", None), "http_session", None)
    if (
        not _PLAIN_BUCKET.fullmatch(bucket)
        or signer is None
        or getattr(signer, "_credentials", None) is None
        or signer.signature_version != "s3v4"
        or getattr(config, "request_checksum_calculation", None) not in (None, "when_supported")
        or getattr(client, "_ruleset_resolver", None) is None
        or not hasattr(http, "_get_session")
        or not hasattr(client, "_user_agent_creator")
    ):
        return None
    operation = client._service_model.operation_model("PutObject")
    if operation.http.get("requestUri") not in ("/{Key+}", "/{Bucket}/{Key+}"):
        return None
    context: dict[str, Any] = {
        "client_region": client.meta.region_name,
        "client_config": config,
        "has_streaming_input": operation.has_streaming_input,
        "auth_type": operation.resolved_auth_type,
        "unsigned_payload": operation.unsigned_payload,
        "auth_options": client._service_model.metadata.get("auth"),
    }
    try:
        url, headers, _ = await client._resolve_endpoint_ruleset(operation, {"Bucket": bucket, "Key": "k"}, context)
        proxied = http._proxy_config.proxy_url_for(url) is not None
    except Exception:  # noqa: BLE001 - the rules refuse it here: botocore will say why, per request
        return None
    signing = context.get("signing") or {}
    if proxied or headers or context.get("auth_type") != "v4" or signing.get("signing_name", "s3") != "s3":
        return None
    region = signing.get("region") or client.meta.region_name
    # the endpoint rules put the bucket in the URL (its host or its path; botocore drops it from
    # the operation's path on its first request), and the key's path follows it
    if not region or bucket not in url or "?" in url or "#" in url:
        return None
    return LeanPut(client, url.rstrip("/"), region, small_body)
