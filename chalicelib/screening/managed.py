"""Managed screening checks behind configuration: Amazon Comprehend PII and Bedrock Guardrails.

Each check raises on timeout or service error; `screen()` then applies the policy's fail-open or
fail-closed choice. Timeouts are botocore's connect/read timeouts with no retries, so a slow
service costs at most the configured budget (screening must stay well under 200 ms).
"""
from __future__ import annotations

from typing import Any

from .core import CheckResult, Policy

# Comprehend's DetectPiiEntities takes at most 100 KB of UTF-8 text.
_COMPREHEND_MAX_BYTES = 100_000


def managed_client_config(timeout_s: float) -> Any:
    from botocore.config import Config

    return Config(connect_timeout=timeout_s, read_timeout=timeout_s, retries={"total_max_attempts": 1})


class ComprehendPiiCheck:
    """Blocks or redacts PII found by Comprehend DetectPiiEntities, per the tenant's policy."""

    name = "pii"

    def __init__(self, comprehend: Any, language_code: str = "en") -> None:
        self._client = comprehend
        self._language = language_code

    def check(self, text: str, policy: Policy) -> CheckResult:
        if policy.pii_action == "off" or not text.strip():
            return CheckResult(False)
        sample = text.encode("utf-8")[:_COMPREHEND_MAX_BYTES].decode("utf-8", errors="ignore")
        entities = self._client.detect_pii_entities(Text=sample, LanguageCode=self._language)["Entities"]
        found = [
            entity for entity in entities
            if entity["Score"] >= policy.pii_min_score and (not policy.pii_entity_types or entity["Type"] in policy.pii_entity_types)
        ]
        if not found:
            return CheckResult(False)
        reasons = tuple(sorted({f"pii.{entity['Type']}" for entity in found}))
        if policy.pii_action == "block":
            return CheckResult(True, reasons)
        return CheckResult(False, reasons, redact(sample, found))


def redact(text: str, entities: list[dict[str, Any]]) -> str:
    """Replace each entity span by [TYPE], right to left so earlier offsets stay valid."""
    for entity in sorted(entities, key=lambda e: e["BeginOffset"], reverse=True):
        text = text[: entity["BeginOffset"]] + f"[{entity['Type']}]" + text[entity["EndOffset"]:]
    return text


class GuardrailCheck:
    """Bedrock Guardrails ApplyGuardrail on the input (prompt-attack and content filters)."""

    name = "guardrail"

    def __init__(self, bedrock_runtime: Any, guardrail_id: str, guardrail_version: str) -> None:
        self._client = bedrock_runtime
        self._id = guardrail_id
        self._version = guardrail_version

    def check(self, text: str, policy: Policy) -> CheckResult:
        if not policy.guardrail_enabled:
            return CheckResult(False)
        response = self._client.apply_guardrail(
            guardrailIdentifier=self._id, guardrailVersion=self._version, source="INPUT",
            content=[{"text": {"text": text}}],
        )
        if response.get("action") != "GUARDRAIL_INTERVENED":
            return CheckResult(False)
        return CheckResult(True, guardrail_reasons(response.get("assessments", [])) or ("guardrail.intervened",))


def guardrail_reasons(assessments: list[dict[str, Any]]) -> tuple[str, ...]:
    reasons: set[str] = set()
    for assessment in assessments:
        for item in assessment.get("contentPolicy", {}).get("filters", []):
            if item.get("action") == "BLOCKED":
                reasons.add(f"guardrail.content.{item['type']}")
        for item in assessment.get("topicPolicy", {}).get("topics", []):
            if item.get("action") == "BLOCKED":
                reasons.add(f"guardrail.topic.{item['name']}")
        for item in assessment.get("wordPolicy", {}).get("customWords", []):
            if item.get("action") == "BLOCKED":
                reasons.add("guardrail.word")
        for item in assessment.get("sensitiveInformationPolicy", {}).get("piiEntities", []):
            if item.get("action") == "BLOCKED":
                reasons.add(f"guardrail.pii.{item['type']}")
    return tuple(sorted(reasons))
