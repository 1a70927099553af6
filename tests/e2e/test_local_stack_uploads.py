"""End to end: README's upload example, run as written (curl, jq) against the local stack."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest


pytestmark = pytest.mark.e2e
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_upload_example() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        section = handle.read().split("### Uploads", 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


def test_readme_upload_example_stores_the_file_under_the_tenant_and_starts_its_job(stack, stack_client, tmp_path):
    script = readme_upload_example().replace("http://127.0.0.1:8000", f"http://127.0.0.1:{stack.ports.api}")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "204", (done.stdout, done.stderr)
    form = json.loads((tmp_path / "form.json").read_text())
    assert form["key"].startswith("incoming/dev/") and form["key"].endswith("/prompts.jsonl")
    bucket = stack.env()["DATA_BUCKET"]
    s3 = stack_client("s3")
    assert s3.get_object(Bucket=bucket, Key=form["key"])["Body"].read() == (tmp_path / "prompts.jsonl").read_bytes()
    deadline, document = time.monotonic() + 120, None
    while time.monotonic() < deadline and document is None:
        for listed in s3.list_objects_v2(Bucket=bucket, Prefix="results/dev/events/").get("Contents", []):
            candidate = json.loads(s3.get_object(Bucket=bucket, Key=listed["Key"])["Body"].read())
            if candidate.get("source", "").endswith(form["key"]):
                document = candidate
        time.sleep(0.5)
    assert document and document["status"] == "accepted" and document["job_id"], document
