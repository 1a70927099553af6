"""`chalice local`, with one gap closed: Python's http.server answers a method it has no `do_<METHOD>`
for (TRACE, CONNECT, anything invented) with a 501 HTML page. API Gateway refuses those before they
reach Lambda, with the stable error body (GatewayResponses in deploy/package.py); locally we do the same.

    python -m devstack.api_server local --host 127.0.0.1 --port 8000 --stage local --no-autoreload
"""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

from chalice.cli import main
from chalice.local import ChaliceRequestHandler


def _refuse_method(handler: Any) -> None:
    body = json.dumps({"error": {"code": "method_not_allowed", "message": f"{handler.command} is not supported.",
                                 "details": {"method": handler.command}}}).encode()
    handler.send_response(405)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _any_method(self: Any, name: str) -> Callable[[], None]:
    if name.startswith("do_"):
        return lambda: _refuse_method(self)
    raise AttributeError(name)


ChaliceRequestHandler.__getattr__ = _any_method  # type: ignore[attr-defined]  (only for names not defined)

if __name__ == "__main__":
    sys.exit(main())
