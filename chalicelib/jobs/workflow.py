"""The long-job workflow as our code sees it: start an execution, stop it, answer a task token,
and post a step message to ourselves. `StepFunctionsWorkflow` does it with boto3 (Step Functions,
and SQS for the job-steps queue); `InMemoryWorkflow` is its twin for unit tests.

A token nobody waits on any more (the execution timed out, was stopped, or the answer went already)
is not an error here: the answer methods return False and log, as chalicelib/jobs/protocol.py says.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import aws
from ..observability import logger
from . import protocol


class Workflow(Protocol):
    def start(self, job_id: str, payload: dict[str, Any], trace_id: str) -> str:
        """Start the job's execution (named after the job: starting it twice is a no-op); its ARN."""
        ...

    def execution_arn(self, job_id: str) -> str: ...

    def stop(self, execution_arn: str, error: str, cause: str) -> None:
        """Stop an execution; one that does not exist (any more) is fine."""
        ...

    def succeed(self, token: str, output: dict[str, Any]) -> bool: ...

    def fail(self, token: str, error: str, cause: str) -> bool: ...

    def heartbeat(self, token: str) -> bool:
        """False when the workflow no longer waits on this token."""
        ...

    def send_step(self, body: str, delay_s: int) -> None:
        """Post a step message to the job-steps queue (the capacity watch sends itself this way)."""
        ...


class StepFunctionsWorkflow:
    def __init__(self, state_machine_arn: str, state_machine_name: str, job_steps_queue: str) -> None:
        self._arn = state_machine_arn
        self._name = state_machine_name
        self._queue = job_steps_queue

    def state_machine_arn(self) -> str:
        if self._arn:
            return self._arn
        account = aws.client("sts").get_caller_identity()["Account"]
        region = aws.client("stepfunctions").meta.region_name
        self._arn = f"arn:aws:states:{region}:{account}:stateMachine:{self._name}"
        return self._arn

    def execution_arn(self, job_id: str) -> str:
        return self.state_machine_arn().replace(":stateMachine:", ":execution:") + f":{job_id}"

    def start(self, job_id: str, payload: dict[str, Any], trace_id: str) -> str:
        sfn = aws.client("stepfunctions")
        try:
            sfn.start_execution(stateMachineArn=self.state_machine_arn(), name=job_id, input=json.dumps(payload), traceHeader=trace_id[:256])
        except sfn.exceptions.ExecutionAlreadyExists:
            pass  # same name, same job: the idempotent resubmission case
        return self.execution_arn(job_id)

    def stop(self, execution_arn: str, error: str, cause: str) -> None:
        sfn = aws.client("stepfunctions")
        try:
            sfn.stop_execution(executionArn=execution_arn, error=error, cause=cause)
        except sfn.exceptions.ExecutionDoesNotExist:
            pass

    def _send(self, call: str, **arguments: Any) -> bool:
        try:
            getattr(aws.client("stepfunctions"), call)(**arguments)
            return True
        except Exception as exc:
            code = protocol.stale_token_code(exc)
            if code is None:
                raise
            # The workflow moved on (timeout, cancel, or this answer was sent already): harmless.
            logger.info("job.stale_task_token", extra={"code": code, "call": call})
            return False

    def succeed(self, token: str, output: dict[str, Any]) -> bool:
        return self._send("send_task_success", taskToken=token, output=json.dumps(output, default=str))

    def fail(self, token: str, error: str, cause: str) -> bool:
        return self._send("send_task_failure", taskToken=token, **protocol.failure(error, cause))

    def heartbeat(self, token: str) -> bool:
        return self._send("send_task_heartbeat", taskToken=token)

    def send_step(self, body: str, delay_s: int) -> None:
        sqs = aws.client("sqs")
        url = sqs.get_queue_url(QueueName=self._queue)["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=body, DelaySeconds=delay_s)


@dataclass
class InMemoryWorkflow:
    """The twin: records what our code asked of the workflow. Tokens in `stale` answer as dead ones do."""

    executions: dict[str, dict[str, Any]] = field(default_factory=dict)
    stopped: dict[str, tuple[str, str]] = field(default_factory=dict)
    answers: dict[str, tuple[str, Any]] = field(default_factory=dict)  # token -> ("success", output) | ("failure", (error, cause))
    heartbeats: list[str] = field(default_factory=list)
    steps: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    stale: set[str] = field(default_factory=set)

    def execution_arn(self, job_id: str) -> str:
        return f"arn:aws:states:us-east-1:000000000000:execution:crossover-long-job:{job_id}"

    def start(self, job_id: str, payload: dict[str, Any], trace_id: str) -> str:
        self.executions.setdefault(job_id, payload)
        return self.execution_arn(job_id)

    def stop(self, execution_arn: str, error: str, cause: str) -> None:
        self.stopped[execution_arn] = (error, cause)

    def _answer(self, token: str, kind: str, value: Any) -> bool:
        if token in self.stale or token in self.answers:
            return False
        self.answers[token] = (kind, value)
        return True

    def succeed(self, token: str, output: dict[str, Any]) -> bool:
        return self._answer(token, "success", json.loads(json.dumps(output, default=str)))

    def fail(self, token: str, error: str, cause: str) -> bool:
        failure = protocol.failure(error, cause)
        return self._answer(token, "failure", (failure["error"], failure["cause"]))

    def heartbeat(self, token: str) -> bool:
        if token in self.stale or token in self.answers:
            return False
        self.heartbeats.append(token)
        return True

    def send_step(self, body: str, delay_s: int) -> None:
        self.steps.append((json.loads(body), delay_s))
