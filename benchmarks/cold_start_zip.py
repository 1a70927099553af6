"""Cold start as Lambda runs it: the packaged zips, extracted, imported and invoked in fresh processes.

`deploy/package.py` builds the function and layer zips; they are extracted as Lambda does (function at
task/, layer at opt/), and each run is a fresh `python -B -S` (PYTHONDONTWRITEBYTECODE=1, no venv on
sys.path: only the zips' code and the standard library) that imports `app` and answers its first
`POST /v1/invoke` through the Lambda entry point (`app.app(event, context)`): API key lookup,
idempotency record, screening, Converse, metering. AWS is a moto server and Bedrock a local Converse
server (devstack/fake_bedrock.py), so the first invoke never reaches the network.

Variants in the same run: the zips as shipped (.pyc, one boto3 session), and without the .pyc and/or
with a session per client (how it was before issue 18). For comparison, `import strands` and
`import litellm` in fresh `-B` processes (their installed bytecode is used; requirements-bench.txt, or
BENCH_DEPS_DIR, default build/bench-deps, for a `pip install --target` copy kept out of the venv).
Figures: median over BENCH_COLD_RUNS (7) runs; peak RSS. Target (issue 18): shipped <= 500 ms median.
The prompt is BENCH_PROMPT, default "What is 17 * 23?": under 24 characters, which the screening classifier leaves to
the rules, so its model and sentence encoder are not loaded; a longer one loads them (+~150 ms).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import zipfile

from common import ROOT  # noqa: F401  (sets sys.path)

RUNS = int(os.environ.get("BENCH_COLD_RUNS", 7))
API_KEY = "cold-start-key"
TARGET_MS = 500

# Runs in the fresh interpreter. Time starts before `import app`; the interpreter's own start-up (and
# Lambda's runtime client) is outside, as in Lambda's Init Duration the handler import is what we own.
# Peak RSS of this process: VmHWM starts afresh at exec (getrusage's ru_maxrss keeps the forking parent's).
PEAK_RSS = r"""
def peak_rss_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
"""

CHILD = PEAK_RSS + r"""
import json, os, sys, time
started, cpu_started = time.perf_counter(), time.process_time()
if os.environ.get("BENCH_SESSION_PER_CLIENT") == "1":  # before issue 18: a boto3 Session for every client
    import boto3, chalicelib.aws as aws
    aws.session = lambda: boto3.session.Session()
import app
imported = time.perf_counter()

class Context:
    function_name, function_version, memory_limit_in_mb = "crossover-dev", "$LATEST", 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:crossover-dev"
    aws_request_id, log_group_name, log_stream_name = "cold-start", "/aws/lambda/crossover-dev", "cold"
    def get_remaining_time_in_millis(self):
        return 60_000

event = {"resource": "/v1/invoke", "path": "/v1/invoke", "httpMethod": "POST", "isBase64Encoded": False,
         "headers": {"content-type": "application/json", "x-api-key": os.environ["BENCH_API_KEY"],
                     "idempotency-key": os.environ["BENCH_IDEMPOTENCY_KEY"]},
         "multiValueHeaders": None, "queryStringParameters": None, "multiValueQueryStringParameters": None,
         "pathParameters": None, "stageVariables": None,
         "requestContext": {"resourcePath": "/v1/invoke", "httpMethod": "POST", "path": "/dev/v1/invoke", "stage": "dev",
                            "requestId": "cold-start", "identity": {"sourceIp": "127.0.0.1"}},
         "body": json.dumps({"prompt": os.environ.get("BENCH_PROMPT", "What is 17 * 23?")})}
response = app.app(event, Context())
answered = time.perf_counter()
print(json.dumps({"import_ms": (imported - started) * 1000, "invoke_ms": (answered - imported) * 1000,
                  "total_ms": (answered - started) * 1000, "cpu_ms": (time.process_time() - cpu_started) * 1000, "status": response["statusCode"],
                  "rss_mb": peak_rss_mb(),
                  "modules": len(sys.modules)}))
