"""`make run`'s event side: the SQS event pump and the local Batch runner, calling the app's handlers.

In AWS these are Lambda event source mappings, EventBridge rules and Batch compute environments.
"""
from __future__ import annotations

import os
import signal
import threading
import warnings

from devstack.batch_runner import LocalBatchRunner
from devstack.event_pump import EventPump


def main() -> None:
    from chalicelib import handlers
    from chalicelib.config import get_settings

    # Powertools warns on every handler run that published no metric (a poll that found nothing):
    # noise on the console of a long-running local process; in Lambda each invocation is its own run.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    settings = get_settings()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    pump = EventPump(handlers.sqs_handlers())
    runner = LocalBatchRunner(settings.jobs.batch_job_queue, {
        "MODEL_ENDPOINT": os.environ.get("SELF_HOSTED_ENDPOINT", "http://127.0.0.1:8411"),
        "MODEL_NAME": os.environ.get("SELF_HOSTED_MODEL", "local.smollm2-135m-instruct"),
        "INSTANCE_TYPE": "local-cpu", "GPU_COUNT": "0", "CONCURRENCY": os.environ.get("WORKER_CONCURRENCY", "2"),
        "HEARTBEAT_INTERVAL_S": "5",
    }, handlers.batch_job_failed)
    threads = [threading.Thread(target=pump.run, args=(stop,), daemon=True), threading.Thread(target=runner.run, args=(stop,), daemon=True)]
    for thread in threads:
        thread.start()
    print(f"local-events: pumping {sorted(handlers.sqs_handlers())}; running Batch jobs from {settings.jobs.batch_job_queue}", flush=True)
    try:
        while not stop.wait(1):
            pass
    except KeyboardInterrupt:
        stop.set()


if __name__ == "__main__":
    main()
