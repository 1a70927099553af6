"""Crossover's Chalice app: wiring only. Every handler lives in chalicelib/."""
import os
from functools import partial

from chalice import Chalice

from chalicelib import api, handlers
from chalicelib.chat_completions import openai_error
from chalicelib.registry import api as registry_api
from chalicelib.idempotency import use_lambda_context
from chalicelib.http import ACCEPTED_CONTENT_TYPES, dispatch
from chalicelib.timing import CONSUMERS  # batch sizes (and the rest of each event source) are decided there

app = Chalice(app_name="crossover")


def _route(handler, error_shape=None):  # type: ignore[no-untyped-def]
    use_lambda_context(app.lambda_context)
    request = app.current_request
    return dispatch(request.headers, request.raw_body, handler, request.uri_params, request.query_params, error_shape)


@app.route("/v1/health", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def health():  # type: ignore[no-untyped-def]
    return _route(api.health)


@app.route("/v1/openapi.json", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def openapi():  # type: ignore[no-untyped-def]
    return _route(api.openapi)


@app.route("/v1/cost/report", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def cost_report():  # type: ignore[no-untyped-def]
    return _route(api.cost_report)


@app.schedule("cron(15 0 * * ? *)", name="daily_cost_report")
def daily_cost_report(event):  # type: ignore[no-untyped-def]
    return handlers.daily_cost_report()


@app.route("/v1/jobs", methods=["POST"], content_types=ACCEPTED_CONTENT_TYPES)
def submit_job():  # type: ignore[no-untyped-def]
    return _route(api.submit_job)


@app.route("/v1/jobs/{job_id}", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def get_job(job_id):  # type: ignore[no-untyped-def]
    return _route(api.get_job)


@app.route("/v1/jobs/{job_id}", methods=["DELETE"], content_types=ACCEPTED_CONTENT_TYPES)
def cancel_job(job_id):  # type: ignore[no-untyped-def]
    return _route(api.cancel_job)


@app.on_sqs_message(queue=os.environ.get("JOB_STEPS_QUEUE", "crossover-job-steps"), batch_size=CONSUMERS["job_steps"].batch_size, name="job_steps")
def job_steps(event):  # type: ignore[no-untyped-def]
    return handlers.job_steps(event.to_dict())


@app.on_sqs_message(queue=os.environ.get("REQUESTS_QUEUE", "crossover-requests"), batch_size=CONSUMERS["requests"].batch_size, name="requests")
def requests(event):  # type: ignore[no-untyped-def]
    use_lambda_context(event.context)
    return handlers.requests(event.to_dict(), event.context)


@app.on_sqs_message(queue=os.environ.get("REQUESTS_FIFO_QUEUE", "crossover-requests.fifo"), batch_size=CONSUMERS["requests_fifo"].batch_size, name="requests_fifo")
def requests_fifo(event):  # type: ignore[no-untyped-def]
    use_lambda_context(event.context)
    return handlers.requests_fifo(event.to_dict(), event.context)


# S3 ObjectCreated -> object-events queue -> here (the bucket notification is in deploy/resources.json).
# Chalice's on_s3_event cannot be packaged as CloudFormation; through SQS we also get retries and a DLQ.
@app.on_sqs_message(queue=os.environ.get("OBJECT_EVENTS_QUEUE", "crossover-object-events"), batch_size=CONSUMERS["object_events"].batch_size, name="object_events")
def object_events(event):  # type: ignore[no-untyped-def]
    use_lambda_context(event.context)
    return handlers.object_events(event.to_dict(), event.context)


# Ledger entries DynamoDB refused after a paid call (chalicelib/meter/spill.py), replayed idempotently.
@app.on_sqs_message(queue=os.environ.get("METER_SPILL_QUEUE", "crossover-meter-spill"), batch_size=CONSUMERS["meter_spill"].batch_size, name="meter_spill")
def meter_spill(event):  # type: ignore[no-untyped-def]
    return handlers.meter_spill(event.to_dict())


@app.on_cw_event({"source": ["aws.batch"], "detail-type": ["Batch Job State Change"], "detail": {"status": ["FAILED"]}},
                 name="batch_job_failed")
def batch_job_failed(event):  # type: ignore[no-untyped-def]
    return handlers.batch_job_failed(event.detail)


@app.route("/v1/invoke", methods=["POST"], content_types=ACCEPTED_CONTENT_TYPES)
def invoke():  # type: ignore[no-untyped-def]
    return _route(api.invoke)


@app.route("/v1/uploads", methods=["POST"], content_types=ACCEPTED_CONTENT_TYPES)
def create_upload():  # type: ignore[no-untyped-def]
    return _route(api.create_upload)


@app.route("/v1/conversations/{conversation_id}", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def get_conversation(conversation_id):  # type: ignore[no-untyped-def]
    return _route(api.get_conversation)


@app.route("/v1/conversations/{conversation_id}", methods=["DELETE"], content_types=ACCEPTED_CONTENT_TYPES)
def delete_conversation(conversation_id):  # type: ignore[no-untyped-def]
    return _route(api.delete_conversation)


# OpenAI-compatible routes: errors in OpenAI's shape, so its SDKs raise their usual exceptions.
@app.route("/v1/chat/completions", methods=["POST"], content_types=ACCEPTED_CONTENT_TYPES)
def chat_completions():  # type: ignore[no-untyped-def]
    return _route(api.chat_completions, openai_error)


@app.route("/v1/models", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def list_models():  # type: ignore[no-untyped-def]
    return _route(api.list_models, openai_error)


@app.route("/v1/tools", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def list_tools():  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.list_items, "tool"))


@app.route("/v1/tools/{name}", methods=["PUT"], content_types=ACCEPTED_CONTENT_TYPES)
def put_tool(name):  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.put_item, "tool"))


@app.route("/v1/tools/{name}", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def get_tool(name):  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.get_item, "tool"))


@app.route("/v1/tools/{name}", methods=["DELETE"], content_types=ACCEPTED_CONTENT_TYPES)
def delete_tool(name):  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.delete_item, "tool"))


