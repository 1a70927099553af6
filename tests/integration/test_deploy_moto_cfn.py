"""The expanded template (what the AWS::Serverless transform produces) instantiated in moto's CloudFormation,
from S3 as `make deploy` sends it: every resource is created and the settings reach the services.

moto's CloudFormation has gaps, shimmed here and nowhere else (each is valid CloudFormation that AWS takes):
1. AWS::Batch::ComputeEnvironment: moto requires ServiceRole (AWS uses the Batch service-linked role).
2. List parameters (CommaDelimitedList, List<AWS::EC2::...>): moto passes the joined string, not a list,
   so they are inlined as lists.
3. AWS::ApiGateway::RestApi: moto requires Name and ignores Body (AWS takes the name from the body's
   info.title); the Deployment then fails with "no methods", so deployments are left out.
4. Types moto does not implement are skipped with a warning (alarms, queue/bucket/topic policies,
   the API stage and account, SNS subscriptions): the test pins that list, so a new gap is noticed.
5. moto ignores TracingConfig and LoggingConfig on functions: tests/integration/test_deploy_limits.py
   asserts those on the template instead.
"""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from moto.cloudformation.parsing import resource_class_from_type

from chalicelib.timing import CONSUMERS
from deploy.expand import local_artefacts
from tests.integration.conftest import load

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse:UserWarning")  # gap 4, pinned below
ARTEFACTS = "artefacts-placeholder"  # deploy/expand.py's bucket for the code zips
MOTO_UNSUPPORTED = {"AWS::ApiGateway::Account", "AWS::ApiGateway::Stage", "AWS::CloudWatch::Alarm", "AWS::S3::BucketPolicy",
                    "AWS::SNS::Subscription", "AWS::SNS::TopicPolicy", "AWS::SQS::QueuePolicy"}


def shim_for_moto(template: dict[str, Any], service_role: str, lists: dict[str, list[str]]) -> dict[str, Any]:
    shimmed = copy.deepcopy(template)

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"Ref"} and node["Ref"] in lists:
                return lists[node["Ref"]]
            return {key: inline(value) for key, value in node.items()}
        return [inline(value) for value in node] if isinstance(node, list) else node

    resources = inline(shimmed["Resources"])
    for name in lists:
        del shimmed["Parameters"][name]
    for logical in [k for k, r in resources.items() if r["Type"] == "AWS::ApiGateway::Deployment"]:
        del resources[logical]
    for resource in resources.values():
        if resource["Type"] == "AWS::Batch::ComputeEnvironment":
            resource["Properties"]["ServiceRole"] = service_role
        if resource["Type"] == "AWS::ApiGateway::RestApi":
            resource["Properties"].setdefault("Name", resource["Properties"]["Body"]["info"]["title"])
    shimmed["Resources"] = resources
    return shimmed


@pytest.fixture(scope="module")
def stack(packaged, moto_account):
    import boto3

    expanded = load(packaged / "expanded.json")
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=ARTEFACTS)
    for local in set(local_artefacts(load(packaged / "sam.json")).values()):
        s3.upload_file(str(packaged / local), ARTEFACTS, local.lstrip("./"))
    ec2 = boto3.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="batch", Description="batch", VpcId=vpc)["GroupId"]
    service_role = boto3.client("iam").create_role(RoleName="batch-service", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    template = shim_for_moto(expanded, service_role, {"SubnetIds": [subnet],
                                                      "SecurityGroupIds": [group]})
    body = json.dumps(template)
    assert len(body) > 51_200  # too big to send inline: from S3, as `make deploy` does
    s3.put_object(Bucket=ARTEFACTS, Key="crossover-prod/template.json", Body=body)
    cloudformation = boto3.client("cloudformation")
    cloudformation.create_stack(StackName="crossover-prod", TemplateURL=f"https://{ARTEFACTS}.s3.amazonaws.com/crossover-prod/template.json",
                                Parameters=[{"ParameterKey": "WorkerImage", "ParameterValue": "123456789012.dkr.ecr.us-east-1.amazonaws.com/worker:1"}],
                                Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    skipped = {r["Type"] for r in template["Resources"].values() if resource_class_from_type(r["Type"]) is None}
    return {"template": template, "skipped": skipped, "client": cloudformation}


@pytest.fixture(scope="module")
def moto_account():
    """Module-wide moto (the stack is built once for the tests below)."""
    import os

    from moto import mock_aws

    os.environ.pop("AWS_ENDPOINT_URL", None)
    with mock_aws():
        yield


def test_the_expanded_stack_creates_every_resource(stack):
    cloudformation = stack["client"]
    [described] = cloudformation.describe_stacks(StackName="crossover-prod")["Stacks"]
    assert described["StackStatus"] == "CREATE_COMPLETE", described.get("StackStatusReason")
    summaries = cloudformation.list_stack_resources(StackName="crossover-prod")["StackResourceSummaries"]
    created = {s["LogicalResourceId"] for s in summaries if s["ResourceStatus"] == "CREATE_COMPLETE"}
    expected = {k for k, r in stack["template"]["Resources"].items()
                if r["Type"] not in MOTO_UNSUPPORTED and r.get("Condition") in (None, "CreateAlarmTopic")}
    expected -= {"AlarmEmailSubscription"}  # HasAlarmEmail is false by default
    assert expected <= created
    assert stack["skipped"] == MOTO_UNSUPPORTED  # a type moto cannot create (or newly can) shows here


def test_functions_queues_and_event_sources_carry_the_derived_settings(stack):
    import boto3

    lambda_ = boto3.client("lambda")
    functions = {f["FunctionName"].split("-")[2]: f for f in lambda_.list_functions()["Functions"]}
    assert functions["APIHandler"]["Timeout"] == 29 and functions["JobSteps"]["Timeout"] == 900
    reserved = {name: lambda_.get_function_concurrency(FunctionName=f["FunctionName"]).get("ReservedConcurrentExecutions")
                for name, f in functions.items()}
    assert reserved.pop("APIHandler") == 100 and set(reserved.values()) == {None}  # only the API reserves (the default)
    mappings = {m["EventSourceArn"].rsplit(":", 1)[1]: m for m in lambda_.list_event_source_mappings()["EventSourceMappings"]}
    assert len(mappings) == len(CONSUMERS)
    sqs = boto3.client("sqs")
    for name, mapping in mappings.items():
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        function = next(f for f in functions.values() if f["FunctionArn"] == mapping["FunctionArn"])
        assert int(attributes["VisibilityTimeout"]) >= 6 * function["Timeout"], name
        assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] == 5
        assert 2 <= mapping["ScalingConfig"]["MaximumConcurrency"] <= 1000
    logs = boto3.client("logs")
    groups = logs.describe_log_groups()["logGroups"]
    assert groups and all(group.get("retentionInDays") == 90 for group in groups)
