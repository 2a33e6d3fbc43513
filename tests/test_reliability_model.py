"""Faults of the model endpoint: the real ChatOpenAI against a scripted server on loopback."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import free_port, run_cli
from fake_openai import DRPOSE, FakeOpenAI

from assistant.api import Assistant
from assistant.config import Settings
from assistant.errors import ModelError

SECRET = "sk-test-SECRET-0123456789abcdef"
QUESTION = "What reward does DrPose maximize?"


def assistant_for(home: Path, minilm, base_url: str, *, retries: int = 2,
                  timeout: float = 5.0) -> Assistant:
    settings = Settings(home=home, openai_base_url=base_url, openai_api_key=SECRET,
                        model="fake", max_retries=retries, timeout=timeout)
    return Assistant(settings, embeddings=minilm)


def cli_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    return {"ASSISTANT_HOME": str(home), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": SECRET,
            "ASSISTANT_MODEL": "fake", **extra}


def test_a_healthy_server_answers_with_the_key_sent(bundled_home, minilm) -> None:
    with FakeOpenAI(["ok"]) as server:
        answer = assistant_for(bundled_home, minilm, server.base_url).ask(QUESTION)
    assert answer.citations[0].title == DRPOSE and not answer.abstained
    assert [s.authorization for s in server.seen] == [f"Bearer {SECRET}"]
    assert server.seen[0].body["stream"] is True


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retried_with_backoff_then_answered(bundled_home, minilm, status: int) -> None:
    with FakeOpenAI([status, status, "ok"]) as server:
        answer = assistant_for(bundled_home, minilm, server.base_url, retries=2).ask(QUESTION)
    assert answer.citations[0].title == DRPOSE
    times = [s.at for s in server.seen]
    assert len(times) == 3  # two retries
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6  # 0.5 s then 1 s, less at most 25% jitter


@pytest.mark.parametrize(("status", "message"), [
    (429, "is rate-limiting requests (429) after retries"),
    (500, "failed with HTTP 500 after retries"),
])
def test_retries_run_out_into_a_clear_error(bundled_home, minilm, status: int,
                                            message: str) -> None:
    with FakeOpenAI([status]) as server:
        with pytest.raises(ModelError, match=re.escape(message)) as caught:
            assistant_for(bundled_home, minilm, server.base_url, retries=1).ask(QUESTION)
    assert len(server.seen) == 2
    assert SECRET not in str(caught.value)


def test_rejected_key_is_not_retried_and_not_shown(bundled_home, minilm) -> None:
    with FakeOpenAI([401]) as server:
        with pytest.raises(ModelError,
                           match=r"rejected the API key \(401\); check OPENAI_API_KEY") as caught:
            assistant_for(bundled_home, minilm, server.base_url).ask(QUESTION)
    assert len(server.seen) == 1
    assert SECRET not in str(caught.value)


def test_refused_connection(bundled_home, minilm) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelError, match="cannot connect to .*check that the server is running"):
        assistant_for(bundled_home, minilm, url, retries=1).ask(QUESTION)


def test_hanging_server_times_out_after_retries(bundled_home, minilm) -> None:
    with FakeOpenAI(["hang"]) as server:
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"did not answer within 1 s after retries"):
            assistant_for(bundled_home, minilm, server.base_url, retries=1, timeout=1).ask(QUESTION)
        elapsed = time.monotonic() - started
    assert len(server.seen) == 2
    assert elapsed < 15


@pytest.mark.parametrize("how", ["drop", "truncate"])
def test_stream_cut_mid_answer_is_an_error_not_an_answer(bundled_home, minilm, how: str) -> None:
    with FakeOpenAI([how]) as server:
        assistant = assistant_for(bundled_home, minilm, server.base_url)
        response = assistant.stream(QUESTION)
        with pytest.raises(ModelError, match="the answer is incomplete"):
            for _ in response:
                pass
        with pytest.raises(ModelError, match="the answer is incomplete"):
            response.answer  # noqa: B018  (no final Answer for a cut stream)
    assert not response.done
    assert len(server.seen) == 1  # a stream is not replayed: its first part may have been shown


def test_cli_marks_a_cut_answer_incomplete(bundled_home) -> None:
    with FakeOpenAI(["drop"]) as server:
        result = run_cli("ask", QUESTION, env=cli_env(bundled_home, server.base_url), timeout=300)
    assert result.returncode == 1
    assert "the answer is incomplete" in result.stderr
    assert result.stdout.rstrip().endswith("[answer incomplete]")
    assert "[1] Direct Reward" not in result.stdout  # no reference list under a cut answer


def test_cli_json_against_an_unreachable_server(bundled_home) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = run_cli("ask", QUESTION, "--json",
                     env=cli_env(bundled_home, url, ASSISTANT_MAX_RETRIES="1",
                                 ASSISTANT_TIMEOUT="5"),
                     timeout=300)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot connect to http://127.0.0.1")
    assert len(lines[0]) < 200
    assert SECRET not in result.stdout + result.stderr


def test_cli_answers_through_the_server_with_json(bundled_home) -> None:
    with FakeOpenAI(["ok"]) as server:
        result = run_cli("ask", QUESTION, "--json", env=cli_env(bundled_home, server.base_url),
                         timeout=300)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["citations"][0]["title"] == DRPOSE and data["model"] == "fake"
    assert SECRET not in result.stdout + result.stderr
