"""Local stand-in for AWS Batch compute (development only; production never imports this).

moto accepts Batch API calls but runs no containers here (no Docker, no registry). This runner
takes each job submitted to the local job queue, runs the job definition's command as a subprocess
with the job's environment, and reports failures the way Batch's EventBridge "Job State Change"
events would (to the same handler). It stops a job's process when the job is terminated.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any, Callable

import boto3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE", "STARTING", "RUNNING", "SUCCEEDED", "FAILED")


class LocalBatchRunner:
    def __init__(self, job_queue: str, extra_env: dict[str, str], on_state_change: Callable[[dict[str, Any]], Any],
                 log: Callable[[str], None] = lambda line: print(line, flush=True)) -> None:
        self._batch = boto3.client("batch")
        self._queue = job_queue
        self._extra_env = extra_env
        self._on_state_change = on_state_change
        self._log = log
        self._seen: set[str] = set()
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.finished: dict[str, int] = {}

    def _new_jobs(self) -> list[str]:
        ids = []
        for status in _STATUSES:
            for summary in self._batch.list_jobs(jobQueue=self._queue, jobStatus=status).get("jobSummaryList", []):
                if summary["jobId"] not in self._seen:
                    ids.append(summary["jobId"])
        return ids

    def poll_once(self) -> int:
        started = 0
        for job_id in self._new_jobs():
            self._seen.add(job_id)
            job = self._batch.describe_jobs(jobs=[job_id])["jobs"][0]
            self._start(job)
            started += 1
        return started

    def _start(self, job: dict[str, Any]) -> None:
        container = job.get("container", {})
        environment = {**os.environ, **self._extra_env, **{e["name"]: e["value"] for e in container.get("environment", [])}}
        command = container.get("command") or ["python", "-m", "worker"]
        if command[0] in ("python", "python3"):
            command = [sys.executable, *command[1:]]  # the stack's interpreter, with the project's packages
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.processes[job["jobId"]] = process
        self._log(f"batch-runner: started {job['jobName']} ({job['jobId']}): {' '.join(command)}")
        threading.Thread(target=self._watch, args=(job, process), daemon=True).start()

    def _watch(self, job: dict[str, Any], process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            self._log(f"[{job['jobName'][-12:]}] {raw.decode(errors='replace').rstrip()}")
        code = process.wait()
        self.finished[job["jobId"]] = code
        status = "SUCCEEDED" if code == 0 else "FAILED"
        self._log(f"batch-runner: {job['jobName']} {status} (exit {code})")
        if status == "FAILED":
            self._on_state_change({"jobName": job["jobName"], "jobId": job["jobId"], "jobQueue": self._queue, "status": "FAILED",
                                   "statusReason": f"Essential container in task exited (exit code {code})"})

    def terminate(self, job_id: str) -> None:
        process = self.processes.get(job_id)
        if process and process.poll() is None:
            process.terminate()

    def run(self, stop: threading.Event, interval_s: float = 0.5) -> None:
        while not stop.is_set():
            try:
                self.poll_once()
            except Exception as exc:
                self._log(f"batch-runner: {exc.__class__.__name__}: {exc}")
            stop.wait(interval_s)
