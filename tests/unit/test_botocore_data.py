"""deploy/botocore_data.py: which botocore services the code can create clients for (the layer keeps only those)."""
from __future__ import annotations

import gzip
import json
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


SITE_DATA = "python/lib/python3.11/site-packages/botocore/data"


def _layer(path, services):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{SITE_DATA}/endpoints.json", json.dumps(
            {"partitions": [{"partition": "aws", "defaults": {}, "services": {f"{s}-prefix": {"endpoints": {}} for s in services}}], "version": 3}))
        for service in services:
            model = {"metadata": {"endpointPrefix": f"{service}-prefix"}, "documentation": "<p>long</p>", "operations": {}}
            archive.writestr(f"{SITE_DATA}/{service}/2020-01-01/service-2.json.gz", gzip.compress(json.dumps(model).encode()))
        archive.writestr("python/lib/python3.11/site-packages/botocore/session.py", "x = 1\n")


def test_trim_keeps_the_named_services_and_everything_outside_the_service_folders(tmp_path):
    layer = tmp_path / "layer.zip"
    _layer(layer, ["dynamodb", "ec2", "rds", "sts"])
    assert botocore_data.trim(str(layer), {"dynamodb", "sts"}) == ["ec2", "rds"]
    with zipfile.ZipFile(layer) as archive:
        names = set(archive.namelist())
        endpoints = json.loads(archive.read(f"{SITE_DATA}/endpoints.json"))
        model = json.loads(archive.read(f"{SITE_DATA}/dynamodb/2020-01-01/service-2.json"))
    assert botocore_data.services_in_layer(str(layer)) == {"dynamodb", "sts"}
    assert f"{SITE_DATA}/endpoints.json" in names and "python/lib/python3.11/site-packages/botocore/session.py" in names
    # what a cold start parses: the kept services' endpoints (by endpoint prefix), models without documentation, plain .json
    assert set(endpoints["partitions"][0]["services"]) == {"dynamodb-prefix", "sts-prefix"}
    assert model == {"metadata": {"endpointPrefix": "dynamodb-prefix"}, "operations": {}}
    assert f"{SITE_DATA}/dynamodb/2020-01-01/service-2.json.gz" not in names


def test_only_documentation_strings_go_not_a_member_named_documentation():
    model = {"documentation": "service", "shapes": {"Doc": {"type": "structure", "documentation": "shape",
                                                            "members": {"documentation": {"shape": "String", "documentation": "member"}}}}}
    assert botocore_data.without_documentation(model) == {"shapes": {"Doc": {"type": "structure", "members": {"documentation": {"shape": "String"}}}}}


def _botocore_data(*parts):
    import botocore

    return os.path.join(os.path.dirname(botocore.__file__), "data", *parts)


def _load(path):
    with open(path, "rb") as handle:
        raw = handle.read()
    return json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)


def _shape_signature(shape, seen=None):
    """Everything botocore reads of a shape except its documentation, recursively (a recursive shape once)."""
    if shape is None:
        return None
    seen = set() if seen is None else seen
    if shape.name in seen:
        return shape.name
    seen = seen | {shape.name}
    described = {"name": shape.name, "type": shape.type_name, "serialization": shape.serialization, "metadata": shape.metadata,
                 "required": getattr(shape, "required_members", None), "enum": getattr(shape, "enum", None)}
    if shape.type_name == "structure":
        described["members"] = {name: _shape_signature(member, seen) for name, member in shape.members.items()}
    elif shape.type_name == "list":
        described["member"] = _shape_signature(shape.member, seen)
    elif shape.type_name == "map":
        described["key"], described["value"] = _shape_signature(shape.key, seen), _shape_signature(shape.value, seen)
    return described


@pytest.mark.parametrize("service", ["dynamodb", "bedrock-runtime", "sqs", "s3"])
def test_an_undocumented_model_describes_every_operation_as_the_original_does(service):
    """Independent of our code: botocore's own model classes read both, and every operation, its shapes and
    their wire names, types and members come out the same."""
    from botocore.model import ServiceModel

    version = sorted(os.listdir(_botocore_data(service)))[-1]
    original = _load(next(_botocore_data(service, version, name) for name in ("service-2.json", "service-2.json.gz")
                          if os.path.exists(_botocore_data(service, version, name))))
    full, trimmed = ServiceModel(original, service), ServiceModel(botocore_data.without_documentation(original), service)
    assert trimmed.operation_names == full.operation_names and len(full.operation_names) > 5
    assert trimmed.metadata == full.metadata
    for name in full.operation_names:
        before, after = full.operation_model(name), trimmed.operation_model(name)
        assert after.http == before.http and after.metadata == before.metadata
        assert _shape_signature(after.input_shape) == _shape_signature(before.input_shape), name
        assert _shape_signature(after.output_shape) == _shape_signature(before.output_shape), name
    assert len(json.dumps(trimmed._service_description)) < 0.8 * len(json.dumps(original))


def test_cut_endpoints_resolve_every_kept_service_in_every_region_as_the_full_file_does():
    """botocore's own EndpointResolver over the full and the cut endpoints.json, every partition's regions."""
    from botocore.regions import EndpointResolver

    full = _load(_botocore_data("endpoints.json"))
    prefixes = {"dynamodb", "bedrock-runtime", "sqs", "s3", "sts", "states", "oidc", "portal.sso", "comprehend"}
    cut = botocore_data.endpoints_for(full, prefixes)
    assert len(json.dumps(cut)) < 0.2 * len(json.dumps(full))
    before, after = EndpointResolver(full), EndpointResolver(cut)
    for partition in full["partitions"]:
        regions = [*partition["regions"], *partition["services"].get("s3", {}).get("endpoints", {})]
        for prefix in sorted(prefixes):
            for region in regions:
                for fips in (False, True):
                    assert after.construct_endpoint(prefix, region, partition_name=partition["partition"], use_fips_endpoint=fips) == \
                        before.construct_endpoint(prefix, region, partition_name=partition["partition"], use_fips_endpoint=fips), (prefix, region)
    assert after.get_available_endpoints("dynamodb") == before.get_available_endpoints("dynamodb")


def test_trim_refuses_a_service_this_botocore_does_not_know(tmp_path):
    layer = tmp_path / "layer.zip"
    _layer(layer, ["dynamodb"])
    with pytest.raises(SystemExit, match="dynamdb"):
        botocore_data.trim(str(layer), {"dynamdb"})
