"""What `make run` shows: our components' logs and errors; infrastructure chatter only with VERBOSE=1."""
from devstack.stack import ready_banner, shown

MOTO_ACCESS = '127.0.0.1 - - [03/Dec/2026 13:34:27] "POST / HTTP/1.1" 200 -'
MODEL_DUMP = "llama_model_loader: - kv   0:                       general.architecture str              = llama"


def test_moto_access_log_and_model_loader_dump_are_hidden_by_default():
    assert not shown("moto", MOTO_ACCESS, verbose=False)
    assert not shown("model", MODEL_DUMP, verbose=False)
    assert not shown("model", 'INFO:     127.0.0.1:5170 - "POST /v1/chat/completions HTTP/1.1" 200 OK', verbose=False)
    assert not shown("bedrock", 'bedrock-bridge: "POST /model/x/converse HTTP/1.1" 200 -', verbose=False)


def test_infrastructure_failures_are_still_shown():
    assert shown("moto", '127.0.0.1 - - [03/Dec/2026 13:34:27] "POST / HTTP/1.1" 500 -', verbose=False)
    assert shown("moto", "Traceback (most recent call last):", verbose=False)
    assert shown("moto", '  File "/x/moto/core/responses.py", line 10, in dispatch', verbose=False)
    assert shown("model", "ValueError: Failed to load model from file", verbose=False)


def test_our_components_are_always_shown():
    for process in ("api", "events", "stack"):
        assert shown(process, '127.0.0.1 - - [03/Dec/2026 13:34:27] "GET /v1/health HTTP/1.1" 200 -', verbose=False)


def test_verbose_shows_everything():
    assert shown("moto", MOTO_ACCESS, verbose=True)
    assert shown("model", MODEL_DUMP, verbose=True)


def test_ready_banner_says_how_to_see_the_hidden_logs_only_when_they_are_hidden():
    assert "VERBOSE=1" in ready_banner("dev-key", 8000, 4566, verbose=False)
    assert "VERBOSE=1" not in ready_banner("dev-key", 8000, 4566, verbose=True)
    assert "x-api-key: dev-key" in ready_banner("dev-key", 8000, 4566, verbose=False)
