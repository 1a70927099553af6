"""The deploy artefact: packaged offline, cfn-lint clean, least privilege, every resource named for the code."""
from __future__ import annotations

import json
import re
import zipfile

import pytest

from chalicelib.config import RESOURCE_ENV_VARS

FUNCTIONS = ("APIHandler", "JobSteps", "Requests", "RequestsFifo", "ObjectEvents", "MeterSpill", "BatchJobFailed", "DailyCostReport")
METERING = ("APIHandler", "JobSteps", "Requests", "RequestsFifo", "ObjectEvents")
UNSCOPABLE = {"comprehend:DetectPiiEntities", "states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat",
              "batch:DescribeJobs", "xray:PutTraceSegments", "xray:PutTelemetryRecords",
              "ec2:DescribeInstances"}  # EC2 Describe* actions have no resource-level permissions (GPU attempt capacity)
# The state machine's log delivery and X-Ray actions take no resource ARNs (AWS documents "*").
STATE_MACHINE_WILDCARDS = {"logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
                           "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
                           "xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"}
# What each function's code calls (kept next to the code it describes: see chalicelib/).
REQUIRED = {
    "APIHandler": {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query", "bedrock:InvokeModel",
                   "s3:PutObject", "s3:GetObject", "states:StartExecution", "states:StopExecution", "batch:TerminateJob", "kms:GenerateDataKey",
                   "dynamodb:Scan", "sns:Publish"},  # budgets in the cost report; budget alerts
    "JobSteps": {"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "batch:SubmitJob", "batch:TerminateJob", "batch:DescribeJobs",
                 "states:SendTaskSuccess", "states:SendTaskFailure", "s3:GetObject", "s3:PutObject", "bedrock:InvokeModel", "sqs:ReceiveMessage",
                 "sqs:SendMessage", "states:SendTaskHeartbeat",
                 "ecs:DescribeContainerInstances", "ec2:DescribeInstances"},  # GPU cost per Batch attempt
    "Requests": {"dynamodb:PutItem", "bedrock:InvokeModel", "states:StartExecution", "sqs:SendMessage", "sqs:DeleteMessage"},
    "RequestsFifo": {"dynamodb:PutItem", "bedrock:InvokeModel", "states:StartExecution", "sqs:SendMessage", "sqs:DeleteMessage"},
    "ObjectEvents": {"s3:GetObject", "dynamodb:PutItem", "states:StartExecution", "sqs:ReceiveMessage"},
    "MeterSpill": {"dynamodb:PutItem", "dynamodb:UpdateItem", "sqs:ReceiveMessage", "sqs:DeleteMessage"},
    "BatchJobFailed": {"dynamodb:GetItem", "dynamodb:UpdateItem", "states:SendTaskFailure", "dynamodb:PutItem",
                       "ecs:DescribeContainerInstances", "ec2:DescribeInstances"},  # meters the failed job's attempts
    "DailyCostReport": {"dynamodb:Query", "dynamodb:PutItem", "s3:PutObject", "dynamodb:Scan"},
}


@pytest.fixture(scope="module")
def template(packaged):  # tests/integration/conftest.py: packaged and cfn-lint clean
    return json.loads((packaged / "sam.json").read_text())