@app.route("/v1/agents", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def list_agents():  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.list_items, "agent"))


@app.route("/v1/agents/{name}", methods=["PUT"], content_types=ACCEPTED_CONTENT_TYPES)
def put_agent(name):  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.put_item, "agent"))


@app.route("/v1/agents/{name}", methods=["GET"], content_types=ACCEPTED_CONTENT_TYPES)
def get_agent(name):  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.get_item, "agent"))


@app.route("/v1/agents/{name}", methods=["DELETE"], content_types=ACCEPTED_CONTENT_TYPES)
def delete_agent(name):  # type: ignore[no-untyped-def]
    return _route(partial(registry_api.delete_item, "agent"))


@app.route("/v1/agents/{name}/invoke", methods=["POST"], content_types=ACCEPTED_CONTENT_TYPES)
def invoke_agent(name):  # type: ignore[no-untyped-def]
    return _route(registry_api.invoke_agent)


# Any other method on a known path: our 405 body rather than Chalice's (API Gateway routes these here too).
# Registered last, so it sees every route above.
_ALLOWED = {path: sorted(methods) for path, methods in app.routes.items()}


def method_not_allowed(**_uri_params):  # type: ignore[no-untyped-def]
    path = app.current_request.context["resourcePath"]
    # Every error on the OpenAI-compatible paths is in OpenAI's shape, a wrong method's 405 included.
    error_shape = openai_error if path in _OPENAI_PATHS else None
    return _route(lambda request: api.method_not_allowed(request, app.current_request.method, _ALLOWED[path]), error_shape)


_OPENAI_PATHS = frozenset({"/v1/chat/completions", "/v1/models"})

for _path, _methods in _ALLOWED.items():
    app.route(_path, methods=sorted(api.HTTP_METHODS - set(_methods)), content_types=ACCEPTED_CONTENT_TYPES)(method_not_allowed)
