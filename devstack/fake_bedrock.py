"""A local HTTP server that speaks Bedrock Runtime's Converse wire protocol and answers at once.

For tests and benchmarks: it lets boto3's real `bedrock-runtime` client (with its real retry
handler) run against scripted answers. Point boto3 at it with AWS_ENDPOINT_URL_BEDROCK_RUNTIME.
"""
from __future__ import annotations

import json
import re
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_CONVERSE_PATH = re.compile(r"^/model/(?P<model>[^/]+)/converse$")


def text_answer(text: str = "ok", input_tokens: int = 10, output_tokens: int = 5, stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens},
        "metrics": {"latencyMs": 1},
    }


def tool_use_answer(uses: list[tuple[str, str, dict[str, Any]]], input_tokens: int = 20, output_tokens: int = 8,
                    text: str = "") -> dict[str, Any]:
    """The model asking for tools: (toolUseId, name, input) per call, stopReason tool_use."""
    content: list[dict[str, Any]] = [{"text": text}] if text else []
    content += [{"toolUse": {"toolUseId": use_id, "name": name, "input": tool_input}} for use_id, name, tool_input in uses]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens},
        "metrics": {"latencyMs": 1},
    }


def error_answer(status: int, error_type: str, message: str = "scripted error") -> tuple[int, str, str]:
    return (status, error_type, message)


class FakeBedrock:
    """Serve scripted Converse answers in order, then a default text answer.

    A script step is an answer dict, an `error_answer` tuple, or a callable that takes the request
    body and returns either (called outside the lock, so it may block to hold a request open)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script: deque[Any] = deque()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                match = _CONVERSE_PATH.match(self.path)
                with fake._lock:
                    fake.requests.append({"path": self.path, "body": body})
                    step = fake.script.popleft() if fake.script else text_answer()
                if callable(step):  # a scripted step that decides (or waits) when the request arrives
                    step = step(body)
                if match is None:
                    step = error_answer(404, "ResourceNotFoundException", "unknown path")
                if isinstance(step, tuple):
                    status, error_type, message = step
                    payload = json.dumps({"message": message}).encode()
                    self.send_response(status)
                    self.send_header("x-amzn-ErrorType", error_type)
                else:
                    status, payload = 200, json.dumps(step).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "FakeBedrock":
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
