"""deploy/botocore_data.py: which botocore services the code can create clients for (the layer keeps only those)."""
from __future__ import annotations

import os
import sys
import zipfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "deploy"))

import botocore_data  # noqa: E402


def test_literal_keyword_and_nested_factory_calls_name_their_service():
    named, dynamic = botocore_data.services_in_source(
        "import boto3\n"
        "a = aws.client('dynamodb')\n"
        "b = boto3.session.Session().client(service_name='ssm')\n"
        "c = self._client('lambda', tenant, 5.0)\n"
        "d = create_nested_client(session, 'sso-oidc', config=None)\n"
        "e = boto3.resource('s3')\n"
        "f = self._client_creator('sts', config=None)\n")
    assert named == {"dynamodb", "ssm", "lambda", "sso-oidc", "s3", "sts"}
    assert dynamic == []


def test_a_forwarder_may_take_the_service_as_a_parameter():
    named, dynamic = botocore_data.services_in_source(
        "def client(service, config=None):\n"
        "    return session().client(service, config=config)\n"
        "lookup = lambda service: boto3.client(service)\n")
    assert (named, dynamic) == (set(), [])


@pytest.mark.parametrize("call", ["aws.client(SERVICE)", "aws.client(f'{kind}-runtime')", "aws.client(names[0])",
                                  "def f(service):\n    name = service\n    return aws.client(name)\n"])
def test_a_computed_service_name_is_reported(call):
    _, dynamic = botocore_data.services_in_source(call)
    assert len(dynamic) == 1


def test_our_code_with_a_computed_service_refuses_to_package(tmp_path):
    function = tmp_path / "deployment.zip"
    with zipfile.ZipFile(function, "w") as archive:
        archive.writestr("chalicelib/x.py", "from . import aws\nSERVICE = 'dynamodb'\ndef get():\n    return aws.client(SERVICE)\n")
    with pytest.raises(botocore_data.UnknownService, match=r"chalicelib/x.py:4: client\(SERVICE\)"):
        botocore_data.services_in_zip(str(function), strict=True)
    assert botocore_data.services_in_zip(str(function), strict=False) == set()  # third-party code is not held to it


def _layer(path, services):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("python/lib/python3.11/site-packages/botocore/data/endpoints.json", "{}")
        for service in services:
            archive.writestr(f"python/lib/python3.11/site-packages/botocore/data/{service}/2020-01-01/service-2.json", "{}")
        archive.writestr("python/lib/python3.11/site-packages/botocore/session.py", "x = 1\n")


def test_trim_keeps_the_named_services_and_everything_outside_the_service_folders(tmp_path):
    layer = tmp_path / "layer.zip"
    _layer(layer, ["dynamodb", "ec2", "rds", "sts"])
    assert botocore_data.trim(str(layer), {"dynamodb", "sts"}) == ["ec2", "rds"]
    with zipfile.ZipFile(layer) as archive:
        names = set(archive.namelist())
    assert botocore_data.services_in_layer(str(layer)) == {"dynamodb", "sts"}
    assert {"python/lib/python3.11/site-packages/botocore/data/endpoints.json",
            "python/lib/python3.11/site-packages/botocore/session.py"} <= names


def test_trim_refuses_a_service_this_botocore_does_not_know(tmp_path):
    layer = tmp_path / "layer.zip"
    _layer(layer, ["dynamodb"])
    with pytest.raises(SystemExit, match="dynamdb"):
        botocore_data.trim(str(layer), {"dynamdb"})
