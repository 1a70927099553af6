"""Tenant uploads: a short-lived SigV4 presigned POST whose key, size, kind and encryption the server fixes.

S3-triggered work takes its tenant from the object key (`incoming/<tenant>/...`, chalicelib/events.py),
so the uploader must never choose the key. The form's policy pins the exact key (no `starts-with`),
the content-length range, the kind metadata, the content type and the encryption; the SigV4 signature
covers the policy, so changing any of them (another tenant's prefix, say) makes S3 refuse the upload.
The bucket policy (deploy/package.py) denies every other writer to `incoming/`, so these forms are
the only way in.
"""
from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from . import storage
from .api_schemas import UploadForm, UploadRequest

KIND_METADATA = "x-amz-meta-crossover-kind"  # read back by EventProcessor.object_created
CONTENT_TYPES = {"job": "application/x-ndjson", "invoke": "application/json"}
# storage.encryption_args' PutObject parameters, as POST form fields.
_ENCRYPTION_FIELDS = {"ServerSideEncryption": "x-amz-server-side-encryption",
                      "SSEKMSKeyId": "x-amz-server-side-encryption-aws-kms-key-id",
                      "SSEKMSEncryptionContext": "x-amz-server-side-encryption-context"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitise_filename(filename: str) -> str:
    """The last path segment, reduced to [A-Za-z0-9._-] and starting with a letter or digit (storage.tenant_key's rule)."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE.sub("_", base).lstrip("._-")[:128]
    return cleaned or "upload"


def form_fields(kind: str, encryption: dict[str, str]) -> dict[str, str]:
    """The fields the uploader must send unchanged (besides the key and the signature's own)."""
    return {KIND_METADATA: kind, "Content-Type": CONTENT_TYPES[kind],
            **{_ENCRYPTION_FIELDS[name]: value for name, value in encryption.items()}}


def form_conditions(fields: dict[str, str], max_bytes: int) -> list[Any]:
    """Every field must match exactly, and the file must be 1..max_bytes long."""
    return [*({name: value} for name, value in fields.items()), ["content-length-range", 1, max_bytes]]


def create_upload(bucket: str, incoming_prefix: str, tenant: str, body: UploadRequest, ttl_s: int, kms_key_id: str) -> dict[str, Any]:
    """A presigned POST for one object under the tenant's incoming prefix."""
    upload_id = uuid.uuid4().hex
    key = storage.tenant_key(incoming_prefix.strip("/"), tenant, upload_id, sanitise_filename(body.filename))
    fields = form_fields(body.kind, storage.encryption_args(kms_key_id, tenant))
    # SigV4 at the regional endpoint (storage.presign_client): a form signed for us-east-1's legacy global
    # endpoint would be redirected, and redirects lose the POST.
    form = storage.presign_client().generate_presigned_post(
        Bucket=bucket, Key=key, Fields=fields, Conditions=form_conditions(fields, body.max_bytes), ExpiresIn=ttl_s)
    expires_at = (datetime.now(timezone.utc) + timedelta(seconds=ttl_s)).replace(microsecond=0).isoformat()
    return UploadForm(upload_id=upload_id, key=key, url=form["url"], fields=form["fields"], expires_at=expires_at,
                      max_bytes=body.max_bytes, kind=body.kind).model_dump(mode="json")
