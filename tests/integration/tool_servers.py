"""Small local servers the registered-tool tests call: a JSON HTTP endpoint and an MCP server.

    python -m tests.integration.tool_servers mcp PORT     (an MCP server over streamable HTTP)
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

ROOT = __file__.rsplit("/tests/", 1)[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HttpToolServer:
    """A local HTTP server: `answer(path, headers, body) -> (status, headers, bytes)`; records requests."""

    def __init__(self, answer: Callable[[str, dict[str, str], Any], tuple[int, dict[str, str], bytes]]) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                headers = {key.lower(): value for key, value in self.headers.items()}
                outer.requests.append({"path": self.path, "headers": headers, "body": body})
                status, extra, payload = answer(self.path, headers, body)
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "HttpToolServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str = "/tool", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def start_mcp_server(port: int) -> subprocess.Popen:
    """The MCP server below in a subprocess, ready when this returns."""
    process = subprocess.Popen([sys.executable, "-m", "tests.integration.tool_servers", "mcp", str(port)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("MCP server exited: " + process.stderr.read().decode()[-2000:])
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("MCP server did not start")


def run_mcp(port: int) -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("crossover-test-tools")

    @server.tool()
    def stock_level(sku: str) -> dict:
        """Units in stock for a SKU."""
        return {"sku": sku, "units": len(sku) * 7}

    @server.tool()
    def shout(text: str) -> str:
        """Upper-case the text (its output is whatever the caller sent: the screening tests use it)."""
        return text.upper()

    @server.tool()
    def slow(seconds: float) -> str:
        """Sleep, then answer."""
        time.sleep(seconds)
        return "done"

    server.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    if sys.argv[1] == "mcp":
        run_mcp(int(sys.argv[2]))
