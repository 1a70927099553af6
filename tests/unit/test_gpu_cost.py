"""GPU job cost: every Batch attempt's instance-seconds at that instance's (spot or on-demand) price, once.

Batch, ECS and EC2 answers come through botocore's Stubber, so our requests are checked against the
real API models (parameter names and shapes) without AWS.
"""
from __future__ import annotations

from decimal import Decimal as D

import boto3
import pytest
from botocore.stub import Stubber

from chalicelib.config import get_settings
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.gpu_cost import (
    BatchAttempts, FinalAttempt, GpuAttempt, attempt_cost, attempts_from_batch, meter_gpu_attempts,
)
from chalicelib.core import Usage

CATALOG = load_catalog(get_settings().meter.price_catalog_path)
JOB = {"job_id": "job-abc", "tenant": "acme", "trace_id": "Root=1-abc"}
SPOT_CI = "arn:aws:ecs:us-east-1:123456789012:container-instance/crossover-gpu-spot/aaaa1111"
OD_CI = "arn:aws:ecs:us-east-1:123456789012:container-instance/crossover-gpu-od/bbbb2222"


def batch_job(status="RUNNING", running_on=OD_CI):
    # attempt 0: reclaimed spot g6e.xlarge after 10 min (model load included); attempt 1: crashed on-demand g5.2xlarge after 90 s
    return {"jobId": "batch-1", "jobName": "crossover-job-abc", "status": status, "jobQueue": "q", "jobDefinition": "d", "startedAt": 1,
            "container": {"containerInstanceArn": running_on},
            "attempts": [
                {"container": {"containerInstanceArn": SPOT_CI, "exitCode": 143}, "startedAt": 1_700_000_000_000,
                 "stoppedAt": 1_700_000_600_000, "statusReason": "Host EC2 (instance i-1) terminated."},
                {"container": {"containerInstanceArn": OD_CI, "exitCode": 1}, "startedAt": 1_700_000_700_000,
                 "stoppedAt": 1_700_000_790_000, "statusReason": "Essential container in task exited"},
            ]}


def container_instance(arn, instance_type, ec2_id):
    return {"containerInstances": [{"containerInstanceArn": arn, "ec2InstanceId": ec2_id,
                                    "attributes": [{"name": "ecs.instance-type", "value": instance_type}]}], "failures": []}


def ec2_instance(ec2_id, instance_type, spot):
    instance = {"InstanceId": ec2_id, "InstanceType": instance_type, **({"InstanceLifecycle": "spot"} if spot else {})}
    return {"Reservations": [{"Instances": [instance]}]}