"""

IMPORT_ONLY = PEAK_RSS + r"""
import json, time
started, cpu_started = time.perf_counter(), time.process_time()
import {module}
print(json.dumps({{"total_ms": (time.perf_counter() - started) * 1000, "cpu_ms": (time.process_time() - cpu_started) * 1000,
                   "rss_mb": peak_rss_mb()}}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def package(out: str) -> None:
    subprocess.run([sys.executable, os.path.join(ROOT, "deploy", "package.py"), "--stage", "dev", "--out", out],
                   cwd=ROOT, check=True, capture_output=True)


def extract(out: str, target: str, with_bytecode: bool) -> tuple[str, str]:
    """Function zip at target/task, layers at target/opt (Lambda's /var/task and /opt; the API function carries the
    encoder's layer too, whose folder the child is told in SCREENING_ENCODER_CACHE); read-only."""
    task, opt = os.path.join(target, "task"), os.path.join(target, "opt")
    for name, where in (("deployment.zip", task), ("layer-deployment.zip", opt), ("encoder-layer.zip", opt)):
        with zipfile.ZipFile(os.path.join(out, name)) as archive:
            archive.extractall(where, [n for n in archive.namelist() if with_bytecode or not n.endswith(".pyc")])
    for folder, _, files in os.walk(target):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
    return task, os.path.join(opt, "python", "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")


def file_count(folder: str) -> int:
    return sum(len(files) for _, _, files in os.walk(folder))


def run_child(code: str, env: dict[str, str], cwd: str, isolated: bool) -> dict[str, float]:
    """One fresh interpreter. `cwd` matters: `-c` puts it first on sys.path (Lambda's is /var/task)."""
    flags = ["-B", "-S"] if isolated else ["-B"]
    done = subprocess.run([sys.executable, *flags, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def median_of(samples: list[dict[str, float]], field: str) -> float:
    return statistics.median(sample[field] for sample in samples)


def main() -> None:
    from moto.server import ThreadedMotoServer

    from stage.chalice import stage_environment
    from devstack.fake_bedrock import FakeBedrock

    port = free_port()
    stage = stage_environment("dev")
    aws_env = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "MOTO_PORT": str(port)}
    os.environ.update({**stage, **aws_env})
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    work = tempfile.mkdtemp(prefix="cold-start-zip-")
    try:
        from devstack.bootstrap import bootstrap

        bootstrap({API_KEY: ("bench", ("invoke",))})
        out = os.environ.get("BENCH_PACKAGE_DIR") or os.path.join(work, "package")
        if not os.path.exists(os.path.join(out, "deployment.zip")):
            package(out)
        trees = {True: extract(out, os.path.join(work, "pyc"), True), False: extract(out, os.path.join(work, "nopyc"), False)}
        before_files = {kind: file_count(os.path.join(work, kind)) for kind in ("pyc", "nopyc")}
        with FakeBedrock() as bedrock:
            base = {"PATH": os.environ.get("PATH", ""), "HOME": work, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
                    "PYTHONHASHSEED": "0", **stage, **aws_env, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": bedrock.url,
                    "POWERTOOLS_LOG_LEVEL": "WARNING", "POWERTOOLS_METRICS_NAMESPACE": "CrossoverBench", "BENCH_API_KEY": API_KEY,
                    **({"BENCH_PROMPT": os.environ["BENCH_PROMPT"]} if "BENCH_PROMPT" in os.environ else {})}
            variants = [("shipped: .pyc, one boto3 session", True, False), ("no .pyc, one boto3 session", False, False),
                        (".pyc, a session per client", True, True), ("no .pyc, a session per client (before)", False, True)]
            results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in variants}
            for run in range(RUNS):  # interleaved, so drift on a shared machine hits every variant alike
                for name, with_bytecode, per_client in variants:
                    task, layer = trees[with_bytecode]
                    env = {**base, "PYTHONPATH": os.pathsep.join([task, layer]), "BENCH_IDEMPOTENCY_KEY": f"cold-{run}-{name}",
                           "SCREENING_ENCODER_CACHE": os.path.join(os.path.dirname(task), "opt", "screening-encoder"),
                           "BENCH_SESSION_PER_CLIENT": "1" if per_client else "0"}
                    sample = run_child(CHILD, env, task, isolated=True)
                    assert sample["status"] == 200, sample
                    results[name].append(sample)
        after_files = {kind: file_count(os.path.join(work, kind)) for kind in ("pyc", "nopyc")}
        print(f"cold start from the packaged zips (python{sys.version_info.major}.{sys.version_info.minor}, -B -S, "
              f"median of {RUNS} fresh processes): import app + first POST /v1/invoke")
        for name, samples in results.items():
            total = median_of(samples, "total_ms")
            verdict = f"  target <= {TARGET_MS} ms: {'met' if total <= TARGET_MS else 'MISSED'}" if name.startswith("shipped") else ""
            print(f"  {name:42s} import {median_of(samples, 'import_ms'):6.0f} ms + first invoke {median_of(samples, 'invoke_ms'):5.0f} ms"
                  f" = {total:6.0f} ms (CPU {median_of(samples, 'cpu_ms'):4.0f} ms)   RSS {median_of(samples, 'rss_mb'):4.0f} MB{verdict}")
        print(f"  files written into the extracted code during the runs: {sum(after_files.values()) - sum(before_files.values())}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times stretch with it, CPU times much less)")
        compare(base, work)
    finally:
        server.stop()
        for folder, dirs, files in os.walk(work):
            for name in dirs + files:
                os.chmod(os.path.join(folder, name), 0o755)
        shutil.rmtree(work, ignore_errors=True)


def compare(base: dict[str, str], cwd: str) -> None:
    """`import strands` / `import litellm`, fresh `-B` processes, same machine, same run."""
    deps = os.environ.get("BENCH_DEPS_DIR", os.path.join(ROOT, "build", "bench-deps"))
    env = {**base, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
    env.pop("PYTHONPATH", None)
    if os.path.isdir(deps):
        env["PYTHONPATH"] = deps
    for module in ("strands", "litellm"):
        try:
            samples = [run_child(IMPORT_ONLY.format(module=module), env, cwd, isolated=False) for _ in range(max(3, RUNS // 2))]
        except RuntimeError as exc:
            print(f"  import {module:36s} not measured: {str(exc).strip().splitlines()[-1]}")
            continue
        print(f"  import {module:36s} {median_of(samples, 'total_ms'):6.0f} ms (CPU {median_of(samples, 'cpu_ms'):4.0f} ms), import only   RSS {median_of(samples, 'rss_mb'):4.0f} MB")


if __name__ == "__main__":
    main()
