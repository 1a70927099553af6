"""Long jobs: submit, view, cancel; the workflow's step queue and Batch's failure events."""
from __future__ import annotations

from typing import Any

from .. import api, handlers
from ..operation import AUTHENTICATED, IDEMPOTENCY_KEY, Operation, blueprint, path_parameter
from ..timing import CONSUMERS

JOB_ID = path_parameter("job_id")
OPERATIONS = (
    Operation("submitJob", "POST", "/v1/jobs", api.submit_job, 202, "JobAccepted", "Job accepted (or the one this Idempotency-Key made)",
              (400, *AUTHENTICATED, 404, 409, 422), body="JobRequest", parameters=(IDEMPOTENCY_KEY,)),
    Operation("getJob", "GET", "/v1/jobs/{job_id}", api.get_job, 200, "JobView", "The job, with a short-lived result URL when it succeeded",
              (*AUTHENTICATED, 404), parameters=(JOB_ID,)),
    Operation("cancelJob", "DELETE", "/v1/jobs/{job_id}", api.cancel_job, 200, "JobView", "The job after cancellation",
              (*AUTHENTICATED, 404), parameters=(JOB_ID,)),
)
routes = blueprint(__name__, OPERATIONS)


@routes.on_sqs_message(queue=handlers.queue_name("job_steps"), batch_size=CONSUMERS["job_steps"].batch_size, name="job_steps")
def job_steps(event: Any) -> Any:
    return handlers.job_steps(event.to_dict())


@routes.on_cw_event({"source": ["aws.batch"], "detail-type": ["Batch Job State Change"], "detail": {"status": ["FAILED"]}},
                    name="batch_job_failed")
def batch_job_failed(event: Any) -> Any:
    return handlers.batch_job_failed(event.detail)
