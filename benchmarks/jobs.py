"""Long jobs on the local stack: end-to-end overhead of a trivial job, and the worker's tokens/s.

1. Overhead: a 1-prompt, 1-token job, submit -> SUCCEEDED, through moto's Step Functions executor,
   the event pump, the local Batch runner (a subprocess per job, like a container start) and the
   bundled model. Median of 5.
2. Throughput: the worker's completion path (worker.worker.complete) against the bundled SmolLM2
   server at concurrency 1 and 4, 16 prompts x 64 output tokens.
"""
from __future__ import annotations

import socket
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from common import ROOT  # noqa: F401  (sets sys.path)

from devstack.stack import LocalStack, Ports


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def trivial_job(api: str) -> float:
    started = time.perf_counter()
    job_id = requests.post(f"{api}/v1/jobs", headers={"x-api-key": "dev-key"}, timeout=30,
                           json={"input": {"prompts": ["Say OK."]}, "max_tokens": 1}).json()["job_id"]
    while True:
        status = requests.get(f"{api}/v1/jobs/{job_id}", headers={"x-api-key": "dev-key"}, timeout=10).json()["status"]
        if status in ("SUCCEEDED", "FAILED"):
            assert status == "SUCCEEDED"
            return time.perf_counter() - started
        time.sleep(0.05)


def throughput(model_url: str, concurrency: int, prompts: int = 16, max_tokens: int = 64) -> tuple[float, int]:
    from worker.worker import Config, complete

    config = Config.from_env({"JOB_ID": "bench", "TENANT": "bench", "TASK_TOKEN": "-", "DATA_BUCKET": "-", "INPUT_KEY": "-",
                              "RESULT_KEY": "-", "CHECKPOINT_KEY": "-", "MODEL_ENDPOINT": model_url, "MAX_TOKENS": str(max_tokens),
                              "MODEL_NAME": "local", "INSTANCE_TYPE": "local-cpu"})
    texts = [f"Write a short paragraph about topic number {i}: rivers, cities and maps." for i in range(prompts)]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(lambda text: complete(config, text), texts))
    elapsed = time.perf_counter() - started
    tokens = sum(r["usage"]["output_tokens"] for r in results)
    return tokens / elapsed, tokens


def main() -> None:
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    stack = LocalStack(Ports(aws=free_port(), model=free_port(), bedrock=free_port(), api=free_port()), log=log)
    try:
        stack.start()
        api = f"http://127.0.0.1:{stack.ports.api}"
        trivial_job(api)  # warm-up
        samples = [trivial_job(api) for _ in range(5)]
        print(f"trivial job submit -> SUCCEEDED on the local stack: median {statistics.median(samples):.2f} s "
              f"(min {min(samples):.2f}, max {max(samples):.2f}, n=5)")
        model = f"http://127.0.0.1:{stack.ports.model}"
        for concurrency in (1, 4):
            rate, tokens = throughput(model, concurrency)
            print(f"worker throughput, bundled SmolLM2-135M on {__import__('os').cpu_count()} CPU cores, concurrency {concurrency}: "
                  f"{rate:.1f} output tokens/s ({tokens} tokens)")
    finally:
        stack.stop()
        print(f"(stack log: {log.name})", file=sys.stderr)


if __name__ == "__main__":
    main()