class Stubbed:
    def __init__(self):
        self.clients = {name: boto3.client(name, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
                        for name in ("batch", "ecs", "ec2")}
        self.stubbers = {name: Stubber(client) for name, client in self.clients.items()}

    def expect_instances(self):
        ecs, ec2 = self.stubbers["ecs"], self.stubbers["ec2"]
        ecs.add_response("describe_container_instances", container_instance(SPOT_CI, "g6e.xlarge", "i-1"),
                         {"cluster": "crossover-gpu-spot", "containerInstances": [SPOT_CI]})
        ec2.add_response("describe_instances", ec2_instance("i-1", "g6e.xlarge", spot=True), {"InstanceIds": ["i-1"]})
        ecs.add_response("describe_container_instances", container_instance(OD_CI, "g5.2xlarge", "i-2"),
                         {"cluster": "crossover-gpu-od", "containerInstances": [OD_CI]})
        ec2.add_response("describe_instances", ec2_instance("i-2", "g5.2xlarge", spot=False), {"InstanceIds": ["i-2"]})

    def __enter__(self):
        for stubber in self.stubbers.values():
            stubber.activate()
        return self

    def __exit__(self, *exc):
        for stubber in self.stubbers.values():
            stubber.assert_no_pending_responses()
            stubber.deactivate()


def test_attempt_cost_uses_spot_or_on_demand_price():
    g6e = CATALOG.gpu_instances["g6e.xlarge"]
    spot = GpuAttempt(0, D(3600), "g6e.xlarge", "spot")
    assert attempt_cost(spot, CATALOG) == g6e.spot_per_hour.quantize(D("0.00000001"))
    assert attempt_cost(GpuAttempt(0, D(1800), "g6e.xlarge", "on_demand"), CATALOG) == (g6e.on_demand_per_hour / 2).quantize(D("0.00000001"))
    assert attempt_cost(GpuAttempt(0, D(1800), "g6e.xlarge", None), CATALOG) == (g6e.on_demand_per_hour / 2).quantize(D("0.00000001"))
    assert attempt_cost(GpuAttempt(0, D(60), "p5.48xlarge", "spot"), CATALOG) is None  # unknown: unpriced, never $0


def test_the_deploys_default_instance_types_price_now():
    for instance_type in ("g6e.xlarge", "g5.2xlarge", "g5.12xlarge"):
        assert attempt_cost(GpuAttempt(0, D(3600), instance_type, "on_demand"), CATALOG) == CATALOG.gpu_instances[instance_type].on_demand_per_hour


def test_attempts_that_died_are_priced_with_their_own_instance_and_capacity():
    with Stubbed() as aws:
        aws.expect_instances()
        attempts = attempts_from_batch(batch_job(), BatchAttempts(aws.clients.__getitem__).instance_of)
    assert [(a.index, a.seconds, a.instance_type, a.capacity) for a in attempts] == [
        (0, D(600), "g6e.xlarge", "spot"), (1, D(90), "g5.2xlarge", "on_demand")]
    assert "terminated" in attempts[0].reason


def test_success_meters_every_attempt_once_even_when_the_step_is_retried():
    recorded = {}

    def record(entry):
        recorded.setdefault(entry.request_id, entry)  # the ledger's conditional put: first write wins
        return True

    final = FinalAttempt(D(1200), "g5.2xlarge", Usage(input_tokens=1000, output_tokens=560))
    for _ in range(2):  # the step retried: same ledger entries, nothing twice
        with Stubbed() as aws:
            aws.stubbers["batch"].add_response("describe_jobs", {"jobs": [batch_job(running_on=OD_CI)]}, {"jobs": ["batch-1"]})
            aws.expect_instances()  # a fresh reader each time (a new Lambda invocation)
            total = meter_gpu_attempts(record, CATALOG, BatchAttempts(aws.clients.__getitem__), JOB, "batch-1", "qwen3-32b", "t", final)
    g6e, g5 = CATALOG.gpu_instances["g6e.xlarge"], CATALOG.gpu_instances["g5.2xlarge"]
    expected = [g6e.spot_per_hour * 600 / 3600, g5.on_demand_per_hour * 90 / 3600, g5.on_demand_per_hour * 1200 / 3600]
    assert sorted(recorded) == ["job-abc#gpu#batch-1#0", "job-abc#gpu#batch-1#1", "job-abc#gpu#batch-1#2"]
    assert [recorded[f"job-abc#gpu#batch-1#{n}"].cost_usd for n in range(3)] == [e.quantize(D("0.00000001")) for e in expected]
    assert total == sum(recorded[k].cost_usd for k in recorded)
    assert recorded["job-abc#gpu#batch-1#2"].usage.output_tokens == 560  # tokens ride on the attempt that produced them
    assert recorded["job-abc#gpu#batch-1#0"].usage == Usage()
    assert recorded["job-abc#gpu#batch-1#0"].gpu_seconds == D(600)  # one GPU


def test_a_failed_job_event_meters_its_attempts_from_the_event_itself():
    recorded = []
    with Stubbed() as aws:
        aws.expect_instances()  # no describe_jobs: the event carries the attempts
        total = meter_gpu_attempts(recorded.append, CATALOG, BatchAttempts(aws.clients.__getitem__), JOB, "batch-1", "qwen3-32b", "t",
                                   description=batch_job(status="FAILED"))
    assert [e.request_id for e in recorded] == ["job-abc#gpu#batch-1#0", "job-abc#gpu#batch-1#1"]
    assert total is not None and total > 0


def test_without_batchs_view_the_workers_report_prices_the_final_attempt():
    class Down:
        def describe(self, batch_job_id):
            raise RuntimeError("no Batch here")

        def instance_of(self, arn):
            raise AssertionError("not reached")

    recorded = []
    final = FinalAttempt(D(3600), "g5.12xlarge", Usage(input_tokens=1, output_tokens=1))
    total = meter_gpu_attempts(recorded.append, CATALOG, Down(), JOB, "batch-1", "qwen3-32b", "t", final)
    assert total == D("5.672") and recorded[0].cost_usd == D("5.672")  # on-demand when the capacity is unknown


@pytest.mark.parametrize("instance_type", ["ml.g7e.2xlarge", "g7e.2xlarge", "g6.xlarge"])
def test_instance_names_as_batch_reports_them_are_priced(instance_type):
    assert attempt_cost(GpuAttempt(0, D(3600), instance_type, "on_demand"), CATALOG) is not None
