"""Create the resources the app uses, from deploy/resources.json (one definition for local and AWS).

Idempotent: existing resources are left as they are. Runs against whatever endpoint boto3 is
configured for (moto server locally, moto in-process in tests).
"""
from __future__ import annotations

import json
import os
from typing import Any

import boto3
from botocore.exceptions import ClientError

from chalicelib.auth import TenantStore
from chalicelib.config import RESOURCE_ENV_VARS, get_settings

TEMPLATE_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "deploy", "resources.json")
_LOGICAL_TO_ENV = {logical: env for env, logical in RESOURCE_ENV_VARS.items()}


def load_template(path: str = TEMPLATE_PATH) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def physical_name(logical_id: str) -> str:
    """The resource name the app reads from its environment for this template resource."""
    env = _LOGICAL_TO_ENV[logical_id]
    settings = get_settings()
    return os.environ.get(env) or getattr(settings, env.lower())


def create_table(dynamodb: Any, name: str, props: dict[str, Any]) -> None:
    request: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    if props.get("GlobalSecondaryIndexes"):
        request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    try:
        dynamodb.create_table(**request)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
        return
    dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    ttl = props.get("TimeToLiveSpecification")
    if ttl:
        dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)


def create_bucket(s3: Any, name: str) -> None:
    """A private bucket with default encryption (SSE-S3 locally: moto has no key policy to enforce)."""
    try:
        s3.create_bucket(Bucket=name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    s3.put_public_access_block(Bucket=name, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True})


def bootstrap(tenants: dict[str, tuple[str, tuple[str, ...]]] | None = None) -> None:
    """Create every table and bucket in the template, then the given tenants {api_key: (tenant, roles)}."""
    dynamodb = boto3.client("dynamodb")
    s3 = boto3.client("s3")
    for logical_id, resource in load_template()["Resources"].items():
        if logical_id not in _LOGICAL_TO_ENV:
            continue
        if resource["Type"] == "AWS::DynamoDB::Table":
            create_table(dynamodb, physical_name(logical_id), resource["Properties"])
        elif resource["Type"] == "AWS::S3::Bucket":
            create_bucket(s3, physical_name(logical_id))
    store = TenantStore(get_settings().tenants_table, 0, dynamodb)
    for api_key, (tenant, roles) in (tenants or {}).items():
        store.put(tenant, api_key, roles)


def local_tenants() -> dict[str, tuple[str, tuple[str, ...]]]:
    """The development tenants: `dev` (key from CROSSOVER_DEV_API_KEY, default dev-key) and an ops key."""
    return {
        os.environ.get("CROSSOVER_DEV_API_KEY", "dev-key"): ("dev", ("invoke",)),
        os.environ.get("CROSSOVER_OPS_API_KEY", "ops-key"): ("ops", ("invoke", "ops")),
    }


if __name__ == "__main__":
    bootstrap(local_tenants())
    print("bootstrap: resources and tenants ready")
