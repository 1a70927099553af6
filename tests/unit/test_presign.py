"""Presigned URLs are SigV4 on the region's own endpoint. moto accepts SigV2 too, so the form is asserted:
these tests fail if the signer falls back to botocore's default (SigV2, which S3 refuses for SSE-KMS objects)."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from chalicelib import aws, storage


@pytest.fixture(params=["us-east-1", "eu-west-1"])
def region(request, monkeypatch):
    monkeypatch.setenv("AWS_REGION", request.param)
    monkeypatch.setenv("AWS_DEFAULT_REGION", request.param)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    aws.reset_clients()
    yield request.param
    aws.reset_clients()


def test_result_urls_are_sigv4_on_the_regional_endpoint(region):
    url = storage.presigned_get("crossover-prod-data-123456789012", "results/acme/job-1.jsonl", 900)
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    assert parts.scheme == "https"
    assert parts.netloc == f"crossover-prod-data-123456789012.s3.{region}.amazonaws.com"  # virtual host, regional
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Expires"] == ["900"]
    assert query["X-Amz-Credential"][0].endswith(f"/{region}/s3/aws4_request")
    assert "X-Amz-Signature" in query
    assert "AWSAccessKeyId" not in query and "Signature" not in query  # SigV2's fields


def test_the_sigv2_form_would_be_caught(region):
    """The assertions above tell the two apart: botocore's default presigner yields SigV2 here."""
    import boto3

    legacy = boto3.session.Session().client("s3").generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "k"}, ExpiresIn=60)
    query = parse_qs(urlsplit(legacy).query)
    assert "AWSAccessKeyId" in query and "X-Amz-Algorithm" not in query
