"""Budget alerts against moto: each threshold publishes to SNS exactly once per tenant and month,
under retries and concurrent requests (a conditional write decides who publishes)."""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import boto3
import pytest

from chalicelib.meter.alerts import AlertsConfig, BudgetAlerts, crossed_thresholds, parse_thresholds
from chalicelib.meter.budgets import Budgets
from tests.integration.support import AtomicCalls


@pytest.fixture
def topic(aws):
    """An SNS topic with an SQS subscriber, so every published message can be counted."""
    sns, sqs = boto3.client("sns"), boto3.client("sqs")
    arn = sns.create_topic(Name="crossover-budget-alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="alerts-inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})

    def received() -> list[dict]:
        messages = []
        while True:
            batch = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
            if not batch:
                return messages
            messages += [json.loads(m["Body"]) for m in batch]
            for m in batch:
                sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])

    return arn, received


def budgets_with_alerts(topic_arn: str) -> Budgets:
    from chalicelib.services import get_services

    table = get_services().settings.meter.budgets_table
    dynamodb = AtomicCalls(boto3.client("dynamodb"))  # concurrent requests below: moto must serialise each call as DynamoDB does
    return Budgets(table, dynamodb, alerts=BudgetAlerts(table, AlertsConfig(topic_arn), dynamodb))


def test_thresholds_crossed():
    assert crossed_thresholds(Decimal("49.99"), Decimal(100), (50, 80, 100)) == []
    assert crossed_thresholds(Decimal(80), Decimal(100), (100, 50, 80)) == [50, 80]
    assert crossed_thresholds(Decimal(5), Decimal(0), (50,)) == []
    with pytest.raises(ValueError):
        parse_thresholds("50,abc")


def test_each_threshold_publishes_once_per_period_under_retries_and_concurrency(topic):
    arn, received = topic
    budgets = budgets_with_alerts(arn)
    budgets.set_limit("acme", Decimal("10.00"))
    reservations = []
    lock = threading.Lock()

    def spend(_):
        reservation = budgets.reserve("acme", Decimal("0.50"), period="2026-12")
        budgets.settle(reservation, Decimal("0.45"))
        with lock:
            reservations.append(reservation)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(spend, range(20)))  # 20 x $0.45 = $9.00: crosses 50% and 80%, not 100%
    retry = BudgetAlerts(budgets._table, AlertsConfig(arn))  # a retried invocation (a new process) checks again
    for _ in range(5):
        assert retry.check("acme", "2026-12", Decimal("9.00"), Decimal("10.00")) == []
    messages = received()
    assert sorted(m["threshold_percent"] for m in messages) == [50, 80]
    assert {m["tenant"] for m in messages} == {"acme"} and {m["period"] for m in messages} == {"2026-12"}
    budgets.settle(budgets.reserve("acme", Decimal("0.50"), period="2026-12"), Decimal("0.50"))
    budgets.settle(budgets.reserve("acme", Decimal("0.50"), period="2026-12"), Decimal("0.50"))  # $10.00
    assert [m["threshold_percent"] for m in received()] == [100]
    budgets.settle(budgets.reserve("acme", Decimal("6.00"), period="2027-01"), Decimal("6.00"))  # a new month alerts again
    assert [(m["period"], m["threshold_percent"]) for m in received()] == [("2027-01", 50)]


def test_per_tenant_thresholds(topic):
    arn, received = topic
    budgets = budgets_with_alerts(arn)
    budgets.set_limit("cautious", Decimal("100"), alert_thresholds=(25, 90))
    budgets.settle(budgets.reserve("cautious", Decimal("30"), period="2026-12"), Decimal("30"))
    assert [m["threshold_percent"] for m in received()] == [25]


def test_a_failed_publish_is_retried_by_the_next_request(topic, monkeypatch):
    arn, received = topic
    from chalicelib.services import get_services

    table = get_services().settings.meter.budgets_table
    sns = boto3.client("sns")
    calls = {"n": 0}
    real_publish = sns.publish

    def flaky_publish(**kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("SNS is down")
        return real_publish(**kwargs)

    monkeypatch.setattr(sns, "publish", flaky_publish)
    budgets = Budgets(table, alerts=BudgetAlerts(table, AlertsConfig(arn), sns=sns))
    budgets.set_limit("acme", Decimal("1"))
    budgets.settle(budgets.reserve("acme", Decimal("0.6"), period="2026-12"), Decimal("0.6"))  # publish fails, request unharmed
    assert received() == []
    budgets.settle(budgets.reserve("acme", Decimal("0.01"), period="2026-12"), Decimal("0.01"))
    assert [m["threshold_percent"] for m in received()] == [50]


def test_alerts_are_off_without_a_topic(aws):
    from chalicelib.services import get_services

    table = get_services().settings.meter.budgets_table
    budgets = Budgets(table, alerts=BudgetAlerts(table, AlertsConfig("")))
    budgets.set_limit("acme", Decimal("1"))
    budgets.settle(budgets.reserve("acme", Decimal("0.9")), Decimal("0.9"))  # no SNS call, no error
