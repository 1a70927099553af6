"""AWS's documented limits, and the relations between our own settings, asserted on the packaged template.

moto enforces none of these; AWS refuses the stack (or misbehaves in production) when one is broken:
- Lambda refuses `Tracing: Active` without xray:PutTraceSegments / PutTelemetryRecords on the role.
- Reserved concurrency: the regional quota is 1,000 by default and 100 must stay unreserved.
- SQS event sources: visibility timeout >= 6 x function timeout (+ batching window); a timed-out batch
  returns every record in it (receive count + 1), so a batch must fit its function's timeout.
- API Gateway ends an integration at 29 s; a Lambda running longer is paid for an answer nobody gets.
- CloudFormation takes at most 51,200 bytes of template inline; a bigger one must come from S3.
- S3 refuses SigV2 presigned URLs for SSE-KMS objects (tests/unit/test_presign.py).
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
from typing import Any

import pytest

from chalicelib.timing import API_GATEWAY_LIMIT_S, ANSWER_RESERVE_S, CONSUMERS, MAX_RECEIVE_COUNT, VISIBILITY_FACTOR
from deploy.checkov_gate import judge, load_skips
from deploy.package import FUNCTIONS
from tests.integration.conftest import ROOT, load

INLINE_TEMPLATE_LIMIT = 51_200
ACCOUNT_CONCURRENCY_QUOTA, UNRESERVED_MINIMUM = 1_000, 100


@pytest.fixture(scope="module")
def sam(packaged) -> dict[str, Any]:
    return load(packaged / "sam.json")


@pytest.fixture(scope="module")
def expanded(packaged) -> dict[str, Any]:
    return load(packaged / "expanded.json")


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def actions(role: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for policy in role["Properties"].get("Policies", []):
        for statement in policy["PolicyDocument"]["Statement"]:
            found.update(statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])
    return found


def queue_by_arn(template: dict[str, Any], arn: dict[str, Any]) -> dict[str, Any]:
    """The queue an event source names (Chalice writes its ARN as a Fn::Sub of the queue's name)."""
    name = arn["Fn::Sub"].rsplit(":", 1)[1]
    [queue] = [q for q in of_type(template, "AWS::SQS::Queue").values() if q["Properties"].get("QueueName") == name]
    return queue


def test_every_traced_function_may_write_to_xray(expanded):
    functions = of_type(expanded, "AWS::Lambda::Function")
    assert len(functions) == len(FUNCTIONS)
    for name, function in functions.items():
        if function["Properties"].get("TracingConfig", {}).get("Mode") == "Active":
            role = expanded["Resources"][function["Properties"]["Role"]["Fn::GetAtt"][0]]
            assert {"xray:PutTraceSegments", "xray:PutTelemetryRecords"} <= actions(role), name


def test_reserved_concurrency_leaves_the_quota_unreserved_even_at_its_maximum(expanded):
    parameters = expanded["Parameters"]
    worst = 0
    for name, function in of_type(expanded, "AWS::Lambda::Function").items():
        reserved = function["Properties"].get("ReservedConcurrentExecutions")
        if isinstance(reserved, dict):  # Fn::If [cond, Ref param, NoValue]: the parameter's largest value
            parameter = parameters[reserved["Fn::If"][1]["Ref"]]
            assert parameter["Default"] <= parameter["MaxValue"]
            worst += parameter["MaxValue"]
        elif reserved is not None:
            worst += reserved
    assert worst <= ACCOUNT_CONCURRENCY_QUOTA - UNRESERVED_MINIMUM


def test_sqs_consumers_are_bounded_by_maximum_concurrency_not_reservations(expanded):
    mappings = of_type(expanded, "AWS::Lambda::EventSourceMapping")
    assert len(mappings) == len(CONSUMERS)
    for name, mapping in mappings.items():
        assert 2 <= mapping["Properties"]["ScalingConfig"]["MaximumConcurrency"] <= 1000, name


def test_queues_outlast_their_consumers_and_batches_fit_the_timeout(sam):
    resources = sam["Resources"]
    seen = set()
    for logical, name in FUNCTIONS.items():
        if name not in CONSUMERS:
            continue
        function = resources[logical]["Properties"]
        [source] = function["Events"].values()
        queue = queue_by_arn(sam, source["Properties"]["Queue"])
        timeout, batch = function["Timeout"], source["Properties"]["BatchSize"]
        window = source["Properties"].get("MaximumBatchingWindowInSeconds", 0)
        assert queue["Properties"]["VisibilityTimeout"] >= VISIBILITY_FACTOR * timeout + window, logical
        assert queue["Properties"]["VisibilityTimeout"] <= 43_200  # SQS's maximum (12 h)
        assert queue["Properties"]["RedrivePolicy"]["maxReceiveCount"] >= MAX_RECEIVE_COUNT
        consumer = CONSUMERS[name]
        assert batch == consumer.batch_size
        # A record that may take the whole timeout comes alone; bounded records fit, with the reserve.
        assert batch == 1 if consumer.record_s is None else batch * consumer.record_s + ANSWER_RESERVE_S <= timeout, logical
        if queue["Properties"].get("FifoQueue"):
            assert window == 0  # FIFO event sources take no batching window
        seen.add(logical)
    assert len(seen) == len(CONSUMERS)


def test_every_function_has_its_own_timeout_and_memory_within_lambda_limits(sam):
    with open(os.path.join(ROOT, ".chalice", "config.json"), encoding="utf-8") as handle:
        configured = json.load(handle)["lambda_functions"]
    assert set(configured) == set(FUNCTIONS.values())
    for logical, name in FUNCTIONS.items():
        props = sam["Resources"][logical]["Properties"]
        assert 1 <= props["Timeout"] <= 900 and 128 <= props["MemorySize"] <= 10_240, logical
        assert props["Timeout"] == configured[name]["lambda_timeout"], logical


def test_the_api_stops_at_api_gateways_limit_and_its_latency_alarm_can_fire(sam):
    api_timeout = sam["Resources"]["APIHandler"]["Properties"]["Timeout"]
    assert api_timeout <= API_GATEWAY_LIMIT_S + 1  # a longer Lambda is paid for answers API Gateway already dropped
    assert api_timeout > ANSWER_RESERVE_S  # and its deadline leaves time to work
    p99 = sam["Resources"]["ApiLatencyP99Alarm"]["Properties"]
    assert p99["ExtendedStatistic"] == "p99" and p99["Threshold"] < API_GATEWAY_LIMIT_S * 1000


def test_every_log_group_has_retention_and_every_function_logs_into_one(expanded):
    groups = of_type(expanded, "AWS::Logs::LogGroup")
    for name, group in groups.items():
        assert group["Properties"].get("RetentionInDays"), name
    for name, function in of_type(expanded, "AWS::Lambda::Function").items():
        target = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert target in groups, name
        role = expanded["Resources"][function["Properties"]["Role"]["Fn::GetAtt"][0]]
        assert "logs:CreateLogGroup" not in actions(role)  # it cannot create an unbounded one beside it
    [job] = of_type(expanded, "AWS::Batch::JobDefinition").values()
    assert job["Properties"]["ContainerProperties"]["LogConfiguration"]["Options"]["awslogs-group"]["Ref"] in groups
    [stage] = of_type(expanded, "AWS::ApiGateway::Stage").values()
    assert stage["Properties"]["AccessLogSetting"]["DestinationArn"]["Fn::GetAtt"][0] in groups
    assert stage["Properties"]["TracingEnabled"] is True


def test_access_logs_never_carry_query_strings_or_keys(expanded):
    [stage] = of_type(expanded, "AWS::ApiGateway::Stage").values()
    fields = json.loads(stage["Properties"]["AccessLogSetting"]["Format"])
    variables = " ".join(fields.values())
    assert "$context.requestId" in variables and "$context.status" in variables
    assert not re.search(r"querystring|apiKey|identity\.apiKey|\$context\.path\b|authorizer|header", variables, re.IGNORECASE)


def test_gateway_responses_live_in_the_api_body(expanded):
    assert not of_type(expanded, "AWS::ApiGateway::GatewayResponse")  # W3660: not redeployed with the body
    [api] = of_type(expanded, "AWS::ApiGateway::RestApi").values()
    responses = api["Properties"]["Body"]["x-amazon-apigateway-gateway-responses"]
    for kind in ("DEFAULT_4XX", "DEFAULT_5XX"):
        body = responses[kind]["responseTemplates"]["application/json"]
        assert '"code": "$context.error.responseType"' in body and '"details": null' in body


def test_every_alarm_notifies_a_topic(sam):
    conditions = sam["Conditions"]
    assert conditions["CreateAlarmTopic"] == {"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}
    assert sam["Resources"]["AlarmTopic"]["Condition"] == "CreateAlarmTopic"
    for name, alarm in of_type(sam, "AWS::CloudWatch::Alarm").items():
        [action] = alarm["Properties"]["AlarmActions"]
        assert action == {"Fn::If": ["HasAlarmTopic", {"Ref": "AlarmTopicArn"}, {"Ref": "AlarmTopic"}]}, name


def test_gpu_instances_boot_the_al2023_nvidia_image(sam):
    for name, environment in of_type(sam, "AWS::Batch::ComputeEnvironment").items():
        assert environment["Properties"]["ComputeResources"]["Ec2Configuration"] == [{"ImageType": "ECS_AL2023_NVIDIA"}], name


def test_data_buckets_log_access_to_an_sse_s3_log_bucket(sam):
    resources = sam["Resources"]
    logs = resources["AccessLogsBucket"]["Properties"]
    # S3 delivers server access logs only to a target with SSE-S3 (not SSE-KMS) and no public access.
    assert logs["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    for bucket in ("DataBucket", "ReportsBucket"):
        assert resources[bucket]["Properties"]["LoggingConfiguration"]["DestinationBucketName"] == {"Ref": "AccessLogsBucket"}, bucket
    [allow, _deny] = resources["AccessLogsBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert allow["Principal"] == {"Service": "logging.s3.amazonaws.com"} and allow["Action"] == "s3:PutObject"
    assert allow["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}


def test_the_template_is_too_big_to_inline_and_every_deploy_command_goes_through_s3(packaged):
    size = (packaged / "sam.json").stat().st_size
    assert size > INLINE_TEMPLATE_LIMIT  # (if it ever shrinks below, the S3 route still works)
    plan = subprocess.run(["make", "-n", "deploy", "STAGE=prod", "ARTIFACT_BUCKET=artefacts"], cwd=ROOT, capture_output=True, text=True, check=True)
    commands = plan.stdout.replace("\\\n", " ")
    steps = [line for line in commands.splitlines() if "cloudformation" in line]
    assert any(" cloudformation package " in line for line in steps) and any(" cloudformation deploy " in line for line in steps)
    for line in steps:
        assert "--s3-bucket artefacts" in line, line


def test_make_deploy_refuses_to_run_without_an_artefact_bucket():
    plan = subprocess.run(["make", "-n", "deploy", "STAGE=prod", "ARTIFACT_BUCKET="], cwd=ROOT, capture_output=True, text=True, check=True)
    assert 'test -n ""' in plan.stdout  # the guard runs before any AWS call


def test_every_checkov_skip_says_why_and_the_gate_holds_to_it():
    skips = load_skips()
    for skip in skips:
        assert re.fullmatch(r"CKV2?_AWS_\d+", skip["check"]), skip
        assert skip["resources"] and all("::" in pattern for pattern in skip["resources"]), skip
        assert len(skip["reason"].split()) >= 12, skip  # a reason, not a label
    sample = [{"check_id": "CKV_AWS_158", "resource": "AWS::Logs::LogGroup.ApiAccessLogs", "name": "kms"},
              {"check_id": "CKV_AWS_18", "resource": "AWS::S3::Bucket.DataBucket", "name": "access logs"}]
    open_findings, stale = judge(sample, skips)
    assert open_findings == [sample[1]]  # the data bucket's access logging is never waived
    assert all(not fnmatch.fnmatchcase("AWS::S3::Bucket.DataBucket", p) for s in skips for p in s["resources"] if s["check"] == "CKV_AWS_18")
    assert stale  # most skips match nothing in a two-finding sample: the gate reports them