def test_the_lambda_ships_the_linear_time_matchers_and_the_current_compiled_rules(packaged):
    from chalicelib.screening.core import rule_patterns, rules_for
    from chalicelib.screening.matcher import database_key

    names = zipfile.ZipFile(packaged / "deployment.zip").namelist()
    layer = zipfile.ZipFile(packaged / "layer-deployment.zip").namelist()
    # Binary wheels in the shared layer, for the Lambda's platform (chalice picks manylinux wheels for its runtime).
    packages = "python/lib/python3.11/site-packages/"
    assert any(name.startswith(packages + "hyperscan/_hs_ext") and name.endswith("x86_64-linux-gnu.so") for name in layer), "hyperscan"
    assert any(name.startswith(packages + "_re2.") and name.endswith("x86_64-linux-gnu.so") for name in layer), "google-re2"
    from chalicelib.screening.normalize import PAYLOAD_HINT_SETS

    databases = {}
    for role in ("user", "system"):  # each role's rules (core.rules_for), one database per view kind
        rules = rule_patterns(rules_for(role))
        databases.update({f"{role}.{kind}": [(index, rule.regex) for index, rule in enumerate(rules) if kind in rule.views]
                          for kind in {kind for rule in rules for kind in rule.views}})
    databases.update({f"normaliser.payload_hints.{index}": list(enumerate(hints)) for index, hints in enumerate(PAYLOAD_HINT_SETS)})
    for kind, members in databases.items():
        shipped = f"chalicelib/screening/rules/compiled/{database_key(members)}.hsdb"
        assert shipped in names, kind
        mode = zipfile.ZipFile(packaged / "deployment.zip").getinfo(shipped).external_attr >> 16
        assert mode & 0o444 == 0o444, oct(mode)  # the Lambda runs as another user: it must be able to read it
    from chalicelib.screening.core import built_rules_name

    assert f"chalicelib/screening/rules/compiled/{built_rules_name()}" in names  # the rules as built, read at a cold start


def statements(resource: dict) -> list[dict]:
    """The statements of a role's inline policies, or of a standalone AWS::IAM::Policy."""
    if resource["Type"] == "AWS::IAM::Policy":
        return resource["Properties"]["PolicyDocument"]["Statement"]
    return [s for policy in resource["Properties"].get("Policies", []) for s in policy["PolicyDocument"]["Statement"]]


def listed(value) -> list:
    return value if isinstance(value, list) else [value]


def test_no_wildcard_actions_and_star_resources_only_where_iam_has_no_resource_level(template):
    for name, resource in template["Resources"].items():
        if resource["Type"] not in ("AWS::IAM::Role", "AWS::IAM::Policy"):
            continue
        for statement in statements(resource):
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            assert not any(a == "*" or a.endswith(":*") for a in actions), (name, actions)
            resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            if "*" in resources:
                allowed = UNSCOPABLE | (STATE_MACHINE_WILDCARDS if name == "StateMachineRole" else set())
                assert set(actions) <= allowed, (name, actions)


