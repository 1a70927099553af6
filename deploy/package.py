"""Build the deployable artefact: `chalice package` merged with the template for everything Chalice
does not create (tables, queues, buckets, KMS, state machine, Batch, alarms, least-privilege roles).

    python deploy/package.py --stage dev --out build/dev      (what `make package STAGE=dev` runs)

Works offline with dummy credentials. Writes build/<stage>/sam.json, deployment.zip (every function's code),
layer-deployment.zip (the dependencies, every function's layer) and encoder-layer.zip (the screening encoder's
cache, a layer of the functions that screen only: deploy/encoder_layer.py).
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from chalicelib.config import RESOURCE_ENV_VARS  # noqa: E402
from chalicelib.timing import API_P99_ALARM_MS, CONSUMERS  # noqa: E402
from stage.chalice import function_settings, queue_settings, stage_environment  # noqa: E402
from chalicelib.jobs.fit import FitError, ServingPlan, load_catalog, serving_plan  # noqa: E402
from chalicelib.jobs.timing import GpuTimeouts, gpu_timeouts  # noqa: E402

# Logical id in Chalice's template -> the function's name in app.py and .chalice/config.json.
FUNCTIONS = {"APIHandler": "api_handler", "JobSteps": "job_steps", "Requests": "requests", "RequestsFifo": "requests_fifo",
             "ObjectEvents": "object_events", "MeterSpill": "meter_spill", "BatchJobFailed": "batch_job_failed",
             "DailyCostReport": "daily_cost_report"}
SQS_FUNCTIONS = {logical: CONSUMERS[name].queue for logical, name in FUNCTIONS.items() if name in CONSUMERS}
# Actions that IAM cannot scope to a resource (documented exceptions to "no * resources").
UNSCOPABLE = {"comprehend:DetectPiiEntities", "states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat",
              "batch:DescribeJobs", "cloudwatch:PutMetricData", "xray:PutTraceSegments", "xray:PutTelemetryRecords"}
LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653]
# API access log: who called what and how it went; never the query string, headers or API key.
ACCESS_LOG_FORMAT = json.dumps({"requestId": "$context.requestId", "ip": "$context.identity.sourceIp", "time": "$context.requestTime",
                                "method": "$context.httpMethod", "resource": "$context.resourcePath", "status": "$context.status",
                                "protocol": "$context.protocol", "responseLength": "$context.responseLength",
                                "latencyMs": "$context.responseLatency", "integrationLatencyMs": "$context.integrationLatency",
                                "errorType": "$context.error.responseType", "xrayTraceId": "$context.xrayTraceId"}, separators=(",", ":"))


def sub(text: str) -> dict[str, str]:
    return {"Fn::Sub": text}


def arn(logical: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical, "Arn"]}


def table(logical: str, *actions: str) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": [f"dynamodb:{a}" for a in actions], "Resource": [arn(logical)]}


def s3_objects(bucket: str, prefixes: list[str], *actions: str) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": [f"s3:{a}" for a in actions],
            "Resource": [{"Fn::Sub": f"${{{bucket}.Arn}}/{prefix}*"} for prefix in prefixes]}


def statement(actions: list[str], resources: list[Any]) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": actions, "Resource": resources}


# Every traced function sends its segments to X-Ray (Lambda refuses Tracing: Active without these).
XRAY = statement(["xray:PutTraceSegments", "xray:PutTelemetryRecords"], ["*"])
KMS = statement(["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"], [arn("DataKey")])
BEDROCK = statement(["bedrock:InvokeModel"], [sub("arn:${AWS::Partition}:bedrock:*::foundation-model/*"),
                                              sub("arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/*")])
GUARDRAIL = statement(["bedrock:ApplyGuardrail"], [sub("arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:guardrail/*")])
PII = statement(["comprehend:DetectPiiEntities"], ["*"])
CALLBACKS = statement(["states:SendTaskSuccess", "states:SendTaskFailure"], ["*"])
LEDGER = [table("LedgerTable", "PutItem", "ConditionCheckItem"), table("AggregatesTable", "UpdateItem", "Query")]
# Metering functions may buffer a refused ledger write on the spill queue (chalicelib/meter/spill.py).
METER = [*LEDGER, statement(["sqs:GetQueueUrl", "sqs:SendMessage"], [arn("MeterSpillQueue")])]
SCREEN = [table("PoliciesTable", "GetItem", "PutItem"), PII, GUARDRAIL]
# GPU job cost per Batch attempt (chalicelib/meter/gpu_cost.py): instance type and spot/on-demand of each attempt.
# ec2:DescribeInstances has no resource-level permissions.
GPU_ATTEMPTS = [statement(["ecs:DescribeContainerInstances"], [sub("arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:container-instance/*")]),
                statement(["ec2:DescribeInstances"], ["*"])]
# Stored conversations (chalicelib/conversations/store.py); their table's key is usable only through DynamoDB.
CONVERSATIONS = [table("ConversationsTable", "GetItem", "PutItem", "Query", "BatchWriteItem", "ConditionCheckItem"),
                 {**statement(["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"], [arn("ConversationsKey")]),
                  "Condition": {"StringEquals": {"kms:ViaService": sub("dynamodb.${AWS::Region}.amazonaws.com")}}}]
INVOKE = [table("TenantsTable", "GetItem"), table("IdempotencyTable", "GetItem", "PutItem", "UpdateItem", "DeleteItem"),
          table("BudgetsTable", "GetItem", "PutItem", "UpdateItem", "DeleteItem"), table("DecisionsTable", "Query"), BEDROCK, KMS, *METER, *SCREEN,
          statement(["sns:Publish"], [{"Ref": "BudgetAlertsTopic"}]),  # budget alerts (chalicelib/meter/alerts.py)
          *CONVERSATIONS]
# Registered tools and named agents (chalicelib/registry/store.py); tool calls run as ToolRole (add_tool_role).
REGISTRY = table("RegistryTable", "GetItem", "PutItem", "DeleteItem", "Query")
READ_TOOLS = table("RegistryTable", "GetItem")   # queued invokes may name registered tools too
# Functions whose invokes run registered tools: they may assume ToolRole (tagged with the tenant).
TOOL_CALLERS = ("APIHandler", "Requests", "RequestsFifo", "ObjectEvents")
SUBMIT_JOBS = [table("JobsTable", "GetItem", "PutItem", "UpdateItem"), s3_objects("DataBucket", ["inputs/"], "PutObject", "GetObject"),
               statement(["states:StartExecution"], [{"Ref": "JobStateMachine"}])]

# POST /v1/uploads signs presigned POSTs with the API role; S3 checks the signer may PutObject there.
UPLOADS = s3_objects("DataBucket", ["incoming/"], "PutObject")


ASYNC_DLQ = statement(["sqs:SendMessage"], [arn("AsyncDeadLetterQueue")])
ASYNC_FUNCTIONS = ("BatchJobFailed", "DailyCostReport")


def sqs_consumer(queue: str) -> dict[str, Any]:
    return statement(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"], [arn(queue)])


def policies() -> dict[str, list[dict[str, Any]]]:
    events = [table("EventsTable", "GetItem", "PutItem"), s3_objects("DataBucket", ["results/"], "PutObject"),
              statement(["sqs:SendMessage"], [sub("arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:crossover-replies-*")])]
    return {
        "APIHandler": [*INVOKE, *SUBMIT_JOBS, s3_objects("DataBucket", ["results/"], "GetObject"), UPLOADS, REGISTRY, table("BudgetsTable", "Scan"),
                       statement(["states:StopExecution"], [sub("arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${JobStateMachine.Name}:*")]),
                       statement(["batch:TerminateJob"], [sub("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job/*")])],
        "JobSteps": [table("JobsTable", "GetItem", "UpdateItem"), *METER, BEDROCK, KMS, CALLBACKS,
                     s3_objects("DataBucket", ["inputs/"], "GetObject"), s3_objects("DataBucket", ["results/"], "GetObject", "PutObject"),
                     statement(["batch:SubmitJob", "batch:TagResource"], [{"Ref": "GpuJobQueue"}, {"Ref": "WorkerJobDefinition"},
                                                                          sub("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job/*")]),
                     statement(["batch:TerminateJob"], [sub("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job/*")]),
                     statement(["batch:DescribeJobs"], ["*"]), *GPU_ATTEMPTS, sqs_consumer("JobStepsQueue"),
                     # The capacity watch: a delayed message to its own queue, and heartbeats while Batch queues the job.
                     statement(["sqs:GetQueueUrl", "sqs:SendMessage"], [arn("JobStepsQueue")]),
                     statement(["states:SendTaskHeartbeat"], ["*"])],
        "Requests": [*INVOKE, *SUBMIT_JOBS, *events, READ_TOOLS, sqs_consumer("RequestsQueue")],
        "RequestsFifo": [*INVOKE, *SUBMIT_JOBS, *events, READ_TOOLS, sqs_consumer("RequestsFifoQueue")],
        "ObjectEvents": [*INVOKE, *SUBMIT_JOBS, *events, READ_TOOLS, s3_objects("DataBucket", ["incoming/"], "GetObject", "GetObjectVersion"),
                         sqs_consumer("ObjectEventsQueue")],
        "MeterSpill": [*LEDGER, sqs_consumer("MeterSpillQueue")],
        "BatchJobFailed": [table("JobsTable", "GetItem", "UpdateItem"), CALLBACKS, ASYNC_DLQ, *METER, *GPU_ATTEMPTS],
        "DailyCostReport": [table("AggregatesTable", "Query"), table("DecisionsTable", "Query", "PutItem"), KMS, table("BudgetsTable", "Scan", "GetItem"),
                            s3_objects("ReportsBucket", ["reports/"], "PutObject"), ASYNC_DLQ],
    }


def screening_functions() -> list[str]:
    """The functions that screen prompts, so carry the sentence encoder's layer (deploy/encoder_layer.py): those granted
    SCREEN, since every verdict reads the tenant's screening policy first. The others (job steps, Batch failures,
    the meter spill, the cost report) never screen: a job's items are screened when it is submitted."""
    return [function for function, grants in policies().items() if all(grant in grants for grant in SCREEN)]


