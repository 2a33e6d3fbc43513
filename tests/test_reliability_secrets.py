"""API keys never appear in output, errors, logs or --json, debug mode included."""

from __future__ import annotations

import json
import logging

import pytest
from conftest import free_port, run_cli
from fake_openai import FakeOpenAI

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import ModelError
from assistant.server_errors import redact_url

SECRET = "sk-test-SECRET-0123456789abcdef"
QUESTION = "What reward does DrPose maximize?"


def test_settings_never_show_the_key() -> None:
    settings = Settings(openai_api_key=SECRET, openai_base_url="http://127.0.0.1:1/v1")
    assert SECRET not in repr(settings) + str(settings) + settings.model_dump_json()
    assert SECRET not in json.dumps(settings.model_dump(mode="json"))


def test_errors_and_logs_of_a_rejected_key_never_show_it(bundled_home, minilm, caplog) -> None:
    caplog.set_level(logging.DEBUG)  # every library's debug logging, the SDK's included
    with FakeOpenAI([401]) as server:  # its error body echoes the key it was sent
        settings = Settings(home=bundled_home, openai_base_url=server.base_url,
                            openai_api_key=SECRET, max_retries=0)
        with pytest.raises(ModelError) as caught:
            Assistant(settings, embeddings=minilm).ask(QUESTION)
    assert caplog.records  # the logging did run
    assert SECRET not in str(caught.value) + repr(caught.value)
    assert SECRET not in caplog.text
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_cli_debug_mode_with_sdk_logging_never_shows_the_key(bundled_home) -> None:
    with FakeOpenAI([401]) as server:
        env = {"ASSISTANT_HOME": str(bundled_home), "OPENAI_BASE_URL": server.base_url,
               "OPENAI_API_KEY": SECRET, "ASSISTANT_DEBUG": "1", "OPENAI_LOG": "debug"}
        result = run_cli("--debug", "ask", QUESTION, "--json", env=env, timeout=300)
    assert result.returncode == 1
    assert "Traceback" in result.stderr  # debug mode really was on
    assert "Incorrect API key provided: ***" in result.stderr  # the server's echo, masked
    assert SECRET not in result.stdout + result.stderr
    assert "rejected the API key (401)" in result.stderr.strip().splitlines()[-1]


def test_a_key_inside_the_base_url_is_not_shown(bundled_home) -> None:
    url = f"http://user:{SECRET}@127.0.0.1:{free_port()}/v1"
    assert redact_url(url).startswith("http://***@127.0.0.1:")
    env = {"ASSISTANT_HOME": str(bundled_home), "OPENAI_BASE_URL": url,
           "ASSISTANT_MAX_RETRIES": "0", "ASSISTANT_TIMEOUT": "5"}
    for args in (("ask", QUESTION, "--json"), ("--debug", "ask", QUESTION)):
        result = run_cli(*args, env=env, timeout=300)
        assert result.returncode == 1
        assert "cannot connect to http://***@127.0.0.1" in result.stderr
        assert SECRET not in result.stdout + result.stderr
