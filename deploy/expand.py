"""Expand the packaged SAM template into the plain CloudFormation that AWS will create, offline.

    python deploy/expand.py build/dev/sam.json build/dev/expanded.json

`aws cloudformation deploy` runs the same AWS::Serverless transform server-side; doing it here lets
cfn-lint, checkov and moto's CloudFormation see the resources AWS will really create (the API stage,
the event source mappings, the function permissions) instead of the SAM shorthand.
Local artefacts (./deployment.zip) are named by S3 placeholders, as `aws cloudformation package` would.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
from typing import Any

# What `aws cloudformation package` uploads: SAM resource type -> its local-artefact property.
ARTEFACT_PROPERTIES = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}


def with_s3_artefacts(template: dict[str, Any], bucket: str, prefix: str = "") -> dict[str, Any]:
    """The template as `aws cloudformation package` leaves it: each local artefact path -> s3://bucket/key."""
    packaged = copy.deepcopy(template)
    for resource in packaged["Resources"].values():
        prop = ARTEFACT_PROPERTIES.get(resource["Type"])
        local = resource.get("Properties", {}).get(prop) if prop else None
        if isinstance(local, str) and not local.startswith("s3://"):
            resource["Properties"][prop] = f"s3://{bucket}/{prefix}{local.lstrip('./')}"
    return packaged


def local_artefacts(template: dict[str, Any]) -> dict[str, str]:
    """Logical id -> the local artefact file it ships (what the deploy uploads)."""
    found = {}
    for logical, resource in template["Resources"].items():
        prop = ARTEFACT_PROPERTIES.get(resource["Type"])
        value = resource.get("Properties", {}).get(prop) if prop else None
        if isinstance(value, str) and not value.startswith("s3://"):
            found[logical] = value
    return found


def expand(template: dict[str, Any], region: str | None = None, bucket: str = "artefacts-placeholder", prefix: str = "") -> dict[str, Any]:
    """SAM's own translator (the code behind the AWS::Serverless transform), run offline."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    from samtranslator.utils.py27hash_fix import to_py27_compatible_template, undo_mark_unicode_str_in_template

    packaged = with_s3_artefacts(template, bucket, prefix)
    parameters: dict[str, Any] = {}
    to_py27_compatible_template(packaged, parameters)
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=region))
    # Every role is explicit in our template, so SAM never needs to look up a managed policy by name.
    expanded = translator.translate(packaged, parameter_values=parameters, get_managed_policy_map=lambda: {})
    return undo_mark_unicode_str_in_template(expanded)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("template")
    parser.add_argument("out")
    args = parser.parse_args()
    with open(args.template, encoding="utf-8") as handle:
        template = json.load(handle)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(expand(template), handle, indent=2)
    print(f"expanded {args.template} -> {args.out}")


if __name__ == "__main__":
    main()