def default_plan() -> ServingPlan:
    deployment = load_catalog().deployment
    return serving_plan(load_catalog(), deployment.model, deployment.precision, deployment.instance_types)


def stage_timeouts(env: dict[str, str]) -> GpuTimeouts:
    return gpu_timeouts(int(env["JOB_HEARTBEAT_SECONDS"]), int(env.get("JOB_WATCH_INTERVAL_SECONDS", "60")),
                        int(env.get("JOB_CAPACITY_TIMEOUT_SECONDS", "1800")), int(env["JOB_GPU_TIMEOUT_SECONDS"]))


def merge_template(stage: str, plan: ServingPlan | None = None) -> dict[str, Any]:
    with open(os.path.join(ROOT, "deploy", "resources.json"), encoding="utf-8") as handle:
        template = json.load(handle)
    with open(os.path.join(ROOT, "statemachines", "long_job.asl.json"), encoding="utf-8") as handle:
        definition = handle.read()
    env = stage_environment(stage)
    resources = template["Resources"]
    template["Parameters"] = {
        "WorkerImage": {"Type": "String", "Description": "ECR image URI of worker/Dockerfile"},
        # Instance types are not a parameter: `make package` checks that the model fits them (chalicelib/jobs/fit.py).
        "ModelBucket": {"Type": "String", "Default": "", "Description": "S3 bucket with the model weights and manifest.json (empty: weights baked into the image)"},
        "ModelPrefix": {"Type": "String", "Default": "models/", "Description": "Key prefix of the model in ModelBucket, ending in /"},
        "WarmGpuVcpus": {"Type": "Number", "Default": 0, "Description": "vCPUs of on-demand GPU capacity kept running (0: cold start)"},
        "SubnetIds": {"Type": "List<AWS::EC2::Subnet::Id>"},
        "SecurityGroupIds": {"Type": "List<AWS::EC2::SecurityGroup::Id>"},
        "MaxGpuVcpus": {"Type": "Number", "Default": 256},
        "MonthlyBudgetUsd": {"Type": "Number", "Default": 10000},
        "AlarmTopicArn": {"Type": "String", "Default": "", "Description": "SNS topic for alarms (empty: the stack creates one, output AlarmTopic)"},
        "AlarmEmail": {"Type": "String", "Default": "", "Description": "Subscribed to the stack's alarm topic when set"},
        # Only the API reserves concurrency (so queue consumers can never starve it); the consumers are bounded by
        # MaximumConcurrency on their event source mappings. 0 leaves the API unreserved (accounts below the 1,000 quota).
        "ApiReservedConcurrency": {"Type": "Number", "Default": 100, "MinValue": 0, "MaxValue": 900,
                                   "Description": "Reserved concurrency of the API function (0: none); at least 100 of the account's quota stays unreserved"},
        "LogRetentionDays": {"Type": "Number", "Default": 90, "AllowedValues": LOG_RETENTION_DAYS},
    }
    template["Conditions"] = {"HasAlarmTopic": {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}]},
                              "CreateAlarmTopic": {"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]},
                              "HasAlarmEmail": {"Fn::And": [{"Condition": "CreateAlarmTopic"}, {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]}]},
                              "HasApiReservation": {"Fn::Not": [{"Fn::Equals": [{"Ref": "ApiReservedConcurrency"}, "0"]}]},
                              "HasModelBucket": {"Fn::Not": [{"Fn::Equals": [{"Ref": "ModelBucket"}, ""]}]}}
    # Visibility timeouts and receive counts derived from each consumer's function timeout (chalicelib/timing.py).
    for logical, derived in queue_settings(stage).items():
        props = resources[logical]["Properties"]
        props["VisibilityTimeout"] = derived["VisibilityTimeout"]
        props["RedrivePolicy"]["maxReceiveCount"] = derived["maxReceiveCount"]
    # Physical names from the stage's config, so the code, the event sources and the template agree.
    for variable, logical in RESOURCE_ENV_VARS.items():
        props = resources[logical]["Properties"]
        name = env[variable]
        if resources[logical]["Type"] == "AWS::DynamoDB::Table":
            props["TableName"] = name
        elif resources[logical]["Type"] == "AWS::SQS::Queue":
            props["QueueName"] = name
            dlq = props["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
            resources[dlq]["Properties"]["QueueName"] = name[:-5] + "-dlq.fifo" if name.endswith(".fifo") else name + "-dlq"
        elif resources[logical]["Type"] == "AWS::S3::Bucket":
            props["BucketName"] = sub(f"{name}-${{AWS::AccountId}}")
    for logical in ("DataBucket", "ReportsBucket"):
        resources[logical + "Policy"] = {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": logical}, "PolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Sid": "TlsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
                                                    "Resource": [arn(logical), sub(f"${{{logical}.Arn}}/*")],
                                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}}}
    resources["DataBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"].append(incoming_writers_only(env))
    resources["DataBucket"]["Properties"]["NotificationConfiguration"] = {"QueueConfigurations": [{
        "Event": "s3:ObjectCreated:*", "Queue": arn("ObjectEventsQueue"),
        "Filter": {"S3Key": {"Rules": [{"Name": "prefix", "Value": env["INCOMING_PREFIX"]}]}}}]}
    resources["DataBucket"]["DependsOn"] = ["ObjectEventsQueuePolicy"]
    resources["ObjectEventsQueuePolicy"] = {"Type": "AWS::SQS::QueuePolicy", "Properties": {"Queues": [{"Ref": "ObjectEventsQueue"}], "PolicyDocument": {
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"}, "Action": "sqs:SendMessage",
                                                "Resource": arn("ObjectEventsQueue"),
                                                "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                                                              "ArnLike": {"aws:SourceArn": sub(f"arn:${{AWS::Partition}}:s3:::{env['DATA_BUCKET']}-${{AWS::AccountId}}")}}}]}}}
    resources["DataKey"]["Properties"]["KeyPolicy"] = key_policy(env)
    # Per-object keys, so each object's own encryption context (tenant, object ARN) reaches KMS and the
    # key policy's conditions; an S3 Bucket Key would put the bucket ARN there instead.
    resources["DataBucket"]["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["BucketKeyEnabled"] = False
    add_access_logs(resources, env)
    timeouts = stage_timeouts(env)
    add_workflow(resources, definition, env, timeouts)
    add_batch(resources, env, plan or default_plan(), timeouts)
    # Failed asynchronous invokes (the EventBridge rule, the schedule) after Lambda's own two retries.
    resources["AsyncDeadLetterQueue"] = {"Type": "AWS::SQS::Queue", "Properties": {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}}
    add_alarms(resources, env)
    add_tool_role(resources)
    add_functions(resources, env, function_settings(stage))
    add_api(resources)
    template["Outputs"] = {"AlarmTopic": {"Value": {"Fn::If": ["CreateAlarmTopic", {"Ref": "AlarmTopic"}, {"Ref": "AlarmTopicArn"}]}}}
    return template


def add_access_logs(resources: dict[str, Any], env: dict[str, str]) -> None:
    """S3 server access logs of the data and reports buckets, into a bucket of their own. S3 delivers
    them with its logging service principal; a log target must use SSE-S3 (not SSE-KMS)."""
    resources["AccessLogsBucket"] = {"Type": "AWS::S3::Bucket", "Properties": {
        "BucketName": sub(f"crossover-{env['STAGE']}-access-logs-${{AWS::AccountId}}"),
        "BucketEncryption": {"ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
        "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
        "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
        "VersioningConfiguration": {"Status": "Enabled"},
        "LifecycleConfiguration": {"Rules": [{"Id": "expire-logs", "Status": "Enabled", "ExpirationInDays": 365,
                                              "NoncurrentVersionExpiration": {"NoncurrentDays": 7}}]}}}
    sources = [sub(f"arn:${{AWS::Partition}}:s3:::{env[variable]}-${{AWS::AccountId}}") for variable in ("DATA_BUCKET", "REPORTS_BUCKET")]
    resources["AccessLogsBucketPolicy"] = {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "AccessLogsBucket"}, "PolicyDocument": {
        "Version": "2012-10-17", "Statement": [
            {"Sid": "S3ServerAccessLogs", "Effect": "Allow", "Principal": {"Service": "logging.s3.amazonaws.com"}, "Action": "s3:PutObject",
             "Resource": sub("${AccessLogsBucket.Arn}/*"),
             "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}, "ArnLike": {"aws:SourceArn": sources}}},
            {"Sid": "TlsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": [arn("AccessLogsBucket"), sub("${AccessLogsBucket.Arn}/*")],
             "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}}}
    for bucket, prefix in (("DataBucket", "data/"), ("ReportsBucket", "reports/")):
        resources[bucket]["Properties"]["LoggingConfiguration"] = {"DestinationBucketName": {"Ref": "AccessLogsBucket"}, "LogFilePrefix": prefix}


def add_api(resources: dict[str, Any]) -> None:
    """Chalice's RestAPI, completed: its error responses inside the API body (a GatewayResponse resource
    beside an inline body is not redeployed with it: cfn-lint W3660), access logs, X-Ray."""
    template = '{"error": {"code": "$context.error.responseType", "message": $context.error.messageString, "details": null}}'
    resources["ApiAccessLogs"] = {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": {"Ref": "LogRetentionDays"}}}
    # API Gateway writes logs with the account's CloudWatch role (an account-wide setting this stack sets).
    resources["ApiGatewayCloudWatchRole"] = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust("apigateway.amazonaws.com"),
        "ManagedPolicyArns": [sub("arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs")]}}
    resources["ApiGatewayAccount"] = {"Type": "AWS::ApiGateway::Account", "Properties": {"CloudWatchRoleArn": arn("ApiGatewayCloudWatchRole")}}
    resources["RestAPI"] = {"DependsOn": ["ApiGatewayAccount"], "Properties": {
        "DefinitionBody": {"x-amazon-apigateway-gateway-responses": {
            response_type: {"responseTemplates": {"application/json": template}} for response_type in ("DEFAULT_4XX", "DEFAULT_5XX")}},
        "AccessLogSetting": {"DestinationArn": arn("ApiAccessLogs"), "Format": ACCESS_LOG_FORMAT},
        "TracingEnabled": True}}


CRYPTO = ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"]


def key_policy(env: dict[str, str]) -> dict[str, Any]:
    """The data key: the account administers it, but data operations happen only through S3 and only
    under an encryption context that names a tenant (or, for objects written by tenants' own pipelines
    and for ops reports, an object ARN in those areas). Which roles may use it is then IAM's job: the
    worker's tenant data role, for one, only with its own tenant's context."""
    via_s3 = {"kms:ViaService": sub("s3.${AWS::Region}.amazonaws.com"), "kms:CallerAccount": {"Ref": "AWS::AccountId"}}
    account = {"AWS": sub("arn:${AWS::Partition}:iam::${AWS::AccountId}:root")}

    def objects(bucket_variable: str, *patterns: str) -> list[Any]:
        return [sub(f"arn:${{AWS::Partition}}:s3:::{env[bucket_variable]}-${{AWS::AccountId}}{pattern}") for pattern in patterns]

    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "KeyAdministration", "Effect": "Allow", "Principal": account, "Resource": "*",
         "Action": ["kms:Create*", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*", "kms:Update*", "kms:Revoke*",
                    "kms:Disable*", "kms:Get*", "kms:Delete*", "kms:TagResource", "kms:UntagResource",
                    "kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion", "kms:RotateKeyOnDemand"]},
        {"Sid": "TenantDataThroughS3", "Effect": "Allow", "Principal": account, "Action": CRYPTO, "Resource": "*",
         "Condition": {"StringEquals": via_s3, "Null": {"kms:EncryptionContext:tenant": "false"}}},
        {"Sid": "TenantUploadsThroughS3", "Effect": "Allow", "Principal": account, "Action": CRYPTO, "Resource": "*",
         "Condition": {"StringEquals": via_s3, "StringLike": {"kms:EncryptionContext:aws:s3:arn": objects("DATA_BUCKET", f"/{env['INCOMING_PREFIX'].strip('/')}/*")}}},
        {"Sid": "OpsReportsThroughS3", "Effect": "Allow", "Principal": account, "Action": CRYPTO, "Resource": "*",
         "Condition": {"StringEquals": via_s3, "StringLike": {"kms:EncryptionContext:aws:s3:arn": objects("REPORTS_BUCKET", "", "/*")}}},
    ]}


def incoming_writers_only(env: dict[str, str]) -> dict[str, Any]:
    """S3-triggered work is billed to the tenant named in the key under incoming/, so whoever writes there
    can spend as any tenant. Only the API role writes there, and only through presigned POSTs whose policy
    pins the tenant's own key (chalicelib/uploads.py). A Deny on every other principal (rather than
    trusting IAM alone) also holds against roles added later and admin users with s3:* on the account;
    s3:PutObject covers PUT, POST, copy and multipart. aws:PrincipalArn is the role's ARN for any of
    its sessions, and absent for anonymous callers, who are therefore denied too."""
    return {"Sid": "IncomingOnlyThroughSignedUploads", "Effect": "Deny", "Principal": "*", "Action": ["s3:PutObject"],
            "Resource": sub(f"${{DataBucket.Arn}}/{env['INCOMING_PREFIX'].strip('/')}/*"),
            "Condition": {"ArnNotEquals": {"aws:PrincipalArn": arn("APIHandlerRole")}}}


def add_workflow(resources: dict[str, Any], definition: str, env: dict[str, str], timeouts: GpuTimeouts) -> None:
    resources["StateMachineLogs"] = {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": {"Ref": "LogRetentionDays"}}}
    resources["StateMachineRole"] = {"Type": "AWS::IAM::Role", "Properties": {
        "AssumeRolePolicyDocument": trust("states.amazonaws.com"),
        "Policies": [{"PolicyName": "job-workflow", "PolicyDocument": {"Version": "2012-10-17", "Statement": [
            statement(["sqs:SendMessage"], [arn("JobStepsQueue")]),
            statement(["kms:GenerateDataKey", "kms:Decrypt"], [sub("arn:${AWS::Partition}:kms:${AWS::Region}:${AWS::AccountId}:alias/aws/sqs")]),
            statement(["logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery", "logs:ListLogDeliveries",
                       "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"], ["*"]),
            statement(["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"], ["*"]),
        ]}}]}}
    resources["JobStateMachine"] = {"Type": "AWS::StepFunctions::StateMachine", "Properties": {
        "StateMachineName": env["STATE_MACHINE_NAME"], "StateMachineType": "STANDARD", "RoleArn": arn("StateMachineRole"),
        "DefinitionString": definition,
        "DefinitionSubstitutions": {"JobStepsQueueUrl": {"Ref": "JobStepsQueue"}, "HeartbeatSeconds": str(timeouts.heartbeat_s),
                                    "GpuTimeoutSeconds": str(timeouts.gpu_step_s), "StepTimeoutSeconds": "900",
                                    "RetryIntervalSeconds": "10", "FallbackConcurrency": "4", "MaxResumes": "2"},
        "LoggingConfiguration": {"Level": "ERROR", "IncludeExecutionData": False,
                                 "Destinations": [{"CloudWatchLogsLogGroup": {"LogGroupArn": arn("StateMachineLogs")}}]},
        "TracingConfiguration": {"Enabled": True}}}


def trust(service: str) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}


MODEL_CACHE_HOST_PATH = "/opt/crossover/models"
# Batch needs MIME multi-part user data. Instance-store NVMe (g5/g6/g6e/g7e all have it) becomes the
# model cache, kept between jobs on the instance; without one, the cache lives on the root volume.
MODEL_CACHE_USER_DATA = f"""MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="==CROSSOVER=="

--==CROSSOVER==
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
set -euo pipefail
mkdir -p {MODEL_CACHE_HOST_PATH}
device=$(lsblk -d -n -o NAME,MODEL | awk '/Instance Storage/ {{print "/dev/"$1; exit}}')
if [ -n "$device" ] && ! mountpoint -q {MODEL_CACHE_HOST_PATH}; then
  mkfs.xfs -f "$device" && mount -o noatime "$device" {MODEL_CACHE_HOST_PATH}
fi
--==CROSSOVER==--
"""


def add_batch(resources: dict[str, Any], env: dict[str, str], plan: ServingPlan, timeouts: GpuTimeouts) -> None:
    def environment(kind: str, allocation: str, warm: Any) -> dict[str, Any]:
        return {"Type": "AWS::Batch::ComputeEnvironment", "Properties": {"Type": "MANAGED", "State": "ENABLED", "ComputeResources": {
            "Type": kind, "AllocationStrategy": allocation, "MinvCpus": warm, "MaxvCpus": {"Ref": "MaxGpuVcpus"},
            "InstanceTypes": plan.instance_types, "Subnets": {"Ref": "SubnetIds"}, "SecurityGroupIds": {"Ref": "SecurityGroupIds"},
            "InstanceRole": arn("BatchInstanceProfile"), "Ec2Configuration": [{"ImageType": "ECS_AL2023_NVIDIA"}],
            "LaunchTemplate": {"LaunchTemplateId": {"Ref": "GpuLaunchTemplate"},
                               "Version": {"Fn::GetAtt": ["GpuLaunchTemplate", "LatestVersionNumber"]}}}}}

    # The root volume holds the vLLM image; the model cache gets the instance store, or this volume.
    resources["GpuLaunchTemplate"] = {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": {
        "BlockDeviceMappings": [{"DeviceName": "/dev/xvda", "Ebs": {"VolumeSize": plan.cache_volume_gib, "VolumeType": "gp3",
                                                                    "Encrypted": True, "DeleteOnTermination": True}}],
        "MetadataOptions": {"HttpTokens": "required", "HttpPutResponseHopLimit": 2},
        "UserData": {"Fn::Base64": MODEL_CACHE_USER_DATA}}}}
    resources["GpuSpotEnvironment"] = environment("SPOT", "SPOT_PRICE_CAPACITY_OPTIMIZED", 0)
    # Warm capacity (WarmGpuVcpus) is on-demand: a spot instance kept warm could be reclaimed anyway.
    resources["GpuOnDemandEnvironment"] = environment("EC2", "BEST_FIT_PROGRESSIVE", {"Ref": "WarmGpuVcpus"})
    resources["GpuJobQueue"] = {"Type": "AWS::Batch::JobQueue", "Properties": {"JobQueueName": env["BATCH_JOB_QUEUE"], "Priority": 1, "State": "ENABLED",
        "ComputeEnvironmentOrder": [{"Order": 1, "ComputeEnvironment": {"Ref": "GpuSpotEnvironment"}},  # spot first
                                    {"Order": 2, "ComputeEnvironment": {"Ref": "GpuOnDemandEnvironment"}}]}}
    resources["BatchInstanceRole"] = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust("ec2.amazonaws.com"),
        "ManagedPolicyArns": [sub("arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role")]}}
    resources["BatchInstanceProfile"] = {"Type": "AWS::IAM::InstanceProfile", "Properties": {"Roles": [{"Ref": "BatchInstanceRole"}]}}
    # The job role reads no data itself: it can only take the tenant data role, tagged with the job's
    # tenant (worker.tenant_s3_client); that role reaches the tenant's prefixes and key context only.
    resources["WorkerJobRole"] = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust("ecs-tasks.amazonaws.com"),
        "Policies": [{"PolicyName": "worker", "PolicyDocument": {"Version": "2012-10-17", "Statement": [
            statement(["states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat"], ["*"])]}}]}}
    # The model weights (worker/weights.py): read-only, that prefix only, and only when a bucket is given.
    resources["WorkerModelReadPolicy"] = {"Type": "AWS::IAM::Policy", "Condition": "HasModelBucket", "Properties": {
        "PolicyName": "read-model-weights", "Roles": [{"Ref": "WorkerJobRole"}],
        "PolicyDocument": {"Version": "2012-10-17", "Statement": [
            statement(["s3:GetObject"], [sub("arn:${AWS::Partition}:s3:::${ModelBucket}/${ModelPrefix}*")]),
            {**statement(["s3:ListBucket"], [sub("arn:${AWS::Partition}:s3:::${ModelBucket}")]),
             "Condition": {"StringLike": {"s3:prefix": [sub("${ModelPrefix}*")]}}}]}}}
    # A separate policy: the data role's trust names the job role, so the job role cannot name it back.
    resources["WorkerAssumeTenantPolicy"] = {"Type": "AWS::IAM::Policy", "Properties": {
        "PolicyName": "assume-tenant-data-role", "Roles": [{"Ref": "WorkerJobRole"}],
        "PolicyDocument": {"Version": "2012-10-17", "Statement": [statement(["sts:AssumeRole", "sts:TagSession"], [arn("WorkerTenantDataRole")])]}}}
    tenant = "${!aws:PrincipalTag/tenant}"  # an IAM policy variable, escaped for Fn::Sub
    resources["WorkerTenantDataRole"] = {"Type": "AWS::IAM::Role", "Properties": {
        "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"AWS": arn("WorkerJobRole")},  # only the worker's job role
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {"StringLike": {"aws:RequestTag/tenant": "?*"},  # and only with a tenant tag
                          "ForAllValues:StringEquals": {"aws:TagKeys": ["tenant"]}}}]},
        "MaxSessionDuration": 3600,
        "Policies": [{"PolicyName": "one-tenant", "PolicyDocument": {"Version": "2012-10-17", "Statement": [
            statement(["s3:GetObject"], [sub(f"${{DataBucket.Arn}}/inputs/{tenant}/*")]),
            statement(["s3:GetObject", "s3:PutObject"], [sub(f"${{DataBucket.Arn}}/results/{tenant}/*")]),
            {**KMS, "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
             "Condition": {"StringEquals": {"kms:EncryptionContext:tenant": "${aws:PrincipalTag/tenant}"}}}]}}]}}
    resources["WorkerLogs"] = {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": {"Ref": "LogRetentionDays"}}}
    resources["WorkerJobDefinition"] = worker_job_definition(env, plan, timeouts)


def worker_job_definition(env: dict[str, str], plan: ServingPlan, timeouts: GpuTimeouts) -> dict[str, Any]:
    """GPUs, vLLM flags and shared memory from the serving plan; weights from S3 into a cache on the host."""
    variables = {"KMS_KEY_ID": {"Ref": "DataKey"}, "GPU_COUNT": str(plan.gpus), "TENANT_ROLE_ARN": arn("WorkerTenantDataRole"),
                 "MODEL_NAME": plan.served_name, "TENSOR_PARALLEL_SIZE": str(plan.tensor_parallel),
                 "QUANTIZATION": plan.quantization or "", "DTYPE": plan.dtype, "MAX_MODEL_LEN": str(plan.max_model_len),
                 "GPU_MEMORY_UTILIZATION": str(plan.gpu_memory_utilization), "MODEL_CACHE_DIR": "/models",
                 "MODEL_S3_URI": {"Fn::If": ["HasModelBucket", sub("s3://${ModelBucket}/${ModelPrefix}"), ""]},
                 "HEARTBEAT_INTERVAL_S": str(max(5, timeouts.heartbeat_s // 5))}
    return {"Type": "AWS::Batch::JobDefinition", "Properties": {
        "JobDefinitionName": env["BATCH_JOB_DEFINITION"], "Type": "container", "PlatformCapabilities": ["EC2"],
        "ContainerProperties": {"Image": {"Ref": "WorkerImage"}, "JobRoleArn": arn("WorkerJobRole"), "Command": ["python3", "-m", "worker"],
                                "ResourceRequirements": [{"Type": "GPU", "Value": str(plan.gpus)}, {"Type": "VCPU", "Value": str(plan.vcpus)},
                                                         {"Type": "MEMORY", "Value": str(plan.memory_mib)}],
                                "LinuxParameters": {"SharedMemorySize": plan.shared_memory_mib},
                                "Volumes": [{"Name": "model-cache", "Host": {"SourcePath": MODEL_CACHE_HOST_PATH}}],
                                "MountPoints": [{"SourceVolume": "model-cache", "ContainerPath": "/models", "ReadOnly": False}],
                                "Environment": [{"Name": name, "Value": value} for name, value in variables.items()],
                                # (the ECS agent writes with the instance role's AmazonEC2ContainerServiceforEC2Role)
                                "LogConfiguration": {"LogDriver": "awslogs", "Options": {"awslogs-group": {"Ref": "WorkerLogs"}}}},
        # One attempt: a spot reclaim is resumed by the workflow (a new task token, a new job that reads the
        # checkpoint), never by Batch retrying a job whose token the first attempt's failure has spent.
        "RetryStrategy": {"Attempts": 1},
        "Timeout": {"AttemptDurationSeconds": timeouts.batch_attempt_s}}}


TOOL_FUNCTION_PREFIX = "crossover-tool-"   # chalicelib/registry/schemas.py refuses other function names
TOOL_SECRET_PREFIX = "crossover-tool/"     # and secrets outside crossover-tool/<tenant>/


def add_tool_role(resources: dict[str, Any]) -> None:
    """Registered tools run as ToolRole, assumed by the invoking functions with the session tag tenant=<tenant>
    (chalicelib/registry/toolbox.ToolClients). IAM, not only our code, then keeps a tenant to its own
    tools: Lambda functions named crossover-tool-* AND tagged crossover-tenant=<that tenant>, and
    secrets under crossover-tool/<that tenant>/."""
    tenant = "${!aws:PrincipalTag/tenant}"  # an IAM policy variable, escaped for Fn::Sub
    resources["ToolRole"] = {"Type": "AWS::IAM::Role", "Properties": {
        "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"AWS": [arn(f"{function}Role") for function in TOOL_CALLERS]},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {"StringLike": {"aws:RequestTag/tenant": "?*"}, "ForAllValues:StringEquals": {"aws:TagKeys": ["tenant"]}}}]},
        "MaxSessionDuration": 3600,
        "Policies": [{"PolicyName": "one-tenants-tools", "PolicyDocument": {"Version": "2012-10-17", "Statement": [
            {**statement(["lambda:InvokeFunction"], [sub(f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{TOOL_FUNCTION_PREFIX}*")]),
             "Condition": {"StringEquals": {"aws:ResourceTag/crossover-tenant": "${aws:PrincipalTag/tenant}"}}},
            statement(["secretsmanager:GetSecretValue"],
                      [sub(f"arn:${{AWS::Partition}}:secretsmanager:${{AWS::Region}}:${{AWS::AccountId}}:secret:{TOOL_SECRET_PREFIX}{tenant}/*")]),
        ]}}]}}
    # A separate policy: the tool role's trust names the callers' roles, so their roles cannot name it back.
    resources["ToolAssumePolicy"] = {"Type": "AWS::IAM::Policy", "Properties": {
        "PolicyName": "assume-tool-role", "Roles": [{"Ref": f"{function}Role"} for function in TOOL_CALLERS],
        "PolicyDocument": {"Version": "2012-10-17", "Statement": [statement(["sts:AssumeRole", "sts:TagSession"], [arn("ToolRole")])]}}}


def alarm(name: str, namespace: str, metric: str, dimensions: list[dict[str, Any]], statistic: str, threshold: Any,
          period: int = 300, extended: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"AlarmDescription": name, "Namespace": namespace, "MetricName": metric, "Dimensions": dimensions,
                             "Period": period, "EvaluationPeriods": 2, "Threshold": threshold, "ComparisonOperator": "GreaterThanThreshold",
                             "TreatMissingData": "notBreaching",
                             "AlarmActions": [{"Fn::If": ["HasAlarmTopic", {"Ref": "AlarmTopicArn"}, {"Ref": "AlarmTopic"}]}]}
    if extended:
        props["ExtendedStatistic"] = extended
    else:
        props["Statistic"] = statistic
    return {"Type": "AWS::CloudWatch::Alarm", "Properties": props}


def add_alarms(resources: dict[str, Any], env: dict[str, str]) -> None:
    # Alarms always notify: the given topic, or the stack's own (subscribe to output AlarmTopic, or set AlarmEmail).
    resources["AlarmTopic"] = {"Type": "AWS::SNS::Topic", "Condition": "CreateAlarmTopic", "Properties": {"DisplayName": f"crossover-{env['STAGE']} alarms"}}
    resources["AlarmTopicPolicy"] = {"Type": "AWS::SNS::TopicPolicy", "Condition": "CreateAlarmTopic", "Properties": {"Topics": [{"Ref": "AlarmTopic"}],
        "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Sid": "CloudWatchAlarms", "Effect": "Allow", "Principal": {"Service": "cloudwatch.amazonaws.com"},
                                                                    "Action": "sns:Publish", "Resource": {"Ref": "AlarmTopic"},
                                                                    "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}}]}}}
    resources["AlarmEmailSubscription"] = {"Type": "AWS::SNS::Subscription", "Condition": "HasAlarmEmail", "Properties": {
        "TopicArn": {"Ref": "AlarmTopic"}, "Protocol": "email", "Endpoint": {"Ref": "AlarmEmail"}}}
    api = [{"Name": "ApiName", "Value": "crossover"}]
    resources["Api5xxAlarm"] = alarm("API 5xx responses", "AWS/ApiGateway", "5XXError", api, "Sum", 5)
    # Below API Gateway's 29 s integration limit, or it could never fire.
    resources["ApiLatencyP99Alarm"] = alarm(f"API p99 latency above {API_P99_ALARM_MS // 1000} s", "AWS/ApiGateway", "Latency", api, "",
                                            API_P99_ALARM_MS, extended="p99")
    resources["LambdaThrottlesAlarm"] = alarm("Lambda throttles", "AWS/Lambda", "Throttles", [], "Sum", 0)
    for dlq in [resource for resource in resources if resource.endswith("DeadLetterQueue")]:
        resources[dlq + "Alarm"] = alarm(f"{dlq} has messages", "AWS/SQS", "ApproximateNumberOfMessagesVisible",
                                         [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq, "QueueName"]}}], "Maximum", 0)
    service = [{"Name": "service", "Value": "crossover"}]
    resources["JobsStuckRunnableAlarm"] = alarm("Jobs falling back (no GPU capacity or worker failures)", "Crossover", "JobFallbacks", service, "Sum", 0)
    resources["CostBurnAlarm"] = alarm("Projected monthly cost above budget", "Crossover", "ProjectedMonthlyCostUSD", service, "Maximum",
                                       {"Ref": "MonthlyBudgetUsd"}, period=86400)


def add_functions(resources: dict[str, Any], env: dict[str, str], settings: dict[str, dict[str, int]]) -> None:
    names: dict[str, Any] = {variable: {"Ref": logical} for variable, logical in RESOURCE_ENV_VARS.items()}
    for variable, logical in RESOURCE_ENV_VARS.items():
        kind = resources[logical]["Type"]
        if kind == "AWS::SQS::Queue":
            names[variable] = {"Fn::GetAtt": [logical, "QueueName"]}
    names.update({"TOOL_ROLE_ARN": arn("ToolRole")})
    names.update({"STATE_MACHINE_ARN": {"Ref": "JobStateMachine"}, "KMS_KEY_ID": {"Ref": "DataKey"},
                  "BATCH_JOB_QUEUE": {"Ref": "GpuJobQueue"}, "BATCH_JOB_DEFINITION": {"Ref": "WorkerJobDefinition"},
                  "BUDGET_ALERTS_TOPIC_ARN": {"Ref": "BudgetAlertsTopic"},
                  # the break-even prices the fleet as deployed: Batch's warm on-demand vCPUs and instance types (meter/planning.py)
                  "GPU_MIN_VCPUS": {"Ref": "WarmGpuVcpus"}})
    batch = resources.get("GpuSpotEnvironment", {}).get("Properties", {}).get("ComputeResources", {})
    if batch.get("InstanceTypes"):
        names["GPU_INSTANCE_TYPES"] = ",".join(batch["InstanceTypes"])
    all_policies = policies()
    for function, name in FUNCTIONS.items():
        # Its own log group (with retention) rather than the one Lambda would create unbounded; it may write only there.
        resources[f"{function}Logs"] = {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": {"Ref": "LogRetentionDays"}}}
        logs = statement(["logs:CreateLogStream", "logs:PutLogEvents"], [arn(f"{function}Logs")])
        resources[f"{function}Role"] = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust("lambda.amazonaws.com"),
            "Policies": [{"PolicyName": f"{function}-least-privilege", "PolicyDocument": {"Version": "2012-10-17",
                                                                                          "Statement": [logs, XRAY, *copy.deepcopy(all_policies[function])]}}]}}
        function_props: dict[str, Any] = {"Role": arn(f"{function}Role"), "Environment": {"Variables": names}, "Tracing": "Active",
                                          "LoggingConfig": {"LogGroup": {"Ref": f"{function}Logs"}, "LogFormat": "Text"},
                                          # Chalice writes these from .chalice/config.json too; stated here so the template says so.
                                          "Timeout": settings[name]["timeout"], "MemorySize": settings[name]["memory"]}
        if name in CONSUMERS:
            consumer = CONSUMERS[name]
            event = {"BatchSize": consumer.batch_size, "FunctionResponseTypes": ["ReportBatchItemFailures"],
                     "ScalingConfig": {"MaximumConcurrency": consumer.max_concurrency}}
            if consumer.batching_window_s:
                event["MaximumBatchingWindowInSeconds"] = consumer.batching_window_s
            function_props["Events"] = {f"{function}SqsEventSource": {"Properties": event}}
        if function in ASYNC_FUNCTIONS:
            function_props["DeadLetterQueue"] = {"Type": "SQS", "TargetArn": arn("AsyncDeadLetterQueue")}
        # (The GetAtt of each queue in the environment also orders the queue before its event source mapping.)
        resources[function] = {"Properties": function_props}
    resources["APIHandler"]["Properties"]["ReservedConcurrentExecutions"] = {
        "Fn::If": ["HasApiReservation", {"Ref": "ApiReservedConcurrency"}, {"Ref": "AWS::NoValue"}]}


def build_screening_databases() -> None:
    """Ship the built rules and their compiled Hyperscan databases, so a cold Lambda reads them (~4 ms and ~15 ms) instead
    of building the rules (~30 ms) and compiling their databases (~1 s)."""
    try:
        from chalicelib.screening.matcher import build
    except ImportError:
        return
    try:
        build()
    except ImportError:  # no Hyperscan on this (non-x86-64) host: the rules are shipped, the Lambda compiles on first use
        print("hyperscan is not installed here: the screening databases are not shipped", file=sys.stderr)


def build_encoder_cache() -> None:
    """Ship the sentence encoder's cache, so a cold Lambda maps its weights (~0.1 s) instead of inflating the package's (~0.7 s)."""
    from chalicelib.screening.semantic import build_cache
    from encoder_layer import IN_FUNCTION_ZIP

    build_cache(os.path.join(ROOT, IN_FUNCTION_ZIP.rstrip("/")))  # where `chalice package` takes it from, whatever CACHE_ENV says here


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stage", default="dev", choices=["dev", "prod"])
    parser.add_argument("--out", default=None)
    deployment = load_catalog().deployment
    parser.add_argument("--gpu-model", default=deployment.model, help="a model in chalicelib/jobs/gpu_catalog.json")
    parser.add_argument("--gpu-precision", default=deployment.precision, choices=["bf16", "fp8", "awq-int4"])
    parser.add_argument("--gpu-instance-types", default=",".join(deployment.instance_types), help="comma-separated EC2 types")
    args = parser.parse_args()
    try:
        plan = serving_plan(load_catalog(), args.gpu_model, args.gpu_precision, args.gpu_instance_types.split(","))
    except FitError as exc:
        sys.exit(f"package refused: {exc}")
    print(f"GPU serving plan: {args.gpu_model} {args.gpu_precision} on {', '.join(plan.instance_types)}: "
          f"{plan.gpus} GPU(s), tensor parallel {plan.tensor_parallel}, quantization {plan.quantization or 'none'}")
    out = os.path.abspath(args.out or os.path.join(ROOT, "build", args.stage))
    os.makedirs(out, exist_ok=True)
    merge_path = os.path.join(out, "merge.json")
    with open(merge_path, "w", encoding="utf-8") as handle:
        json.dump(merge_template(args.stage, plan), handle, indent=2)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "package"),
           "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "package"), "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1")}
    build_screening_databases()
    build_encoder_cache()
    chalice = os.path.join(os.path.dirname(sys.executable), "chalice")
    subprocess.run([chalice, "package", "--stage", args.stage, "--pkg-format", "cloudformation", "--merge-template", merge_path, out],
                   cwd=ROOT, env=env, check=True)
    from botocore_data import trim_artefacts  # deploy/botocore_data.py: the layer keeps the services the code calls
    from bytecode import compile_artefacts  # deploy/bytecode.py: .pyc for Lambda's read-only code directories
    from encoder_layer import LAYER_ZIP, attach, move_cache  # deploy/encoder_layer.py: the cache, for the functions that screen
    from lambda_size import check_function_sizes, drop_encoder_resources, drop_test_suites  # deploy/lambda_size.py: under Lambda's 250 MB

    kept, dropped = trim_artefacts(out)
    template_path = os.path.join(out, "sam.json")
    with open(template_path, encoding="utf-8") as handle:
        template = json.load(handle)
    compiled = compile_artefacts(out, template)
    moved = move_cache(out)
    template = attach(template, screening_functions(), f"crossover-{args.stage}-screening-encoder")
    with open(template_path, "w", encoding="utf-8") as handle:
        json.dump(template, handle, indent=2, separators=(",", ": "))  # as chalice writes it
    encoder_dropped = drop_encoder_resources(out)
    test_suites = drop_test_suites(out)
    sizes = check_function_sizes(template, out)
    print(f"packaged {args.stage}: {out}/sam.json, deployment.zip, layer-deployment.zip and {LAYER_ZIP} (botocore data kept for "
          f"{len(kept)} services, {len(dropped)} dropped: {', '.join(sorted(kept))}; bytecode added: {compiled}; encoder cache "
          f"moved to its layer: {len(moved)} files; encoder resources left out of the dependency layer: {len(encoder_dropped)}; "
          f"libraries' test suites left out: {len(test_suites)} files)")
    for function, size in sizes.items():
        print(f"  {function}: {size / 1e6:.1f} MB unzipped with its layers")


if __name__ == "__main__":
    main()
