"""Crossover's Chalice app: wiring only. Every handler lives in chalicelib/."""
from chalice import Chalice

from chalicelib import api
from chalicelib.http import ACCEPTED_CONTENT_TYPES, dispatch

app = Chalice(app_name="crossover")


def _route(handler):  # type: ignore[no-untyped-def]
    request = app.current_request
    return dispatch(request.headers, request.raw_body, handler, request.uri_params, request.query_params)


@app.route("/v1/health", methods=["GET"])
def health():  # type: ignore[no-untyped-def]
    return _route(api.health)


@app.route("/v1/openapi.json", methods=["GET"])
def openapi():  # type: ignore[no-untyped-def]
    return _route(api.openapi)


@app.route("/v1/invoke", methods=["POST"], content_types=ACCEPTED_CONTENT_TYPES)
def invoke():  # type: ignore[no-untyped-def]
    return _route(api.invoke)
