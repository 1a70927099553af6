"""The routing mode lives in tenant settings (the tenants table): `crossover routing` sets and shows it, and
`crossover routing migrate` moves modes stored by older versions in the screening policies table."""
from __future__ import annotations

import json

from tests.conftest import post_json


def cli(capsys, *args: str) -> dict:
    from chalicelib.cli import main

    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_set_and_show_a_tenants_mode_and_the_account_default(aws, capsys):
    assert cli(capsys, "routing", "show", "--tenant", "dev") == {"tenant": "dev", "stored": None, "sync": "bedrock", "job": "self_hosted"}
    cli(capsys, "routing", "set", "auto")  # '*': every tenant
    cli(capsys, "routing", "set", "bedrock", "--tenant", "dev")
    assert cli(capsys, "routing", "show", "--tenant", "dev") == {"tenant": "dev", "stored": "bedrock", "sync": "bedrock", "job": "bedrock"}
    assert cli(capsys, "routing", "show", "--tenant", "other") == {"tenant": "other", "stored": None, "sync": "auto", "job": "auto"}


def test_a_mode_stored_by_an_older_version_in_the_policies_table_still_routes_after_migration(client, self_hosted, capsys):  # noqa: F811
    import boto3

    from chalicelib.services import get_services

    policies = get_services().settings.screening.policies_table
    boto3.client("dynamodb").put_item(TableName=policies, Item={"tenant": {"S": "dev"}, "routing_mode": {"S": "self_hosted"},
                                                                 "block_threshold": {"N": "0.6"}})
    assert cli(capsys, "routing", "migrate") == {"migrated": {"dev": "self_hosted"}}
    assert cli(capsys, "routing", "migrate") == {"migrated": {}}  # idempotent
    body = post_json(client, "/v1/invoke", {"prompt": "hello"}).json_body
    assert body["backend"] == "self_hosted" and body["output"] == "from the GPU"
    # The screening part of the old item still applies; its routing_mode is no longer read from there.
    assert get_services().screening.policies.policy_for("dev").block_threshold == 0.6
