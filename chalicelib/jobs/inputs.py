"""A job's input: JSON lines with a 'prompt' each, inline or from the tenant's own S3 prefix."""
from __future__ import annotations

from .. import aws, safe_json, storage
from ..errors import NotFound, ValidationFailed
from .models import parse_s3_uri

INPUT_AREAS = ("inputs", "incoming")  # where a tenant may point input_uri (its own prefix only)


def read_prompts(text: str) -> list[str]:
    prompts = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = safe_json.loads(line, f"input line {number}")
        except ValidationFailed as exc:
            raise ValidationFailed(f"{exc.message[:-1]}; each line must be a JSON object with a 'prompt'.", {"line": number}) from exc
        if not isinstance(record, dict) or "prompt" not in record:
            raise ValidationFailed(f"input line {number} is not a JSON object with a 'prompt'.", {"line": number})
        prompt = record["prompt"]
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValidationFailed(f"input line {number}: 'prompt' must be a non-empty string.", {"line": number})
        prompts.append(prompt)
    if not prompts:
        raise ValidationFailed("The input has no prompts.", None)
    return prompts


def prompts_from_uri(tenant: str, uri: str, data_bucket: str, max_bytes: int) -> list[str]:
    """The prompts of an input object under the tenant's own inputs/ or incoming/ prefix; NotFound otherwise."""
    bucket, key = parse_s3_uri(uri)
    parts = key.split("/")
    if bucket != data_bucket or len(parts) < 3 or parts[0] not in INPUT_AREAS or parts[1] != tenant or ".." in parts:
        # Same answer whether the object exists or belongs to someone else: nothing leaks.
        raise NotFound("No such input object for this tenant.", {"input_uri": uri})
    try:
        text = storage.get_text(bucket, key, max_bytes)
    except ValueError as exc:
        raise ValidationFailed(str(exc), {"input_uri": uri}) from exc
    except Exception as exc:
        if aws.error_code(exc) in ("NoSuchKey", "404", "NoSuchBucket"):
            raise NotFound("No such input object for this tenant.", {"input_uri": uri}) from exc
        raise
    return read_prompts(text)
