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

from chalicelib import aws
from chalicelib.auth import TenantStore
from chalicelib.config import RESOURCE_ENV_VARS, env_default, get_settings
from stage.chalice import queue_settings

TEMPLATE_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "deploy", "resources.json")
_LOGICAL_TO_ENV = {logical: env for env, logical in RESOURCE_ENV_VARS.items()}


def load_template(path: str = TEMPLATE_PATH) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def physical_name(logical_id: str) -> str:
    """The resource name the app reads from its environment for this template resource."""
    env = _LOGICAL_TO_ENV[logical_id]
    return os.environ.get(env) or str(env_default(env))


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
        if aws.error_code(exc) != "ResourceInUseException":
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
        if aws.error_code(exc) not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    s3.put_public_access_block(Bucket=name, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True})


STATE_MACHINE_PATH = os.path.join(os.path.dirname(TEMPLATE_PATH), "..", "statemachines", "long_job.asl.json")


def create_queue(sqs: Any, name: str, props: dict[str, Any]) -> str:
    """The queue and, when the template gives it a redrive policy, its dead-letter queue."""
    attributes = {"VisibilityTimeout": str(props.get("VisibilityTimeout", 30))}
    if "RedrivePolicy" in props:
        dlq_name = f"{name[:-5]}-dlq.fifo" if name.endswith(".fifo") else f"{name}-dlq"
        dlq_url = sqs.create_queue(QueueName=dlq_name, Attributes={"FifoQueue": "true"} if name.endswith(".fifo") else {})["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(props["RedrivePolicy"]["maxReceiveCount"])})
    fifo = bool(props.get("FifoQueue"))
    if fifo:
        attributes.update({"FifoQueue": "true", "ContentBasedDeduplication": str(props.get("ContentBasedDeduplication", False)).lower()})
    return sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]


def render_state_machine(substitutions: dict[str, str]) -> str:
    """The ASL with its ${...} placeholders filled, as CloudFormation's DefinitionSubstitutions does."""
    with open(STATE_MACHINE_PATH, encoding="utf-8") as handle:
        text = handle.read()
    for name, value in substitutions.items():
        text = text.replace("${%s}" % name, value)
    json.loads(text)  # fail here, not in Step Functions, if a placeholder was left
    return text


def local_substitutions(queue_url: str) -> dict[str, str]:
    from chalicelib.jobs.timing import runtime_gpu_timeouts

    timeouts = runtime_gpu_timeouts(get_settings())
    return {
        "JobStepsQueueUrl": queue_url,
        "HeartbeatSeconds": str(timeouts.heartbeat_s),
        "GpuTimeoutSeconds": str(timeouts.gpu_step_s),
        "StepTimeoutSeconds": os.environ.get("JOB_STEP_TIMEOUT_SECONDS", "900"),
        "RetryIntervalSeconds": os.environ.get("JOB_RETRY_INTERVAL_SECONDS", "5"),
        "FallbackConcurrency": os.environ.get("FALLBACK_CONCURRENCY", "4"),
        "MaxResumes": os.environ.get("JOB_MAX_RESUMES", "2"),
    }


def local_role(name: str, service: str) -> str:
    """moto checks that roles exist; the real, least-privilege roles live in the deploy template."""
    iam = boto3.client("iam")
    try:
        return iam.get_role(RoleName=name)["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}
        return iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]


def create_workflow_and_batch(queue_url: str) -> None:
    """The state machine and a Batch queue/job definition (moto accepts them; devstack.batch_runner runs the jobs)."""
    settings = get_settings()
    sfn = boto3.client("stepfunctions")
    definition = render_state_machine(local_substitutions(queue_url))
    role = local_role("crossover-local-states", "states.amazonaws.com")
    existing = {m["name"]: m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]}
    if settings.jobs.state_machine_name in existing:
        sfn.update_state_machine(stateMachineArn=existing[settings.jobs.state_machine_name], definition=definition)
    else:
        sfn.create_state_machine(name=settings.jobs.state_machine_name, definition=definition, roleArn=role, type="STANDARD")
    batch = boto3.client("batch")
    environment_name = f"{settings.jobs.batch_job_queue}-local"
    if not batch.describe_compute_environments(computeEnvironments=[environment_name])["computeEnvironments"]:
        batch.create_compute_environment(computeEnvironmentName=environment_name, type="UNMANAGED", state="ENABLED",
                                         serviceRole=local_role("crossover-local-batch", "batch.amazonaws.com"))
    if not batch.describe_job_queues(jobQueues=[settings.jobs.batch_job_queue])["jobQueues"]:
        batch.create_job_queue(jobQueueName=settings.jobs.batch_job_queue, state="ENABLED", priority=1,
                               computeEnvironmentOrder=[{"order": 1, "computeEnvironment": environment_name}])
    if not batch.describe_job_definitions(jobDefinitionName=settings.jobs.batch_job_definition, status="ACTIVE")["jobDefinitions"]:
        batch.register_job_definition(jobDefinitionName=settings.jobs.batch_job_definition, type="container", containerProperties={
            "image": "crossover-worker:local", "command": ["python", "-m", "worker"],
            "resourceRequirements": [{"type": "VCPU", "value": "1"}, {"type": "MEMORY", "value": "2048"}],
        }, retryStrategy={"attempts": 1}, timeout={"attemptDurationSeconds": 21600})


def notify_uploads(s3: Any, sqs: Any, bucket: str, queue_url: str) -> None:
    """S3 ObjectCreated under the incoming prefix -> the object-events queue (as the deploy template wires it)."""
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    prefix = get_settings().storage.incoming_prefix
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={"QueueConfigurations": [{
        "QueueArn": arn, "Events": ["s3:ObjectCreated:*"], "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}}}]})


def bootstrap(tenants: dict[str, tuple[str, tuple[str, ...]]] | None = None) -> None:
    """Create every table and bucket in the template, then the given tenants {api_key: (tenant, roles)}."""
    dynamodb = boto3.client("dynamodb")
    s3 = boto3.client("s3")
    sqs = boto3.client("sqs")
    queue_urls: dict[str, str] = {}
    for logical_id, resource in load_template()["Resources"].items():
        if logical_id not in _LOGICAL_TO_ENV:
            continue
        if resource["Type"] == "AWS::DynamoDB::Table":
            create_table(dynamodb, physical_name(logical_id), resource["Properties"])
        elif resource["Type"] == "AWS::S3::Bucket":
            create_bucket(s3, physical_name(logical_id))
        elif resource["Type"] == "AWS::SQS::Queue":
            derived = queue_settings(os.environ.get("STAGE", "local")).get(logical_id, {})  # as deployed (chalicelib/timing.py)
            props = {**resource["Properties"], **({"VisibilityTimeout": derived["VisibilityTimeout"]} if derived else {})}
            queue_urls[logical_id] = create_queue(sqs, physical_name(logical_id), props)
    if "JobStepsQueue" in queue_urls:
        create_workflow_and_batch(queue_urls["JobStepsQueue"])
    if "ObjectEventsQueue" in queue_urls:
        notify_uploads(s3, sqs, physical_name("DataBucket"), queue_urls["ObjectEventsQueue"])
    store = TenantStore(get_settings().tenants.table, 0, dynamodb)
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
