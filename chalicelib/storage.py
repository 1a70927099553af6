"""S3 helpers: per-tenant keys, encryption on every write, short-lived presigned reads."""
from __future__ import annotations

import base64
import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from . import aws

if TYPE_CHECKING:
    from botocore.config import Config

_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def tenant_key(area: str, tenant: str, *parts: str) -> str:
    """`<area>/<tenant>/<parts...>`; every segment is checked so no '..' or '/' can escape the tenant prefix."""
    for segment in (area, tenant, *parts):
        if not _SAFE_SEGMENT.match(segment) or segment in (".", ".."):
            raise ValueError(f"unsafe S3 key segment {segment!r}")
    return "/".join((area, tenant, *parts))


def encryption_args(kms_key_id: str, tenant: str | None) -> dict[str, str]:
    """SSE-KMS with the tenant in the encryption context (IAM can scope keys per tenant); SSE-S3 without a key.
    tenant=None is for operator data (cost reports): S3's default context, the object's ARN, which the key
    policy's OpsReportsThroughS3 statement allows for the reports bucket only."""
    if not kms_key_id:
        return {"ServerSideEncryption": "AES256"}
    if tenant is None:
        return {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": kms_key_id}
    context = base64.b64encode(json.dumps({"tenant": tenant}).encode()).decode()
    return {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": kms_key_id, "SSEKMSEncryptionContext": context}


def put_text(bucket: str, key: str, text: str, kms_key_id: str, tenant: str | None, content_type: str = "application/x-ndjson") -> None:
    """Every S3 write of ours goes through here, encrypted by `encryption_args`."""
    aws.client("s3").put_object(Bucket=bucket, Key=key, Body=text.encode("utf-8"), ContentType=content_type,
                                **encryption_args(kms_key_id, tenant))


def get_text(bucket: str, key: str, max_bytes: int) -> str:
    """Read an object as UTF-8, refusing anything larger than max_bytes (read is bounded too)."""
    body = aws.client("s3").get_object(Bucket=bucket, Key=key)["Body"]
    data = body.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"object larger than {max_bytes} bytes")
    return data.decode("utf-8")


@lru_cache(maxsize=1)
def _presign_config() -> "Config":
    from botocore.config import Config

    # SigV4 on the region's own endpoint (bucket.s3.<region>.amazonaws.com). Without signature_version,
    # botocore presigns with SigV2 (AWSAccessKeyId=&Signature=), which S3 refuses for SSE-KMS objects
    # and in every region opened since 2014; moto accepts both, so tests assert the form (tests/unit/test_presign.py).
    return Config(signature_version="s3v4", s3={"addressing_style": "virtual", "us_east_1_regional_endpoint": "regional"})


def presign_client() -> Any:
    """The one S3 client every presigned URL or form is made with (GET results, POST uploads)."""
    return aws.client("s3", _presign_config())


def presigned_get(bucket: str, key: str, ttl_s: int) -> str:
    return presign_client().generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=ttl_s)


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
