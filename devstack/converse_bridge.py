"""Local Bedrock Runtime endpoint: the Converse protocol in front of an OpenAI-compatible model server.

boto3's real `bedrock-runtime` client talks to this (AWS_ENDPOINT_URL_BEDROCK_RUNTIME), so the
production code path runs locally against a real small model (the bundled SmolLM2 served by
llama-cpp-python). Development only; in AWS the same client talks to Bedrock itself.
"""
from __future__ import annotations

import argparse
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chalicelib.models.openai_compat import to_converse_response, to_openai_request

_CONVERSE_PATH = re.compile(r"^/model/(?P<model>[^/]+)/converse$")
def make_server(host: str, port: int, upstream: str, timeout_s: float = 120.0) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: Any) -> None:
            print(f"bedrock-bridge: {fmt % args}", flush=True)

        def _send(self, status: int, payload: dict[str, Any], error_type: str | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if error_type:
                self.send_header("x-amzn-ErrorType", error_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802
            match = _CONVERSE_PATH.match(self.path.split("?")[0])
            if match is None:
                self._send(404, {"message": f"Only Converse is served here, not {self.path}"}, "ResourceNotFoundException")
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                request = to_openai_request(urllib.parse.unquote(match["model"]), body)
            except (ValueError, KeyError, TypeError) as exc:
                self._send(400, {"message": f"Malformed Converse request: {exc}"}, "ValidationException")
                return
            started = time.perf_counter()
            outgoing = urllib.request.Request(f"{upstream}/v1/chat/completions", data=json.dumps(request).encode(),
                                              headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(outgoing, timeout=timeout_s) as reply:
                    completion = json.load(reply)
            except urllib.error.HTTPError as exc:
                kind = "ValidationException" if exc.code == 400 else "ModelErrorException"
                self._send(400 if exc.code == 400 else 424, {"message": f"model server said {exc.code}"}, kind)
                return
            except (urllib.error.URLError, TimeoutError) as exc:
                self._send(503, {"message": f"model server unreachable: {exc}"}, "ServiceUnavailableException")
                return
            self._send(200, to_converse_response(completion, int((time.perf_counter() - started) * 1000)))

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8401)
    parser.add_argument("--upstream", default="http://127.0.0.1:8411", help="OpenAI-compatible model server")
    args = parser.parse_args()
    server = make_server(args.host, args.port, args.upstream)
    print(f"bedrock-bridge: Converse on http://{args.host}:{args.port} -> {args.upstream}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
