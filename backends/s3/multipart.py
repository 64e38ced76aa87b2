"""Multipart upload with a condition: objects of ``multipart_threshold`` bytes and more go up in
``part_size`` parts, and the ``CompleteMultipartUpload`` carries the write's ``If-Match`` /
``If-None-Match`` (s3fs's ``pipe_file`` drops it there, which is why this package uploads parts
itself). A failed upload is aborted, so no parts are left behind to be billed.
"""

from __future__ import annotations

import contextlib
from typing import Any

from backends.s3.client import MiB, S3Requests


class MultipartUpload(S3Requests):
    """The multipart path of a write."""

    part_size: int = 50 * MiB
    multipart_threshold: int = 100 * MiB

    async def _multipart(self, key: str, data: bytes, cond: dict[str, str]) -> dict[str, Any]:
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
            parts = [r for r in results if isinstance(r, dict)]
            return await self._call(
                "complete_multipart_upload",
                key,
                Key=obj,
                UploadId=upload_id,
                MultipartUpload={"Parts": parts},
                **cond,
            )
        except BaseException:
            with contextlib.suppress(Exception):
                await self._call("abort_multipart_upload", key, Key=obj, UploadId=upload_id)
            raise
