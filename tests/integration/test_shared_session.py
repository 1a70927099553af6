"""Every boto3 client the app makes comes from one Session (a Session per client re-reads botocore's
endpoint data on every cold start), and Powertools' idempotency layer uses our DynamoDB client."""
from __future__ import annotations

import botocore.session
from botocore.stub import Stubber

from tests.conftest import converse_text, post_json


def test_all_clients_share_one_session_and_idempotency_writes_through_our_client(client, monkeypatch):
    from chalicelib import aws
    from chalicelib.services import get_services, reset_services

    created = []
    original = botocore.session.Session.__init__

    def counting(self, *args, **kwargs):
        created.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(botocore.session.Session, "__init__", counting)
    reset_services()  # rebuild everything under the counter, as a cold start does
    services = get_services()
    idempotency_writes = []
    aws.client("dynamodb").meta.events.register("provide-client-params.dynamodb.PutItem",
                                                lambda params, **_: idempotency_writes.append(params["TableName"]))
    with Stubber(services.backends["bedrock"]._client) as stub:
        stub.add_response("converse", converse_text("ok"))
        answered = post_json(client, "/v1/invoke", {"prompt": "hello"}, **{"Idempotency-Key": "shared-session-1"})
        submitted = post_json(client, "/v1/jobs", {"input": {"prompts": ["a", "b"]}}, **{"Idempotency-Key": "shared-session-2"})
    assert answered.status_code == 200 and submitted.status_code == 202, (answered.body, submitted.body)
    assert len(aws._clients) >= 4, list(aws._clients)  # dynamodb, bedrock-runtime, s3, stepfunctions at least
    assert len(created) == 1, f"{len(created)} botocore sessions for {sorted(k[0] for k in aws._clients)}"
    assert services.settings.idempotency.table in idempotency_writes  # Powertools wrote through aws.client("dynamodb")
    sessions = {id(c._request_signer._credentials) for c in aws._clients.values()}  # one credential chain resolved once
    assert len(sessions) == 1