def test_every_function_has_its_own_role_covering_its_calls(template):
    resources = template["Resources"]
    for function in FUNCTIONS:
        assert resources[function]["Properties"]["Role"] == {"Fn::GetAtt": [f"{function}Role", "Arn"]}
        granted = {a for s in statements(resources[f"{function}Role"]) for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
        assert REQUIRED[function] <= granted, (function, REQUIRED[function] - granted)
    # and no function can touch what it does not use
    # (beyond sending its own failed invokes to the async dead-letter queue)
    report_actions = {a for s in statements(resources["DailyCostReportRole"]) for a in s["Action"]
                      if s["Resource"] != [{"Fn::GetAtt": ["AsyncDeadLetterQueue", "Arn"]}]}
    assert not any(a.startswith(("bedrock:", "states:", "batch:", "sqs:")) for a in report_actions)
    spill_actions = {a for s in statements(resources["MeterSpillRole"]) for a in s["Action"]}
    assert not any(a.startswith(("bedrock:", "states:", "batch:", "s3:")) for a in spill_actions)


def test_every_metering_function_can_buffer_on_the_spill_queue_and_only_there(template):
    resources = template["Resources"]
    for function in METERING:
        sends = [s for s in statements(resources[f"{function}Role"]) if "sqs:SendMessage" in s["Action"]
                 and s["Resource"] == [{"Fn::GetAtt": ["MeterSpillQueue", "Arn"]}]]
        assert sends, function


def test_state_machine_role_can_only_reach_its_queue(template):
    role = template["Resources"]["StateMachineRole"]
    send = [s for s in statements(role) if "sqs:SendMessage" in s["Action"]]
    assert send and send[0]["Resource"] == [{"Fn::GetAtt": ["JobStepsQueue", "Arn"]}]


def test_every_resource_the_code_reads_is_named_in_every_function(template):
    resources = template["Resources"]
    for variable, logical in RESOURCE_ENV_VARS.items():
        assert logical in resources, logical
    for function in FUNCTIONS:
        variables = resources[function]["Properties"]["Environment"]["Variables"]
        missing = (set(RESOURCE_ENV_VARS) | {"STATE_MACHINE_ARN", "KMS_KEY_ID", "BATCH_JOB_QUEUE", "BATCH_JOB_DEFINITION"}) - set(variables)
        assert not missing, (function, missing)
        assert all(value not in ("", None) for value in variables.values())


def test_sqs_functions_report_partial_batch_failures(template):
    for function in ("JobSteps", "Requests", "RequestsFifo", "ObjectEvents", "MeterSpill"):
        events = template["Resources"][function]["Properties"]["Events"]
        [source] = events.values()
        assert source["Type"] == "SQS" and source["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_storage_is_encrypted_private_and_recoverable(template):
    resources = template["Resources"]
    for bucket in ("DataBucket", "ReportsBucket"):
        props = resources[bucket]["Properties"]
        assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
        assert all(props["PublicAccessBlockConfiguration"].values()) and props["LifecycleConfiguration"]["Rules"]
        deny = resources[bucket + "Policy"]["Properties"]["PolicyDocument"]["Statement"][0]
        assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    for name, resource in resources.items():
        if resource["Type"] == "AWS::DynamoDB::Table":
            assert resource["Properties"]["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"], name
        if resource["Type"] == "AWS::SQS::Queue" and not name.endswith("DeadLetterQueue"):
            assert resource["Properties"]["RedrivePolicy"]["maxReceiveCount"] == 5, name


def test_state_machine_substitutions_cover_every_placeholder(template):
    machine = template["Resources"]["JobStateMachine"]["Properties"]
    placeholders = set(re.findall(r"\$\{(\w+)\}", machine["DefinitionString"]))
    assert placeholders == set(machine["DefinitionSubstitutions"])
    assert machine["TracingConfiguration"] == {"Enabled": True} and machine["LoggingConfiguration"]["Level"] == "ERROR"


def test_batch_queue_prefers_spot_then_on_demand_with_gpu_jobs(template):
    resources = template["Resources"]
    order = resources["GpuJobQueue"]["Properties"]["ComputeEnvironmentOrder"]
    assert [o["ComputeEnvironment"]["Ref"] for o in sorted(order, key=lambda o: o["Order"])] == ["GpuSpotEnvironment", "GpuOnDemandEnvironment"]
    container = resources["WorkerJobDefinition"]["Properties"]["ContainerProperties"]
    assert {"Type": "GPU", "Value": "1"} in container["ResourceRequirements"]
    # One attempt: the workflow resumes a reclaimed job with a new token (tests/integration/test_gpu_template.py).
    assert resources["WorkerJobDefinition"]["Properties"]["RetryStrategy"]["Attempts"] == 1
    alarms = {name for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert {"Api5xxAlarm", "ApiLatencyP99Alarm", "LambdaThrottlesAlarm", "JobsStuckRunnableAlarm", "CostBurnAlarm"} <= alarms


def test_the_batch_job_role_reaches_data_only_as_one_tenant(template):
    resources = template["Resources"]
    job_role = statements(resources["WorkerJobRole"])
    assert not any(a.startswith(("s3:", "kms:")) for s in job_role for a in listed(s["Action"]))
    [assume] = statements(resources["WorkerAssumeTenantPolicy"])
    assert resources["WorkerAssumeTenantPolicy"]["Properties"]["Roles"] == [{"Ref": "WorkerJobRole"}]
    assert set(assume["Action"]) == {"sts:AssumeRole", "sts:TagSession"} and assume["Resource"] == [{"Fn::GetAtt": ["WorkerTenantDataRole", "Arn"]}]

    data_role = resources["WorkerTenantDataRole"]["Properties"]
    [trust] = data_role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": {"Fn::GetAtt": ["WorkerJobRole", "Arn"]}}
    assert trust["Condition"]["StringLike"] == {"aws:RequestTag/tenant": "?*"}
    for statement in statements(resources["WorkerTenantDataRole"]):
        actions = listed(statement["Action"])
        if any(a.startswith("s3:") for a in actions):
            for resource in statement["Resource"]:
                assert "/${!aws:PrincipalTag/tenant}/*" in resource["Fn::Sub"], resource  # the tenant's prefix, nothing wider
        else:
            assert set(actions) <= {"kms:Decrypt", "kms:GenerateDataKey"}
            assert statement["Condition"] == {"StringEquals": {"kms:EncryptionContext:tenant": "${aws:PrincipalTag/tenant}"}}
    job_env = {e["Name"]: e["Value"] for e in resources["WorkerJobDefinition"]["Properties"]["ContainerProperties"]["Environment"]}
    assert job_env["TENANT_ROLE_ARN"] == {"Fn::GetAtt": ["WorkerTenantDataRole", "Arn"]}


def test_the_data_key_is_used_only_through_s3_under_a_tenant_or_area_context(template):
    resources = template["Resources"]
    policy = resources["DataKey"]["Properties"]["KeyPolicy"]["Statement"]
    crypto = {"kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:ReEncrypt*", "kms:*"}
    for statement in policy:
        actions = set(listed(statement["Action"]))
        if statement["Sid"] == "KeyAdministration":
            assert not actions & crypto and not any(a.startswith(("kms:Encrypt", "kms:Decrypt", "kms:Generate", "kms:ReEncrypt")) for a in actions)
            continue
        condition = statement["Condition"]
        assert "kms:ViaService" in condition["StringEquals"], statement["Sid"]
        names_tenant = condition.get("Null") == {"kms:EncryptionContext:tenant": "false"}
        names_area = "kms:EncryptionContext:aws:s3:arn" in condition.get("StringLike", {})
        assert names_tenant or names_area, statement["Sid"]
    data_encryption = resources["DataBucket"]["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert data_encryption["BucketKeyEnabled"] is False  # so each object's tenant context reaches KMS


def test_registered_tools_run_as_one_tenant_only_through_the_tagged_tool_role(template):
    resources = template["Resources"]
    api_actions = {a for s in statements(resources["APIHandlerRole"]) for a in listed(s["Action"])}
    assert not any(a.startswith(("lambda:", "secretsmanager:")) for a in api_actions)  # the API role itself calls no tool
    assert {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query"} <= {
        a for s in statements(resources["APIHandlerRole"]) if s["Resource"] == [{"Fn::GetAtt": ["RegistryTable", "Arn"]}] for a in s["Action"]}
    [assume] = statements(resources["ToolAssumePolicy"])
    callers = ("APIHandler", "Requests", "RequestsFifo", "ObjectEvents")  # every function that runs invokes
    assert resources["ToolAssumePolicy"]["Properties"]["Roles"] == [{"Ref": f"{function}Role"} for function in callers]
    assert set(assume["Action"]) == {"sts:AssumeRole", "sts:TagSession"} and assume["Resource"] == [{"Fn::GetAtt": ["ToolRole", "Arn"]}]
    [trust] = resources["ToolRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": [{"Fn::GetAtt": [f"{function}Role", "Arn"]} for function in callers]}
    assert trust["Condition"]["StringLike"] == {"aws:RequestTag/tenant": "?*"}
    invoke, secrets = statements(resources["ToolRole"])
    assert invoke["Action"] == ["lambda:InvokeFunction"]
    [function_arn] = invoke["Resource"]
    assert function_arn["Fn::Sub"].endswith(":function:crossover-tool-*")
    assert invoke["Condition"] == {"StringEquals": {"aws:ResourceTag/crossover-tenant": "${aws:PrincipalTag/tenant}"}}
    assert secrets["Action"] == ["secretsmanager:GetSecretValue"]
    assert secrets["Resource"][0]["Fn::Sub"].endswith(":secret:crossover-tool/${!aws:PrincipalTag/tenant}/*")
    assert resources["APIHandler"]["Properties"]["Environment"]["Variables"]["TOOL_ROLE_ARN"] == {"Fn::GetAtt": ["ToolRole", "Arn"]}


def test_deployed_stages_never_loosen_the_tool_network_policy():
    from stage.chalice import stage_environment

    for stage in ("dev", "prod"):
        env = stage_environment(stage)
        assert env.get("TOOL_ALLOW_HTTP", "false") == "false" and not env.get("TOOL_NETWORK_ALLOWLIST"), stage
