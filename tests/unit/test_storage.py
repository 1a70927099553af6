"""S3 writes in one place: SSE-KMS with the tenant's encryption context, SSE-S3 without a key."""
from __future__ import annotations

import base64
import json

import pytest

from chalicelib import aws, storage


def test_tenant_data_is_encrypted_under_the_tenants_context() -> None:
    args = storage.encryption_args("alias/crossover", "acme")
    assert args["ServerSideEncryption"] == "aws:kms" and args["SSEKMSKeyId"] == "alias/crossover"
    assert json.loads(base64.b64decode(args["SSEKMSEncryptionContext"])) == {"tenant": "acme"}
    assert storage.encryption_args("", "acme") == {"ServerSideEncryption": "AES256"}
    # Operator data (cost reports): S3's own context (the object ARN), no tenant.
    assert storage.encryption_args("alias/crossover", None) == {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "alias/crossover"}


def test_put_text_writes_an_encrypted_object_through_the_shared_session() -> None:
    from moto import mock_aws

    with mock_aws():
        aws.reset_clients()
        s3 = aws.client("s3")
        s3.create_bucket(Bucket="data")
        key_id = aws.client("kms").create_key()["KeyMetadata"]["KeyId"]
        storage.put_text("data", storage.tenant_key("results", "acme", "job-1.jsonl"), storage.jsonl([{"a": 1}]), key_id, "acme")
        head = s3.head_object(Bucket="data", Key="results/acme/job-1.jsonl")
        assert head["ServerSideEncryption"] == "aws:kms" and head["ContentType"] == "application/x-ndjson"
        assert storage.get_text("data", "results/acme/job-1.jsonl", 100) == '{"a": 1}\n'
        with pytest.raises(ValueError):
            storage.get_text("data", "results/acme/job-1.jsonl", 3)
    aws.reset_clients()
