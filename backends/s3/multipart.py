"""Multipart upload with a condition: objects of ``multipart_threshold`` bytes and more go up in
``part_size`` parts, and the ``CompleteMultipartUpload`` carries the write's ``If-Match`` /
``If-None-Match`` (s3fs's ``pipe_file`` drops it there, which is why this package uploads parts
itself). A failed upload is aborted, so no parts are left behind to be billed.

The parts and the completion are two steps (:meth:`MultipartUpload._upload_parts`,
:meth:`MultipartUpload._complete`): no one sees a part before the completion, so a write's
parts may be sent ahead of it (``S3Backend.write_ahead``) while only the completion waits for
the caller's turn.
"""

from __future__ import annotations

import contextlib
from typing import Any

from backends.s3.client import MiB, S3Requests

#: A multipart upload in progress: its id and the parts uploaded, in order.
Uploaded = tuple[str, list[dict[str, Any]]]


class MultipartUpload(S3Requests):
    """The multipart path of a write."""

    part_size: int = 50 * MiB
    multipart_threshold: int = 100 * MiB

    async def _multipart(self, key: str, data: bytes, cond: dict[str, str]) -> dict[str, Any]:
        return await self._complete(key, await self._upload_parts(key, data), cond)

    async def _upload_parts(self, key: str, data: bytes) -> Uploaded:
        """Create the upload and send every part (aborted if any fails)."""
        obj = self._obj(key)
        mpu = await self._call("create_multipart_upload", key, Key=obj)
        upload_id = mpu["UploadId"]
        try:
            offsets = list(range(0, len(data), self.part_size))

            async def part(index: int, start: int) -> dict[str, Any]:
                out = await self._call(
                    "upload_part",
                    key,
                    Key=obj,
                    UploadId=upload_id,
                    PartNumber=index + 1,
                    Body=data[start : start + self.part_size],
                )
                return {"PartNumber": index + 1, "ETag": out["ETag"]}

            results = await self._gather([part(i, s) for i, s in enumerate(offsets)])
            for r in results:
                if isinstance(r, BaseException):
                    raise r
            return upload_id, [r for r in results if isinstance(r, dict)]
        except BaseException:
            await self._abort(key, upload_id)
            raise

    async def _complete(self, key: str, uploaded: Uploaded, cond: dict[str, str]) -> dict[str, Any]:
        """Make the parts the object, under the write's condition (aborted if that fails)."""
        upload_id, parts = uploaded
        try:
            return await self._call(
                "complete_multipart_upload",
                key,
                Key=self._obj(key),
                UploadId=upload_id,
                MultipartUpload={"Parts": parts},
                **cond,
            )
        except BaseException:
            await self._abort(key, upload_id)
            raise

    async def _abort(self, key: str, upload_id: str) -> None:
        with contextlib.suppress(Exception):
            await self._call("abort_multipart_upload", key, Key=self._obj(key), UploadId=upload_id)
