"""The task-token protocol, the workflow's step table and the worker image agree with each other."""
from __future__ import annotations

import ast
import json
import re
import sys
import typing
from pathlib import Path

from chalicelib.jobs import protocol
from chalicelib.jobs.models import StepMessage
from chalicelib.jobs.steps import OWN_STEPS, STEPS

ROOT = Path(__file__).resolve().parents[2]
ASL = ROOT / "statemachines" / "long_job.asl.json"


def _asl() -> dict:
    # The template has ${...} placeholders where numbers go; any number parses.
    return json.loads(re.sub(r"\$\{\w+\}", "1", ASL.read_text()))


def _walk(states: dict):
    for name, state in states.items():
        yield name, state
        if "Iterator" in state:
            yield from _walk(state["Iterator"]["States"])


def _asl_actions() -> set[str]:
    return {state["Parameters"]["MessageBody"]["action"] for _, state in _walk(_asl()["States"])
            if "MessageBody" in state.get("Parameters", {})}


def test_step_table_has_exactly_the_actions_the_state_machine_sends():
    assert set(STEPS) == _asl_actions()


def test_step_message_accepts_exactly_the_step_tables_actions():
    assert not set(STEPS) & set(OWN_STEPS)
    assert set(typing.get_args(StepMessage.model_fields["action"].annotation)) == set(STEPS) | set(OWN_STEPS)


def test_every_error_the_state_machine_catches_by_name_is_one_the_protocol_defines():
    names = {value for key, value in vars(protocol).items() if key.isupper() and isinstance(value, str) and "." in value}
    caught = {error for _, state in _walk(_asl()["States"]) for rule in state.get("Catch", []) + state.get("Retry", [])
              for error in rule["ErrorEquals"] if not error.startswith("States.") and error != "Step.Transient"}
    assert caught and caught <= names, caught - names


def test_the_worker_reads_back_exactly_what_job_steps_hands_it():
    job = protocol.WorkerJob(job_id="job-1", tenant="acme", task_token="tok", trace_id="t-1", bucket="b", input_key="in",
                             result_key="out", checkpoint_key="ck", max_tokens=64, system_prompt="be brief", kms_key_id="")
    env = protocol.to_env(job)
    assert set(env) == set(protocol.ENV_NAMES.values())
    assert protocol.from_env(env) == job


def test_a_missing_required_variable_is_named():
    env = protocol.to_env(protocol.WorkerJob("j", "t", "tok", "", "b", "i", "r", "c", 1, "", ""))
    del env["TASK_TOKEN"]
    try:
        protocol.from_env(env)
    except KeyError as exc:
        assert "TASK_TOKEN" in str(exc)
    else:
        raise AssertionError("a missing TASK_TOKEN was accepted")


def test_stale_token_codes_are_told_apart_from_other_aws_errors():
    class ClientError(Exception):
        def __init__(self, code: str) -> None:
            self.response = {"Error": {"Code": code}}

    assert protocol.stale_token_code(ClientError("TaskTimedOut")) == "TaskTimedOut"
    assert protocol.stale_token_code(ClientError("ThrottlingException")) is None
    assert protocol.stale_token_code(ValueError("no response")) is None


def test_failure_arguments_are_cut_to_step_functions_limits():
    assert protocol.failure("E" * 300, "c" * 40_000) == {"error": "E" * 256, "cause": "c" * 32768}


def test_empty_tuning_variables_mean_the_default():
    assert protocol.env_int("X", 8, {"X": ""}) == 8
    assert protocol.env_float("X", 0.9, {}) == 0.9
    assert protocol.env_str("X", "d", {"X": "v"}) == "v"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_protocol_module_imports_the_standard_library_only():
    top = {name.split(".")[0] for name in _imports(ROOT / "chalicelib" / "jobs" / "protocol.py")}
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top - set(sys.stdlib_module_names)


def test_the_worker_image_ships_every_chalicelib_module_the_worker_imports():
    wanted: set[Path] = set()
    for source in (ROOT / "worker").glob("*.py"):
        for name in _imports(source):
            if name.split(".")[0] != "chalicelib":
                continue
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):  # every package on the way, and the module itself
                base = ROOT.joinpath(*parts[:depth])
                wanted |= {p for p in (base / "__init__.py", base.with_suffix(".py")) if p.exists()}
    assert ROOT / "chalicelib" / "jobs" / "protocol.py" in wanted
    copied: set[Path] = set()
    for line in (ROOT / "worker" / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            copied |= {ROOT / source.rstrip("/") for source in line.split()[1:-1]}
    missing = {p for p in wanted if not any(p == c or c in p.parents for c in copied)}
    assert not missing, f"worker/Dockerfile does not COPY {sorted(str(p.relative_to(ROOT)) for p in missing)}"
    # ...and what the image ships from chalicelib needs nothing beyond the standard library.
    for path in wanted:
        top = {name.split(".")[0] for name in _imports(path)}
        assert top <= set(sys.stdlib_module_names) | {"__future__"}, (path, top)


def test_a_job_routed_to_bedrock_skips_the_gpu_states_and_plans_the_bedrock_path():
    states = _asl()["States"]
    assert _asl()["StartAt"] == "Route"
    assert {rule["Next"] for rule in states["Route"]["Choices"]} == {"RunOnGpu", "RoutedToBedrock"}
    assert states["Route"]["Default"] == "RunOnGpu"
    routed = states["RoutedToBedrock"]
    assert routed["Result"]["Error"] == protocol.ROUTED_TO_BEDROCK and routed["Next"] == "PlanFallback"


def test_the_worker_imports_from_the_files_the_image_copies_alone(tmp_path):
    """Lay out /app as worker/Dockerfile's COPY lines do, then import the worker from there only."""
    import shutil
    import subprocess

    for line in (ROOT / "worker" / "Dockerfile").read_text().splitlines():
        if not line.startswith("COPY ") or "${" in line:
            continue
        *sources, destination = line.split()[1:]
        assert destination.startswith("/app/"), line
        target = tmp_path / destination[len("/app/"):]
        for source in sources:
            path = ROOT / source.rstrip("/")
            if path.is_dir():
                shutil.copytree(path, target, dirs_exist_ok=True)
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target / path.name)
    import boto3

    # -S: no site processing, so no .pth file (the project's editable install) can supply a module the image lacks;
    # boto3's site-packages is added by hand, as the image's pip install provides it.
    site_packages = str(Path(boto3.__file__).parents[1])
    code = "import sys; sys.path[:0] = [sys.argv[1]]; sys.path.append(sys.argv[2]); import worker.worker"
    done = subprocess.run([sys.executable, "-S", "-c", code, str(tmp_path), site_packages], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
