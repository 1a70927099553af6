"""Settings: one declaration per setting (environment variable and default), grouped per capability."""
from __future__ import annotations

from dataclasses import fields

import pytest

from chalicelib.config import GROUPS, RESOURCE_ENV_VARS, Settings, env_default, from_env, get_settings


def test_every_setting_has_its_own_environment_variable_and_every_resource_is_one_of_them():
    names = [spec.metadata["env"] for group in GROUPS.values() for spec in fields(group)]
    assert len(names) == len(set(names))
    assert set(RESOURCE_ENV_VARS) <= set(names)
    assert {spec.name for spec in fields(Settings)} == {"stage", *GROUPS}


def test_unset_variables_give_the_defaults_and_set_ones_are_parsed_by_type():
    jobs = from_env(GROUPS["jobs"], {})
    assert jobs.table == "crossover-jobs" and jobs.heartbeat_s == 300 and jobs.max_failed_fraction == 0.0
    jobs = from_env(GROUPS["jobs"], {"JOBS_TABLE": "t", "JOB_HEARTBEAT_SECONDS": "6", "JOB_MAX_FAILED_FRACTION": "0.25",
                                     "FALLBACK_CHUNK_SIZE": ""})
    assert (jobs.table, jobs.heartbeat_s, jobs.max_failed_fraction, jobs.fallback_chunk_size) == ("t", 6, 0.25, 0)
    models = from_env(GROUPS["models"], {"MODEL_ALIASES": '{"fast": "m-1"}'})
    assert models.aliases == {"fast": "m-1"} and from_env(GROUPS["models"], {}).aliases == {}
    assert from_env(GROUPS["meter"], {"OPS_READY": "TRUE"}).ops_ready is True
    assert from_env(GROUPS["meter"], {"OPS_READY": "yes"}).ops_ready is False
    assert from_env(GROUPS["storage"], {"KMS_KEY_ID": ""}).kms_key_id == ""


def test_a_malformed_number_is_refused_not_defaulted():
    with pytest.raises(ValueError):
        from_env(GROUPS["jobs"], {"JOB_HEARTBEAT_SECONDS": "six"})


def test_env_default_and_the_grouped_settings_agree(monkeypatch):
    monkeypatch.delenv("REQUESTS_QUEUE", raising=False)
    get_settings.cache_clear()
    try:
        assert get_settings().events.requests_queue == env_default("REQUESTS_QUEUE") == "crossover-requests"
    finally:
        get_settings.cache_clear()
    with pytest.raises(KeyError):
        env_default("NO_SUCH_SETTING")
