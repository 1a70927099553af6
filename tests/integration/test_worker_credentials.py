"""The GPU worker reads and writes S3 as its job's tenant: a session of the tenant data role tagged with
the tenant (what the role's `${aws:PrincipalTag/tenant}` resources and KMS conditions key on)."""
from __future__ import annotations

import json

import boto3
import botocore.session
from moto import mock_aws

from worker.worker import Config, tenant_s3_client


def config(**overrides):
    env = {"JOB_ID": "job-abc", "TENANT": "acme", "TASK_TOKEN": "t", "DATA_BUCKET": "data", "INPUT_KEY": "inputs/acme/job-abc/input.jsonl",
           "RESULT_KEY": "results/acme/job-abc/output.jsonl", "CHECKPOINT_KEY": "results/acme/job-abc/checkpoint.jsonl",
           "INSTANCE_TYPE": "g6e.xlarge", **overrides}
    return Config.from_env(env)


def test_with_a_tenant_role_the_worker_uses_a_tagged_session_of_it():
    with mock_aws():
        iam = boto3.client("iam")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["sts:AssumeRole", "sts:TagSession"]}]}
        role_arn = iam.create_role(RoleName="tenant-data", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
        boto3.client("s3").create_bucket(Bucket="data")
        base = botocore.session.Session()
        calls = []
        base.register("before-parameter-build.sts.AssumeRole", lambda params, **_: calls.append(dict(params)))

        s3 = tenant_s3_client(config(TENANT_ROLE_ARN=role_arn), base)
        s3.put_object(Bucket="data", Key="results/acme/job-abc/output.jsonl", Body=b"{}\n")

        [call] = calls  # credentials were fetched on first use, once
        assert call["RoleArn"] == role_arn and call["RoleSessionName"] == "job-abc"
        assert call["Tags"] == [{"Key": "tenant", "Value": "acme"}]
        used = s3._request_signer._credentials.get_frozen_credentials()
        own = base.get_credentials().access_key
        assert used.token and used.access_key != own  # a role session, not the job role's own keys


def test_without_a_tenant_role_the_default_credentials_are_used():
    with mock_aws():
        s3 = tenant_s3_client(config())
        own = botocore.session.Session().get_credentials().access_key
        assert s3._request_signer._credentials.get_frozen_credentials().access_key == own
