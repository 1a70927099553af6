"""POST /v1/uploads: a tenant uploads through a presigned POST the server pinned to its own prefix;
the S3 event bills that tenant; a form tampered to another tenant's prefix is refused.

moto accepts a presigned POST without checking its policy or signature (moto/s3/responses.py
`_bucket_response_post` reads the key and stores the file). So the refusal is verified on the form
itself, as S3 would: the policy document is decoded and evaluated against the submitted fields
(S3's documented POST policy rules), and the SigV4 signature is recomputed independently from the
credentials (AWS's documented algorithm), showing that a policy edited to admit another key no
longer matches its signature."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
from datetime import datetime, timezone

import boto3
import pytest
import requests
from botocore.stub import Stubber

from tests.conftest import DEV_KEY, OTHER_KEY, converse_text, ledger_items, post_json
from tests.integration.support import queue_url, sqs_event

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def request_upload(client, body, key=DEV_KEY, idempotency_key=None):
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    return post_json(client, "/v1/uploads", body, key=key, **headers)


def post_form(form, content, fields=None):
    return requests.post(form["url"], data=fields or form["fields"], files={"file": ("upload", content)}, timeout=10)


def policy_of(fields):
    return json.loads(base64.b64decode(fields["Policy"] if "Policy" in fields else fields["policy"]))


def s3_admits(policy, form, content_length, now=None):
    """S3's POST policy evaluation (docs: 'Creating a POST policy'): not expired, and every condition holds
    for the submitted form; every submitted field but the file, the signature and the policy is covered."""
    now = now or datetime.now(timezone.utc)
    if datetime.fromisoformat(policy["expiration"].replace("Z", "+00:00")) <= now:
        return False
    values = {name.lower(): value for name, value in form.items()}
    covered = {"policy", "x-amz-signature", "file"}
    for condition in policy["conditions"]:
        if isinstance(condition, dict):
            [(name, expected)] = condition.items()
            name = name.lower()
            covered.add(name)
            if name != "bucket" and values.get(name) != expected:  # the bucket is the URL's
                return False
        elif condition[0] == "content-length-range":
            if not condition[1] <= content_length <= condition[2]:
                return False
        else:
            operator, name, expected = condition
            name = name.lstrip("$").lower()
            covered.add(name)
            actual = values.get(name, "")
            if operator == "eq" and actual != expected or operator == "starts-with" and not actual.startswith(expected):
                return False
    return set(values) <= covered


def sigv4_post_signature(policy_b64, secret_key, credential):
    """AWS Signature Version 4 for a POST policy, computed from the documented algorithm alone."""
    _, date, region, service, _ = credential.split("/")
    key = ("AWS4" + secret_key).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, policy_b64.encode(), hashlib.sha256).hexdigest()


def test_upload_lands_under_the_tenants_prefix_and_its_event_bills_that_tenant(jobs_client):  # noqa: F811
    from chalicelib import handlers
    from chalicelib.services import get_services

    services = get_services()
    response = request_upload(jobs_client, {"filename": "../../other/ask me.json", "kind": "invoke"}, idempotency_key="up-1")
    assert response.status_code == 201, response.body
    form = response.json_body
    assert re.fullmatch(r"incoming/dev/[0-9a-f]{32}/ask_me\.json", form["key"]), form["key"]
    assert form["fields"]["key"] == form["key"] and form["fields"]["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    # the same Idempotency-Key gives the same form back, not a second upload slot
    assert request_upload(jobs_client, {"filename": "../../other/ask me.json", "kind": "invoke"}, idempotency_key="up-1").json_body == form

    uploaded = post_form(form, json.dumps({"prompt": "What is 17 * 23?"}).encode())
    assert uploaded.status_code == 204, uploaded.text
    bucket = services.settings.storage.data_bucket
    head = boto3.client("s3").head_object(Bucket=bucket, Key=form["key"])
    assert head["Metadata"]["crossover-kind"] == "invoke"

    sqs = boto3.client("sqs")
    notes = [m for m in sqs.receive_message(QueueUrl=queue_url(services.settings.events.object_events_queue), MaxNumberOfMessages=10)["Messages"]
             if form["key"].split("/")[2] in m["Body"]]
    assert len(notes) == 1
    with Stubber(services.backends["bedrock"]._client) as stub:
        stub.add_response("converse", converse_text("391"))
        assert handlers.object_events(sqs_event([("upload-1", notes[0]["Body"])])) == {"batchItemFailures": []}
    [entry] = ledger_items()
    assert entry["tenant"]["S"] == "dev"  # billed to the uploader's tenant, the one the server put in the key
    results = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="results/dev/events/")["Contents"]
    document = json.loads(boto3.client("s3").get_object(Bucket=bucket, Key=results[0]["Key"])["Body"].read())
    assert document["status"] == "done" and document["answer"]["output"] == "391"


def test_the_form_pins_key_size_kind_encryption_and_a_short_expiry(jobs_client):  # noqa: F811
    from chalicelib.services import get_services

    form = request_upload(jobs_client, {"filename": "prompts.jsonl", "max_bytes": 1000}).json_body
    policy = policy_of(form["fields"])
    conditions = policy["conditions"]
    assert {"key": form["key"]} in conditions  # exact: no starts-with on the key anywhere
    assert not any(isinstance(c, list) and c[0] == "starts-with" for c in conditions)
    assert ["content-length-range", 1, 1000] in conditions
    assert {"x-amz-meta-crossover-kind": "job"} in conditions and {"Content-Type": "application/x-ndjson"} in conditions
    assert {"bucket": get_services().settings.storage.data_bucket} in conditions
    assert any("x-amz-server-side-encryption" in c for c in conditions if isinstance(c, dict))
    expires = datetime.fromisoformat(policy["expiration"].replace("Z", "+00:00"))
    assert 0 < (expires - datetime.now(timezone.utc)).total_seconds() <= get_services().settings.storage.presign_ttl_s
    assert s3_admits(policy, form["fields"], 500)
    assert not s3_admits(policy, form["fields"], 1001)  # too large
    assert not s3_admits(policy, form["fields"], 0)  # empty


def test_a_form_tampered_to_another_tenants_prefix_is_refused(jobs_client):  # noqa: F811
    form = request_upload(jobs_client, {"filename": "prompts.jsonl"}).json_body
    fields = form["fields"]
    impersonating = {**fields, "key": form["key"].replace("incoming/dev/", "incoming/other/")}
    other_kind = {**fields, "x-amz-meta-crossover-kind": "invoke"}
    extra_field = {**fields, "x-amz-meta-crossover-tenant": "other"}
    policy = policy_of(fields)
    assert s3_admits(policy, fields, 10)
    for tampered in (impersonating, other_kind, extra_field):
        assert not s3_admits(policy, tampered, 10), tampered

    # Rewriting the policy to admit the other key breaks the signature (S3 recomputes it from the secret key).
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    assert sigv4_post_signature(fields["policy"], secret, fields["x-amz-credential"]) == fields["x-amz-signature"]
    forged = json.loads(base64.b64decode(fields["policy"]))
    forged["conditions"] = [{"key": impersonating["key"]} if c == {"key": form["key"]} else c for c in forged["conditions"]]
    forged_b64 = base64.b64encode(json.dumps(forged).encode()).decode()
    assert s3_admits(json.loads(base64.b64decode(forged_b64)), impersonating, 10)  # the forged policy would admit it...
    assert sigv4_post_signature(forged_b64, secret, fields["x-amz-credential"]) != fields["x-amz-signature"]  # ...unsigned

    # and the other tenant's own form names its own prefix, never dev's
    theirs = request_upload(jobs_client, {"filename": "prompts.jsonl"}, key=OTHER_KEY).json_body
    assert theirs["key"].startswith("incoming/other/")


@pytest.mark.parametrize(("body", "field"), [
    ({"filename": ""}, "filename"),
    ({"filename": "x.jsonl", "kind": "shell"}, "kind"),
    ({"filename": "x.jsonl", "max_bytes": 50_000_001}, "max_bytes"),
    ({"filename": "x.jsonl", "key": "incoming/other/x"}, "key"),  # the key is never the caller's to choose
])
def test_bad_upload_requests_are_400s(jobs_client, body, field):  # noqa: F811
    response = request_upload(jobs_client, body)
    assert response.status_code == 400 and response.json_body["error"]["code"] == "validation_error"
    assert any(detail["field"] == field for detail in response.json_body["error"]["details"])


def test_uploads_need_an_api_key(jobs_client):  # noqa: F811
    assert request_upload(jobs_client, {"filename": "x.jsonl"}, key=None).status_code == 401


@pytest.mark.parametrize(("given", "kept"), [("prompts.jsonl", "prompts.jsonl"), ("../../etc/passwd", "passwd"),
                                             ("C:\\x\\my file (2).json", "my_file_2_.json"), ("...", "upload"), (".hidden", "hidden"),
                                             ("é" * 300, "upload")])
def test_filenames_are_reduced_to_a_safe_last_segment(given, kept):
    from chalicelib.storage import tenant_key
    from chalicelib.uploads import sanitise_filename

    assert sanitise_filename(given) == kept
    tenant_key("incoming", "dev", "id", sanitise_filename(given))  # and it passes the key checks


def test_only_the_api_role_may_write_incoming_and_the_bucket_policy_denies_everyone_else():
    import importlib.util

    spec = importlib.util.spec_from_file_location("deploy_package", os.path.join(ROOT, "deploy", "package.py"))
    package = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    template = package.merge_template("prod")
    resources = template["Resources"]
    statements = resources["DataBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    [deny] = [s for s in statements if s.get("Sid") == "IncomingOnlyThroughSignedUploads"]
    assert deny["Effect"] == "Deny" and deny["Principal"] == "*"
    assert "s3:PutObject" in deny["Action"]
    assert deny["Resource"] == {"Fn::Sub": "${DataBucket.Arn}/incoming/*"}
    assert deny["Condition"] == {"ArnNotEquals": {"aws:PrincipalArn": {"Fn::GetAtt": ["APIHandlerRole", "Arn"]}}}
    writers = []
    for name, resource in resources.items():
        if resource.get("Type") != "AWS::IAM::Role":
            continue
        for policy in resource["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                if "s3:PutObject" in actions and any("incoming/" in json.dumps(r) for r in statement["Resource"]):
                    writers.append(name)
    assert writers == ["APIHandlerRole"]


def test_openapi_documents_uploads_and_a_real_answer_matches_it(jobs_client):  # noqa: F811
    import jsonschema_rs  # schemathesis' validator: independent of the pydantic models that made the schema

    document = jobs_client.http.get("/v1/openapi.json").json_body
    operation = document["paths"]["/v1/uploads"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/UploadRequest"}
    assert {"201", "400", "401"} <= set(operation["responses"])
    assert any(parameter["name"] == "Idempotency-Key" for parameter in operation["parameters"])
    schema = {**operation["responses"]["201"]["content"]["application/json"]["schema"], "components": document["components"]}
    answer = request_upload(jobs_client, {"filename": "prompts.jsonl"}).json_body
    jsonschema_rs.validator_for(schema).validate(answer)
    request_schema = {"$ref": "#/components/schemas/UploadRequest", "components": document["components"]}
    assert not jsonschema_rs.validator_for(request_schema).is_valid({"filename": "x", "key": "incoming/other/x"})
