"""Run checkov on the expanded template and hold it to deploy/checkov-skips.json.

    .venv-deploy/bin/python deploy/checkov_gate.py build/dev/expanded.json     (part of `make package`)

Fails on any finding the skip list does not name, and on a skip that matches nothing (so the list
stays true). Every skip carries its reason; tests/integration/test_deploy_limits.py checks the list's form.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
from typing import Any

SKIPS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkov-skips.json")


def load_skips(path: str = SKIPS_PATH) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["skips"]  # type: ignore[no-any-return]


def judge(failed: list[dict[str, str]], skips: list[dict[str, Any]]) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """(findings no skip accepts, skips that accepted nothing)."""
    used = [False] * len(skips)
    open_findings = []
    for finding in failed:
        hit = [i for i, skip in enumerate(skips) if skip["check"] == finding["check_id"]
               and any(fnmatch.fnmatchcase(finding["resource"], pattern) for pattern in skip["resources"])]
        for i in hit:
            used[i] = True
        if not hit:
            open_findings.append(finding)
    return open_findings, [skip for skip, was_used in zip(skips, used) if not was_used]


def run_checkov(template: str) -> list[dict[str, str]]:
    checkov = os.path.join(os.path.dirname(sys.executable), "checkov")
    done = subprocess.run([checkov, "-f", template, "--framework", "cloudformation", "--compact", "--quiet", "-o", "json"],
                          capture_output=True, text=True)
    report = json.loads(done.stdout)
    report = report[0] if isinstance(report, list) else report
    if report.get("summary", {}).get("parsing_errors"):
        raise SystemExit(f"checkov could not parse {template}")
    return [{"check_id": f["check_id"], "resource": f["resource"], "name": f["check_name"]}
            for f in report.get("results", {}).get("failed_checks", [])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("template")
    args = parser.parse_args()
    failed = run_checkov(args.template)
    open_findings, stale = judge(failed, load_skips())
    print(f"checkov: {len(failed)} findings, {len(failed) - len(open_findings)} accepted by deploy/checkov-skips.json, {len(open_findings)} open")
    for finding in open_findings:
        print(f"  OPEN {finding['check_id']} {finding['resource']}: {finding['name']}")
    for skip in stale:
        print(f"  STALE skip {skip['check']} {skip['resources']}: matches nothing, remove it")
    if open_findings or stale:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
