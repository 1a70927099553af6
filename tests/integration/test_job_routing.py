"""Jobs are routed by the same owner as sync calls: a tenant in `bedrock` mode sends its job straight to the
Bedrock path (the real ASL in moto's executor: no Batch job, no GPU spend); by default a job starts on the GPU."""
from __future__ import annotations

from botocore.stub import Stubber

from tests.conftest import DEV_KEY, converse_text, ledger_items
from tests.integration.support import batch_jobs_for, drive, execution_status, job_record, result_rows, submit


def set_mode(tenant: str, mode: str) -> None:
    from chalicelib.services import get_services
    from chalicelib.tenant_settings import TenantSettings

    get_services().router.tenant_settings.put(tenant, TenantSettings(routing_mode=mode))


def test_a_bedrock_mode_tenants_job_runs_on_bedrock_without_a_batch_job(jobs_client, pump):  # noqa: F811
    from chalicelib.services import get_services

    set_mode("dev", "bedrock")
    with Stubber(get_services().backends["bedrock"]._client) as stub:
        for letter in "abc":
            stub.add_response("converse", converse_text(f"bedrock says {letter}", 10, 2))
        job_id = submit(jobs_client, ["a", "b", "c"], fallback=False)  # routing is not a fallback: no GPU failure needed
        drive(pump, lambda: job_record(job_id)["status"] == "SUCCEEDED")
    view = jobs_client.http.get(f"/v1/jobs/{job_id}", headers={"x-api-key": DEV_KEY}).json_body
    assert (view["route"], view["backend"], view["fallback_reason"]) == ("bedrock", "bedrock", "Routing.Bedrock")
    record = job_record(job_id)
    assert record["batch_job_id"] is None and batch_jobs_for(job_id) == []
    assert [row["output"] for row in result_rows(record)] == ["bedrock says a", "bedrock says b", "bedrock says c"]
    rows = [row for row in ledger_items() if row["request_id"]["S"].startswith(job_id)]
    assert len(rows) == 3 and all(row["backend"]["S"] == "bedrock" for row in rows)
    drive(pump, lambda: execution_status(job_id) == "SUCCEEDED")


def test_by_default_a_job_starts_on_the_gpu_path(jobs_client, pump):  # noqa: F811
    job_id = submit(jobs_client, ["a"])
    drive(pump, lambda: (job_record(job_id) or {}).get("batch_job_id"))
    assert job_record(job_id)["route"] == "self_hosted"
